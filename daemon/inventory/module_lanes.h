// SPDX-License-Identifier: Apache-2.0
// Which lanes of its transceiver are a port's, and which of the values the
// port answers for are beyond the module's own thresholds.
//
// A module may serve several ports (a breakout: an 800G OSFP carrying four
// 200G ports, a QSFP28 four 25G ones), each of which reads the whole
// module over its own driver. A port answers for the module's own values
// (temperature, supply voltage) and for its own lanes only, so that one
// port's dark fibre is not every port's alarm. Its own lanes are those of
// its data path (module_eeprom.h): the ports that read one module, known
// by its vendor and serial number, take its data paths in the order of
// their port ids; a port alone on a module takes its one data path. Where
// that does not tell (one port seen on a module of several data paths,
// or as many ports as no split of the lanes fits), the port's lanes are
// not known and none is judged: a wrong guess would charge one port with
// another's fault. Pure; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "daemon/inventory/module_eeprom.h"
#include "daemon/inventory/port.h"

namespace rocenet::inventory {

// Sets module_lanes of every port with a module (and clears it on the
// others).
void AssignModuleLanes(std::vector<Port>& ports);

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

// Every value of the module's own, and of `lanes` (0-based media lanes),
// beyond its warning or alarm threshold (the alarm when both). Nothing for
// a quantity the module does not monitor or sets no thresholds for, for a
// lane not in use, for the TX values of a lane that does not transmit, nor
// for the RX power of a lane in LOS (no light arrives: the link's fault,
// which LinkDown tells, not the module's).
std::vector<OutOfRange> CheckThresholds(const ModuleDiagnostics& diagnostics,
                                        const std::vector<int>& lanes);

}  // namespace rocenet::inventory
