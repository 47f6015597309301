// SPDX-License-Identifier: Apache-2.0
// RemovalReport: what a clean-up took away and what it left, each thing as
// a person reads it ("address 10.200.10.1/30 on so0", "file
// /etc/habanalabs/gaudinet.json") and, when it was left, why.
//
// The parts of rocenetd that made something each take their own back and
// say so in one of these; rocenet.v1.Lifecycle/Uninstall joins them, in the
// order the steps ran, into its answer. A step that fails keeps its object
// with the error as the reason, and the other steps still run, so a report
// of a half-done clean-up names exactly what remains.
//
// Value type, header-only, thread-compatible.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace rocenet {

struct RemovalItem {
  std::string what;
  // Why it was kept; empty for what was removed.
  std::string reason;

  friend bool operator==(const RemovalItem&, const RemovalItem&) = default;
};

struct RemovalReport {
  // In the order it was done.
  std::vector<RemovalItem> removed;
  std::vector<RemovalItem> kept;

  void Removed(std::string what) { removed.push_back({std::move(what), ""}); }
  void Kept(std::string what, std::string reason) {
    kept.push_back({std::move(what), std::move(reason)});
  }
  // Kept because removing it failed: the error is the reason.
  void Failed(std::string what, const absl::Status& error) {
    Kept(std::move(what), std::string(error.message()));
  }
  void Append(RemovalReport other) {
    for (RemovalItem& item : other.removed) removed.push_back(std::move(item));
    for (RemovalItem& item : other.kept) kept.push_back(std::move(item));
  }
};

}  // namespace rocenet
