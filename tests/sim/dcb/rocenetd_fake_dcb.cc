// SPDX-License-Identifier: Apache-2.0
// rocenetd with FileDcb for dcbnl: ROCENET_FAKE_DCB_DIR names the
// directory of device files (file_dcb.h). Everything else is rocenetd's.
#include <cstdlib>
#include <memory>

#include "daemon/server/daemon_main.h"
#include "tests/sim/dcb/file_dcb.h"

int main(int argc, char** argv) {
  const char* directory = std::getenv("ROCENET_FAKE_DCB_DIR");
  rocenet::server::OsOverrides os;
  os.open_dcb = [directory]() -> absl::StatusOr<std::unique_ptr<rocenet::os::Dcb>> {
    if (directory == nullptr || *directory == '\0') {
      return absl::FailedPreconditionError("ROCENET_FAKE_DCB_DIR is not set");
    }
    return std::make_unique<rocenet::testing::FileDcb>(directory);
  };
  return rocenet::server::RocenetdMain(argc, argv, os);
}
