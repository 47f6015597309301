// SPDX-License-Identifier: Apache-2.0
#include "tests/sim/dcb/file_dcb.h"

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"
#include "tests/unit/fakes/fake_dcb.h"

namespace rocenet::testing {
namespace {

absl::StatusOr<FakeDcbDevice> Load(const std::string& path, absl::string_view ifname,
                                   absl::string_view action) {
  std::ifstream in(path);
  if (!in) {
    return ErrnoToStatus(EOPNOTSUPP, absl::StrCat("device ", ifname, ": ", action, " (dcbnl)"));
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseDcbDevice(text.str());
}

}  // namespace

absl::StatusOr<os::PfcSettings> FileDcb::GetPfc(absl::string_view ifname) {
  absl::StatusOr<FakeDcbDevice> device =
      Load(absl::StrCat(directory_, "/", ifname), ifname, "read PFC");
  if (!device.ok()) return device.status();
  if (device->driver == DcbDriver::kNone) {
    return ErrnoToStatus(EOPNOTSUPP, absl::StrCat("device ", ifname, ": read PFC (dcbnl)"));
  }
  return device->pfc;
}

absl::Status FileDcb::SetPfc(absl::string_view ifname, uint8_t enabled) {
  const std::string path = absl::StrCat(directory_, "/", ifname);
  absl::StatusOr<FakeDcbDevice> device = Load(path, ifname, "set PFC");
  if (!device.ok()) return device.status();
  if (absl::Status s = ApplyDcbPfc(*device, std::string(ifname), enabled); !s.ok()) return s;
  // Written whole and renamed over, so a reader never sees half a file.
  const std::string temporary = absl::StrCat(path, ".new");
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << FormatDcbDevice(*device);
    if (!out) return ErrnoToStatus(errno, absl::StrCat("write ", temporary));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    return ErrnoToStatus(errno, absl::StrCat("rename ", temporary));
  }
  return absl::OkStatus();
}

}  // namespace rocenet::testing
