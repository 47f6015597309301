// SPDX-License-Identifier: Apache-2.0
// DcbLinux on the real kernel. This machine has no driver with dcbnl
// operations, so what is tested here is what every port without DCB sees:
// the kernel refuses RTM_GETDCB (EOPNOTSUPP) and rocenet reads that as
// "no DCB support"; an unknown device is NotFound. The supported path is
// tested through the Dcb seam (FakeDcb) and the message tests.
#include "daemon/os/linux/dcb_linux.h"

#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::os {
namespace {

using ::testing::HasSubstr;

TEST(DcbLinuxTest, LoopbackHasNoDcb) {
  absl::StatusOr<std::unique_ptr<DcbLinux>> dcb = DcbLinux::Open();
  ASSERT_OK(dcb);
  absl::StatusOr<PfcSettings> pfc = (*dcb)->GetPfc("lo");
  EXPECT_EQ(pfc.status().code(), absl::StatusCode::kUnimplemented) << pfc.status();
  EXPECT_THAT(pfc.status().message(), HasSubstr("device lo: read PFC (dcbnl)"));
  // The socket stays usable after an error.
  EXPECT_EQ((*dcb)->GetPfc("lo").status().code(), absl::StatusCode::kUnimplemented);
}

TEST(DcbLinuxTest, SettingPfcOnLoopbackChangesNothing) {
  absl::StatusOr<std::unique_ptr<DcbLinux>> dcb = DcbLinux::Open();
  ASSERT_OK(dcb);
  absl::Status set = (*dcb)->SetPfc("lo", 0x0f);
  EXPECT_EQ(set.code(), absl::StatusCode::kUnimplemented) << set;
}

TEST(DcbLinuxTest, AnUnknownDeviceIsNotFound) {
  absl::StatusOr<std::unique_ptr<DcbLinux>> dcb = DcbLinux::Open();
  ASSERT_OK(dcb);
  absl::StatusOr<PfcSettings> pfc = (*dcb)->GetPfc("rocenet-none0");
  EXPECT_EQ(pfc.status().code(), absl::StatusCode::kNotFound) << pfc.status();
  EXPECT_THAT(pfc.status().message(), HasSubstr("rocenet-none0"));
}

}  // namespace
}  // namespace rocenet::os
