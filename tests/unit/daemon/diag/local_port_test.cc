// SPDX-License-Identifier: Apache-2.0
// Which of the node's ports takes part in a test with a given address: by
// rail where rocenetd named one, by network for a caller that names none.
#include "daemon/diag/local_port.h"

#include "gtest/gtest.h"

namespace rocenet::diag {
namespace {

LocalPort Port(const std::string& name, const std::string& address, const std::string& network,
               const std::string& rail) {
  LocalPort port;
  port.name = name;
  port.address = *Ipv4Prefix::Parse(address);
  port.network = *Ipv4Prefix::Parse(network);
  port.rail = rail;
  return port;
}

TEST(FindPortInRailTest, OnAFlatFabricTheRailPicksThePort) {
  // Two module rails routing one network.
  const std::vector<LocalPort> ports = {Port("so0", "10.200.0.1/30", "10.200.0.0/16", "0"),
                                        Port("so1", "10.200.10.1/30", "10.200.0.0/16", "1")};
  const Ipv4Address peer = *Ipv4Address::Parse("10.200.11.1");
  ASSERT_NE(FindPortInRail(ports, "1", peer), nullptr);
  EXPECT_EQ(FindPortInRail(ports, "1", peer)->name, "so1");
  EXPECT_EQ(FindPortInRail(ports, "0", peer)->name, "so0");
  // A caller that names no rail, or names it by network (an older peer):
  // the first port that reaches the address.
  EXPECT_EQ(FindPortInRail(ports, "", peer)->name, "so0");
  EXPECT_EQ(FindPortInRail(ports, "10.200.0.0/16", peer)->name, "so0");
  EXPECT_EQ(FindPortInRail(ports, "1", *Ipv4Address::Parse("10.9.0.1")), nullptr);
}

TEST(FindPortInRailTest, ARailThatDoesNotReachTheAddressIsNotUsed) {
  const std::vector<LocalPort> ports = {Port("so0", "10.201.0.1/30", "10.201.0.0/16", "0"),
                                        Port("so1", "10.202.0.1/30", "10.202.0.0/16", "1")};
  // Asked for rail 0 with an address only rail 1 reaches: that port.
  EXPECT_EQ(FindPortInRail(ports, "0", *Ipv4Address::Parse("10.202.5.1"))->name, "so1");
}

}  // namespace
}  // namespace rocenet::diag
