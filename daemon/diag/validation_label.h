// SPDX-License-Identifier: Apache-2.0
// ValidationLabel: the NFD feature file that tells the scheduler this node's
// scale-out network passed a triage stage: `rocenet.io/scale-out-validated=
// <stage>` with NFD's expiry, so a validation is trusted for a bounded time
// only. A passed stage adds (or renews) it; a failed one removes the label
// and leaves a comment naming what failed, for whoever looks at the node.
//
// The label's value is the highest stage that passed within the lifetime,
// in the order reach < ethernet < rdma; any failure clears them all until a
// stage passes again. The file sits beside the scale-out-ready one
// (rocenetd's daemon/outputs/host_outputs.h), in a file of its own because it
// has its own expiry and is written by rocenet-diagd.
//
// Ownership: the FileSystem and Clock are borrowed and must outlive it.
// Thread-safe (one mutex): notices come from the diagnostics' threads.
// Errors name the file.
#pragma once

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "daemon/os/clock.h"
#include "daemon/os/filesystem.h"

namespace rocenet::diag {

inline constexpr char kValidatedLabel[] = "rocenet.io/scale-out-validated";
inline constexpr absl::Duration kValidatedLifetime = absl::Hours(24);

// The stages in order of what they prove; an unknown stage ranks nowhere.
int StageRank(absl::string_view stage);

// The validation file beside `nfd_features_path` ("…/features.d/rocenet"
// -> "…/features.d/rocenet-validated"); empty for an empty path.
std::string ValidationPathFor(absl::string_view nfd_features_path);

class ValidationLabel {
 public:
  ValidationLabel(os::FileSystem* fs, const os::Clock* clock, std::string path,
                  absl::Duration lifetime = kValidatedLifetime);

  // `stage` passed (or failed, `detail` naming the link) in a test that
  // `from_node` coordinated.
  absl::Status Record(absl::string_view stage, bool passed, absl::string_view detail,
                      absl::string_view from_node);

 private:
  os::FileSystem* const fs_;
  const os::Clock* const clock_;
  const std::string path_;
  const absl::Duration lifetime_;
  absl::Mutex mu_;
  // stage -> when it last passed.
  std::map<std::string, absl::Time> passed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rocenet::diag
