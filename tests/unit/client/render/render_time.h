// SPDX-License-Identifier: Apache-2.0
// The "now" the renderer tests render ages against.
#pragma once

#include "absl/time/time.h"

namespace rocenet::rocectl {

inline const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

}  // namespace rocenet::rocectl
