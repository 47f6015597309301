// SPDX-License-Identifier: Apache-2.0
// FileDcb: os::Dcb over one file per device in a directory, each holding a
// FakeDcbDevice (fake_dcb.h) as text. The test plays the driver by writing
// the files (a reset is the driver's defaults written back); rocenetd reads
// and sets PFC through them under the driver's rules. A device without a
// file has no DCB (EOPNOTSUPP), as veth.
#pragma once

#include <string>

#include "daemon/os/dcb.h"

namespace rocenet::testing {

class FileDcb final : public os::Dcb {
 public:
  explicit FileDcb(std::string directory) : directory_(std::move(directory)) {}

  absl::StatusOr<os::PfcSettings> GetPfc(absl::string_view ifname) override;
  absl::Status SetPfc(absl::string_view ifname, uint8_t enabled) override;

 private:
  std::string directory_;
};

}  // namespace rocenet::testing
