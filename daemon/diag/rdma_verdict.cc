// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/rdma_verdict.h"

#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rocenet::diag {
namespace {

bool Failed(const RdmaLink& link) { return !link.error.empty() || link.below_expected; }

std::string Why(const RdmaLink& link) {
  if (!link.error.empty()) return link.error;
  return absl::StrFormat("%.2f Gb/s, %.0f%% of the link", link.bits_per_second / 1e9,
                         link.fraction_of_link * 100);
}

std::string Name(const std::string& node, const std::string& port) {
  return absl::StrCat(node, "/", port);
}

}  // namespace

RdmaFindings JudgeRdmaLinks(const std::vector<std::string>& nodes,
                            const std::vector<std::string>& rails,
                            const std::vector<RdmaLink>& links) {
  RdmaFindings findings;
  // (node, rail) -> its failed links, and whether any of its links was
  // measured (with the first skip's reason when none was).
  std::map<std::pair<std::string, std::string>, std::vector<const RdmaLink*>> failed;
  std::set<std::pair<std::string, std::string>> measured;
  std::map<std::string, std::string> skip_reason;
  for (const RdmaLink& link : links) {
    for (const std::string* node : {&link.from_node, &link.to_node}) {
      const auto key = std::make_pair(*node, link.rail);
      if (link.skipped.empty()) {
        measured.insert(key);
      } else if (!skip_reason.contains(*node)) {
        skip_reason[*node] = link.skipped;
      }
      if (Failed(link)) failed[key].push_back(&link);
    }
  }
  for (const std::string& node : nodes) {
    for (const std::string& rail : rails) {
      if (measured.contains({node, rail})) continue;
      auto reason = skip_reason.find(node);
      findings.unmeasured.push_back(
          {.node = node,
           .reason = reason != skip_reason.end()
                         ? reason->second
                         : absl::StrCat("no link of rail ", rail, " was measured")});
      break;
    }
  }
  // The common end of two failed links of a rail, else both ends.
  std::set<std::string> named;
  auto name = [&](const std::string& node, const std::string& port, const std::string& rail,
                  std::string evidence) {
    if (!named.insert(Name(node, port)).second) return;
    findings.suspects.push_back({.kind = "port",
                                 .node = node,
                                 .port = port,
                                 .leaf = "",
                                 .rail = rail,
                                 .evidence = std::move(evidence)});
  };
  for (const RdmaLink& link : links) {
    if (!Failed(link)) continue;
    const bool from_twice = failed[{link.from_node, link.rail}].size() >= 2;
    const bool to_twice = failed[{link.to_node, link.rail}].size() >= 2;
    if (from_twice) {
      name(link.from_node, link.from_port, link.rail,
           absl::StrCat("both of its links of rail ", link.rail, " failed: ", Why(link)));
    }
    if (to_twice) {
      name(link.to_node, link.to_port, link.rail,
           absl::StrCat("both of its links of rail ", link.rail, " failed: ", Why(link)));
    }
    if (!from_twice && !to_twice) {
      const std::string what = absl::StrCat("its link ", Name(link.from_node, link.from_port),
                                            " -> ", Name(link.to_node, link.to_port),
                                            " failed, its other link did not: ", Why(link));
      name(link.from_node, link.from_port, link.rail, what);
      name(link.to_node, link.to_port, link.rail, what);
    }
  }
  return findings;
}

}  // namespace rocenet::diag
