// SPDX-License-Identifier: Apache-2.0
// A transceiver's digital diagnostics from its EEPROM: temperature, supply
// voltage, and each lane's receive power, transmit power and transmit bias,
// with the alarm and warning thresholds the module itself sets, which of
// those monitors the module has at all, and which of its lanes carry a
// link now.
//
// Two memory maps carry them on the modules of a RoCE fabric: SFF-8636
// (QSFP+, QSFP28: 100G and below) and CMIS (QSFP-DD, OSFP, QSFP112: 200G to
// 800G). The EEPROM is read in 128-byte halves of 256-byte pages at I2C
// address 0x50: the lower page (bytes 0-127, always there) and upper pages
// selected by number (and, in CMIS, bank). Which upper pages hold what:
//
//   SFF-8636   lower: the revision (1), latched LOS flags (3), monitors
//              (temperature 22, Vcc 26, per lane RX power 34, TX bias 42,
//              TX power 50), TX disable (86); page 00h: vendor (148),
//              serial (196), the monitors implemented (220); page 03h:
//              thresholds
//   CMIS       lower: temperature 14, Vcc 16, the application descriptors
//              (86); page 00h: vendor (129), serial (166); page 01h: the
//              monitors implemented (159, 160) and the TX bias multiplier
//              (160); page 02h: thresholds; page 11h bank 0: each lane's
//              data path state (128), TX output status (133), latched TX
//              and RX LOS (136, 147), TX power (154), TX bias (170), RX
//              power (186), and the active data path configuration (206)
//
// A monitor the module does not implement is left empty, never read as 0.
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
// `lower`: page 00h for every module rocenet decodes, and the others only
// when the memory is paged.
std::vector<std::pair<int, int>> UpperPagesToRead(absl::string_view lower);

struct Thresholds {
  double high_alarm = 0;
  double low_alarm = 0;
  double high_warning = 0;
  double low_warning = 0;

  friend bool operator==(const Thresholds&, const Thresholds&) = default;
};

// One quantity: its value(s) and, where the module sets them, thresholds.
// Empty when the module does not implement it (or its page was not read).
struct Monitor {
  std::vector<double> values;  // one, or one a lane
  std::optional<Thresholds> thresholds;

  friend bool operator==(const Monitor&, const Monitor&) = default;
};

// One lane of the per-lane monitors (a media lane: a fibre's or a copper
// pair's), and what the module says of it now.
struct ModuleLane {
  // The lane carries a data path that is up: every lane of SFF-8636 (which
  // has no data paths); in CMIS, a lane of an active data path. A lane of
  // no data path (the upper four of a 4-lane application in an 8-lane
  // module) reads 0 and means nothing.
  bool in_use = true;
  // The index of its data path among the module's (ModuleDiagnostics::
  // data_paths); -1 for none.
  int data_path = 0;
  // The lane does not transmit, by the host's choice or for want of the
  // host's signal: TX disabled (SFF-8636), the host's input lost (latched
  // TX LOS), or the module's TX output not valid (CMIS): its TX power and
  // bias say nothing of the laser.
  bool tx_off = false;
  // No light (or signal) received since the last read (latched RX LOS).
  bool rx_los = false;

  friend bool operator==(const ModuleLane&, const ModuleLane&) = default;
};

struct ModuleDiagnostics {
  std::string memory_map;  // "SFF-8636" or "CMIS"
  int identifier = 0;      // SFF-8024: 0x11 QSFP28, 0x18 QSFP-DD, 0x19 OSFP
  // The module's vendor name and serial number as it gives them (page
  // 00h, trailing spaces removed); empty when page 00h was not read.
  // Ports that read the same module (a breakout) see the same pair.
  std::string vendor;
  std::string serial;
  Monitor temperature;  // degrees Celsius
  Monitor voltage;      // volts
  Monitor rx_power;     // milliwatts, a lane each
  Monitor tx_power;     // milliwatts, a lane each
  Monitor tx_bias;      // milliamperes, a lane each
  // The per-lane monitors' lanes, in order (4 in SFF-8636, 8 in CMIS).
  std::vector<ModuleLane> lanes;
  // How many data paths (host interfaces: one a port of a breakout) the
  // module carries now, in the order of their first host lane; SFF-8636: 1.
  int data_paths = 1;

  friend bool operator==(const ModuleDiagnostics&, const ModuleDiagnostics&) = default;
};

// Decodes `pages`. InvalidArgument when the lower page is short or the
// identifier is of neither memory map; a quantity whose page is missing is
// left empty.
absl::StatusOr<ModuleDiagnostics> DecodeModule(const ModulePages& pages);

}  // namespace rocenet::inventory
