// SPDX-License-Identifier: Apache-2.0
// FakeDcb keeps the drivers' rules (docs/health.md#lossless-roce-pfc); the
// controller's tests rely on them.
#include "tests/unit/fakes/fake_dcb.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::testing {
namespace {

TEST(FakeDcbTest, HblEnIsAllOrNothingAndOnAfterReset) {
  FakeDcb dcb;
  dcb.AddDevice("so0", DcbDriver::kHblEn);
  EXPECT_EQ(dcb.GetPfc("so0")->enabled, 0x0f);
  EXPECT_EQ(dcb.GetPfc("so0")->capability, 4);
  EXPECT_EQ(dcb.SetPfc("so0", 0x08).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(dcb.GetPfc("so0")->enabled, 0x0f);
  EXPECT_OK(dcb.SetPfc("so0", 0));
  EXPECT_EQ(dcb.GetPfc("so0")->enabled, 0);
  dcb.Reset("so0");
  EXPECT_EQ(dcb.GetPfc("so0")->enabled, 0x0f);
}

TEST(FakeDcbTest, NoDcbAndNoDevice) {
  FakeDcb dcb;
  dcb.AddDevice("veth0", DcbDriver::kNone);
  EXPECT_EQ(dcb.GetPfc("veth0").status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(dcb.SetPfc("veth0", 0x0f).code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(dcb.GetPfc("gone0").status().code(), absl::StatusCode::kNotFound);
}

TEST(FakeDcbTest, RoundTripsThroughText) {
  FakeDcbDevice device = DcbDeviceAfterReset(DcbDriver::kHblEn);
  device.pfc.requests[2] = 5;
  device.pfc.indications[7] = 9;
  absl::StatusOr<FakeDcbDevice> back = ParseDcbDevice(FormatDcbDevice(device));
  ASSERT_OK(back);
  EXPECT_EQ(back->driver, DcbDriver::kHblEn);
  EXPECT_EQ(back->pfc, device.pfc);
  EXPECT_EQ(back->dcbx, device.dcbx);
  EXPECT_FALSE(ParseDcbDevice("cap x\n").ok());
}

}  // namespace
}  // namespace rocenet::testing
