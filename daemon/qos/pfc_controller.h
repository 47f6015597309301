// SPDX-License-Identifier: Apache-2.0
// PfcController: keeps every host port's PFC as `qos.pfc` asks.
//
// Runs on the event loop thread. Sync() reads each present host port's PFC
// through dcbnl and, unless the request is `keep`, sets it where it
// differs: after the driver reset the port (hbl_en turns PFC back on), after
// the port came back, after someone changed it by hand. Nothing is changed
// on exit. A port without DCB support is asked once per device (its
// ifindex) and then left alone; it is reported only when PFC was asked for.
// A port in a pod keeps what it had when it left.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "daemon/inventory/port.h"
#include "daemon/os/dcb.h"
#include "daemon/qos/pfc.h"

namespace rocenet::qos {

// What rocenet knows of one port's PFC.
struct PortPfc {
  std::string name;
  // dcbnl answered; `settings` are the port's as last read.
  bool supported = false;
  os::PfcSettings settings;
  // What qos.pfc asks of this port; nullopt for keep or when it cannot.
  std::optional<uint8_t> wanted;
  // Why the port cannot have what qos.pfc asks: "NoDcb" (no dcbnl support),
  // "Refused" (its driver's rule) or "SetFailed", and a message naming the
  // port; empty when it can, or when nothing is asked.
  std::string problem;
  std::string problem_message;

  friend bool operator==(const PortPfc&, const PortPfc&) = default;
};

class PfcController {
 public:
  // `dcb` is not owned and must outlive the controller; null means no DCB
  // on any port.
  PfcController(os::Dcb* dcb, PfcRequest request) : dcb_(dcb), request_(request) {}

  // Whether every present host port among `ports` can have `request`:
  // InvalidArgument naming the first port that cannot and why. Ports
  // without DCB support pass (they are reported, not refused).
  absl::Status Check(const PfcRequest& request, const std::vector<inventory::Port>& ports);

  // Takes a new request (after Check); the next Sync() applies it.
  void SetRequest(const PfcRequest& request) { request_ = request; }
  const PfcRequest& request() const { return request_; }

  // Reads and, where the request says so, sets every present host port's
  // PFC. Returns true when any port's PFC changed other than its counters.
  bool Sync(const std::vector<inventory::Port>& ports);

  // By port id.
  const std::map<std::string, PortPfc>& ports() const { return ports_; }

  // PFC settings rocenet changed, since start.
  uint64_t changes() const { return changes_; }

 private:
  // The port's PFC now, setting it first when it differs from the request.
  PortPfc SyncOne(const inventory::Port& port, const PortPfc* before);

  os::Dcb* dcb_;
  PfcRequest request_;
  std::map<std::string, PortPfc> ports_;
  // Ports (by id) found without DCB support, with the ifindex they had.
  std::map<std::string, int> no_dcb_;
  uint64_t changes_ = 0;
};

// Whether `port` is a Gaudi port, whose driver takes all or no priorities.
bool IsGaudiPort(const inventory::Port& port);

}  // namespace rocenet::qos
