// SPDX-License-Identifier: Apache-2.0
// RdmaScanner over a fake sysfs laid out as the kernel's RDMA core does it:
// the GID table ties a net device to its RDMA device, and the RoCE v2 GID of
// the port's IPv4 address gives the GID index.
#include "daemon/inventory/rdma_scanner.h"

#include <map>
#include <tuple>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_sysfs.h"

namespace rocenet::inventory {
namespace {

// Port 1 of `device`.
RdmaInfo FirstPortOf(const std::string& device) {
  RdmaInfo info;
  info.device = device;
  info.port = 1;
  return info;
}

using ::testing::IsEmpty;

constexpr char kLinkLocal[] = "fe80:0000:0000:0000:0202:c9ff:fe00:0001";
constexpr char kIpv4[] = "0000:0000:0000:0000:0000:ffff:0ac8:0101";  // 10.200.1.1

// One GID table slot: the net device, the GID type and the GID.
using Slot = std::tuple<std::string, std::string, std::string>;

void AddRdmaPort(testing::FakeSysfs& sysfs, const std::string& device, int port,
                 const std::map<int, Slot>& slots) {
  const std::string dir = "class/infiniband/" + device + "/ports/" + std::to_string(port) + "/";
  for (const auto& [index, slot] : slots) {
    const auto& [netdev, type, gid] = slot;
    sysfs.AddFile(dir + "gid_attrs/ndevs/" + std::to_string(index), netdev);
    sysfs.AddFile(dir + "gid_attrs/types/" + std::to_string(index), type);
    sysfs.AddFile(dir + "gids/" + std::to_string(index), gid);
  }
}

TEST(RdmaScannerTest, TheRoceV2GidOfTheAddressAndTheVerbsNode) {
  testing::FakeSysfs sysfs;
  AddRdmaPort(sysfs, "mlx5_0", 1,
              {{0, {"ens1f0", "IB/RoCE v1", kLinkLocal}},
               {1, {"ens1f0", "RoCE v2", kLinkLocal}},
               {2, {"ens1f0", "IB/RoCE v1", kIpv4}},
               {3, {"ens1f0", "RoCE v2", kIpv4}}});
  AddRdmaPort(sysfs, "mlx5_1", 1, {{0, {"ens1f1", "IB/RoCE v1", kLinkLocal}}});
  sysfs.AddFile("class/infiniband_verbs/uverbs0/ibdev", "mlx5_0");
  sysfs.AddFile("class/infiniband_verbs/uverbs1/ibdev", "mlx5_1");
  sysfs.AddFile("class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE");
  sysfs.AddFile("class/infiniband/mlx5_0/ports/1/phys_state", "5: LinkUp");
  sysfs.AddFile("class/infiniband/mlx5_1/ports/1/state", "1: DOWN");
  sysfs.AddFile("class/infiniband/mlx5_1/ports/1/phys_state", "3: Disabled");
  std::map<std::string, RdmaInfo> found = RdmaScanner(&sysfs).Scan();
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found["ens1f0"], (RdmaInfo{.device = "mlx5_0",
                                       .port = 1,
                                       .uverbs = "uverbs0",
                                       .gid_index = 3,
                                       .gid_ipv4 = "10.200.1.1",
                                       .state = 4,
                                       .state_name = "ACTIVE",
                                       .physical_state = 5,
                                       .physical_state_name = "LinkUp"}));
  // No address yet: the device is known, the GID index is not.
  EXPECT_EQ(found["ens1f1"], (RdmaInfo{.device = "mlx5_1",
                                       .port = 1,
                                       .uverbs = "uverbs1",
                                       .gid_index = -1,
                                       .gid_ipv4 = "",
                                       .state = 1,
                                       .state_name = "DOWN",
                                       .physical_state = 3,
                                       .physical_state_name = "Disabled"}));
}

TEST(RdmaScannerTest, ReadStateFollowsTheDevice) {
  testing::FakeSysfs sysfs;
  sysfs.AddFile("class/infiniband/rxe0/ports/1/state", "4: ACTIVE");
  sysfs.AddFile("class/infiniband/rxe0/ports/1/phys_state", "5: LinkUp");
  RdmaInfo info = FirstPortOf("rxe0");
  RdmaScanner(&sysfs).ReadState(info);
  EXPECT_EQ(info.state_name, "ACTIVE");
  // The device left with its port (exclusive RDMA namespaces): unknown.
  sysfs.Remove("class/infiniband/rxe0");
  RdmaScanner(&sysfs).ReadState(info);
  EXPECT_EQ(info.state, 0);
  EXPECT_EQ(info.state_name, "");
  EXPECT_EQ(info.physical_state_name, "");
}

TEST(RdmaScannerTest, ParsePortState) {
  EXPECT_EQ(ParsePortState("4: ACTIVE"), (std::pair<int, std::string>(4, "ACTIVE")));
  EXPECT_EQ(ParsePortState("2: INIT"), (std::pair<int, std::string>(2, "INIT")));
  EXPECT_EQ(ParsePortState("ACTIVE"), (std::pair<int, std::string>(0, "")));
  EXPECT_EQ(ParsePortState(""), (std::pair<int, std::string>(0, "")));
}

TEST(RdmaScannerTest, TwoNetdevsOnOneDeviceAndADeviceWithoutVerbsNode) {
  testing::FakeSysfs sysfs;
  AddRdmaPort(sysfs, "hbl_0", 1, {{0, {"so0", "RoCE v2", kIpv4}}});
  AddRdmaPort(sysfs, "hbl_0", 2,
              {{0, {"so1", "RoCE v2", "0000:0000:0000:0000:0000:ffff:0ac8:0201"}}});
  std::map<std::string, RdmaInfo> found = RdmaScanner(&sysfs).Scan();
  EXPECT_EQ(found["so0"].port, 1);
  EXPECT_EQ(found["so1"].port, 2);
  EXPECT_EQ(found["so1"].gid_ipv4, "10.200.2.1");
  EXPECT_EQ(found["so1"].uverbs, "");
}

TEST(RdmaScannerTest, NoRdmaIsNothing) {
  testing::FakeSysfs sysfs;
  EXPECT_THAT(RdmaScanner(&sysfs).Scan(), IsEmpty());
}

TEST(RdmaScannerTest, Ipv4OfGid) {
  EXPECT_EQ(Ipv4OfGid(kIpv4), "10.200.1.1");
  EXPECT_EQ(Ipv4OfGid("0000:0000:0000:0000:0000:FFFF:C0A8:0A01"), "192.168.10.1");
  EXPECT_EQ(Ipv4OfGid(kLinkLocal), "");
  EXPECT_EQ(Ipv4OfGid("0000:0000:0000:0000:0000:ffff:0ac8"), "");
  EXPECT_EQ(Ipv4OfGid("0000:0000:0000:0000:0000:ffff:0ac8:01"), "");
  EXPECT_EQ(Ipv4OfGid("0000:0000:0000:0000:0000:0000:0000:0000"), "");
}

}  // namespace
}  // namespace rocenet::inventory
