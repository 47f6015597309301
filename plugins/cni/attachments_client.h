// SPDX-License-Identifier: Apache-2.0
// The plugin's one way to rocenetd: the calls of rocenet.v1.Attachments.
//
// The dispatcher talks to this interface only, so tests can hand it a fake
// or a client of an in-process gRPC server. The real implementation is in
// daemon_client.h.
//
// Error contract: a failed call returns the daemon's gRPC code as the absl
// code (the numbers are the same) with the daemon's message, or Unavailable /
// DeadlineExceeded with a message naming the socket when rocenetd could not
// be reached or did not answer in time. Mapping to CNI codes is the
// caller's business (errors.h, DaemonError()).
//
// One client serves one plugin invocation on one thread; implementations
// need not be thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "rocenet/v1/attach.pb.h"

namespace rocenet::cni {

class AttachmentsClient {
 public:
  virtual ~AttachmentsClient() = default;

  virtual absl::StatusOr<v1::Attachment> Attach(const v1::AttachRequest& request) = 0;
  virtual absl::StatusOr<v1::DetachResponse> Detach(const v1::DetachRequest& request) = 0;
  virtual absl::StatusOr<v1::Attachment> Check(const v1::CheckRequest& request) = 0;
  virtual absl::StatusOr<v1::ListAttachmentsResponse> List() = 0;
  virtual absl::StatusOr<v1::GcResponse> Gc(const v1::GcRequest& request) = 0;
};

// Where rocenetd listens and how long one call may take, from the network
// configuration.
struct DaemonEndpoint {
  std::string socket_path;
  absl::Duration timeout;
};

// Makes the client for one invocation. Failing here (e.g. the socket does
// not exist) is reported like a failed call.
using AttachmentsClientFactory =
    std::function<absl::StatusOr<std::unique_ptr<AttachmentsClient>>(const DaemonEndpoint&)>;

}  // namespace rocenet::cni
