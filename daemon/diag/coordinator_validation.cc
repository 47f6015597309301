// SPDX-License-Identifier: Apache-2.0
// Coordinator::Announce: a stage's verdict to every node it concerns.
#include "daemon/common/logging.h"
#include "daemon/diag/coordinator.h"
#include "daemon/diag/coordinator_util.h"

namespace rocenet::diag {

using coordinator::ParallelFor;

void Coordinator::Announce(const Verdict& verdict) {
  std::vector<std::pair<std::string, NodeAddress>> told;
  for (const auto& node : verdict.nodes) {
    // A node the failure does not name keeps the validation it had.
    if (!verdict.passed && !verdict.failed.empty() && !verdict.failed.contains(node.first)) {
      continue;
    }
    told.push_back(node);
  }
  peer::ValidationNotice notice;
  notice.stage = verdict.stage;
  notice.passed = verdict.passed;
  notice.detail = verdict.detail;
  notice.from_node = parts_.node_name;
  const absl::Time deadline = Now() + coordinator::kInfoTimeout;
  ParallelFor(told.size(), [&](size_t i) {
    const auto& [name, address] = told[i];
    if (address.address == Ipv4Address() || name == parts_.node_name) {
      if (parts_.validation != nullptr) parts_.validation(notice);
      return;
    }
    const peer::PeerRequest request{.kind = notice};
    absl::StatusOr<peer::PeerReply> reply = parts_.peers->Call(address, request, deadline);
    if (!reply.ok()) {
      SPDLOG_WARN("validation: node {} was not told that the {} stage {}: {}", name, verdict.stage,
                  verdict.passed ? "passed" : "failed", reply.status().message());
    }
  });
}

}  // namespace rocenet::diag
