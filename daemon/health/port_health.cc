// SPDX-License-Identifier: Apache-2.0
#include "daemon/health/port_health.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "daemon/qos/pfc.h"

namespace rocenet::health {

namespace {

// Ethernet header and FCS around an MTU-sized payload, as the IEEE 802.3
// Maximum Frame Size counts them (untagged).
constexpr int kEthernetOverhead = 18;

void AddLldpConditions(const inventory::Port& port, const PortSignals& signals,
                       std::vector<Condition>& out) {
  const std::string& name = port.name;
  if (signals.neighbor_count > 1) {
    out.push_back({std::string(kAmbiguousNeighbor),
                   "MultipleNeighbors",
                   absl::StrCat("port ", name, ": ", signals.neighbor_count,
                                " LLDP neighbors; something sits between the port and the switch"),
                   {}});
  }
  if (signals.neighbor_count > 0 || !signals.l3) return;
  if (signals.startup_holdoff && !signals.neighbor_ever_seen && signals.provisioned) return;
  if (!signals.neighbor_lost.empty()) {
    out.push_back(
        {std::string(kLldpExpired),
         signals.neighbor_lost,
         absl::StrCat("port ", name, ": the switch's LLDP information ",
                      signals.neighbor_lost == "Shutdown" ? "was withdrawn (TTL 0)" : "expired",
                      signals.provisioned ? "; the address is kept" : ""),
         {}});
  } else {
    out.push_back({std::string(kNoLldpNeighbor),
                   "NoFrames",
                   absl::StrCat("port ", name, ": no LLDP frame received from the switch yet"),
                   {}});
  }
}

void AddAddressingConditions(const inventory::Port& port, const PortSignals& signals,
                             std::vector<Condition>& out) {
  const std::string& reason = signals.plan_reason;
  if (signals.plan_state == "Refused") {
    absl::string_view type = kAddressingRefused;
    if (reason == "DuplicateSubnet" || reason == "AddressInUse" ||
        reason == "ConflictingDescriptions" || reason == "HostNetworkOverlap") {
      type = kAddressConflict;
    } else if (reason == "MtuOutOfRange") {
      type = kMtuMismatch;
    }
    out.push_back({std::string(type), reason, signals.plan_message, {}});
  }
  // A switch port that takes smaller frames than the port sends drops every
  // full-size frame silently: RDMA traffic stalls while pings pass.
  const int frame = static_cast<int>(port.link.mtu) + kEthernetOverhead;
  if (signals.switch_max_frame_size > 0 && port.link.mtu > 0 &&
      frame > signals.switch_max_frame_size) {
    out.push_back({std::string(kMtuMismatch),
                   "SwitchFrameTooSmall",
                   absl::StrCat("port ", port.name, ": MTU ", port.link.mtu, " makes ", frame,
                                "-byte frames but the switch port takes at most ",
                                signals.switch_max_frame_size, " (LLDP Maximum Frame Size)"),
                   {}});
  }
  if (!signals.yielded.empty()) {
    out.push_back({std::string(kAddressConflict), "AddressTakenOver", signals.yielded, {}});
  }
  if (!signals.miscabled.type.empty()) out.push_back(signals.miscabled);
  if (!signals.apply_error.empty()) {
    out.push_back({std::string(kAddressingFailed), "ApplyFailed", signals.apply_error, {}});
  }
  if (!signals.provisioned && out.empty()) {
    out.push_back({std::string(kNotProvisioned),
                   reason.empty() ? "Pending" : reason,
                   signals.plan_message.empty()
                       ? absl::StrCat("port ", port.name, ": not configured yet")
                       : signals.plan_message,
                   {}});
  }
}

// Lossless RoCE needs the port and its switch to pause the same priorities:
// where they differ, frames on a priority one side pauses and the other
// does not are dropped under congestion (or pause storms spread).
void AddPfcConditions(const inventory::Port& port, const PfcSignal& pfc,
                      std::vector<Condition>& out) {
  const bool advisory = !pfc.affects_health;
  if (!pfc.problem.empty()) {
    out.push_back({std::string(kPfcUnsupported), pfc.problem, pfc.problem_message, {}, advisory});
  }
  if (pfc.port.has_value() && pfc.switch_side.has_value() && *pfc.port != *pfc.switch_side) {
    out.push_back(
        {std::string(kPfcMismatch),
         "SwitchDiffers",
         absl::StrCat("port ", port.name, ": PFC on priorities ", qos::FormatPriorities(*pfc.port),
                      " here but ", qos::FormatPriorities(*pfc.switch_side), " at the switch ",
                      pfc.switch_name,
                      " (its LLDP PFC TLV); lossless RoCE needs both ends to agree"),
         {},
         advisory});
  }
}

// The error counters ErrorsRising watches: the MAC's where the driver has
// them (on Gaudi, IFLA_STATS64 sees none of the RoCE traffic and none of the
// MAC errors), the kernel's link statistics otherwise.
os::LinkStats ErrorCounters(const inventory::Port& port) {
  os::LinkStats out = port.link.stats;
  if (!port.mac.has_value()) return out;
  const inventory::MacCounters& mac = *port.mac;
  // ifInErrors counts every bad frame, FCS errors among them.
  if (mac.receive_errors.has_value()) {
    out.rx_errors = *mac.receive_errors;
  } else if (mac.receive_fcs_errors.has_value()) {
    out.rx_errors = *mac.receive_fcs_errors;
  }
  if (mac.transmit_errors.has_value()) out.tx_errors = *mac.transmit_errors;
  return out;
}

// The watch of `id` in `next`, carried over from `last` when it was there.
template <typename Watch>
Watch& Carry(std::map<std::string, Watch>& last, std::map<std::string, Watch>& next,
             const std::string& id) {
  Watch& watch = next[id];
  if (auto it = last.find(id); it != last.end()) watch = std::move(it->second);
  return watch;
}

}  // namespace

std::vector<Condition> EvaluatePort(const inventory::Port& port, const PortSignals* signals) {
  std::vector<Condition> out;
  // A port in a pod is judged where it is: `port` is its link as the pod's
  // kernel sees it, and its LLDP is heard inside the pod. A failing job
  // uses exactly these ports.
  const std::string& pod = port.attached_to;
  if (!port.present) {
    out.push_back({std::string(kPortMissing),
                   pod.empty() ? "NotFound" : "NotInPod",
                   pod.empty() ? absl::StrCat("port ", port.name,
                                              ": no such network interface in the host namespace")
                               : absl::StrCat("port ", port.name, ": attached to pod namespace ",
                                              pod, " but not found there"),
                   {}});
    return out;
  }
  if (!port.link.admin_up) {
    out.push_back({std::string(kLinkDown),
                   "AdminDown",
                   absl::StrCat("port ", port.name, ": interface is administratively down"),
                   {}});
  } else if (!port.link.carrier) {
    // The driver's own reason, where it tells ethtool one.
    std::string why = "(cable, optics or switch port)";
    if (!port.link_down_reason.empty()) {
      why = absl::StrCat("(the driver says ", port.link_down_reason,
                         port.link_down_detail.empty() ? "" : ": ", port.link_down_detail, ")");
    }
    out.push_back({std::string(kLinkDown),
                   "NoCarrier",
                   absl::StrCat("port ", port.name, ": no carrier ", why),
                   {}});
  }
  if (signals != nullptr) {
    AddLldpConditions(port, *signals, out);
    AddAddressingConditions(port, *signals, out);
    AddPfcConditions(port, signals->pfc, out);
  }
  return out;
}

bool HealthTracker::Update(const std::vector<inventory::Port>& ports,
                           const std::map<std::string, PortSignals>& signals) {
  // The watches measure on the boot clock; `since` is the wall time users
  // read.
  const os::Moment moment = clock_->Read();
  const os::BootTime now = moment.boot;
  std::map<std::string, const PortHealth*> previous;
  for (const PortHealth& health : node_.ports) previous[health.port_id] = &health;

  // Counter history for every port whose device is seen, in the host or in
  // its pod (a move keeps the device's counters); a port that goes away
  // starts afresh when it comes back.
  std::map<std::string, ErrorCounterWatch> watches;
  std::map<std::string, FlapWatch> flap_watches;
  std::map<std::string, RdmaWatch> rdma_watches;
  std::map<std::string, RetransmitWatch> retransmit_watches;
  std::map<std::string, FecWatch> fec_watches;
  std::map<std::string, LosslessWatch> lossless_watches;
  std::map<std::string, OpticsWatch> optics_watches;
  std::map<std::string, std::vector<Condition>> watched;
  const absl::Duration every = errors_policy_.sample_interval;
  for (const inventory::Port& port : ports) {
    if (!port.present) continue;
    std::vector<Condition>& found = watched[port.id];
    if (std::optional<Condition> rising =
            Carry(error_watches_, watches, port.id)
                .Observe(port.name, ErrorCounters(port), now, errors_policy_)) {
      found.push_back(std::move(*rising));
    }
    if (std::optional<Condition> flapping =
            Carry(flap_watches_, flap_watches, port.id).Observe(port, now, policies_.flaps)) {
      found.push_back(std::move(*flapping));
    }
    const auto signal = signals.find(port.id);
    for (Condition& condition :
         Carry(rdma_watches_, rdma_watches, port.id)
             .Observe(port, signal == signals.end() ? std::string() : signal->second.address,
                      now)) {
      found.push_back(std::move(condition));
    }
    if (std::optional<Condition> resending =
            Carry(retransmit_watches_, retransmit_watches, port.id)
                .Observe(port, now, every, policies_.retransmits)) {
      found.push_back(std::move(*resending));
    }
    if (std::optional<Condition> fec =
            Carry(fec_watches_, fec_watches, port.id).Observe(port, now, every, policies_.fec)) {
      found.push_back(std::move(*fec));
    }
    if (std::optional<Condition> drops =
            Carry(lossless_watches_, lossless_watches, port.id).Observe(port, now, every)) {
      found.push_back(std::move(*drops));
    }
    if (std::optional<Condition> optics =
            Carry(optics_watches_, optics_watches, port.id).Observe(port, now)) {
      found.push_back(std::move(*optics));
    }
  }
  error_watches_ = std::move(watches);
  flap_watches_ = std::move(flap_watches);
  rdma_watches_ = std::move(rdma_watches);
  retransmit_watches_ = std::move(retransmit_watches);
  fec_watches_ = std::move(fec_watches);
  lossless_watches_ = std::move(lossless_watches);
  optics_watches_ = std::move(optics_watches);

  NodeHealth next;
  for (const inventory::Port& port : ports) {
    PortHealth health;
    health.port_id = port.id;
    health.name = port.name;
    const auto signal = signals.find(port.id);
    health.conditions = EvaluatePort(port, signal == signals.end() ? nullptr : &signal->second);
    if (auto it = watched.find(port.id); it != watched.end()) {
      for (Condition& condition : it->second) health.conditions.push_back(std::move(condition));
    }
    health.healthy = std::all_of(health.conditions.begin(), health.conditions.end(),
                                 [](const Condition& c) { return c.advisory; });
    const auto it = previous.find(port.id);
    const PortHealth* before = it == previous.end() ? nullptr : it->second;
    health.since =
        before != nullptr && before->healthy == health.healthy ? before->since : moment.wall;
    for (Condition& condition : health.conditions) {
      condition.since = moment.wall;
      if (before == nullptr) continue;
      for (const Condition& old : before->conditions) {
        if (old.type == condition.type && old.reason == condition.reason) {
          condition.since = old.since;
        }
      }
    }
    next.ports_total += 1;
    next.ports_healthy += health.healthy ? 1 : 0;
    next.ports.push_back(std::move(health));
  }
  next.ready = next.ports_total > 0 && next.ports_healthy == next.ports_total;
  const bool changed = !(next == node_);
  node_ = std::move(next);
  return changed;
}

}  // namespace rocenet::health
