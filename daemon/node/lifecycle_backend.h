// SPDX-License-Identifier: Apache-2.0
// LifecycleBackend: what the Lifecycle gRPC service calls; the node
// implements it by running the call on the event loop. Thread-safe.
#pragma once

#include "absl/status/statusor.h"
#include "daemon/common/removal.h"

namespace rocenet::node {

class LifecycleBackend {
 public:
  virtual ~LifecycleBackend() = default;
  // rocenet leaving the node (rocenet.v1.Lifecycle/Uninstall): stops
  // managing it for good and takes back what rocenetd made. See
  // Node::Uninstall.
  virtual absl::StatusOr<RemovalReport> Uninstall() = 0;
};

}  // namespace rocenet::node
