// SPDX-License-Identifier: Apache-2.0
// Module diagnostics from EEPROM bytes laid out as SFF-8636 (a QSFP28 SR4)
// and CMIS 5 (an OSFP 400G, its TX bias reported with a x2 multiplier)
// place them, with the values a module of each kind reports: its monitors,
// its own thresholds, and which of them a value is beyond; a passive copper
// cable, whose flat memory has neither; and a real module's lower page
// (tests/fixtures/modules).
#include "daemon/inventory/module_eeprom.h"

#include <cmath>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::inventory {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pointwise;

// A 128-byte half page with big-endian words written at page offsets
// (`base` is 0 for the lower page, 128 for an upper one).
class Half {
 public:
  explicit Half(size_t base) : base_(base), bytes_(128, '\0') {}
  Half& Byte(size_t offset, uint8_t value) {
    bytes_[offset - base_] = static_cast<char>(value);
    return *this;
  }
  Half& Word(size_t offset, double value, double unit) {
    const auto raw = static_cast<uint16_t>(static_cast<int16_t>(std::lround(value / unit)));
    bytes_[offset - base_] = static_cast<char>(raw >> 8);
    bytes_[offset - base_ + 1] = static_cast<char>(raw & 0xff);
    return *this;
  }
  Half& Words(size_t offset, std::initializer_list<double> values, double unit) {
    for (double v : values) {
      Word(offset, v, unit);
      offset += 2;
    }
    return *this;
  }
  std::string bytes() const { return bytes_; }

 private:
  size_t base_;
  std::string bytes_;
};

constexpr double kCelsius = 1.0 / 256;
constexpr double kVolt = 100e-6;
constexpr double kMilliwatt = 1e-4;
constexpr double kMilliampere = 2e-3;

ModulePages Qsfp28() {
  ModulePages pages;
  pages.lower = Half(0)
                    .Byte(0, 0x11)
                    .Word(22, 41.5, kCelsius)
                    .Word(26, 3.30, kVolt)
                    .Words(34, {0.85, 0.9, 0.02, 0.88}, kMilliwatt)
                    .Words(42, {7.5, 7.6, 7.4, 7.5}, kMilliampere)
                    .Words(50, {1.0, 1.1, 0.95, 1.02}, kMilliwatt)
                    .bytes();
  pages.upper[{3, 0}] = Half(128)
                            .Words(128, {75, -5, 70, 0}, kCelsius)
                            .Words(144, {3.63, 2.97, 3.465, 3.135}, kVolt)
                            .Words(176, {3.4674, 0.0245, 1.7378, 0.049}, kMilliwatt)
                            .Words(184, {15, 3, 13, 4}, kMilliampere)
                            .Words(192, {3.0, 0.1, 2.5, 0.2}, kMilliwatt)
                            .bytes();
  return pages;
}

ModulePages Osfp400g() {
  ModulePages pages;
  pages.lower = Half(0).Byte(0, 0x19).Word(14, 52.0, kCelsius).Word(16, 3.28, kVolt).bytes();
  pages.upper[{1, 0}] = Half(128).Byte(160, 0x08).bytes();  // TX bias x2
  pages.upper[{2, 0}] = Half(128)
                            .Words(128, {80, -5, 75, 0}, kCelsius)
                            .Words(136, {3.6, 3.0, 3.5, 3.1}, kVolt)
                            .Words(176, {3.0, 0.2, 2.5, 0.3}, kMilliwatt)
                            .Words(184, {12, 2, 10, 3}, kMilliampere)  // before the x2
                            .Words(192, {2.8, 0.05, 2.2, 0.1}, kMilliwatt)
                            .bytes();
  pages.upper[{0x11, 0}] =
      Half(128)
          .Words(154, {1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2, 1.2}, kMilliwatt)
          .Words(170, {4, 4, 4, 4, 4, 4, 4, 4}, kMilliampere)  // reads 8 mA with the x2
          .Words(186, {1.0, 1.1, 0.9, 1.0, 2.5, 1.0, 1.05, 0.98}, kMilliwatt)
          .bytes();
  return pages;
}

MATCHER(Near, "") { return std::abs(std::get<0>(arg) - std::get<1>(arg)) < 1e-3; }

TEST(ModuleEepromTest, Sff8636MonitorsThresholdsAndALaneBelowItsAlarm) {
  const ModulePages pages = Qsfp28();
  EXPECT_THAT(UpperPagesToRead(pages.lower), ElementsAre(std::pair(3, 0)));
  absl::StatusOr<ModuleDiagnostics> d = DecodeModule(pages);
  ASSERT_OK(d);
  EXPECT_EQ(d->memory_map, "SFF-8636");
  EXPECT_THAT(d->temperature.values, ElementsAre(DoubleNear(41.5, 1e-3)));
  EXPECT_THAT(d->voltage.values, ElementsAre(DoubleNear(3.30, 1e-3)));
  EXPECT_THAT(d->rx_power.values, Pointwise(Near(), {0.85, 0.9, 0.02, 0.88}));
  EXPECT_THAT(d->tx_bias.values, Pointwise(Near(), {7.5, 7.6, 7.4, 7.5}));
  EXPECT_THAT(d->tx_power.values, Pointwise(Near(), {1.0, 1.1, 0.95, 1.02}));
  ASSERT_TRUE(d->temperature.thresholds.has_value());
  EXPECT_NEAR(d->temperature.thresholds->low_alarm, -5, 1e-3);
  EXPECT_NEAR(d->rx_power.thresholds->low_alarm, 0.0245, 1e-3);
  const std::vector<OutOfRange> out = CheckThresholds(*d);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].quantity, "rx_power");
  EXPECT_EQ(out[0].lane, 2);
  EXPECT_TRUE(out[0].alarm);
  EXPECT_FALSE(out[0].high);
  EXPECT_NEAR(out[0].limit, 0.0245, 1e-3);
}

double MilliwattsOfDbm(double dbm) { return std::pow(10.0, dbm / 10); }

// A real QSFP28 SR4 module's monitors and thresholds as SONiC decoded them
// (AsterNOS's command reference, `show interface transceiver eeprom
// detail`: Teraspek TSQ885S101T1), laid out again in its memory map:
// decoded here, they read the same, and none is out of range.
TEST(ModuleEepromTest, ARealQsfp28ReadsAsSonicDecodedIt) {
  ModulePages pages;
  pages.lower = Half(0)
                    .Byte(0, 0x11)
                    .Word(22, 32.9570, kCelsius)
                    .Word(26, 3.2961, kVolt)
                    .Words(34,
                           {MilliwattsOfDbm(0.8422), MilliwattsOfDbm(0.6971),
                            MilliwattsOfDbm(1.6414), MilliwattsOfDbm(1.1458)},
                           kMilliwatt)
                    .Words(42, {6.0740, 6.2960, 5.9220, 6.5100}, kMilliampere)
                    .bytes();
  pages.upper[{3, 0}] = Half(128)
                            .Words(128, {75, -5, 70, 0}, kCelsius)
                            .Words(144, {3.63, 2.97, 3.465, 3.135}, kVolt)
                            .Words(176,
                                   {MilliwattsOfDbm(4.4), MilliwattsOfDbm(-13.2975),
                                    MilliwattsOfDbm(3.4001), MilliwattsOfDbm(-10.3012)},
                                   kMilliwatt)
                            .Words(184, {10, 2, 8.5, 3}, kMilliampere)
                            .bytes();
  absl::StatusOr<ModuleDiagnostics> d = DecodeModule(pages);
  ASSERT_OK(d);
  EXPECT_THAT(d->temperature.values, ElementsAre(DoubleNear(32.957, 0.004)));
  EXPECT_THAT(d->voltage.values, ElementsAre(DoubleNear(3.2961, 1e-4)));
  EXPECT_THAT(d->rx_power.values, Pointwise(Near(), {1.2139, 1.1741, 1.4597, 1.3021}));
  EXPECT_THAT(d->tx_bias.values, Pointwise(Near(), {6.074, 6.296, 5.922, 6.510}));
  EXPECT_NEAR(d->rx_power.thresholds->low_alarm, 0.0468, 1e-4);
  EXPECT_THAT(CheckThresholds(*d), IsEmpty());
}

// A 128-byte half page from a dump in tests/fixtures/modules: a line of 16
// hex bytes each, its offset first.
std::string HalfPageFromDump(const std::string& name) {
  std::ifstream in(std::string(ROCENET_FIXTURE_DIR) + "/modules/" + name);
  std::string out;
  std::string offset;
  while (in >> offset) {
    for (int i = 0; i < 16; ++i) {
      unsigned value = 0;
      in >> std::hex >> value >> std::dec;
      out.push_back(static_cast<char>(value));
    }
  }
  return out;
}

// The bytes a real module gave: its monitors decode to what SFF-8636 says
// of them, a dead transmit lane included, and without its page 03h it has
// no thresholds to be beyond.
TEST(ModuleEepromTest, ARealQsfp28LowerPageWithADeadTransmitLane) {
  ModulePages pages;
  pages.lower = HalfPageFromDump("finisar-qsfp28-lower-page.hex");
  ASSERT_EQ(pages.lower.size(), 128u);
  EXPECT_THAT(UpperPagesToRead(pages.lower), ElementsAre(std::pair(3, 0)));
  ASSERT_OK_AND_ASSIGN(ModuleDiagnostics d, DecodeModule(pages));
  EXPECT_EQ(d.memory_map, "SFF-8636");
  EXPECT_EQ(d.identifier, 0x11);
  EXPECT_THAT(d.temperature.values, ElementsAre(DoubleNear(0x1385 / 256.0, 1e-9)));  // 19.52
  EXPECT_THAT(d.voltage.values, ElementsAre(DoubleNear(3.2979, 1e-9)));
  EXPECT_THAT(d.rx_power.values, Pointwise(DoubleNear(1e-9), {1.3001, 1.3529, 1.1193, 1.2099}));
  EXPECT_THAT(d.tx_bias.values, Pointwise(DoubleNear(1e-9), {0.0, 7.998, 7.936, 7.936}));
  EXPECT_THAT(d.tx_power.values, Pointwise(DoubleNear(1e-9), {0.0001, 1.3847, 1.3522, 1.2355}));
  EXPECT_FALSE(d.tx_power.thresholds.has_value());
  EXPECT_THAT(CheckThresholds(d), IsEmpty());
}

TEST(ModuleEepromTest, CmisLanesWithTheBiasMultiplierAndAWarning) {
  const ModulePages pages = Osfp400g();
  EXPECT_THAT(UpperPagesToRead(pages.lower),
              ElementsAre(std::pair(1, 0), std::pair(2, 0), std::pair(0x11, 0)));
  absl::StatusOr<ModuleDiagnostics> d = DecodeModule(pages);
  ASSERT_OK(d);
  EXPECT_EQ(d->memory_map, "CMIS");
  EXPECT_EQ(d->identifier, 0x19);
  EXPECT_THAT(d->temperature.values, ElementsAre(DoubleNear(52.0, 1e-3)));
  EXPECT_EQ(d->tx_power.values.size(), 8u);
  EXPECT_THAT(d->tx_bias.values, Pointwise(Near(), {8, 8, 8, 8, 8, 8, 8, 8}));
  EXPECT_NEAR(d->tx_bias.thresholds->high_alarm, 24, 1e-3);
  const std::vector<OutOfRange> out = CheckThresholds(*d);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], (OutOfRange{.quantity = "rx_power",
                                .lane = 4,
                                .value = out[0].value,
                                .limit = out[0].limit,
                                .alarm = false,
                                .high = true}));
  EXPECT_NEAR(out[0].value, 2.5, 1e-3);
  EXPECT_NEAR(out[0].limit, 2.2, 1e-3);
}

TEST(ModuleEepromTest, APageNotReadLeavesItsQuantitiesEmpty) {
  ModulePages pages = Osfp400g();
  pages.upper.erase({0x11, 0});
  pages.upper.erase({2, 0});
  absl::StatusOr<ModuleDiagnostics> d = DecodeModule(pages);
  ASSERT_OK(d);
  EXPECT_THAT(d->rx_power.values, IsEmpty());
  EXPECT_FALSE(d->rx_power.thresholds.has_value());
  EXPECT_THAT(d->temperature.values, ElementsAre(DoubleNear(52.0, 1e-3)));
  EXPECT_THAT(CheckThresholds(*d), IsEmpty());
}

TEST(ModuleEepromTest, APassiveCableHasFlatMemoryAndNoThresholds) {
  ModulePages pages;
  pages.lower = Half(0).Byte(0, 0x11).Byte(2, 0x04).bytes();
  EXPECT_THAT(UpperPagesToRead(pages.lower), IsEmpty());
  absl::StatusOr<ModuleDiagnostics> d = DecodeModule(pages);
  ASSERT_OK(d);
  EXPECT_THAT(CheckThresholds(*d), IsEmpty());
  pages.lower = Half(0).Byte(0, 0x18).Byte(2, 0x80).bytes();  // CMIS, flat
  EXPECT_THAT(UpperPagesToRead(pages.lower), IsEmpty());
}

TEST(ModuleEepromTest, ShortOrUnknownEepromsAreRefused) {
  ModulePages pages;
  pages.lower = std::string(20, '\0');
  EXPECT_EQ(DecodeModule(pages).status().message(),
            "module EEPROM: 20 bytes of the lower page, not 128");
  pages.lower = Half(0).Byte(0, 0x03).bytes();  // SFP: SFF-8472, not decoded here
  EXPECT_EQ(DecodeModule(pages).status().message(),
            "module EEPROM: identifier 0x03 is neither an SFF-8636 nor a CMIS module");
  EXPECT_THAT(UpperPagesToRead(pages.lower), IsEmpty());
}

}  // namespace
}  // namespace rocenet::inventory
