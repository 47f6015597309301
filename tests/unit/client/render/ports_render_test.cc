// SPDX-License-Identifier: Apache-2.0
#include "client/render/ports_render.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::rocectl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::Port GaudiPort() {
  v1::Port port;
  port.set_id("0000:33:00.0-p1");
  port.set_name("so1");
  port.set_present(true);
  port.set_ifindex(7);
  port.set_mac("b0:fd:0b:00:00:01");
  port.set_permanent_mac("b0:fd:0b:00:00:01");
  port.set_mtu(8000);
  port.set_admin_up(true);
  port.set_carrier(true);
  port.set_speed_mbps(100000);
  port.set_pci_address("0000:33:00.0");
  port.set_pcie_root("pci0000:16");
  port.set_numa_node(0);
  port.set_module_id(3);
  port.set_port_index(1);
  port.set_rail(1);
  port.set_driver("habanalabs");
  port.set_discovery(v1::DISCOVERY_GAUDI_SYSFS);
  port.mutable_counters()->set_receive_bytes(1234);
  port.mutable_counters()->set_transmit_bytes(5678);
  port.mutable_counters()->set_receive_errors(2);
  port.mutable_counters()->set_transmit_errors(0);
  return port;
}

// The whitespace-separated fields of line `n` of a table.
std::vector<std::string> Fields(const std::string& table, int n) {
  std::vector<std::string> lines = absl::StrSplit(table, '\n');
  return absl::StrSplit(lines.at(n), ' ', absl::SkipEmpty());
}

TEST(PortStateTest, UpWhenPresentAdminUpAndCarrier) { EXPECT_EQ(PortState(GaudiPort()), "up"); }

TEST(PortStateTest, DownWhenAdminDown) {
  v1::Port port = GaudiPort();
  port.set_admin_up(false);
  EXPECT_EQ(PortState(port), "down");
}

TEST(PortStateTest, DownWhenNoCarrier) {
  v1::Port port = GaudiPort();
  port.set_carrier(false);
  EXPECT_EQ(PortState(port), "down");
}

TEST(PortStateTest, MissingWinsOverEverythingElse) {
  v1::Port port = GaudiPort();
  port.set_present(false);
  EXPECT_EQ(PortState(port), "missing");
  port.set_admin_up(false);
  EXPECT_EQ(PortState(port), "missing");
}

TEST(FormatSpeedTest, UsesTheUnitsNicsAreSoldIn) {
  EXPECT_EQ(FormatSpeed(0), "-");
  EXPECT_EQ(FormatSpeed(100), "100M");
  EXPECT_EQ(FormatSpeed(1000), "1G");
  EXPECT_EQ(FormatSpeed(2500), "2.5G");
  EXPECT_EQ(FormatSpeed(10000), "10G");
  EXPECT_EQ(FormatSpeed(25000), "25G");
  EXPECT_EQ(FormatSpeed(100000), "100G");
  EXPECT_EQ(FormatSpeed(400000), "400G");
  EXPECT_EQ(FormatSpeed(1250), "1.25G");
  EXPECT_EQ(FormatSpeed(1001), "1.001G");
}

TEST(DiscoveryNameTest, NamesEveryKind) {
  EXPECT_EQ(DiscoveryName(v1::DISCOVERY_GAUDI_SYSFS), "gaudi-sysfs");
  EXPECT_EQ(DiscoveryName(v1::DISCOVERY_INTERFACE_NAME), "interface-name");
  EXPECT_EQ(DiscoveryName(v1::DISCOVERY_DRIVER), "driver");
  EXPECT_EQ(DiscoveryName(v1::DISCOVERY_UNSPECIFIED), "-");
}

TEST(RenderPortTableTest, DefaultColumns) {
  v1::ListPortsResponse response;
  *response.add_ports() = GaudiPort();
  const std::string table = RenderPortTable(response.ports(), /*wide=*/false);
  EXPECT_THAT(Fields(table, 0),
              ElementsAre("NAME", "ID", "STATE", "MTU", "SPEED", "MAC", "PCI", "MODULE", "NUMA"));
  EXPECT_THAT(Fields(table, 1), ElementsAre("so1", "0000:33:00.0-p1", "up", "8000", "100G",
                                            "b0:fd:0b:00:00:01", "0000:33:00.0", "3", "0"));
}

TEST(RenderPortTableTest, UnknownValuesAreDashes) {
  v1::Port port;
  port.set_id("if-so9");
  port.set_name("so9");
  port.set_present(false);
  port.set_module_id(-1);
  port.set_numa_node(-1);
  port.set_port_index(-1);
  const std::string table = RenderPortTable(port, /*wide=*/false);
  EXPECT_THAT(Fields(table, 1),
              ElementsAre("so9", "if-so9", "missing", "-", "-", "-", "-", "-", "-"));
}

TEST(RenderPortTableTest, WideAddsDetailsAndCounters) {
  v1::Port port = GaudiPort();
  port.set_firmware_version("1.21.0-fw-52.4.0");
  const std::string table = RenderPortTable(port, /*wide=*/true);
  const std::vector<std::string> lines = absl::StrSplit(table, '\n');
  EXPECT_THAT(lines[0], HasSubstr("IFINDEX   PERM MAC"));
  EXPECT_THAT(lines[0], HasSubstr("   PCIE ROOT "));
  EXPECT_THAT(lines[0],
              HasSubstr("   PORT INDEX   RAIL   RDMA   UVERBS   GID INDEX   PFC   SWITCH PFC"
                        "   RX BYTES   TX BYTES   RX ERRORS   TX ERRORS   FIRMWARE"));
  EXPECT_THAT(lines[0], ::testing::EndsWith("   RDMA STATE   DOWN REASON"));
  EXPECT_THAT(Fields(table, 1),
              ElementsAre("so1", "0000:33:00.0-p1", "up", "8000", "100G", "b0:fd:0b:00:00:01",
                          "0000:33:00.0", "3", "0", "7", "b0:fd:0b:00:00:01", "habanalabs",
                          "gaudi-sysfs", "pci0000:16", "1", "1", "-", "-", "-", "-", "-", "1234",
                          "5678", "2", "0", "1.21.0-fw-52.4.0", "-", "-"));
}

TEST(RenderPortTableTest, WideShowsTheRdmaStateAndWhyTheLinkIsDown) {
  v1::Port port = GaudiPort();
  port.mutable_rdma()->set_device("mlx5_0");
  port.mutable_rdma()->set_port(1);
  port.mutable_rdma()->set_state("DOWN");
  port.mutable_rdma()->set_physical_state("Phy Test");
  port.set_link_down_reason("LINK_TRAINING_FAILURE");
  port.set_link_down_detail("KR_FRAME_LOCK_NOT_ACQUIRED");
  std::vector<std::string> row = Fields(RenderPortTable(port, /*wide=*/true), 1);
  ASSERT_GE(row.size(), 2u);
  EXPECT_EQ(row[row.size() - 2], "DOWN/Phy_Test");
  EXPECT_EQ(row[row.size() - 1], "LINK_TRAINING_FAILURE/KR_FRAME_LOCK_NOT_ACQUIRED");
}

TEST(RenderPortTableTest, WideShowsThePortsAndTheSwitchsPfc) {
  v1::Port port = GaudiPort();
  v1::PortPfc* pfc = port.mutable_pfc();
  pfc->set_supported(true);
  for (uint32_t p : {0, 1, 2, 3}) pfc->add_enabled_priorities(p);
  pfc->set_switch_advertised(true);
  pfc->add_switch_priorities(3);
  std::vector<std::string> row = Fields(RenderPortTable(port, /*wide=*/true), 1);
  ASSERT_GE(row.size(), 21u);
  EXPECT_THAT(std::vector<std::string>(row.begin() + 19, row.begin() + 21),
              ElementsAre("0-3", "3"));
  pfc->clear_enabled_priorities();
  pfc->clear_switch_priorities();
  row = Fields(RenderPortTable(port, /*wide=*/true), 1);
  EXPECT_THAT(std::vector<std::string>(row.begin() + 19, row.begin() + 21),
              ElementsAre("none", "none"));
  pfc->set_supported(false);
  pfc->set_switch_advertised(false);
  row = Fields(RenderPortTable(port, /*wide=*/true), 1);
  EXPECT_THAT(std::vector<std::string>(row.begin() + 19, row.begin() + 21),
              ElementsAre("no-dcb", "-"));
}

TEST(RenderPortTableTest, WideShowsTheRdmaDeviceAndGidIndex) {
  v1::Port port = GaudiPort();
  port.mutable_rdma()->set_device("mlx5_0");
  port.mutable_rdma()->set_port(1);
  port.mutable_rdma()->set_uverbs("uverbs0");
  port.mutable_rdma()->set_gid_index(3);
  std::vector<std::string> row = Fields(RenderPortTable(port, /*wide=*/true), 1);
  ASSERT_GE(row.size(), 19u);
  EXPECT_THAT(std::vector<std::string>(row.begin() + 16, row.begin() + 19),
              ElementsAre("mlx5_0/1", "uverbs0", "3"));
  // No address yet: no GID index.
  port.mutable_rdma()->set_gid_index(-1);
  row = Fields(RenderPortTable(port, /*wide=*/true), 1);
  EXPECT_EQ(row[18], "-");
}

TEST(RenderPortTableTest, KeepsTheDaemonsOrder) {
  v1::ListPortsResponse response;
  for (const char* name : {"so3", "so1", "so2"}) {
    v1::Port* port = response.add_ports();
    *port = GaudiPort();
    port->set_name(name);
  }
  const std::string table = RenderPortTable(response.ports(), /*wide=*/false);
  EXPECT_EQ(Fields(table, 1)[0], "so3");
  EXPECT_EQ(Fields(table, 2)[0], "so1");
  EXPECT_EQ(Fields(table, 3)[0], "so2");
}

}  // namespace
}  // namespace rocenet::rocectl
