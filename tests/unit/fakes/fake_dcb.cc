// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/fakes/fake_dcb.h"

#include <cerrno>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "daemon/common/errno_status.h"

namespace rocenet::testing {
namespace {

// DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE.
constexpr uint8_t kHostIeee = 0x04 | 0x08;
constexpr uint8_t kHblEnAll = 0x0f;

const char* DriverName(DcbDriver driver) {
  switch (driver) {
    case DcbDriver::kHblEn:
      return "hbl_en";
    case DcbDriver::kGeneric:
      return "generic";
    case DcbDriver::kNone:
      break;
  }
  return "none";
}

int Bits(uint8_t mask) {
  int n = 0;
  for (; mask != 0; mask &= mask - 1) ++n;
  return n;
}

}  // namespace

FakeDcbDevice DcbDeviceAfterReset(DcbDriver driver, uint8_t generic_capability) {
  FakeDcbDevice device;
  device.driver = driver;
  if (driver == DcbDriver::kHblEn) {
    device.dcbx = kHostIeee;
    device.pfc.capability = 4;
    device.pfc.enabled = kHblEnAll;
  } else if (driver == DcbDriver::kGeneric) {
    device.dcbx = kHostIeee;
    device.pfc.capability = generic_capability;
  }
  return device;
}

absl::Status ApplyDcbPfc(FakeDcbDevice& device, const std::string& ifname, uint8_t enabled) {
  const std::string what = absl::StrCat("device ", ifname, ": set PFC (dcbnl)");
  if (device.driver == DcbDriver::kNone) return ErrnoToStatus(EOPNOTSUPP, what);
  if (device.driver == DcbDriver::kHblEn && enabled != 0 && enabled != kHblEnAll) {
    return ErrnoToStatus(EINVAL, absl::StrCat(what, ": the driver refused it"));
  }
  if (device.driver == DcbDriver::kGeneric && Bits(enabled) > device.pfc.capability) {
    return ErrnoToStatus(EINVAL, absl::StrCat(what, ": the driver refused it"));
  }
  device.dcbx = kHostIeee;
  device.pfc.enabled = enabled;
  return absl::OkStatus();
}

std::string FormatDcbDevice(const FakeDcbDevice& device) {
  return absl::StrCat("driver ", DriverName(device.driver), "\ndcbx ", device.dcbx, "\ncap ",
                      device.pfc.capability, "\nenabled ", device.pfc.enabled, "\nrequests ",
                      absl::StrJoin(device.pfc.requests, " "), "\nindications ",
                      absl::StrJoin(device.pfc.indications, " "), "\n");
}

absl::StatusOr<FakeDcbDevice> ParseDcbDevice(const std::string& text) {
  FakeDcbDevice device;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    const std::string& key = words[0];
    auto number = [&](size_t i) -> absl::StatusOr<uint64_t> {
      uint64_t v = 0;
      if (i >= words.size() || !absl::SimpleAtoi(words[i], &v)) {
        return absl::InvalidArgumentError(absl::StrCat("dcb device: bad line \"", line, "\""));
      }
      return v;
    };
    if (key == "driver" && words.size() == 2) {
      device.driver = words[1] == "hbl_en"    ? DcbDriver::kHblEn
                      : words[1] == "generic" ? DcbDriver::kGeneric
                                              : DcbDriver::kNone;
    } else if (key == "dcbx" || key == "cap" || key == "enabled") {
      absl::StatusOr<uint64_t> v = number(1);
      if (!v.ok()) return v.status();
      uint8_t& field = key == "dcbx"  ? device.dcbx
                       : key == "cap" ? device.pfc.capability
                                      : device.pfc.enabled;
      field = static_cast<uint8_t>(*v);
    } else if (key == "requests" || key == "indications") {
      auto& counters = key == "requests" ? device.pfc.requests : device.pfc.indications;
      for (int i = 0; i < os::kPfcPriorities; ++i) {
        absl::StatusOr<uint64_t> v = number(i + 1);
        if (!v.ok()) return v.status();
        counters[i] = *v;
      }
    }
  }
  return device;
}

void FakeDcb::AddDevice(const std::string& ifname, DcbDriver driver, uint8_t generic_capability) {
  devices_[ifname] = DcbDeviceAfterReset(driver, generic_capability);
}

void FakeDcb::Reset(const std::string& ifname) {
  auto it = devices_.find(ifname);
  if (it == devices_.end()) return;
  const FakeDcbDevice before = it->second;
  it->second = DcbDeviceAfterReset(before.driver, before.pfc.capability);
}

void FakeDcb::SetCounters(const std::string& ifname, int priority, uint64_t requests,
                          uint64_t indications) {
  auto it = devices_.find(ifname);
  if (it == devices_.end()) return;
  it->second.pfc.requests[priority] = requests;
  it->second.pfc.indications[priority] = indications;
}

const FakeDcbDevice* FakeDcb::device(const std::string& ifname) const {
  auto it = devices_.find(ifname);
  return it == devices_.end() ? nullptr : &it->second;
}

absl::StatusOr<os::PfcSettings> FakeDcb::GetPfc(absl::string_view ifname) {
  const std::string what = absl::StrCat("device ", ifname, ": read PFC (dcbnl)");
  auto it = devices_.find(ifname);
  if (it == devices_.end()) return ErrnoToStatus(ENODEV, what);
  if (it->second.driver == DcbDriver::kNone) return ErrnoToStatus(EOPNOTSUPP, what);
  return it->second.pfc;
}

absl::Status FakeDcb::SetPfc(absl::string_view ifname, uint8_t enabled) {
  ++set_calls_;
  if (!set_failure_.ok()) return std::exchange(set_failure_, absl::OkStatus());
  auto it = devices_.find(ifname);
  if (it == devices_.end()) {
    return ErrnoToStatus(ENODEV, absl::StrCat("device ", ifname, ": set PFC (dcbnl)"));
  }
  return ApplyDcbPfc(it->second, std::string(ifname), enabled);
}

}  // namespace rocenet::testing
