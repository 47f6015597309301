// SPDX-License-Identifier: Apache-2.0
// SystemClock: the Clock seam over the real wall clock. Thread-safe.
#pragma once

#include "absl/time/clock.h"
#include "daemon/os/clock.h"

namespace rocenet::os {

class SystemClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

}  // namespace rocenet::os
