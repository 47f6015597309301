// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/coordinator.h"

#include <utility>

#include "daemon/diag/coordinator_util.h"

namespace rocenet::diag {

Coordinator::Coordinator(CoordinatorParts parts) : parts_(std::move(parts)) {}

std::vector<absl::StatusOr<peer::v1::PeerInfo>> Coordinator::Infos(
    const std::vector<NodeAddress>& nodes) {
  std::vector<absl::StatusOr<peer::v1::PeerInfo>> infos(nodes.size(), absl::UnknownError(""));
  const absl::Time deadline = Now() + coordinator::kInfoTimeout;
  coordinator::ParallelFor(nodes.size(), [&](size_t i) {
    peer::v1::PeerRequest request;
    request.mutable_info();
    absl::StatusOr<peer::v1::PeerReply> reply = parts_.peers->Call(nodes[i], request, deadline);
    if (reply.ok()) {
      infos[i] = std::move(*reply->mutable_info());
    } else {
      infos[i] = reply.status();
    }
  });
  return infos;
}

}  // namespace rocenet::diag
