// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/coordinator.h"

#include <utility>

#include "daemon/diag/coordinator_util.h"

namespace rocenet::diag {

Coordinator::Coordinator(CoordinatorParts parts) : parts_(std::move(parts)) {}

std::vector<absl::StatusOr<peer::PeerInfo>> Coordinator::Infos(
    const std::vector<NodeAddress>& nodes) {
  std::vector<absl::StatusOr<peer::PeerInfo>> infos(nodes.size(), absl::UnknownError(""));
  const absl::Time deadline = Now() + coordinator::kInfoTimeout;
  coordinator::ParallelFor(nodes.size(), [&](size_t i) {
    peer::PeerRequest request{.kind = peer::PeerInfoRequest{}};
    absl::StatusOr<peer::PeerReply> reply = parts_.peers->Call(nodes[i], request, deadline);
    if (reply.ok()) {
      infos[i] = std::move(reply->info);
    } else {
      infos[i] = reply.status();
    }
  });
  return infos;
}

}  // namespace rocenet::diag
