// SPDX-License-Identifier: Apache-2.0
// Module diagnostics decoded from EEPROM bytes in tests/fixtures/modules:
// a real QSFP28's lower page, page 00h and page 03h (SFF-8636), and, where
// no public dump was found, CMIS pages composed byte by byte as CMIS 5
// lays them out (each file says what every byte is). The expected values
// are worked out from the bytes and the specifications' units here, not
// through the decoder's own offsets.
#include "daemon/inventory/module_eeprom.h"

#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/inventory/module_dump.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::inventory {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pointwise;

MATCHER_P4(ThresholdsAre, high_alarm, low_alarm, high_warning, low_warning, "") {
  return arg.has_value() && std::abs(arg->high_alarm - high_alarm) < 1e-9 &&
         std::abs(arg->low_alarm - low_alarm) < 1e-9 &&
         std::abs(arg->high_warning - high_warning) < 1e-9 &&
         std::abs(arg->low_warning - low_warning) < 1e-9;
}

ModulePages Finisar() {
  ModulePages pages;
  pages.lower = HalfPageFromDump("finisar-qsfp28-lower-page.hex");
  pages.upper[{0, 0}] = HalfPageFromDump("finisar-qsfp28-page-00h.hex");
  pages.upper[{3, 0}] = HalfPageFromDump("finisar-qsfp28-page-03h.hex");
  return pages;
}

// The real module: its monitors decode to what SFF-8636 says of the bytes
// (lower page 22-23 temperature 1385h, 26-27 Vcc 80d3h, 34-41 RX power,
// 42-49 TX bias: lane 1 transmits nothing), its thresholds to page 03h's
// (the Vcc alarms 8dcch, 7404h are 3.63 and 2.97 V), its identity to page
// 00h's. Byte 220 is 38h: TX power is not measured (bit 2 clear), so the
// words at 50-57 are no reading and none is reported.
TEST(ModuleEepromTest, ARealQsfp28WithItsThresholdsAndWithoutATxPowerMonitor) {
  const ModulePages pages = Finisar();
  ASSERT_EQ(pages.lower.size(), 128u);
  EXPECT_THAT(UpperPagesToRead(pages.lower), ElementsAre(std::pair(0, 0), std::pair(3, 0)));
  ASSERT_OK_AND_ASSIGN(ModuleDiagnostics d, DecodeModule(pages));
  EXPECT_EQ(d.memory_map, "SFF-8636");
  EXPECT_EQ(d.identifier, 0x11);
  EXPECT_EQ(d.vendor, "FINISAR CORP");
  EXPECT_EQ(d.serial, "U3SAH67");
  EXPECT_THAT(d.temperature.values, ElementsAre(DoubleNear(0x1385 / 256.0, 1e-9)));  // 19.52
  EXPECT_THAT(d.voltage.values, ElementsAre(DoubleNear(0x80d3 * 100e-6, 1e-9)));     // 3.2979
  EXPECT_THAT(d.rx_power.values, Pointwise(DoubleNear(1e-9), {1.3001, 1.3529, 1.1193, 1.2099}));
  EXPECT_THAT(d.tx_bias.values, Pointwise(DoubleNear(1e-9), {0.0, 7.998, 7.936, 7.936}));
  EXPECT_THAT(d.tx_power.values, IsEmpty());
  EXPECT_FALSE(d.tx_power.thresholds.has_value());
  // Page 03h: temperature 4b00h, fb00h, 4600h, 0000h; Vcc; RX power
  // 5576h, 018eh, 43e2h, 031ah; TX bias 1770h, 05dch, 157ch, 07d0h.
  EXPECT_THAT(d.temperature.thresholds, ThresholdsAre(75, -5, 70, 0));
  ASSERT_TRUE(d.voltage.thresholds.has_value());
  EXPECT_NEAR(d.voltage.thresholds->high_alarm, 3.63, 1e-9);
  EXPECT_NEAR(d.voltage.thresholds->low_warning, 0x7918 * 100e-6, 1e-9);
  ASSERT_TRUE(d.rx_power.thresholds.has_value());
  EXPECT_NEAR(d.rx_power.thresholds->high_alarm, 2.1878, 1e-9);
  EXPECT_NEAR(d.rx_power.thresholds->low_alarm, 0.0398, 1e-9);
  EXPECT_NEAR(d.rx_power.thresholds->high_warning, 1.7378, 1e-9);
  EXPECT_NEAR(d.rx_power.thresholds->low_warning, 0.0794, 1e-9);
  EXPECT_THAT(d.tx_bias.thresholds, ThresholdsAre(12, 3, 11, 4));
  // Byte 3 is 10h: TX LOS latched on lane 1, the host sent it nothing;
  // byte 86, TX disable, 0. One data path of the four lanes.
  ASSERT_EQ(d.lanes.size(), 4u);
  EXPECT_TRUE(d.lanes[0].tx_off);
  EXPECT_FALSE(d.lanes[1].tx_off);
  EXPECT_FALSE(d.lanes[0].rx_los);
  EXPECT_EQ(d.data_paths, 1);
}

// Without page 00h, a module that says nothing of its monitors keeps all
// five (as SFF-8636 modules before revision 2.8 did not say).
TEST(ModuleEepromTest, AModuleThatDoesNotSayWhatItMonitorsKeepsEveryMonitor) {
  ModulePages pages = Finisar();
  pages.upper.erase({0, 0});
  ASSERT_OK_AND_ASSIGN(ModuleDiagnostics d, DecodeModule(pages));
  EXPECT_EQ(d.tx_power.values.size(), 4u);
  EXPECT_EQ(d.serial, "");
  // Before revision 2.8 (byte 1 below 08h) bits 5-4 of byte 220 were not
  // defined: temperature and Vcc are kept even where they read 0.
  pages = Finisar();
  pages.lower[1] = 0x07;
  pages.upper[{0, 0}][220 - 128] = 0x00;
  ASSERT_OK_AND_ASSIGN(d, DecodeModule(pages));
  EXPECT_EQ(d.temperature.values.size(), 1u);
  EXPECT_EQ(d.voltage.values.size(), 1u);
  // From 2.8 on, a clear bit means the monitor is not there.
  pages.lower[1] = 0x08;
  ASSERT_OK_AND_ASSIGN(d, DecodeModule(pages));
  EXPECT_THAT(d.temperature.values, IsEmpty());
  EXPECT_THAT(d.voltage.values, IsEmpty());
}

// The composed OSFP (composed-cmis-osfp-4x200g.hex): four data paths of
// two lanes, every monitor, the TX bias multiplier x2 (01h:160 bits 4-3),
// the dark fibre of the third data path in its RX LOS flags.
TEST(ModuleEepromTest, ACmisBreakoutModuleItsDataPathsAndItsLanes) {
  const ModulePages pages = ModuleFromDump("composed-cmis-osfp-4x200g.hex");
  EXPECT_THAT(UpperPagesToRead(pages.lower),
              ElementsAre(std::pair(0, 0), std::pair(1, 0), std::pair(2, 0), std::pair(0x11, 0)));
  ASSERT_OK_AND_ASSIGN(ModuleDiagnostics d, DecodeModule(pages));
  EXPECT_EQ(d.memory_map, "CMIS");
  EXPECT_EQ(d.identifier, 0x19);
  EXPECT_EQ(d.vendor, "COMPOSED CMIS");
  EXPECT_EQ(d.serial, "COMPOSED01");
  EXPECT_THAT(d.temperature.values, ElementsAre(DoubleNear(41.5, 1e-9)));
  EXPECT_THAT(d.voltage.values, ElementsAre(DoubleNear(3.30, 1e-9)));
  EXPECT_THAT(d.tx_bias.values, Pointwise(DoubleNear(1e-9), {14, 14, 14, 14, 14, 14, 14, 14}));
  EXPECT_THAT(d.tx_bias.thresholds, ThresholdsAre(24, 4, 20, 6));
  EXPECT_THAT(d.rx_power.values,
              Pointwise(DoubleNear(1e-9), {0.9, 0.9, 0.9, 0.9, 0.0001, 0.0001, 0.05, 0.9}));
  EXPECT_EQ(d.data_paths, 4);
  ASSERT_EQ(d.lanes.size(), 8u);
  for (int lane = 0; lane < 8; ++lane) {
    EXPECT_TRUE(d.lanes[lane].in_use) << lane;
    EXPECT_EQ(d.lanes[lane].data_path, lane / 2) << lane;
    EXPECT_EQ(d.lanes[lane].rx_los, lane == 4 || lane == 5) << lane;
    EXPECT_FALSE(d.lanes[lane].tx_off) << lane;
  }
}

// The composed QSFP112 (composed-cmis-qsfp112-4-lane.hex): one data path
// of four lanes, the other four in none; no TX power monitor (01h:160 bit
// 1 clear), so its zero words are no reading.
TEST(ModuleEepromTest, AFourLaneCmisModuleAndAMonitorItLacks) {
  ASSERT_OK_AND_ASSIGN(ModuleDiagnostics d,
                       DecodeModule(ModuleFromDump("composed-cmis-qsfp112-4-lane.hex")));
  EXPECT_EQ(d.identifier, 0x1e);
  EXPECT_THAT(d.tx_power.values, IsEmpty());
  EXPECT_FALSE(d.tx_power.thresholds.has_value());
  EXPECT_THAT(d.tx_bias.values, Pointwise(DoubleNear(1e-9), {7, 7, 7, 7, 0, 0, 0, 0}));
  EXPECT_THAT(d.tx_bias.thresholds, ThresholdsAre(12, 2, 10, 3));
  EXPECT_EQ(d.data_paths, 1);
  ASSERT_EQ(d.lanes.size(), 8u);
  for (int lane = 0; lane < 8; ++lane) {
    EXPECT_EQ(d.lanes[lane].in_use, lane < 4) << lane;
    EXPECT_EQ(d.lanes[lane].data_path, lane < 4 ? 0 : -1) << lane;
  }
}

TEST(ModuleEepromTest, APageNotReadLeavesItsQuantitiesEmpty) {
  ModulePages pages = ModuleFromDump("composed-cmis-osfp-4x200g.hex");
  pages.upper.erase({0x11, 0});
  pages.upper.erase({2, 0});
  ASSERT_OK_AND_ASSIGN(ModuleDiagnostics d, DecodeModule(pages));
  EXPECT_THAT(d.rx_power.values, IsEmpty());
  EXPECT_FALSE(d.rx_power.thresholds.has_value());
  EXPECT_THAT(d.lanes, IsEmpty());
  EXPECT_THAT(d.temperature.values, ElementsAre(DoubleNear(41.5, 1e-9)));
}

// A passive copper cable: flat memory (SFF-8636 byte 2 bit 2, CMIS byte 2
// bit 7), only page 00h beyond the lower page, and no thresholds.
TEST(ModuleEepromTest, APassiveCableHasFlatMemoryAndNoThresholds) {
  std::string lower(128, '\0');
  lower[0] = 0x11;
  lower[2] = 0x04;
  EXPECT_THAT(UpperPagesToRead(lower), ElementsAre(std::pair(0, 0)));
  ModulePages pages;
  pages.lower = lower;
  ASSERT_OK_AND_ASSIGN(ModuleDiagnostics d, DecodeModule(pages));
  EXPECT_FALSE(d.rx_power.thresholds.has_value());
  lower[0] = 0x18;
  lower[2] = static_cast<char>(0x80);
  EXPECT_THAT(UpperPagesToRead(lower), ElementsAre(std::pair(0, 0)));
}

TEST(ModuleEepromTest, ShortOrUnknownEepromsAreRefused) {
  ModulePages pages;
  pages.lower = std::string(20, '\0');
  EXPECT_EQ(DecodeModule(pages).status().message(),
            "module EEPROM: 20 bytes of the lower page, not 128");
  pages.lower = std::string(128, '\0');
  pages.lower[0] = 0x03;  // SFP: SFF-8472, not decoded here
  EXPECT_EQ(DecodeModule(pages).status().message(),
            "module EEPROM: identifier 0x03 is neither an SFF-8636 nor a CMIS module");
  EXPECT_THAT(UpperPagesToRead(pages.lower), IsEmpty());
}

}  // namespace
}  // namespace rocenet::inventory
