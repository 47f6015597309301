// SPDX-License-Identifier: Apache-2.0
#include "daemon/inventory/module_eeprom.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace rocenet::inventory {
namespace {

constexpr size_t kHalfPage = 128;

// SFF-8024 identifiers.
bool IsSff8636(int id) { return id == 0x0C || id == 0x0D || id == 0x11; }
bool IsCmis(int id) { return id == 0x18 || id == 0x19 || id == 0x1E; }

// SFF-8636 (lower page unless noted).
constexpr size_t kSffRevision = 1;
constexpr uint8_t kSffRevision28 = 0x08;  // Rev 2.8 on: byte 220 bits 5-4 mean something
constexpr size_t kSffStatus = 2;
constexpr uint8_t kSffFlatMemory = 1 << 2;
constexpr size_t kSffLos = 3;  // bits 7-4 L-Tx4..1 LOS, bits 3-0 L-Rx4..1 LOS
constexpr size_t kSffTemperature = 22;
constexpr size_t kSffVoltage = 26;
constexpr size_t kSffRxPower = 34;
constexpr size_t kSffTxBias = 42;
constexpr size_t kSffTxPower = 50;
constexpr size_t kSffTxDisable = 86;  // bits 3-0 Tx4..1 disable
constexpr int kSffLanes = 4;
// Page 00h.
constexpr size_t kSffVendorName = 148;
constexpr size_t kSffSerial = 196;
constexpr size_t kSffMonitoring = 220;
constexpr uint8_t kSffTemperatureImplemented = 1 << 5;
constexpr uint8_t kSffVoltageImplemented = 1 << 4;
constexpr uint8_t kSffTxPowerImplemented = 1 << 2;
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
// Application descriptors 1-8: host interface, media interface, lane
// counts (host bits 7-4, media bits 3-0), host lane assignment.
constexpr size_t kCmisApplications = 86;
constexpr int kCmisLowerApplications = 8;
// Page 00h.
constexpr size_t kCmisVendorName = 129;
constexpr size_t kCmisSerial = 166;
// Page 01h: the monitors implemented, and the TX bias multiplier.
constexpr size_t kCmisModuleMonitors = 159;
constexpr uint8_t kCmisTemperatureImplemented = 1 << 0;
constexpr uint8_t kCmisVoltageImplemented = 1 << 1;
constexpr size_t kCmisLaneMonitors = 160;  // and bits 4-3: the multiplier x1, x2, x4
constexpr uint8_t kCmisTxBiasImplemented = 1 << 0;
constexpr uint8_t kCmisTxPowerImplemented = 1 << 1;
constexpr uint8_t kCmisRxPowerImplemented = 1 << 2;
// Page 02h.
constexpr size_t kCmisTemperatureThresholds = 128;
constexpr size_t kCmisVoltageThresholds = 136;
constexpr size_t kCmisTxPowerThresholds = 176;
constexpr size_t kCmisTxBiasThresholds = 184;
constexpr size_t kCmisRxPowerThresholds = 192;
// Page 11h, bank 0.
constexpr size_t kCmisDataPathState = 128;  // a nibble a host lane, lane 1 the low one
constexpr uint8_t kCmisDataPathActivated = 4;
constexpr size_t kCmisOutputStatusTx = 133;
constexpr size_t kCmisTxLos = 136;
constexpr size_t kCmisRxLos = 147;
constexpr size_t kCmisTxPower = 154;
constexpr size_t kCmisTxBias = 170;
constexpr size_t kCmisRxPower = 186;
constexpr size_t kCmisActiveConfig = 206;  // a host lane each: AppSel 7-4, DataPathID 3-1
constexpr int kCmisLanes = 8;

// Units: temperature 1/256 degree C (signed); voltage 100 uV; power
// 0.1 uW; bias 2 uA.
double Celsius(uint16_t raw) { return static_cast<int16_t>(raw) / 256.0; }
double Volts(uint16_t raw) { return raw * 100e-6; }
double Milliwatts(uint16_t raw) { return raw * 1e-4; }
double Milliamperes(uint16_t raw) { return raw * 2e-3; }

// A byte of a page, where `offset` counts from the page's start (upper
// pages: 128..255).
std::optional<uint8_t> Byte(const std::string* page, size_t offset, size_t base) {
  if (page == nullptr || offset < base || offset - base >= page->size()) return std::nullopt;
  return static_cast<uint8_t>((*page)[offset - base]);
}

// A big-endian u16 of a page, `offset` as Byte's.
std::optional<uint16_t> Word(const std::string* page, size_t offset, size_t base) {
  std::optional<uint8_t> high = Byte(page, offset, base);
  std::optional<uint8_t> low = Byte(page, offset + 1, base);
  if (!high || !low) return std::nullopt;
  return static_cast<uint16_t>(*high << 8 | *low);
}

// Whether any bit of `mask` is set in a byte: nullopt where the byte was
// not read.
std::optional<bool> Flag(const std::string* page, size_t offset, size_t base, uint8_t mask) {
  std::optional<uint8_t> byte = Byte(page, offset, base);
  if (!byte) return std::nullopt;
  return (*byte & mask) != 0;
}

// A lane's bit (lane 0 the lowest) of a byte of lane flags.
std::optional<bool> LaneBit(const std::string* page, size_t offset, size_t base, int lane) {
  return Flag(page, offset, base, static_cast<uint8_t>(1 << lane));
}

const std::string* Upper(const ModulePages& pages, int page, int bank = 0) {
  auto it = pages.upper.find({page, bank});
  return it == pages.upper.end() || it->second.size() < kHalfPage ? nullptr : &it->second;
}

// Printable ASCII of an upper page, trailing spaces removed.
std::string Text(const std::string* page, size_t offset, size_t length) {
  if (page == nullptr || offset < kHalfPage || offset - kHalfPage + length > page->size()) {
    return "";
  }
  std::string out = page->substr(offset - kHalfPage, length);
  for (char& c : out) {
    if (c < 0x20 || c > 0x7e) c = ' ';
  }
  return std::string(absl::StripTrailingAsciiWhitespace(out));
}

std::optional<Thresholds> ThresholdsAt(const std::string* page, size_t offset,
                                       double (*unit)(uint16_t), double scale = 1) {
  std::optional<uint16_t> words[4];
  for (int i = 0; i < 4; ++i) words[i] = Word(page, offset + 2 * i, kHalfPage);
  if (!words[0] || !words[1] || !words[2] || !words[3]) return std::nullopt;
  return Thresholds{unit(*words[0]) * scale, unit(*words[1]) * scale, unit(*words[2]) * scale,
                    unit(*words[3]) * scale};
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

// `monitor` as read, or empty when the module says it does not implement
// it (`implemented` false; nullopt: the module does not say, or its page
// was not read).
Monitor Implemented(Monitor monitor, std::optional<bool> implemented) {
  return implemented.value_or(true) ? monitor : Monitor{};
}

ModuleDiagnostics DecodeSff8636(const ModulePages& pages, ModuleDiagnostics out) {
  out.memory_map = "SFF-8636";
  const std::string* lower = &pages.lower;
  const std::string* identity = Upper(pages, 0);
  const std::string* thresholds = Upper(pages, 3);
  out.vendor = Text(identity, kSffVendorName, 16);
  out.serial = Text(identity, kSffSerial, 16);
  // Before revision 2.8 the temperature and Vcc bits were not defined.
  const bool module_bits = Byte(lower, kSffRevision, 0).value_or(0) >= kSffRevision28;
  const std::optional<bool> temperature_bit =
      Flag(identity, kSffMonitoring, kHalfPage, kSffTemperatureImplemented);
  const std::optional<bool> voltage_bit =
      Flag(identity, kSffMonitoring, kHalfPage, kSffVoltageImplemented);
  out.temperature = Implemented({One(lower, kSffTemperature, Celsius),
                                 ThresholdsAt(thresholds, kSffTemperatureThresholds, Celsius)},
                                module_bits ? temperature_bit : std::nullopt);
  out.voltage = Implemented(
      {One(lower, kSffVoltage, Volts), ThresholdsAt(thresholds, kSffVoltageThresholds, Volts)},
      module_bits ? voltage_bit : std::nullopt);
  out.rx_power = {Lanes(lower, kSffRxPower, 0, kSffLanes, Milliwatts),
                  ThresholdsAt(thresholds, kSffRxPowerThresholds, Milliwatts)};
  out.tx_bias = {Lanes(lower, kSffTxBias, 0, kSffLanes, Milliamperes),
                 ThresholdsAt(thresholds, kSffTxBiasThresholds, Milliamperes)};
  out.tx_power = Implemented({Lanes(lower, kSffTxPower, 0, kSffLanes, Milliwatts),
                              ThresholdsAt(thresholds, kSffTxPowerThresholds, Milliwatts)},
                             Flag(identity, kSffMonitoring, kHalfPage, kSffTxPowerImplemented));
  const uint8_t los = Byte(lower, kSffLos, 0).value_or(0);
  const uint8_t disabled = Byte(lower, kSffTxDisable, 0).value_or(0);
  for (int lane = 0; lane < kSffLanes; ++lane) {
    ModuleLane& l = out.lanes.emplace_back();
    l.tx_off = (disabled >> lane & 1) != 0 || (los >> (4 + lane) & 1) != 0;
    l.rx_los = (los >> lane & 1) != 0;
  }
  return out;
}

// The media lanes of each host lane's data path, from the active control
// set (page 11h), the data path states and the application descriptors:
// the data paths in the order of their first host lane, each given as many
// media lanes as its application has, one after the other (the usual
// assignment; CMIS allows others, which a module advertises and rocenet
// does not read).
void CmisLanes(const ModulePages& pages, const std::string* status, ModuleDiagnostics& out) {
  struct DataPath {
    int host_lanes = 0;
    int media_lanes = 0;
    bool active = false;
    bool host_input_lost = false;
  };
  std::map<int, DataPath> paths;  // by first host lane
  for (int host = 0; host < kCmisLanes; ++host) {
    const uint8_t config = Byte(status, kCmisActiveConfig + host, kHalfPage).value_or(0);
    const int app = config >> 4;
    if (app == 0) continue;  // in no data path
    const int first = config >> 1 & 7;
    DataPath& path = paths[first];
    path.host_lanes += 1;
    if (host == first) {
      const uint8_t state = Byte(status, kCmisDataPathState + host / 2, kHalfPage).value_or(0);
      path.active = (host % 2 == 0 ? state & 0x0f : state >> 4) == kCmisDataPathActivated;
      const std::optional<uint8_t> counts =
          app <= kCmisLowerApplications
              ? Byte(&pages.lower, kCmisApplications + 4 * (app - 1) + 2, 0)
              : std::nullopt;
      path.media_lanes = counts.has_value() ? (*counts & 0x0f) : 0;
    }
    if (LaneBit(status, kCmisTxLos, kHalfPage, host).value_or(false)) {
      path.host_input_lost = true;
    }
  }
  out.lanes.assign(kCmisLanes, ModuleLane{.in_use = false, .data_path = -1});
  out.data_paths = static_cast<int>(paths.size());
  int media = 0;
  int index = 0;
  for (auto& [first, path] : paths) {
    // An application that does not say (one of descriptors 9-15, on a page
    // not read): as many media lanes as host lanes.
    const int count = path.media_lanes > 0 ? path.media_lanes : path.host_lanes;
    for (int i = 0; i < count && media < kCmisLanes; ++i, ++media) {
      ModuleLane& lane = out.lanes[media];
      lane.in_use = path.active;
      lane.data_path = index;
      lane.tx_off = path.host_input_lost ||
                    !LaneBit(status, kCmisOutputStatusTx, kHalfPage, media).value_or(true);
    }
    ++index;
  }
  for (int media_lane = 0; media_lane < kCmisLanes; ++media_lane) {
    out.lanes[media_lane].rx_los =
        LaneBit(status, kCmisRxLos, kHalfPage, media_lane).value_or(false);
  }
}

ModuleDiagnostics DecodeCmis(const ModulePages& pages, ModuleDiagnostics out) {
  out.memory_map = "CMIS";
  const std::string* lower = &pages.lower;
  const std::string* identity = Upper(pages, 0);
  const std::string* advertising = Upper(pages, 1);
  const std::string* thresholds = Upper(pages, 2);
  const std::string* status = Upper(pages, 0x11);
  out.vendor = Text(identity, kCmisVendorName, 16);
  out.serial = Text(identity, kCmisSerial, 16);
  double multiplier = 1;
  if (std::optional<uint8_t> lane_monitors = Byte(advertising, kCmisLaneMonitors, kHalfPage)) {
    const int bits = (*lane_monitors >> 3) & 3;
    multiplier = bits == 1 ? 2 : bits == 2 ? 4 : 1;
  }
  out.temperature =
      Implemented({One(lower, kCmisTemperature, Celsius),
                   ThresholdsAt(thresholds, kCmisTemperatureThresholds, Celsius)},
                  Flag(advertising, kCmisModuleMonitors, kHalfPage, kCmisTemperatureImplemented));
  out.voltage = Implemented(
      {One(lower, kCmisVoltage, Volts), ThresholdsAt(thresholds, kCmisVoltageThresholds, Volts)},
      Flag(advertising, kCmisModuleMonitors, kHalfPage, kCmisVoltageImplemented));
  out.tx_bias =
      Implemented({Lanes(status, kCmisTxBias, kHalfPage, kCmisLanes, Milliamperes, multiplier),
                   ThresholdsAt(thresholds, kCmisTxBiasThresholds, Milliamperes, multiplier)},
                  Flag(advertising, kCmisLaneMonitors, kHalfPage, kCmisTxBiasImplemented));
  out.tx_power =
      Implemented({Lanes(status, kCmisTxPower, kHalfPage, kCmisLanes, Milliwatts),
                   ThresholdsAt(thresholds, kCmisTxPowerThresholds, Milliwatts)},
                  Flag(advertising, kCmisLaneMonitors, kHalfPage, kCmisTxPowerImplemented));
  out.rx_power =
      Implemented({Lanes(status, kCmisRxPower, kHalfPage, kCmisLanes, Milliwatts),
                   ThresholdsAt(thresholds, kCmisRxPowerThresholds, Milliwatts)},
                  Flag(advertising, kCmisLaneMonitors, kHalfPage, kCmisRxPowerImplemented));
  if (status != nullptr) {
    CmisLanes(pages, status, out);
  } else {
    out.data_paths = 0;
  }
  return out;
}

}  // namespace

std::vector<std::pair<int, int>> UpperPagesToRead(absl::string_view lower) {
  if (lower.size() < kHalfPage) return {};
  const int id = static_cast<unsigned char>(lower[0]);
  if (IsSff8636(id)) {
    if (static_cast<unsigned char>(lower[kSffStatus]) & kSffFlatMemory) return {{0, 0}};
    return {{0, 0}, {3, 0}};
  }
  if (IsCmis(id)) {
    if (static_cast<unsigned char>(lower[kCmisMemoryModel]) & kCmisFlatMemory) return {{0, 0}};
    return {{0, 0}, {1, 0}, {2, 0}, {0x11, 0}};
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
  if (IsSff8636(out.identifier)) return DecodeSff8636(pages, std::move(out));
  if (IsCmis(out.identifier)) return DecodeCmis(pages, std::move(out));
  return absl::InvalidArgumentError(absl::StrCat("module EEPROM: identifier 0x",
                                                 absl::Hex(out.identifier, absl::kZeroPad2),
                                                 " is neither an SFF-8636 nor a CMIS module"));
}

}  // namespace rocenet::inventory
