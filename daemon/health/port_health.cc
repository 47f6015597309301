#include "daemon/health/port_health.h"

#include "absl/strings/str_cat.h"

namespace rocenet::health {

std::vector<Condition> EvaluatePort(const inventory::Port& port) {
  std::vector<Condition> out;
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
  return out;
}

bool HealthTracker::Update(const std::vector<inventory::Port>& ports) {
  const absl::Time now = clock_->Now();
  std::map<std::string, const PortHealth*> previous;
  for (const PortHealth& health : node_.ports) previous[health.port_id] = &health;

  NodeHealth next;
  for (const inventory::Port& port : ports) {
    PortHealth health;
    health.port_id = port.id;
    health.name = port.name;
    health.conditions = EvaluatePort(port);
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
