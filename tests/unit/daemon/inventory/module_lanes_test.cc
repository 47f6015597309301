// SPDX-License-Identifier: Apache-2.0
// Which of a module's lanes are a port's (a module of its own, its share
// of a breakout, or not known), and which values a port answers for.
#include "daemon/inventory/module_lanes.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/inventory/module_dump.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::inventory {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

ModuleDiagnostics DecodedOrEmpty(const ModulePages& pages) {
  absl::StatusOr<ModuleDiagnostics> d = DecodeModule(pages);
  EXPECT_OK(d);
  return d.ok() ? *d : ModuleDiagnostics{};
}

ModuleDiagnostics FinisarModule() {
  ModulePages pages;
  pages.lower = HalfPageFromDump("finisar-qsfp28-lower-page.hex");
  pages.upper[{0, 0}] = HalfPageFromDump("finisar-qsfp28-page-00h.hex");
  pages.upper[{3, 0}] = HalfPageFromDump("finisar-qsfp28-page-03h.hex");
  return DecodedOrEmpty(pages);
}

std::vector<Port> PortsWith(const ModuleDiagnostics& module, int count) {
  std::vector<Port> ports;
  for (int i = 0; i < count; ++i) {
    Port& port = ports.emplace_back();
    port.name = "so" + std::to_string(i);
    port.id = "0000:19:00.0-p" + std::to_string(10 + i);
    port.module = module;
  }
  return ports;
}

TEST(ModuleLanesTest, FourPortsOfABreakoutTakeItsDataPathsInOrder) {
  // Listed out of order: the order of their ids decides.
  std::vector<Port> ports =
      PortsWith(DecodedOrEmpty(ModuleFromDump("composed-cmis-osfp-4x200g.hex")), 4);
  std::swap(ports[0], ports[3]);
  AssignModuleLanes(ports);
  EXPECT_THAT(ports[3].module_lanes, ElementsAre(0, 1));  // so0
  EXPECT_THAT(ports[1].module_lanes, ElementsAre(2, 3));
  EXPECT_THAT(ports[2].module_lanes, ElementsAre(4, 5));
  EXPECT_THAT(ports[0].module_lanes, ElementsAre(6, 7));  // so3
}

// One port seen on a module of four data paths: which is its own cannot
// be told, and none is charged to it.
TEST(ModuleLanesTest, OnePortOnAModuleOfSeveralDataPathsHasNoLanesKnown) {
  std::vector<Port> ports =
      PortsWith(DecodedOrEmpty(ModuleFromDump("composed-cmis-osfp-4x200g.hex")), 1);
  AssignModuleLanes(ports);
  EXPECT_THAT(ports[0].module_lanes, IsEmpty());
}

TEST(ModuleLanesTest, AModuleOfItsOwnIsAllItsInUseLanes) {
  std::vector<Port> ports = PortsWith(FinisarModule(), 1);
  AssignModuleLanes(ports);
  EXPECT_THAT(ports[0].module_lanes, ElementsAre(0, 1, 2, 3));
  ports = PortsWith(DecodedOrEmpty(ModuleFromDump("composed-cmis-qsfp112-4-lane.hex")), 1);
  AssignModuleLanes(ports);
  EXPECT_THAT(ports[0].module_lanes, ElementsAre(0, 1, 2, 3));
}

// SFF-8636 has no data paths: a QSFP28 read by two ports (2x50G) splits
// its four lanes in two; by three, no split fits.
TEST(ModuleLanesTest, AnSff8636BreakoutSplitsItsLanesEvenly) {
  std::vector<Port> ports = PortsWith(FinisarModule(), 2);
  AssignModuleLanes(ports);
  EXPECT_THAT(ports[0].module_lanes, ElementsAre(0, 1));
  EXPECT_THAT(ports[1].module_lanes, ElementsAre(2, 3));
  ports = PortsWith(FinisarModule(), 3);
  AssignModuleLanes(ports);
  EXPECT_THAT(ports[0].module_lanes, IsEmpty());
}

// The breakout's values each port answers for: the module's own for all,
// and its own lanes: the third port's dark fibre (RX LOS) is its link's
// to tell, the fourth port's lane 7 below the RX warning its own.
TEST(ModuleLanesTest, EachPortAnswersForItsOwnLanes) {
  const ModuleDiagnostics d = DecodedOrEmpty(ModuleFromDump("composed-cmis-osfp-4x200g.hex"));
  EXPECT_THAT(CheckThresholds(d, {0, 1}), IsEmpty());
  EXPECT_THAT(CheckThresholds(d, {4, 5}), IsEmpty());
  const std::vector<OutOfRange> out = CheckThresholds(d, {6, 7});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].quantity, "rx_power");
  EXPECT_EQ(out[0].lane, 6);
  EXPECT_FALSE(out[0].alarm);
  EXPECT_FALSE(out[0].high);
  EXPECT_NEAR(out[0].limit, 0.0631, 1e-9);
  // No lanes known: the module's own values only.
  EXPECT_THAT(CheckThresholds(d, {}), IsEmpty());
}

// The real module: lane 1's transmitter is off for want of the host's
// signal (TX LOS), so its TX bias of 0 is no alarm; the others are in
// range. Lane 3's RX power set below its alarm (bytes 38-39 = 0100h,
// 0.0256 mW) is one.
TEST(ModuleLanesTest, ARealModulesDarkTransmitterIsNoAlarmButALowReceiverIs) {
  EXPECT_THAT(CheckThresholds(FinisarModule(), {0, 1, 2, 3}), IsEmpty());
  ModulePages pages;
  pages.lower = HalfPageFromDump("finisar-qsfp28-lower-page.hex");
  pages.lower[38] = 0x01;
  pages.lower[39] = 0x00;
  pages.upper[{0, 0}] = HalfPageFromDump("finisar-qsfp28-page-00h.hex");
  pages.upper[{3, 0}] = HalfPageFromDump("finisar-qsfp28-page-03h.hex");
  const std::vector<OutOfRange> out = CheckThresholds(DecodedOrEmpty(pages), {0, 1, 2, 3});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].quantity, "rx_power");
  EXPECT_EQ(out[0].lane, 2);
  EXPECT_TRUE(out[0].alarm);
  EXPECT_NEAR(out[0].value, 0.0256, 1e-9);
}

}  // namespace
}  // namespace rocenet::inventory
