// SPDX-License-Identifier: Apache-2.0
// SystemClock: the Clock seam over the kernel's clocks, CLOCK_REALTIME for
// the wall and CLOCK_BOOTTIME for the boot clock (daemon/os/clock.h).
// Thread-safe.
#pragma once

#include <time.h>

#include "absl/time/clock.h"
#include "daemon/os/clock.h"

namespace rocenet::os {

// CLOCK_BOOTTIME now. It cannot fail for a valid clock id, and every kernel
// rocenet runs on has this one (Linux 2.6.39 on).
inline BootTime ReadBootClock() {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return BootTime::SinceBoot(absl::DurationFromTimespec(ts));
}

class SystemClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  BootTime BootNow() const override { return ReadBootClock(); }
};

}  // namespace rocenet::os
