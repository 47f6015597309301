// SPDX-License-Identifier: Apache-2.0
// FakeClock: time that moves only when a test says so. Advance() moves both
// clocks, as time passing does; StepWall() sets the wall clock alone, as
// chrony's makestep or an admin's `date` does, and leaves the boot clock
// (and so every interval rocenet measures) where it is.
#pragma once

#include "daemon/os/clock.h"

namespace rocenet::testing {

class FakeClock final : public os::Clock {
 public:
  // The same start as FakeLoop's.
  static constexpr int64_t kStart = 1'800'000'000;
  static constexpr absl::Duration kBootStart = absl::Hours(3);

  absl::Time Now() const override { return now_; }
  os::BootTime BootNow() const override { return boot_; }
  void Advance(absl::Duration d) {
    now_ += d;
    boot_ += d;
  }
  void StepWall(absl::Duration d) { now_ += d; }

 private:
  absl::Time now_ = absl::FromUnixSeconds(kStart);
  os::BootTime boot_ = os::BootTime::SinceBoot(kBootStart);
};

}  // namespace rocenet::testing
