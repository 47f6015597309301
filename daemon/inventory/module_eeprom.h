// SPDX-License-Identifier: Apache-2.0
// A transceiver's digital diagnostics from its EEPROM: temperature, supply
// voltage, and each lane's receive power, transmit power and transmit bias,
// with the alarm and warning thresholds the module itself sets.
//
// Two memory maps carry them on the modules of a RoCE fabric: SFF-8636
// (QSFP+, QSFP28: 100G and below) and CMIS (QSFP-DD, OSFP, QSFP112: 200G to
// 800G). The EEPROM is read in 128-byte halves of 256-byte pages at I2C
// address 0x50: the lower page (bytes 0-127, always there) and upper pages
// selected by number (and, in CMIS, bank). Which upper pages hold what:
//
//   SFF-8636   lower: monitors (temperature 22, Vcc 26, per lane RX power
//              34, TX bias 42, TX power 50); page 03h: thresholds
//   CMIS       lower: temperature 14, Vcc 16; page 01h: the TX bias
//              multiplier (byte 160); page 02h: thresholds; page 11h bank
//              0: per lane TX power 154, TX bias 170, RX power 186
//
// A module with flat memory (a passive copper cable, SFF-8636 byte 2 bit 2,
// CMIS byte 2 bit 7) has no upper pages beyond 00h and no thresholds. Pure;
// thread-compatible.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rocenet::inventory {

// The bytes read: the lower page, and each upper page by (page, bank),
// 128 bytes each (bytes 128-255 of that page).
struct ModulePages {
  std::string lower;
  std::map<std::pair<int, int>, std::string> upper;
};

// The upper pages (page, bank) to read for the module whose lower page is
// `lower`; empty for a flat memory module or one rocenet does not decode.
std::vector<std::pair<int, int>> UpperPagesToRead(absl::string_view lower);

struct Thresholds {
  double high_alarm = 0;
  double low_alarm = 0;
  double high_warning = 0;
  double low_warning = 0;

  friend bool operator==(const Thresholds&, const Thresholds&) = default;
};

// One quantity: its value(s) and, where the module sets them, thresholds.
struct Monitor {
  std::vector<double> values;  // one, or one a lane
  std::optional<Thresholds> thresholds;

  friend bool operator==(const Monitor&, const Monitor&) = default;
};

struct ModuleDiagnostics {
  std::string memory_map;  // "SFF-8636" or "CMIS"
  int identifier = 0;      // SFF-8024: 0x11 QSFP28, 0x18 QSFP-DD, 0x19 OSFP
  Monitor temperature;     // degrees Celsius
  Monitor voltage;         // volts
  Monitor rx_power;        // milliwatts, a lane each
  Monitor tx_power;        // milliwatts, a lane each
  Monitor tx_bias;         // milliamperes, a lane each

  friend bool operator==(const ModuleDiagnostics&, const ModuleDiagnostics&) = default;
};

// Decodes `pages`. InvalidArgument when the lower page is short or the
// identifier is of neither memory map; a quantity whose page is missing is
// left empty.
absl::StatusOr<ModuleDiagnostics> DecodeModule(const ModulePages& pages);

// A value beyond one of its module's thresholds.
struct OutOfRange {
  std::string quantity;  // "temperature", "voltage", "rx_power", "tx_power", "tx_bias"
  int lane = -1;         // 0-based; -1 for the module's own
  double value = 0;
  double limit = 0;
  bool alarm = false;  // beyond the alarm threshold, not only the warning
  bool high = false;   // above the high threshold, not below the low one

  friend bool operator==(const OutOfRange&, const OutOfRange&) = default;
};

// Every value beyond its warning or alarm threshold (the alarm when both);
// nothing for a quantity without thresholds.
std::vector<OutOfRange> CheckThresholds(const ModuleDiagnostics& diagnostics);

}  // namespace rocenet::inventory
