#include "daemon/health/port_health.h"

#include "absl/strings/str_cat.h"

namespace rocenet::health {

namespace {

void AddLldpConditions(const inventory::Port& port, const PortSignals& signals,
                       std::vector<Condition>& out) {
  const std::string& name = port.name;
  if (signals.neighbor_count > 1) {
    out.push_back({std::string(kAmbiguousNeighbor), "MultipleNeighbors",
                   absl::StrCat("port ", name, ": ", signals.neighbor_count,
                                " LLDP neighbors; something sits between the port and the switch"),
                   {}});
  }
  if (signals.neighbor_count > 0 || !signals.l3) return;
  if (signals.startup_holdoff && !signals.neighbor_ever_seen && signals.provisioned) return;
  if (!signals.neighbor_lost.empty()) {
    out.push_back({std::string(kLldpExpired), signals.neighbor_lost,
                   absl::StrCat("port ", name, ": the switch's LLDP information ",
                                signals.neighbor_lost == "Shutdown" ? "was withdrawn (TTL 0)"
                                                                    : "expired",
                                signals.provisioned ? "; the address is kept" : ""),
                   {}});
  } else {
    out.push_back({std::string(kNoLldpNeighbor), "NoFrames",
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
        reason == "ConflictingDescriptions") {
      type = kAddressConflict;
    } else if (reason == "MtuOutOfRange") {
      type = kMtuMismatch;
    }
    out.push_back({std::string(type), reason, signals.plan_message, {}});
  }
  if (!signals.apply_error.empty()) {
    out.push_back({std::string(kAddressingFailed), "ApplyFailed", signals.apply_error, {}});
  }
  if (!signals.provisioned && out.empty()) {
    out.push_back({std::string(kNotProvisioned), reason.empty() ? "Pending" : reason,
                   signals.plan_message.empty()
                       ? absl::StrCat("port ", port.name, ": not configured yet")
                       : signals.plan_message,
                   {}});
  }
}

}  // namespace

std::vector<Condition> EvaluatePort(const inventory::Port& port, const PortSignals* signals) {
  std::vector<Condition> out;
  if (signals != nullptr && !signals->attached_to.empty()) return out;
  if (!port.present) {
    out.push_back({std::string(kPortMissing), "NotFound",
                   absl::StrCat("port ", port.name,
                                ": no such network interface in the host namespace"),
                   {}});
    return out;
  }
  if (!port.link.admin_up) {
    out.push_back({std::string(kLinkDown), "AdminDown",
                   absl::StrCat("port ", port.name, ": interface is administratively down"),
                   {}});
  } else if (!port.link.carrier) {
    out.push_back({std::string(kLinkDown), "NoCarrier",
                   absl::StrCat("port ", port.name, ": no carrier (cable, optics or switch port)"),
                   {}});
  }
  if (signals != nullptr) {
    AddLldpConditions(port, *signals, out);
    AddAddressingConditions(port, *signals, out);
  }
  return out;
}

bool HealthTracker::Update(const std::vector<inventory::Port>& ports,
                           const std::map<std::string, PortSignals>& signals) {
  const absl::Time now = clock_->Now();
  std::map<std::string, const PortHealth*> previous;
  for (const PortHealth& health : node_.ports) previous[health.port_id] = &health;

  NodeHealth next;
  for (const inventory::Port& port : ports) {
    PortHealth health;
    health.port_id = port.id;
    health.name = port.name;
    const auto signal = signals.find(port.id);
    health.conditions = EvaluatePort(port, signal == signals.end() ? nullptr : &signal->second);
    health.healthy = health.conditions.empty();
    const auto it = previous.find(port.id);
    const PortHealth* before = it == previous.end() ? nullptr : it->second;
    health.since = before != nullptr && before->healthy == health.healthy ? before->since : now;
    for (Condition& condition : health.conditions) {
      condition.since = now;
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
