// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the health memory rocenetd reads at start
// (health::HealthStateCodec::Restore, <runtime_dir>/health.json). Built and
// run by `tests/fuzz/run.sh health_state`; seeded with
// tests/fuzz/seeds/health_state/.
//
// Beyond "never crash, no undefined behaviour" (also in the JSON parser),
// it checks the codec's contract and aborts on a violation:
//   - a refusal is InvalidArgument or FailedPrecondition and leaves the
//     tracker as it was;
//   - an accepted document saved again and restored gives the same
//     document.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "daemon/health/health_state.h"
#include "daemon/os/clock.h"

namespace rocenet::health {
namespace {

constexpr char kBoot[] = "3f1d5a2e-0c7b-4e7e-9a51-2b8f6c1d0e44";

class FixedClock final : public os::Clock {
 public:
  absl::Time Now() const override { return absl::FromUnixSeconds(1800000000); }
  os::BootTime BootNow() const override { return os::BootTime::SinceBoot(absl::Hours(3)); }
};

[[noreturn]] void Fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "health_state_fuzz: %s %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace
}  // namespace rocenet::health

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rocenet::health;  // NOLINT(build/namespaces)
  const std::string text(reinterpret_cast<const char*>(data), size);
  static const FixedClock clock;
  HealthTracker tracker(&clock);
  const std::string empty = HealthStateCodec::Save(tracker, kBoot);
  const absl::Status restored = HealthStateCodec::Restore(text, kBoot, tracker);
  if (!restored.ok()) {
    if (!absl::IsInvalidArgument(restored) && !absl::IsFailedPrecondition(restored)) {
      Fail("refused with another code:", restored.ToString());
    }
    if (HealthStateCodec::Save(tracker, kBoot) != empty) Fail("a refusal changed the tracker");
    return 0;
  }
  const std::string saved = HealthStateCodec::Save(tracker, kBoot);
  HealthTracker again(&clock);
  if (absl::Status s = HealthStateCodec::Restore(saved, kBoot, again); !s.ok()) {
    Fail("its own document refused:", s.ToString());
  }
  if (HealthStateCodec::Save(again, kBoot) != saved) Fail("a round trip changed the document");
  return 0;
}
