// SPDX-License-Identifier: Apache-2.0
#include "daemon/inventory/module_eeprom.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace rocenet::inventory {
namespace {

constexpr size_t kHalfPage = 128;

// SFF-8024 identifiers.
bool IsSff8636(int id) { return id == 0x0C || id == 0x0D || id == 0x11; }
bool IsCmis(int id) { return id == 0x18 || id == 0x19 || id == 0x1E; }

// SFF-8636 (lower page unless noted).
constexpr size_t kSffStatus = 2;
constexpr uint8_t kSffFlatMemory = 1 << 2;
constexpr size_t kSffTemperature = 22;
constexpr size_t kSffVoltage = 26;
constexpr size_t kSffRxPower = 34;
constexpr size_t kSffTxBias = 42;
constexpr size_t kSffTxPower = 50;
constexpr int kSffLanes = 4;
// Page 03h, as offsets into the page (128..255).
constexpr size_t kSffTemperatureThresholds = 128;
constexpr size_t kSffVoltageThresholds = 144;
constexpr size_t kSffRxPowerThresholds = 176;
constexpr size_t kSffTxBiasThresholds = 184;
constexpr size_t kSffTxPowerThresholds = 192;

// CMIS.
constexpr size_t kCmisMemoryModel = 2;
constexpr uint8_t kCmisFlatMemory = 1 << 7;
constexpr size_t kCmisTemperature = 14;
constexpr size_t kCmisVoltage = 16;
// Page 01h: the TX bias multiplier, bits 4-3 (x1, x2, x4).
constexpr size_t kCmisBiasMultiplier = 160;
// Page 02h.
constexpr size_t kCmisTemperatureThresholds = 128;
constexpr size_t kCmisVoltageThresholds = 136;
constexpr size_t kCmisTxPowerThresholds = 176;
constexpr size_t kCmisTxBiasThresholds = 184;
constexpr size_t kCmisRxPowerThresholds = 192;
// Page 11h, bank 0.
constexpr size_t kCmisTxPower = 154;
constexpr size_t kCmisTxBias = 170;
constexpr size_t kCmisRxPower = 186;
constexpr int kCmisLanes = 8;

// Units: temperature 1/256 degree C (signed); voltage 100 uV; power
// 0.1 uW; bias 2 uA.
double Celsius(uint16_t raw) { return static_cast<int16_t>(raw) / 256.0; }
double Volts(uint16_t raw) { return raw * 100e-6; }
double Milliwatts(uint16_t raw) { return raw * 1e-4; }
double Milliamperes(uint16_t raw) { return raw * 2e-3; }

// A big-endian u16 of a page, where `offset` counts from the page's start
// (upper pages: 128..255).
std::optional<uint16_t> Word(const std::string* page, size_t offset, size_t base) {
  if (page == nullptr || offset < base || offset - base + 2 > page->size()) return std::nullopt;
  const auto* b = reinterpret_cast<const unsigned char*>(page->data()) + (offset - base);
  return static_cast<uint16_t>(b[0] << 8 | b[1]);
}

const std::string* Upper(const ModulePages& pages, int page, int bank = 0) {
  auto it = pages.upper.find({page, bank});
  return it == pages.upper.end() || it->second.size() < kHalfPage ? nullptr : &it->second;
}

std::optional<Thresholds> ThresholdsAt(const std::string* page, size_t offset,
                                       double (*unit)(uint16_t)) {
  std::optional<uint16_t> words[4];
  for (int i = 0; i < 4; ++i) words[i] = Word(page, offset + 2 * i, kHalfPage);
  if (!words[0] || !words[1] || !words[2] || !words[3]) return std::nullopt;
  return Thresholds{unit(*words[0]), unit(*words[1]), unit(*words[2]), unit(*words[3])};
}

std::vector<double> Lanes(const std::string* page, size_t offset, size_t base, int lanes,
                          double (*unit)(uint16_t), double scale = 1) {
  std::vector<double> out;
  for (int lane = 0; lane < lanes; ++lane) {
    std::optional<uint16_t> word = Word(page, offset + 2 * lane, base);
    if (!word) return {};
    out.push_back(unit(*word) * scale);
  }
  return out;
}

std::vector<double> One(const std::string* page, size_t offset, double (*unit)(uint16_t)) {
  std::optional<uint16_t> word = Word(page, offset, 0);
  return word ? std::vector<double>{unit(*word)} : std::vector<double>{};
}

void Check(const std::string& quantity, const Monitor& monitor, bool per_lane,
           std::vector<OutOfRange>& out) {
  if (!monitor.thresholds.has_value()) return;
  const Thresholds& t = *monitor.thresholds;
  for (size_t i = 0; i < monitor.values.size(); ++i) {
    const double v = monitor.values[i];
    const int lane = per_lane ? static_cast<int>(i) : -1;
    if (v > t.high_alarm) {
      out.push_back({quantity, lane, v, t.high_alarm, true, true});
    } else if (v < t.low_alarm) {
      out.push_back({quantity, lane, v, t.low_alarm, true, false});
    } else if (v > t.high_warning) {
      out.push_back({quantity, lane, v, t.high_warning, false, true});
    } else if (v < t.low_warning) {
      out.push_back({quantity, lane, v, t.low_warning, false, false});
    }
  }
}

}  // namespace

std::vector<std::pair<int, int>> UpperPagesToRead(absl::string_view lower) {
  if (lower.size() < kHalfPage) return {};
  const int id = static_cast<unsigned char>(lower[0]);
  if (IsSff8636(id)) {
    if (static_cast<unsigned char>(lower[kSffStatus]) & kSffFlatMemory) return {};
    return {{3, 0}};
  }
  if (IsCmis(id)) {
    if (static_cast<unsigned char>(lower[kCmisMemoryModel]) & kCmisFlatMemory) return {};
    return {{1, 0}, {2, 0}, {0x11, 0}};
  }
  return {};
}

absl::StatusOr<ModuleDiagnostics> DecodeModule(const ModulePages& pages) {
  if (pages.lower.size() < kHalfPage) {
    return absl::InvalidArgumentError(
        absl::StrCat("module EEPROM: ", pages.lower.size(), " bytes of the lower page, not 128"));
  }
  ModuleDiagnostics out;
  out.identifier = static_cast<unsigned char>(pages.lower[0]);
  const std::string* lower = &pages.lower;
  if (IsSff8636(out.identifier)) {
    out.memory_map = "SFF-8636";
    const std::string* thresholds = Upper(pages, 3);
    out.temperature = {One(lower, kSffTemperature, Celsius),
                       ThresholdsAt(thresholds, kSffTemperatureThresholds, Celsius)};
    out.voltage = {One(lower, kSffVoltage, Volts),
                   ThresholdsAt(thresholds, kSffVoltageThresholds, Volts)};
    out.rx_power = {Lanes(lower, kSffRxPower, 0, kSffLanes, Milliwatts),
                    ThresholdsAt(thresholds, kSffRxPowerThresholds, Milliwatts)};
    out.tx_bias = {Lanes(lower, kSffTxBias, 0, kSffLanes, Milliamperes),
                   ThresholdsAt(thresholds, kSffTxBiasThresholds, Milliamperes)};
    out.tx_power = {Lanes(lower, kSffTxPower, 0, kSffLanes, Milliwatts),
                    ThresholdsAt(thresholds, kSffTxPowerThresholds, Milliwatts)};
    return out;
  }
  if (IsCmis(out.identifier)) {
    out.memory_map = "CMIS";
    const std::string* advertising = Upper(pages, 1);
    const std::string* thresholds = Upper(pages, 2);
    const std::string* lanes = Upper(pages, 0x11);
    double multiplier = 1;
    if (advertising != nullptr) {
      const int bits =
          (static_cast<unsigned char>((*advertising)[kCmisBiasMultiplier - kHalfPage]) >> 3) & 3;
      multiplier = bits == 1 ? 2 : bits == 2 ? 4 : 1;
    }
    out.temperature = {One(lower, kCmisTemperature, Celsius),
                       ThresholdsAt(thresholds, kCmisTemperatureThresholds, Celsius)};
    out.voltage = {One(lower, kCmisVoltage, Volts),
                   ThresholdsAt(thresholds, kCmisVoltageThresholds, Volts)};
    out.tx_power = {Lanes(lanes, kCmisTxPower, kHalfPage, kCmisLanes, Milliwatts),
                    ThresholdsAt(thresholds, kCmisTxPowerThresholds, Milliwatts)};
    out.tx_bias = {Lanes(lanes, kCmisTxBias, kHalfPage, kCmisLanes, Milliamperes, multiplier),
                   ThresholdsAt(thresholds, kCmisTxBiasThresholds, Milliamperes)};
    if (out.tx_bias.thresholds.has_value()) {
      Thresholds& t = *out.tx_bias.thresholds;
      t.high_alarm *= multiplier;
      t.low_alarm *= multiplier;
      t.high_warning *= multiplier;
      t.low_warning *= multiplier;
    }
    out.rx_power = {Lanes(lanes, kCmisRxPower, kHalfPage, kCmisLanes, Milliwatts),
                    ThresholdsAt(thresholds, kCmisRxPowerThresholds, Milliwatts)};
    return out;
  }
  return absl::InvalidArgumentError(absl::StrCat("module EEPROM: identifier 0x",
                                                 absl::Hex(out.identifier, absl::kZeroPad2),
                                                 " is neither an SFF-8636 nor a CMIS module"));
}

std::vector<OutOfRange> CheckThresholds(const ModuleDiagnostics& d) {
  std::vector<OutOfRange> out;
  Check("temperature", d.temperature, false, out);
  Check("voltage", d.voltage, false, out);
  Check("rx_power", d.rx_power, true, out);
  Check("tx_power", d.tx_power, true, out);
  Check("tx_bias", d.tx_bias, true, out);
  return out;
}

}  // namespace rocenet::inventory
