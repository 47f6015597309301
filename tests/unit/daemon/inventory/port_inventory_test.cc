// SPDX-License-Identifier: Apache-2.0
#include "daemon/inventory/port_inventory.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_ethtool.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/fakes/fake_sysfs.h"
#include "tests/unit/fakes/gaudi_tree.h"

namespace rocenet::inventory {
namespace {

using ::rocenet::testing::AddGaudiDevice;
using ::rocenet::testing::FakeEthtool;
using ::rocenet::testing::FakeSysfs;
using ::rocenet::testing::MakeLink;
using ::testing::ElementsAre;
using ::testing::Field;

os::LinkEvent Changed(const os::LinkInfo& link) { return {os::LinkEvent::Type::kChanged, link}; }
os::LinkEvent Removed(const os::LinkInfo& link) { return {os::LinkEvent::Type::kRemoved, link}; }

std::vector<std::string> Names(const PortInventory& inventory) {
  std::vector<std::string> out;
  for (const Port& port : inventory.ports()) out.push_back(port.name);
  return out;
}

class GaudiInventoryTest : public ::testing::Test {
 protected:
  GaudiInventoryTest() {
    AddGaudiDevice(sysfs_, "pci0000:17", "0000:19:00.0", 0, 0,
                   {{"so0", 8}, {"so1", 22}, {"so2", 23}, {"int0", 1}});
    AddGaudiDevice(sysfs_, "pci0000:97", "0000:99:00.0", 4, 1, {{"so3", 8}});
  }
  FakeSysfs sysfs_;
};

TEST_F(GaudiInventoryTest, FindsGaudiPortsWithPlacementFromSysfs) {
  PortSelection selection;
  selection.gaudi_scale_out_ports = {8, 22, 23};
  PortInventory inventory(selection, &sysfs_);
  EXPECT_TRUE(inventory.Resync({MakeLink(2, "so0"), MakeLink(3, "so1"), MakeLink(4, "so2"),
                                MakeLink(5, "int0"), MakeLink(6, "so3"), MakeLink(7, "eth0")}));

  ASSERT_THAT(Names(inventory), ElementsAre("so0", "so1", "so2", "so3"));
  const Port* so1 = inventory.Find("so1");
  ASSERT_NE(so1, nullptr);
  EXPECT_EQ(so1->id, "0000:19:00.0-p22");
  EXPECT_TRUE(so1->present);
  EXPECT_EQ(so1->discovery, Discovery::kGaudiSysfs);
  EXPECT_EQ(so1->pci.address, "0000:19:00.0");
  EXPECT_EQ(so1->pci.pcie_root, "pci0000:17");
  EXPECT_EQ(so1->pci.driver, "habanalabs");
  EXPECT_EQ(so1->pci.numa_node, 0);
  EXPECT_EQ(so1->pci.module_id, 0);
  EXPECT_EQ(so1->pci.port_index, 22);
  EXPECT_EQ(so1->link.ifindex, 3);

  const Port* so3 = inventory.Find("0000:99:00.0-p8");
  ASSERT_NE(so3, nullptr);
  EXPECT_EQ(so3->name, "so3");
  EXPECT_EQ(so3->pci.module_id, 4);
  EXPECT_EQ(so3->pci.numa_node, 1);
  EXPECT_EQ(so3->pci.pcie_root, "pci0000:97");
}

TEST_F(GaudiInventoryTest, WithoutScaleOutListEveryDriverPortIsManaged) {
  PortInventory inventory(PortSelection{}, &sysfs_);
  inventory.Resync({MakeLink(2, "so0"), MakeLink(5, "int0")});
  EXPECT_THAT(Names(inventory), ElementsAre("int0", "so0", "so1", "so2", "so3"));
  EXPECT_FALSE(inventory.Find("so1")->present);
}

TEST_F(GaudiInventoryTest, CarrierChangeIsAChangeButCountersAreNot) {
  PortInventory inventory(PortSelection{}, &sysfs_);
  os::LinkInfo so0 = MakeLink(2, "so0");
  inventory.Resync({so0});

  so0.stats.rx_bytes = 1000;
  EXPECT_FALSE(inventory.Apply(Changed(so0)));
  EXPECT_EQ(inventory.Find("so0")->link.stats.rx_bytes, 1000u);

  so0.carrier = false;
  so0.oper_state = os::OperState::kLowerLayerDown;
  EXPECT_TRUE(inventory.Apply(Changed(so0)));
  EXPECT_FALSE(inventory.Find("so0")->link.carrier);
}

TEST_F(GaudiInventoryTest, PortThatAppearsLaterIsPickedUpFromANewSysfsScan) {
  PortInventory inventory(PortSelection{}, &sysfs_);
  inventory.Resync({MakeLink(2, "so0")});
  ASSERT_EQ(inventory.Find("so9"), nullptr);

  AddGaudiDevice(sysfs_, "pci0000:27", "0000:29:00.0", 1, 0, {{"so9", 8}});
  EXPECT_TRUE(inventory.Apply(Changed(MakeLink(11, "so9"))));
  const Port* so9 = inventory.Find("so9");
  ASSERT_NE(so9, nullptr);
  EXPECT_TRUE(so9->present);
  EXPECT_EQ(so9->pci.module_id, 1);
}

TEST_F(GaudiInventoryTest, RemovedNetdevDropsOutWhenSysfsForgetsIt) {
  PortInventory inventory(PortSelection{}, &sysfs_);
  os::LinkInfo so3 = MakeLink(6, "so3");
  inventory.Resync({so3});
  sysfs_.Remove("devices/pci0000:97/0000:97:01.0/0000:99:00.0/net/so3");
  EXPECT_TRUE(inventory.Apply(Removed(so3)));
  EXPECT_EQ(inventory.Find("so3"), nullptr);
}

TEST_F(GaudiInventoryTest, EachPortHasItsRdmaDeviceAndKeepsItInAPod) {
  // hbl_0 serves so0 and so1; so1 has an address (a RoCE v2 GID).
  sysfs_.AddFile("class/infiniband/hbl_0/ports/1/gid_attrs/ndevs/0", "so0");
  sysfs_.AddFile("class/infiniband/hbl_0/ports/1/gid_attrs/types/0", "IB/RoCE v1");
  sysfs_.AddFile("class/infiniband/hbl_0/ports/1/gids/0",
                 "fe80:0000:0000:0000:0000:0000:0000:0001");
  sysfs_.AddFile("class/infiniband/hbl_0/ports/2/gid_attrs/ndevs/1", "so1");
  sysfs_.AddFile("class/infiniband/hbl_0/ports/2/gid_attrs/types/1", "RoCE v2");
  sysfs_.AddFile("class/infiniband/hbl_0/ports/2/gids/1",
                 "0000:0000:0000:0000:0000:ffff:0ac8:0201");
  sysfs_.AddFile("class/infiniband_verbs/uverbs0/ibdev", "hbl_0");
  PortInventory inventory(PortSelection{}, &sysfs_);
  os::LinkInfo so1 = MakeLink(3, "so1");
  inventory.Resync({MakeLink(2, "so0"), so1});
  ASSERT_TRUE(inventory.Find("so1")->rdma.has_value());
  EXPECT_EQ(inventory.Find("so1")->rdma->gid_index, 1);
  EXPECT_EQ(inventory.Find("so1")->rdma->uverbs, "uverbs0");
  EXPECT_EQ(inventory.Find("so0")->rdma->gid_index, -1);
  EXPECT_FALSE(inventory.Find("so2")->rdma.has_value());  // not present
  // In a pod the GID table names it by its pod name; the host keeps what it saw.
  inventory.SetAttached({{"0000:19:00.0-p22", "so1", "0000:19:00.0", "/run/netns/p"}});
  sysfs_.AddFile("class/infiniband/hbl_0/ports/2/gid_attrs/ndevs/1", "net1");
  inventory.Apply(Removed(so1));
  inventory.Resync({MakeLink(2, "so0")});
  const Port* away = inventory.Find("0000:19:00.0-p22");
  ASSERT_NE(away, nullptr);
  ASSERT_TRUE(away->rdma.has_value());
  EXPECT_EQ(away->rdma->device, "hbl_0");
  EXPECT_EQ(away->rdma->gid_index, 1);
}

TEST_F(GaudiInventoryTest, APortInAPodStaysListedWhenSysfsHidesIt) {
  PortInventory inventory(PortSelection{}, &sysfs_);
  os::LinkInfo so1 = MakeLink(3, "so1");
  inventory.Resync({MakeLink(2, "so0"), so1, MakeLink(4, "so2")});
  // Moved into a pod: the kernel takes it out of the host's sysfs and says
  // the link is gone.
  EXPECT_TRUE(inventory.SetAttached({{"0000:19:00.0-p22", "so1", "0000:19:00.0", "/run/netns/p"}}));
  sysfs_.Remove("devices/pci0000:17/0000:17:01.0/0000:19:00.0/net/so1");
  sysfs_.Remove("class/net/so1");
  inventory.Apply(Removed(so1));

  const Port* port = inventory.Find("0000:19:00.0-p22");
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->name, "so1");
  EXPECT_FALSE(port->present);
  EXPECT_EQ(port->attached_to, "/run/netns/p");
  EXPECT_EQ(port->discovery, Discovery::kGaudiSysfs);
  EXPECT_EQ(port->pci.address, "0000:19:00.0");
  EXPECT_EQ(port->pci.port_index, 22);
  EXPECT_EQ(port->pci.module_id, 0);
  EXPECT_EQ(port->pci.numa_node, 0);
  EXPECT_EQ(port->pci.pcie_root, "pci0000:17");
  EXPECT_EQ(port->pci.driver, "habanalabs");

  // Home again under another name (a pod that died): the same port.
  EXPECT_TRUE(inventory.SetAttached({}));
  AddGaudiDevice(sysfs_, "pci0000:17", "0000:19:00.0", 0, 0, {{"net1", 22}});
  inventory.Apply(Changed(MakeLink(3, "net1")));
  port = inventory.Find("0000:19:00.0-p22");
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->name, "net1");
  EXPECT_TRUE(port->present);
  EXPECT_TRUE(port->attached_to.empty());
  EXPECT_THAT(Names(inventory), ElementsAre("int0", "net1", "so0", "so2", "so3"));
}

TEST_F(GaudiInventoryTest, AnAttachedPortStillInSysfsIsMarkedNotDoubled) {
  PortInventory inventory(PortSelection{}, &sysfs_);
  inventory.Resync({MakeLink(2, "so0")});
  const size_t before = inventory.ports().size();
  inventory.SetAttached({{"0000:19:00.0-p8", "so0", "0000:19:00.0", "/run/netns/p"}});
  EXPECT_EQ(inventory.ports().size(), before);
  EXPECT_EQ(inventory.Find("so0")->attached_to, "/run/netns/p");
}

TEST_F(GaudiInventoryTest, MacCountersAreReadOnADumpAndKeptAcrossEvents) {
  FakeEthtool ethtool;
  ethtool.SetDriver("so0", "habanalabs_en");
  ethtool.SetStatistic("so0", "OctetsReceivedOK", 4096);
  ethtool.SetStatistic("so0", "ifInErrors", 3);
  PortInventory inventory(PortSelection{}, &sysfs_, &ethtool);
  inventory.Resync({MakeLink(2, "so0")});
  ASSERT_TRUE(inventory.Find("so0")->mac.has_value());
  EXPECT_EQ(inventory.Find("so0")->mac->receive_errors, 3u);

  // A counter moving is no change of the ports, and an event keeps the last
  // reading.
  ethtool.SetStatistic("so0", "ifInErrors", 9);
  EXPECT_FALSE(inventory.Resync({MakeLink(2, "so0")}));
  os::LinkInfo down = MakeLink(2, "so0");
  down.carrier = false;
  EXPECT_TRUE(inventory.Apply(Changed(down)));
  EXPECT_EQ(inventory.Find("so0")->mac->receive_errors, 9u);
}

TEST(InterfaceInventoryTest, DriverSelectionAlsoMatchesTheEthtoolDriverName) {
  // veth has no PCI device, so no sysfs driver link: only ethtool names it.
  FakeSysfs sysfs;
  FakeEthtool ethtool;
  ethtool.SetDriver("v0", "veth");
  ethtool.SetDriver("eth0", "virtio_net");
  PortSelection selection;
  selection.drivers = {"veth"};
  PortInventory inventory(selection, &sysfs, &ethtool);
  inventory.Resync({MakeLink(2, "v0"), MakeLink(3, "eth0"), MakeLink(4, "lo")});
  EXPECT_THAT(Names(inventory), ElementsAre("v0"));
  EXPECT_EQ(inventory.Find("v0")->discovery, Discovery::kDriver);
  EXPECT_EQ(inventory.Find("v0")->pci.netdev_driver, "veth");
}

// `ethtool -i`'s firmware-version, of a port found by its driver and of a
// Gaudi port found in sysfs; none where the driver gives none.
TEST(InterfaceInventoryTest, TheFirmwareIsWhatTheDriverReports) {
  FakeSysfs sysfs;
  AddGaudiDevice(sysfs, "pci0000:17", "0000:19:00.0", 0, 0, {{"a0", 17}});
  FakeEthtool ethtool;
  ethtool.SetDriver("a0", "habanalabs_en", "1.21.0-fw-52.4.0");
  ethtool.SetDriver("v0", "veth");
  PortSelection selection;
  selection.drivers = {"veth"};
  PortInventory inventory(selection, &sysfs, &ethtool);
  inventory.Resync({MakeLink(2, "a0"), MakeLink(3, "v0")});
  ASSERT_NE(inventory.Find("a0"), nullptr);
  EXPECT_EQ(inventory.Find("a0")->pci.firmware_version, "1.21.0-fw-52.4.0");
  EXPECT_EQ(inventory.Find("a0")->pci.netdev_driver, "") << "a Gaudi port keeps its sysfs driver";
  EXPECT_EQ(inventory.Find("v0")->pci.firmware_version, "");
}

TEST(RailTest, TheRailIsTheScaleOutOrderInsideTheModuleNotTheDevPort) {
  // Gaudi 3 (HLS-3): module 0 uses NIC indices 17, 20, 21, module 1 5, 8, 9.
  FakeSysfs sysfs;
  AddGaudiDevice(sysfs, "pci0000:17", "0000:19:00.0", 0, 0, {{"a0", 17}, {"a1", 20}, {"a2", 21}});
  AddGaudiDevice(sysfs, "pci0000:27", "0000:29:00.0", 1, 0, {{"b0", 5}, {"b1", 8}, {"b2", 9}});
  PortInventory inventory(PortSelection{}, &sysfs);
  inventory.Resync({MakeLink(2, "a0"), MakeLink(3, "a1"), MakeLink(4, "a2"), MakeLink(5, "b0"),
                    MakeLink(6, "b1"), MakeLink(7, "b2")});
  std::map<std::string, int> rails;
  for (const Port& port : inventory.ports()) rails[port.name] = port.pci.rail;
  EXPECT_EQ(rails, (std::map<std::string, int>{
                       {"a0", 0}, {"a1", 1}, {"a2", 2}, {"b0", 0}, {"b1", 1}, {"b2", 2}}));
}

TEST(RailTest, PortsWithoutAModuleHaveNoRail) {
  FakeSysfs sysfs;
  PortSelection selection;
  selection.interfaces = {"eth*"};
  PortInventory inventory(selection, &sysfs);
  inventory.Resync({MakeLink(2, "eth0")});
  EXPECT_EQ(inventory.Find("eth0")->pci.rail, -1);
}

TEST(InterfaceInventoryTest, GlobsSelectLinksAndMissingLiteralNamesAreReported) {
  FakeSysfs sysfs;
  PortSelection selection;
  selection.gaudi = false;
  selection.interfaces = {"so*", "eth9"};
  PortInventory inventory(selection, &sysfs);
  inventory.Resync({MakeLink(2, "so0"), MakeLink(3, "so1"), MakeLink(4, "eth0")});

  ASSERT_THAT(Names(inventory), ElementsAre("eth9", "so0", "so1"));
  const Port* eth9 = inventory.Find("eth9");
  EXPECT_FALSE(eth9->present);
  EXPECT_EQ(eth9->id, "if-eth9");
  const Port* so0 = inventory.Find("so0");
  EXPECT_TRUE(so0->present);
  EXPECT_EQ(so0->discovery, Discovery::kInterfaceName);
  EXPECT_EQ(so0->id, "if-so0");

  // The missing port shows up once created, without restart.
  EXPECT_TRUE(inventory.Apply(Changed(MakeLink(9, "eth9"))));
  EXPECT_TRUE(inventory.Find("eth9")->present);
  EXPECT_TRUE(inventory.Apply(Removed(MakeLink(9, "eth9"))));
  EXPECT_FALSE(inventory.Find("eth9")->present);
}

TEST(InterfaceInventoryTest, PermanentMacGivesTheIdWhenThereIsNoPciAddress) {
  FakeSysfs sysfs;
  PortSelection selection;
  selection.gaudi = false;
  selection.interfaces = {"ens1"};
  PortInventory inventory(selection, &sysfs);
  os::LinkInfo link = MakeLink(2, "ens1");
  link.permanent_mac = MacAddress({0xb4, 0x96, 0x91, 0x0a, 0x0b, 0x0c});
  inventory.Resync({link});
  EXPECT_EQ(inventory.Find("ens1")->id, "mac-b496910a0b0c");
}

TEST(InterfaceInventoryTest, DriverSelectionUsesTheSysfsDriverLink) {
  FakeSysfs sysfs;
  const std::string dev = "devices/pci0000:00/0000:00:02.0/0000:3b:00.1";
  sysfs.AddFile(dev + "/numa_node", "1\n");
  sysfs.AddDirectory("bus/pci/drivers/mlx5_core");
  sysfs.AddLink(dev + "/driver", "bus/pci/drivers/mlx5_core");
  sysfs.AddFile(dev + "/net/ens2f1np1/dev_port", "1\n");
  sysfs.AddLink("class/net/ens2f1np1", dev + "/net/ens2f1np1");
  sysfs.AddLink(dev + "/net/ens2f1np1/device", dev);

  FakeEthtool ethtool;
  ethtool.SetDriver("ens2f1np1", "mlx5_core");
  ethtool.SetDriver("eth0", "virtio_net");

  PortSelection selection;
  selection.gaudi = false;
  selection.drivers = {"mlx5_core"};
  PortInventory inventory(selection, &sysfs, &ethtool);
  inventory.Resync({MakeLink(2, "ens2f1np1"), MakeLink(3, "eth0")});
  ASSERT_THAT(Names(inventory), ElementsAre("ens2f1np1"));
  const Port* port = inventory.Find("ens2f1np1");
  EXPECT_EQ(port->discovery, Discovery::kDriver);
  EXPECT_EQ(port->id, "0000:3b:00.1-p1");
  EXPECT_EQ(port->pci.numa_node, 1);
  EXPECT_EQ(port->pci.pcie_root, "pci0000:00");
  // Matched by the PCI driver, the net device's own name is known too.
  EXPECT_EQ(port->pci.netdev_driver, "mlx5_core");
}

TEST(InterfaceInventoryTest, ResyncThatOnlyRefreshesCountersReportsNoChange) {
  FakeSysfs sysfs;
  PortSelection selection;
  selection.gaudi = false;
  selection.interfaces = {"so*"};
  PortInventory inventory(selection, &sysfs);
  os::LinkInfo so0 = MakeLink(2, "so0");
  EXPECT_TRUE(inventory.Resync({so0}));
  so0.stats.tx_packets = 7;
  EXPECT_FALSE(inventory.Resync({so0}));
  EXPECT_EQ(inventory.Find("so0")->link.stats.tx_packets, 7u);
}

}  // namespace
}  // namespace rocenet::inventory
