// SPDX-License-Identifier: Apache-2.0
// FakeDcb: dcbnl as a driver answers it, for unit tests and the daemon's
// simulated fabric. The rules are the drivers' (docs/health.md#lossless-roce-pfc):
//   - hbl_en (Gaudi): 4 priorities (pfc_cap 4), all or nothing: a pfc_en
//     other than 0x00 or 0x0f is EINVAL; PFC is on (0x0f) after probe and
//     after every reset; the only DCBX mode it takes is host-managed IEEE;
//     ieee_getpfc returns per-priority request/indication counters.
//   - a generic DCB NIC: `capability` priorities may have PFC at once.
//   - a device without dcbnl operations (veth): every call is EOPNOTSUPP.
// A device the fake does not know is ENODEV. Not thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "daemon/os/dcb.h"

namespace rocenet::testing {

enum class DcbDriver { kNone, kHblEn, kGeneric };

struct FakeDcbDevice {
  DcbDriver driver = DcbDriver::kNone;
  uint8_t dcbx = 0;
  os::PfcSettings pfc;
};

// A device as its driver leaves it after probe or reset.
FakeDcbDevice DcbDeviceAfterReset(DcbDriver driver, uint8_t generic_capability = 8);

// The driver's answer to setting `enabled` on `device`: OK (and `device`
// changed) or the errno status the kernel would return.
absl::Status ApplyDcbPfc(FakeDcbDevice& device, const std::string& ifname, uint8_t enabled);

// A device in text, one "key value" per line (driver, dcbx, cap, enabled,
// requests, indications), so a test outside the process can read and write
// it; and back.
std::string FormatDcbDevice(const FakeDcbDevice& device);
absl::StatusOr<FakeDcbDevice> ParseDcbDevice(const std::string& text);

class FakeDcb final : public os::Dcb {
 public:
  void AddDevice(const std::string& ifname, DcbDriver driver, uint8_t generic_capability = 8);
  void RemoveDevice(const std::string& ifname) { devices_.erase(ifname); }
  // A driver reset (or reload): the device's PFC is the driver's default again.
  void Reset(const std::string& ifname);
  void SetCounters(const std::string& ifname, int priority, uint64_t requests,
                   uint64_t indications);
  // The next SetPfc fails with `status` and changes nothing.
  void FailNextSet(absl::Status status) { set_failure_ = std::move(status); }
  const FakeDcbDevice* device(const std::string& ifname) const;
  int set_calls() const { return set_calls_; }

  absl::StatusOr<os::PfcSettings> GetPfc(absl::string_view ifname) override;
  absl::Status SetPfc(absl::string_view ifname, uint8_t enabled) override;

 private:
  std::map<std::string, FakeDcbDevice, std::less<>> devices_;
  int set_calls_ = 0;
  absl::Status set_failure_;
};

}  // namespace rocenet::testing
