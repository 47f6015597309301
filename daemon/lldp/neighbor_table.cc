// SPDX-License-Identifier: Apache-2.0
#include "daemon/lldp/neighbor_table.h"

#include <algorithm>

namespace rocenet::lldp {
namespace {

bool SameMsap(const Lldpdu& a, const Lldpdu& b) {
  return a.chassis_id == b.chassis_id && a.port_id == b.port_id;
}

// Receive statistics differ between otherwise identical LLDPDUs; compare
// the content only.
bool SameContent(Lldpdu a, Lldpdu b) {
  a.unrecognized_tlvs = b.unrecognized_tlvs = 0;
  a.unrecognized_org_tlvs = b.unrecognized_org_tlvs = 0;
  a.discarded_tlvs = b.discarded_tlvs = {};
  return a == b;
}

// Sets when `neighbor`, heard at `now`, expires: its TTL from now.
void Stamp(Neighbor& neighbor, os::Moment now) {
  const absl::Duration ttl = absl::Seconds(neighbor.lldpdu.ttl_seconds);
  neighbor.last_seen = now.wall;
  neighbor.expires = now.wall + ttl;
  neighbor.due = now.boot + ttl;
}

}  // namespace

bool NeighborTable::RefreshIfIdentical(const std::string& port, absl::string_view frame,
                                       os::Moment now) {
  auto it = ports_.find(port);
  if (it == ports_.end()) return false;
  for (Neighbor& neighbor : it->second.neighbors) {
    if (neighbor.frame == frame) {
      Stamp(neighbor, now);
      ++neighbor.frames;
      return true;
    }
  }
  return false;
}

ObserveResult NeighborTable::Observe(const std::string& port, const MacAddress& source,
                                     Lldpdu lldpdu, absl::string_view frame, os::Moment now) {
  PortNeighbors& entry = ports_[port];
  auto it = std::find_if(entry.neighbors.begin(), entry.neighbors.end(),
                         [&](const Neighbor& n) { return SameMsap(n.lldpdu, lldpdu); });
  if (lldpdu.IsShutdown()) {
    if (it == entry.neighbors.end()) return ObserveResult::kRefreshed;
    entry.neighbors.erase(it);
    if (entry.neighbors.empty()) {
      entry.loss = NeighborLoss::kShutdown;
      entry.lost_at = now.wall;
    }
    return ObserveResult::kRemoved;
  }
  if (it == entry.neighbors.end()) {
    if (entry.neighbors.size() >= max_per_port_) {
      ++entry.too_many;
      return ObserveResult::kIgnored;
    }
    Neighbor neighbor;
    neighbor.source = source;
    neighbor.first_seen = now.wall;
    it = entry.neighbors.insert(entry.neighbors.end(), std::move(neighbor));
    it->lldpdu = std::move(lldpdu);
    entry.ever_seen = true;
    entry.loss = NeighborLoss::kNone;
    it->frame = std::string(frame);
    Stamp(*it, now);
    it->frames = 1;
    return ObserveResult::kNew;
  }
  const bool changed = !SameContent(it->lldpdu, lldpdu) || it->source != source;
  it->source = source;
  it->lldpdu = std::move(lldpdu);
  it->frame = std::string(frame);
  Stamp(*it, now);
  ++it->frames;
  return changed ? ObserveResult::kChanged : ObserveResult::kRefreshed;
}

std::vector<std::string> NeighborTable::Expire(os::Moment now) {
  std::vector<std::string> changed;
  for (auto& [port, entry] : ports_) {
    const size_t before = entry.neighbors.size();
    std::erase_if(entry.neighbors, [&](const Neighbor& n) { return n.due <= now.boot; });
    const size_t removed = before - entry.neighbors.size();
    if (removed == 0) continue;
    entry.ageouts += removed;
    if (entry.neighbors.empty()) {
      entry.loss = NeighborLoss::kAgedOut;
      entry.lost_at = now.wall;
    }
    changed.push_back(port);
  }
  return changed;
}

std::optional<os::BootTime> NeighborTable::NextExpiry() const {
  std::optional<os::BootTime> next;
  for (const auto& [port, entry] : ports_) {
    for (const Neighbor& n : entry.neighbors) {
      if (!next.has_value() || n.due < *next) next = n.due;
    }
  }
  return next;
}

const PortNeighbors* NeighborTable::Find(const std::string& port) const {
  auto it = ports_.find(port);
  return it == ports_.end() ? nullptr : &it->second;
}

void NeighborTable::ForgetPort(const std::string& port) { ports_.erase(port); }

}  // namespace rocenet::lldp
