// SPDX-License-Identifier: Apache-2.0
// The ethtool ioctls on the real kernel, in a network namespace of the test's
// own (a thread unshares one): what lo and a missing device answer. The
// answers of a real driver (veth's name) are checked by the integration
// test that selects ports by driver name. Needs CAP_SYS_ADMIN; skipped
// otherwise.
#include "daemon/os/linux/ethtool_linux.h"

#include <sched.h>

#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::os {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Runs `body` on a thread in a fresh network namespace (only lo, down).
template <typename Body>
void InPrivateNetns(Body body) {
  bool entered = false;
  std::thread thread([&] {
    entered = unshare(CLONE_NEWNET) == 0;
    if (entered) body();
  });
  thread.join();
  if (!entered) GTEST_SKIP() << "cannot create a network namespace here";
}

TEST(EthtoolLinuxTest, LoHasNoDriverNameAndNoStatistics) {
  InPrivateNetns([] {
    absl::StatusOr<std::unique_ptr<EthtoolLinux>> ethtool = EthtoolLinux::Create();
    ASSERT_OK(ethtool);
    absl::StatusOr<DriverInfo> driver = (*ethtool)->Driver("lo");
    EXPECT_EQ(driver.status().code(), absl::StatusCode::kUnimplemented) << driver.status();
    EXPECT_THAT(driver.status().message(), HasSubstr("ethtool driver info of lo"));
    absl::StatusOr<std::vector<NamedCounter>> stats = (*ethtool)->Statistics("lo");
    ASSERT_OK(stats);
    EXPECT_THAT(*stats, IsEmpty());
  });
}

TEST(EthtoolLinuxTest, AMissingDeviceIsNotFoundNamingIt) {
  InPrivateNetns([] {
    absl::StatusOr<std::unique_ptr<EthtoolLinux>> ethtool = EthtoolLinux::Create();
    ASSERT_OK(ethtool);
    absl::StatusOr<std::vector<NamedCounter>> stats = (*ethtool)->Statistics("so9");
    EXPECT_EQ(stats.status().code(), absl::StatusCode::kNotFound) << stats.status();
    EXPECT_THAT(stats.status().message(), HasSubstr("so9"));
    EXPECT_EQ((*ethtool)->Driver("a-name-far-too-long").status().code(),
              absl::StatusCode::kInvalidArgument);
  });
}

// ethtool netlink on the real kernel: lo's link state (down in a fresh
// namespace, then up), no link-down reason from a driver that gives none,
// no FEC statistics, and a missing device.
TEST(EthtoolLinuxTest, LinkStateAndFecOverEthtoolNetlink) {
  InPrivateNetns([] {
    absl::StatusOr<std::unique_ptr<EthtoolLinux>> ethtool = EthtoolLinux::Create();
    ASSERT_OK(ethtool);
    absl::StatusOr<LinkState> state = (*ethtool)->GetLinkState("lo");
    ASSERT_OK(state);
    ASSERT_TRUE(state->link.has_value());
    EXPECT_EQ(state->down_reason, "");
    absl::StatusOr<FecStats> fec = (*ethtool)->GetFecStats("lo");
    EXPECT_EQ(fec.status().code(), absl::StatusCode::kUnimplemented) << fec.status();
    EXPECT_THAT(fec.status().message(), HasSubstr("device lo: read FEC statistics (ethtool)"));
    absl::StatusOr<std::string> module = (*ethtool)->ModuleEeprom("lo", 0, 0, 0, 128);
    EXPECT_FALSE(module.ok()) << "lo has no module";
    EXPECT_THAT(module.status().message(), HasSubstr("device lo: read page 0 of its module"));
    absl::StatusOr<LinkState> missing = (*ethtool)->GetLinkState("so9");
    EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound) << missing.status();
    EXPECT_THAT(missing.status().message(), HasSubstr("device so9"));
  });
}

}  // namespace
}  // namespace rocenet::os
