// SPDX-License-Identifier: Apache-2.0
// AttachmentsBackend: what the Attachments gRPC service calls; the
// composition root implements it by running each call on the event loop.
// Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/attach/manager.h"
#include "daemon/attach/record.h"

namespace rocenet::node {

class AttachmentsBackend {
 public:
  virtual ~AttachmentsBackend() = default;
  // `request.l3` is ignored: the backend decides from the node's mode and the
  // request's mode string.
  virtual absl::StatusOr<attach::AttachmentRecord> Attach(const attach::AttachRequest& request,
                                                          const std::string& mode) = 0;
  virtual absl::StatusOr<bool> Detach(const std::string& container_id,
                                      const std::string& ifname) = 0;
  virtual absl::StatusOr<attach::AttachmentRecord> Check(const std::string& container_id,
                                                         const std::string& ifname,
                                                         const std::string& netns) = 0;
  virtual absl::StatusOr<std::vector<attach::AttachmentRecord>> ListAttachments() = 0;
  // A CNI GC of `network` (see AttachManager::Gc), or, with
  // `only_dead_netns`, the sweep of dead pod namespaces of every network.
  virtual absl::StatusOr<std::vector<attach::AttachmentRecord>> Gc(
      const std::string& network, const std::vector<std::string>& valid, bool only_dead_netns) = 0;
};

}  // namespace rocenet::node
