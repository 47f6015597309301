// SPDX-License-Identifier: Apache-2.0
// FakeClock: time that moves only when a test says so.
#pragma once

#include "daemon/os/clock.h"

namespace rocenet::testing {

class FakeClock final : public os::Clock {
 public:
  absl::Time Now() const override { return now_; }
  void Advance(absl::Duration d) { now_ += d; }

 private:
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
};

}  // namespace rocenet::testing
