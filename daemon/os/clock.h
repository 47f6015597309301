// SPDX-License-Identifier: Apache-2.0
// Clock: a daemon's two times, behind one seam so that tests set both.
//
// Now() is the wall clock (CLOCK_REALTIME): the time people read, in a
// condition's `since`, in timestamps written to files, messages and
// metrics, and in anything compared with another machine. It jumps when
// the clock is set (chrony's makestep, the RTC read at boot, an admin's
// `date`), forwards or backwards, so nothing may measure a length of time
// with it.
//
// BootNow() is CLOCK_BOOTTIME: the time since the kernel booted, suspend
// included. Nobody can set it, so every timer, window, held condition,
// expiry, sampling interval and rate runs on it. It is the same clock for
// every process of one boot, so an instant of it written to a file stays
// valid for a restarted daemon of the same boot (key such a file by the
// kernel's boot id: after a reboot it starts again from zero).
//
// The two are distinct types, so that the compiler refuses an interval
// taken across them. Implementations are thread-safe; os::SystemClock is
// the real one, testing::FakeClock and testing::FakeLoop the tests'.
#pragma once

#include <compare>
#include <cstdint>

#include "absl/time/time.h"

namespace rocenet::os {

// An instant on the boot clock: how long after the kernel booted. Value
// type; arithmetic with absl::Duration as with absl::Time.
class BootTime {
 public:
  constexpr BootTime() = default;
  static constexpr BootTime SinceBoot(absl::Duration d) { return BootTime(d); }
  // Later than every instant: a deadline that never comes.
  static constexpr BootTime Never() { return BootTime(absl::InfiniteDuration()); }

  constexpr absl::Duration since_boot() const { return since_boot_; }

  BootTime& operator+=(absl::Duration d) {
    since_boot_ += d;
    return *this;
  }
  BootTime& operator-=(absl::Duration d) {
    since_boot_ -= d;
    return *this;
  }
  friend BootTime operator+(BootTime t, absl::Duration d) { return t += d; }
  friend BootTime operator-(BootTime t, absl::Duration d) { return t -= d; }
  friend absl::Duration operator-(BootTime a, BootTime b) { return a.since_boot_ - b.since_boot_; }
  friend bool operator==(BootTime a, BootTime b) { return a.since_boot_ == b.since_boot_; }
  friend std::strong_ordering operator<=>(BootTime a, BootTime b) {
    if (a.since_boot_ < b.since_boot_) return std::strong_ordering::less;
    if (b.since_boot_ < a.since_boot_) return std::strong_ordering::greater;
    return std::strong_ordering::equal;
  }

 private:
  constexpr explicit BootTime(absl::Duration d) : since_boot_(d) {}
  absl::Duration since_boot_ = absl::ZeroDuration();
};

// Both clocks read at one moment: `boot` to measure with, `wall` to show.
// Adding a duration is time passing: both move.
struct Moment {
  absl::Time wall;
  BootTime boot;

  friend Moment operator+(Moment m, absl::Duration d) { return {m.wall + d, m.boot + d}; }
};

class Clock {
 public:
  virtual ~Clock() = default;
  // The wall clock: for the times people read.
  virtual absl::Time Now() const = 0;
  // The boot clock: for every timer, window and rate.
  virtual BootTime BootNow() const = 0;

  Moment Read() const { return {Now(), BootNow()}; }
};

}  // namespace rocenet::os
