// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/validation_label.h"

#include "absl/strings/str_cat.h"
#include "daemon/common/nfd_file.h"
#include "daemon/common/paths.h"
#include "daemon/common/status_macros.h"

namespace rocenet::diag {
namespace {

constexpr mode_t kLabelDirectoryMode = 0755;
constexpr mode_t kLabelFileMode = 0644;

std::string Stamp(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

// A comment line that cannot be read as an NFD directive ("# +") nor break
// the file: one line, printable.
std::string Comment(absl::string_view text) {
  std::string line = "# rocenet: ";
  for (char c : text) line.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  return line + "\n";
}

}  // namespace

int StageRank(absl::string_view stage) {
  if (stage == "reach") return 1;
  if (stage == "ethernet") return 2;
  if (stage == "rdma") return 3;
  return 0;
}

std::string ValidationPathFor(absl::string_view nfd_features_path) {
  if (nfd_features_path.empty()) return "";
  return absl::StrCat(nfd_features_path, "-validated");
}

ValidationLabel::ValidationLabel(os::FileSystem* fs, const os::Clock* clock, std::string path,
                                 absl::Duration lifetime)
    : fs_(fs), clock_(clock), path_(std::move(path)), lifetime_(lifetime) {}

absl::Status ValidationLabel::Record(absl::string_view stage, bool passed, absl::string_view detail,
                                     absl::string_view from_node) {
  if (StageRank(stage) == 0) {
    return absl::InvalidArgumentError(absl::StrCat("validation: unknown stage \"", stage, "\""));
  }
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_->Now();
  std::string content;
  if (passed) {
    passed_[std::string(stage)] = now;
    std::string best;
    absl::Time best_at = now;
    for (const auto& [name, at] : passed_) {
      if (at + lifetime_ <= now) continue;
      if (StageRank(name) > StageRank(best)) {
        best = name;
        best_at = at;
      }
    }
    // The label lasts as long as the stage that earned it.
    content =
        RenderNfdFile(absl::StrCat(Comment(absl::StrCat(best, " stage passed at ", Stamp(best_at),
                                                        ", coordinated by ", from_node)),
                                   kValidatedLabel, "=", best, "\n"),
                      best_at + lifetime_);
  } else {
    passed_.clear();
    // No label line: NFD drops the label; the comment says why.
    content = Comment(absl::StrCat(stage, " stage failed at ", Stamp(now), ", coordinated by ",
                                   from_node, ": ", detail.empty() ? "(no detail)" : detail));
  }
  absl::Status status = fs_->MakeDirectories(ParentDirectory(path_), kLabelDirectoryMode);
  if (status.ok()) status = fs_->WriteFileAtomic(path_, content, kLabelFileMode);
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat("validation file ", path_, ": ", status.message()));
  }
  return absl::OkStatus();
}

}  // namespace rocenet::diag
