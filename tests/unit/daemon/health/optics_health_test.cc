// SPDX-License-Identifier: Apache-2.0
// OpticsOutOfRange as `rocectl health` shows it, from the bytes a port's
// driver reads out of its transceiver (tests/fixtures/modules) through the
// inventory: a breakout module charges each port its own lanes; a module's
// unused lanes, a monitor it lacks and a transmitter the host does not
// drive are no alarm; a marginal module's condition holds with one message
// while its reading wanders, so the node does not change every 30 s.
#include <string>
#include <vector>

#include "daemon/health/port_health.h"
#include "daemon/inventory/port_inventory.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/health/conditions_of.h"
#include "tests/unit/daemon/inventory/module_dump.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/fakes/fake_ethtool.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/fakes/fake_sysfs.h"

namespace rocenet::health {
namespace {

using ::rocenet::testing::FakeClock;
using ::rocenet::testing::FakeEthtool;
using ::rocenet::testing::FakeSysfs;
using ::rocenet::testing::MakeLink;
using Strings = std::vector<std::string>;

class OpticsHealthTest : public ::testing::Test {
 protected:
  // `count` ports so0.. whose driver reads the module `pages`.
  void Ports(const inventory::ModulePages& pages, int count) {
    links_.clear();
    for (int i = 0; i < count; ++i) {
      const std::string name = "so" + std::to_string(i);
      ethtool_.SetDriver(name, "hbl_en");
      SetModule(name, pages);
      links_.push_back(MakeLink(2 + i, name));
    }
  }
  void SetModule(const std::string& name, const inventory::ModulePages& pages) {
    ethtool_.SetModuleLowerPage(name, pages.lower);
    for (const auto& [page, bytes] : pages.upper) {
      ethtool_.SetModulePage(name, page.first, page.second, bytes);
    }
  }
  // The next module read of every port (a sample every 5 s, each port's
  // module every kModuleReadEvery of them), and health's look at it.
  bool Read() {
    bool changed = false;
    for (int i = 0; i < inventory::kModuleReadEvery; ++i) {
      clock_.Advance(absl::Seconds(5));
      inventory_.Resync(links_);
      changed |= tracker_.Update(inventory_.ports());
    }
    return changed;
  }
  Strings Optics(size_t port) const {
    Strings out;
    for (const Condition& c : tracker_.node().ports.at(port).conditions) {
      if (c.type == kOpticsOutOfRange) out.push_back(c.type + "/" + c.reason);
    }
    return out;
  }
  static inventory::PortSelection Selection() {
    inventory::PortSelection selection;
    selection.interfaces = {"so*"};
    selection.gaudi = false;
    return selection;
  }
  static inventory::ModulePages Finisar() {
    inventory::ModulePages pages;
    pages.lower = inventory::HalfPageFromDump("finisar-qsfp28-lower-page.hex");
    pages.upper[{0, 0}] = inventory::HalfPageFromDump("finisar-qsfp28-page-00h.hex");
    pages.upper[{3, 0}] = inventory::HalfPageFromDump("finisar-qsfp28-page-03h.hex");
    return pages;
  }

  FakeSysfs sysfs_;
  FakeEthtool ethtool_;
  FakeClock clock_;
  inventory::PortInventory inventory_{Selection(), &sysfs_, &ethtool_};
  HealthTracker tracker_{&clock_};
  std::vector<os::LinkInfo> links_;
};

// Four ports of one 800G OSFP: the third port's fibre is dark (its link's
// fault, LinkDown's to tell), the fourth's lane 7 receives too little.
// Only the fourth port has the optics condition, a warning of its lane.
TEST_F(OpticsHealthTest, ABreakoutModuleChargesEachPortItsOwnLanes) {
  Ports(inventory::ModuleFromDump("composed-cmis-osfp-4x200g.hex"), 4);
  Read();
  EXPECT_EQ(Optics(0), Strings{});
  EXPECT_EQ(Optics(1), Strings{});
  EXPECT_EQ(Optics(2), Strings{});
  EXPECT_EQ(Optics(3), Strings{"OpticsOutOfRange/Warning"});
  const PortHealth& so3 = tracker_.node().ports.at(3);
  EXPECT_TRUE(so3.healthy);  // a warning is advisory
  EXPECT_EQ(so3.conditions.at(0).message,
            "port so3: the module's RX power on lane 7 is below its low warning threshold of "
            "0.063 mW (the reading is in rocenet_port_module_*); clean or replace the optics or "
            "the cable");
}

// A 4-lane module whose pages have room for 8, without a TX power
// monitor: lanes 5-8 and the TX power words read 0 and mean nothing.
TEST_F(OpticsHealthTest, UnusedLanesAndAMissingMonitorAreNoAlarm) {
  Ports(inventory::ModuleFromDump("composed-cmis-qsfp112-4-lane.hex"), 1);
  Read();
  EXPECT_EQ(Optics(0), Strings{});
  EXPECT_TRUE(tracker_.node().ready);
}

// The real QSFP28: lane 1's transmitter is off for want of the host's
// signal (its TX bias reads 0, below the 3 mA alarm), and the module does
// not measure its TX power (page 00h byte 220): no alarm.
TEST_F(OpticsHealthTest, ARealModulesIdleLaneAndUnmeasuredPowerAreNoAlarm) {
  Ports(Finisar(), 1);
  Read();
  EXPECT_EQ(Optics(0), Strings{});
  EXPECT_TRUE(tracker_.node().ready);
}

// The real module with lane 2's RX power wandering about its 0.0794 mW
// low warning: raised at the first reading below it, and then the same
// condition, message and start time at every read, below or above, until
// five minutes passed without one below. Nothing a watcher sees changes.
TEST_F(OpticsHealthTest, AMarginalModuleHoldsOneConditionWhileItsReadingWanders) {
  inventory::ModulePages pages = Finisar();
  auto rx2 = [&](uint16_t raw) {  // lane 2's RX power, in 0.1 uW (bytes 36-37)
    pages.lower[36] = static_cast<char>(raw >> 8);
    pages.lower[37] = static_cast<char>(raw & 0xff);
    SetModule("so0", pages);
  };
  Ports(pages, 1);
  rx2(780);  // 0.078 mW
  Read();
  ASSERT_EQ(Optics(0), Strings{"OpticsOutOfRange/Warning"});
  const Condition first = tracker_.node().ports[0].conditions.at(0);
  EXPECT_EQ(first.message,
            "port so0: the module's RX power on lane 2 is below its low warning threshold of "
            "0.079 mW (the reading is in rocenet_port_module_*); clean or replace the optics or "
            "the cable");
  for (uint16_t raw : {812, 771, 799, 765, 806, 790}) {
    rx2(raw);
    EXPECT_FALSE(Read()) << raw;
    ASSERT_EQ(tracker_.node().ports[0].conditions.size(), 1u) << raw;
    EXPECT_EQ(tracker_.node().ports[0].conditions[0], first) << raw;
  }
  // Above the warning from now on: held for the 5-minute quiet period (10
  // reads of 30 s, one more as the new reading came within the first),
  // then gone.
  rx2(900);
  int reads = 0;
  while (!Optics(0).empty() && reads < 20) {
    Read();
    ++reads;
  }
  EXPECT_GE(reads, 10);
  EXPECT_LE(reads, 11);
}

}  // namespace
}  // namespace rocenet::health
