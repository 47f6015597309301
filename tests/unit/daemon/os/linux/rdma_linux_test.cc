// SPDX-License-Identifier: Apache-2.0
// RdmaLinux on the real kernel. Where the kernel has RDMA netlink, the
// namespace mode reads and an unknown device is not found; where it has
// none (this machine: no RDMA core), opening says so as Unavailable with
// the reason, which the daemon takes as "nothing to move".
#include "daemon/os/linux/rdma_linux.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::os {
namespace {

using ::testing::HasSubstr;

TEST(RdmaLinuxTest, ReadsTheModeOrSaysThereIsNoRdma) {
  absl::StatusOr<std::unique_ptr<RdmaLinux>> rdma = RdmaLinux::Open();
  if (!rdma.ok()) {
    EXPECT_EQ(rdma.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(rdma.status().message(), HasSubstr("RDMA netlink: "));
    GTEST_SKIP() << "no RDMA netlink in this kernel: " << rdma.status();
  }
  absl::StatusOr<RdmaNetnsMode> mode = (*rdma)->NetnsMode();
  ASSERT_OK(mode);
  absl::StatusOr<bool> has = (*rdma)->HasDevice("rocenet-no-such-device");
  ASSERT_OK(has);
  EXPECT_FALSE(*has);
  absl::Status moved = (*rdma)->MoveDevice("rocenet-no-such-device", 0);
  EXPECT_EQ(moved.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(moved.message(), HasSubstr("rocenet-no-such-device"));
}

}  // namespace
}  // namespace rocenet::os
