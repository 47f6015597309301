// SPDX-License-Identifier: Apache-2.0
// Coordinator::Announce: a stage's verdict to every node it concerns.
#include "absl/strings/str_cat.h"
#include "daemon/common/logging.h"
#include "daemon/diag/coordinator.h"
#include "daemon/diag/coordinator_util.h"
#include "daemon/diag/limits.h"

namespace rocenet::diag {

using coordinator::ParallelFor;

Labels Coordinator::Announce(const Verdict& verdict) {
  Labels labels;
  std::vector<std::pair<std::string, NodeAddress>> told;
  const uint32_t bound =
      verdict.max_failed.value_or(MaxUnvalidated(std::nullopt, std::nullopt, verdict.nodes.size()));
  if (bound == 0) {
    labels.dry_run = true;
    labels.reason = "max_unvalidated is 0: no label was changed";
    return labels;
  }
  if (verdict.passed) {
    // Only what was measured is validated.
    for (const auto& node : verdict.nodes) {
      if (!verdict.unmeasured.contains(node.first)) told.push_back(node);
    }
    labels.validated = static_cast<uint32_t>(told.size());
  } else {
    if (verdict.failed.empty()) {
      labels.inconclusive = true;
      labels.reason = "the failure names no node: no label was changed";
    } else if (verdict.failed.size() > bound) {
      labels.inconclusive = true;
      labels.reason = absl::StrCat("the failure names ", verdict.failed.size(), " of ",
                                   verdict.nodes.size(), " nodes, more than the ", bound,
                                   " one run may unvalidate: no label was changed");
    } else {
      // A node the failure does not name keeps the validation it had.
      for (const auto& node : verdict.nodes) {
        if (verdict.failed.contains(node.first)) {
          told.push_back(node);
          labels.unvalidated.push_back(node.first);
        }
      }
    }
  }
  if (labels.inconclusive) {
    SPDLOG_WARN("validation: the {} stage failed and is inconclusive: {}", verdict.stage,
                labels.reason);
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
  return labels;
}

}  // namespace rocenet::diag
