// SPDX-License-Identifier: Apache-2.0
// What the inventory asks a port's driver over ethtool netlink beside its
// statistics: the link-down reason while the carrier is down, FEC
// codewords, and the transceiver's EEPROM every kModuleReadEvery dumps.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/inventory/port_inventory.h"
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

os::LinkEvent LinkChanged(const os::LinkInfo& link) {
  return {os::LinkEvent::Type::kChanged, link};
}

class EthtoolInventoryTest : public ::testing::Test {
 protected:
  EthtoolInventoryTest() {
    AddGaudiDevice(sysfs_, "pci0000:17", "0000:19:00.0", 0, 0, {{"so0", 8}, {"so1", 22}});
  }
  FakeSysfs sysfs_;
};

// The driver's reason for a link down, read while the carrier is down and
// told as a change; FEC codewords from ethtool netlink before the
// statistics' names; a driver without FEC statistics is not asked again.
TEST_F(EthtoolInventoryTest, LinkDownReasonAndFecFromEthtoolNetlink) {
  FakeEthtool ethtool;
  ethtool.SetDriver("so0", "mlx5_core");
  ethtool.SetDriver("so1", "mlx5_core");
  ethtool.SetStatistic("so0", "rx_corrected_bits_phy", 500);
  ethtool.SetFecStats("so0", {.corrected_blocks = 42, .uncorrectable_blocks = 1});
  ethtool.SetLinkState("so0", {.link = false,
                               .down_reason = "LINK_TRAINING_FAILURE",
                               .down_detail = "KR_FRAME_LOCK_NOT_ACQUIRED"});
  PortInventory inventory(PortSelection{}, &sysfs_, &ethtool);
  inventory.Resync({MakeLink(2, "so0"), MakeLink(3, "so1")});
  const Port* so0 = inventory.Find("so0");
  EXPECT_EQ(so0->events.fec,
            (std::map<std::string, uint64_t>{
                {"corrected_bits", 500}, {"corrected_blocks", 42}, {"uncorrectable_blocks", 1}}));
  EXPECT_EQ(so0->link_down_reason, "") << "the carrier is up: no reason asked";
  const int asked = ethtool.fec_calls();
  os::LinkInfo down = MakeLink(2, "so0");
  down.carrier = false;
  EXPECT_TRUE(inventory.Resync({down, MakeLink(3, "so1")}));
  EXPECT_EQ(inventory.Find("so0")->link_down_reason, "LINK_TRAINING_FAILURE");
  EXPECT_EQ(inventory.Find("so0")->link_down_detail, "KR_FRAME_LOCK_NOT_ACQUIRED");
  EXPECT_EQ(ethtool.fec_calls(), asked + 1) << "so1 has no FEC statistics: not asked again";
  // An event keeps the reason while the carrier stays down; up, it is gone.
  EXPECT_FALSE(inventory.Apply(LinkChanged(down)));
  EXPECT_EQ(inventory.Find("so0")->link_down_reason, "LINK_TRAINING_FAILURE");
  EXPECT_TRUE(inventory.Apply(LinkChanged(MakeLink(2, "so0"))));
  EXPECT_EQ(inventory.Find("so0")->link_down_reason, "");
}

// A port's module is read at the first dump and every kModuleReadEvery
// after, and kept between; a device without one is not asked again.
TEST_F(EthtoolInventoryTest, TheModuleIsReadEverySixthDumpAndKept) {
  FakeEthtool ethtool;
  ethtool.SetDriver("so0", "mlx5_core");
  ethtool.SetDriver("so1", "mlx5_core");
  std::string lower(128, '\0');
  lower[0] = 0x11;   // QSFP28
  lower[2] = 0x04;   // flat memory: of the upper pages only 00h to read
  lower[22] = 0x29;  // 41.0 C
  ethtool.SetModuleLowerPage("so0", lower);
  PortInventory inventory(PortSelection{}, &sysfs_, &ethtool);
  inventory.Resync({MakeLink(2, "so0"), MakeLink(3, "so1")});
  ASSERT_TRUE(inventory.Find("so0")->module.has_value());
  EXPECT_EQ(inventory.Find("so0")->module->temperature.values, std::vector<double>{41.0});
  EXPECT_FALSE(inventory.Find("so1")->module.has_value());
  EXPECT_EQ(ethtool.module_reads(), 3);  // so0's lower page and page 00h, so1's none
  lower[22] = 0x2a;                      // 42.0 C, seen at the next read
  ethtool.SetModuleLowerPage("so0", lower);
  for (int i = 1; i < kModuleReadEvery; ++i)
    inventory.Resync({MakeLink(2, "so0"), MakeLink(3, "so1")});
  EXPECT_EQ(ethtool.module_reads(), 3) << "not read between, so1 never again";
  EXPECT_EQ(inventory.Find("so0")->module->temperature.values, std::vector<double>{41.0});
  inventory.Resync({MakeLink(2, "so0"), MakeLink(3, "so1")});
  EXPECT_EQ(ethtool.module_reads(), 5);
  EXPECT_EQ(inventory.Find("so0")->module->temperature.values, std::vector<double>{42.0});
}

// After the first dump, which reads every module, the ports take turns:
// six ports, one module a dump, each every kModuleReadEvery dumps.
TEST_F(EthtoolInventoryTest, TheModulesAreReadInTurnsNotAllAtOnce) {
  static_assert(kModuleReadEvery == 6);
  FakeEthtool ethtool;
  std::string lower(128, '\0');
  lower[0] = 0x11;  // QSFP28
  lower[2] = 0x04;  // flat memory: the lower page and page 00h a read
  std::vector<os::LinkInfo> links;
  for (int i = 0; i < 6; ++i) {
    const std::string name = absl::StrCat("so", i);
    ethtool.SetDriver(name, "mlx5_core");
    ethtool.SetModuleLowerPage(name, lower);
    links.push_back(MakeLink(2 + i, name));
  }
  PortSelection selection;
  selection.gaudi = false;
  selection.interfaces = {"so*"};
  PortInventory inventory(selection, &sysfs_, &ethtool);
  inventory.Resync(links);
  ASSERT_EQ(inventory.ports().size(), 6u);
  EXPECT_EQ(ethtool.module_reads(), 12);
  for (int dump = 1; dump <= 12; ++dump) {
    inventory.Resync(links);
    EXPECT_EQ(ethtool.module_reads(), 12 + 2 * dump) << "dump " << dump;
  }
  for (int i = 0; i < 6; ++i) {
    EXPECT_TRUE(inventory.Find(absl::StrCat("so", i))->module.has_value()) << i;
  }
}

}  // namespace
}  // namespace rocenet::inventory
