// SPDX-License-Identifier: Apache-2.0
#include "daemon/inventory/port_inventory.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "daemon/inventory/counter_names.h"
#include "daemon/inventory/module_lanes.h"

namespace rocenet::inventory {

PortInventory::PortInventory(PortSelection selection, const os::Sysfs* sysfs, os::Ethtool* ethtool)
    : selection_(std::move(selection)), scanner_(sysfs), rdma_scanner_(sysfs), ethtool_(ethtool) {}

bool PortInventory::Resync(const std::vector<os::LinkInfo>& links) {
  std::map<int, os::LinkInfo> next;
  for (const os::LinkInfo& link : links) next[link.ifindex] = link;
  // Placement of links that stayed under the same name is still right; the
  // Gaudi scan is redone, since a resync is also how drift gets repaired.
  for (auto it = placement_.begin(); it != placement_.end();) {
    auto now = next.find(it->first);
    if (now == next.end() || now->second.name != links_[it->first].name) {
      netdev_drivers_.erase(it->first);
      it = placement_.erase(it);
    } else {
      ++it;
    }
  }
  links_ = std::move(next);
  if (selection_.gaudi) gaudi_ = scanner_.ScanGaudi();
  // The GID table and the ports' RDMA state follow the ports' addresses
  // and links: read again on every resync. A port in a pod keeps the
  // device the host saw last; its state is read where the host still sees
  // the device (shared RDMA namespaces).
  rdma_ = rdma_scanner_.Scan();
  for (const AttachedPort& attached : attached_) {
    if (auto it = rdma_by_id_.find(attached.port_id); it != rdma_by_id_.end()) {
      rdma_scanner_.ReadState(it->second);
    }
  }
  bool changed = Rebuild();
  // Counters move all the time: read on a dump, like the link statistics,
  // and not a change of the ports.
  mac_.clear();
  rdma_counters_.clear();
  events_.clear();
  const std::map<std::string, std::pair<std::string, std::string>> reasons_before =
      std::move(down_reasons_);
  down_reasons_.clear();
  // Every module at the first dump; after it, each port's every
  // kModuleReadEvery dumps, a few ports at each, so that no dump holds the
  // loop for every module's transfers at once.
  const uint64_t dump = dumps_++;
  size_t index = 0;
  for (Port& port : ports_) {
    const bool read_module = dump == 0 || (dump + index++) % kModuleReadEvery == 0;
    std::vector<os::NamedCounter> stats;
    if (ethtool_ != nullptr && port.present) {
      // A device going away fails; the next dump sees it.
      if (absl::StatusOr<std::vector<os::NamedCounter>> read = ethtool_->Statistics(port.name);
          read.ok()) {
        stats = *std::move(read);
        port.mac = ParseMacCounters(stats);
        if (port.mac.has_value()) mac_[port.id] = *port.mac;
      }
    }
    if (port.rdma.has_value()) port.rdma_counters = rdma_scanner_.ReadCounters(*port.rdma);
    PortEventSources sources = MapEventSources(port.rdma_counters, stats);
    if (ethtool_ != nullptr && port.present) {
      ReadLinkExtras(port, sources);
      if (read_module && !no_module_.contains(port.link.ifindex)) {
        port.module = ReadModule(port);
        if (port.module.has_value()) {
          modules_[port.id] = *port.module;
        } else {
          modules_.erase(port.id);
        }
      }
    }
    port.events = event_totals_[port.id].Update(sources);
    if (!port.link_down_reason.empty()) {
      down_reasons_[port.id] = {port.link_down_reason, port.link_down_detail};
    }
    if (!port.rdma_counters.empty()) rdma_counters_[port.id] = port.rdma_counters;
    if (port.events != PortEvents{}) events_[port.id] = port.events;
  }
  AssignModuleLanes(ports_);
  // A port that left starts afresh when it comes back.
  std::erase_if(event_totals_, [&](const auto& entry) {
    return std::none_of(ports_.begin(), ports_.end(),
                        [&](const Port& port) { return port.id == entry.first; });
  });
  // A new link-down reason is a change of the port, worth telling.
  return changed || down_reasons_ != reasons_before;
}

void PortInventory::ReadLinkExtras(Port& port, PortEventSources& sources) {
  // The driver's FEC statistics over netlink come before its ethtool
  // names (mlx5 counts codewords there, bits in its statistics): they
  // replace those of the same event.
  if (!no_fec_stats_.contains(port.link.ifindex)) {
    absl::StatusOr<os::FecStats> fec = ethtool_->GetFecStats(port.name);
    if (fec.ok()) {
      const auto from_netlink = [&](absl::string_view event, const std::optional<uint64_t>& value) {
        if (value) sources.fec[std::string(event)] = {{"FEC_GET", *value}};
      };
      from_netlink(kCorrectedBlocks, fec->corrected_blocks);
      from_netlink(kUncorrectableBlocks, fec->uncorrectable_blocks);
      from_netlink(kCorrectedBits, fec->corrected_bits);
    } else if (absl::IsUnimplemented(fec.status())) {
      no_fec_stats_.insert(port.link.ifindex);
    }
  }
  port.link_down_reason.clear();
  port.link_down_detail.clear();
  if (!port.link.admin_up || port.link.carrier) return;
  if (absl::StatusOr<os::LinkState> state = ethtool_->GetLinkState(port.name); state.ok()) {
    port.link_down_reason = state->down_reason;
    port.link_down_detail = state->down_detail;
  }
}

std::optional<ModuleDiagnostics> PortInventory::ReadModule(const Port& port) {
  ModulePages pages;
  absl::StatusOr<std::string> lower = ethtool_->ModuleEeprom(port.name, 0, 0, 0, 128);
  if (!lower.ok()) {
    // No module, or a driver that cannot read one: not asked again. An
    // empty cage (EIO, ENODEV) is asked again at the next read.
    if (absl::IsUnimplemented(lower.status())) no_module_.insert(port.link.ifindex);
    return std::nullopt;
  }
  pages.lower = *std::move(lower);
  for (const auto& [page, bank] : UpperPagesToRead(pages.lower)) {
    absl::StatusOr<std::string> upper = ethtool_->ModuleEeprom(port.name, page, bank, 128, 128);
    if (upper.ok()) pages.upper[{page, bank}] = *std::move(upper);
  }
  absl::StatusOr<ModuleDiagnostics> decoded = DecodeModule(pages);
  if (!decoded.ok()) return std::nullopt;
  return *std::move(decoded);
}

bool PortInventory::Apply(const os::LinkEvent& event) {
  const int ifindex = event.link.ifindex;
  auto it = links_.find(ifindex);
  // Sysfs only changes when net devices come, go or get renamed; carrier and
  // counter changes need no new scan.
  bool topology_changed = false;
  if (event.type == os::LinkEvent::Type::kRemoved) {
    if (it == links_.end()) return false;
    links_.erase(it);
    placement_.erase(ifindex);
    netdev_drivers_.erase(ifindex);
    no_fec_stats_.erase(ifindex);
    no_module_.erase(ifindex);
    topology_changed = true;
  } else {
    topology_changed = it == links_.end() || it->second.name != event.link.name;
    if (topology_changed) {
      placement_.erase(ifindex);
      netdev_drivers_.erase(ifindex);
    }
    links_[ifindex] = event.link;
  }
  if (topology_changed && selection_.gaudi) gaudi_ = scanner_.ScanGaudi();
  return Rebuild();
}

void AssignRails(std::vector<Port>& ports) {
  // Every net device of a Gaudi function is a scale-out port, so the order
  // of dev_port inside a module is the rail; equal dev_ports are not (Gaudi 3
  // modules use different NIC indices).
  std::map<std::string, std::vector<Port*>> modules;
  for (Port& port : ports) {
    port.pci.rail = -1;
    if (port.pci.driver != kGaudiDriver || port.pci.port_index < 0) continue;
    const std::string key =
        port.pci.module_id >= 0 ? absl::StrCat("module ", port.pci.module_id) : port.pci.address;
    modules[key].push_back(&port);
  }
  for (auto& [key, members] : modules) {
    std::sort(members.begin(), members.end(), [](const Port* a, const Port* b) {
      return a->pci.port_index != b->pci.port_index ? a->pci.port_index < b->pci.port_index
                                                    : a->name < b->name;
    });
    for (size_t i = 0; i < members.size(); ++i) members[i]->pci.rail = static_cast<int>(i);
  }
}

bool PortInventory::SetAttached(std::vector<AttachedPort> attached) {
  std::map<std::string, PciInfo> placement;
  for (const AttachedPort& port : attached) {
    if (port.pci_address.empty()) continue;
    auto it = attached_placement_.find(port.pci_address);
    placement[port.pci_address] = it != attached_placement_.end()
                                      ? it->second
                                      : scanner_.DescribePciFunction(port.pci_address);
  }
  attached_placement_ = std::move(placement);
  attached_ = std::move(attached);
  return Rebuild();
}

bool PortInventory::RescanRdma() {
  rdma_ = rdma_scanner_.Scan();
  return Rebuild();
}

const Port* PortInventory::Find(absl::string_view id_or_name) const {
  for (const Port& port : ports_) {
    if (port.id == id_or_name || port.name == id_or_name) return &port;
  }
  return nullptr;
}

const os::DriverInfo& PortInventory::DriverOf(int ifindex, const std::string& name) {
  auto known = netdev_drivers_.find(ifindex);
  if (known == netdev_drivers_.end()) {
    absl::StatusOr<os::DriverInfo> info = ethtool_->Driver(name);
    known = netdev_drivers_.emplace(ifindex, info.ok() ? *info : os::DriverInfo()).first;
  }
  return known->second;
}

bool PortInventory::Rebuild() {
  std::map<std::string, const os::LinkInfo*> by_name;
  for (const auto& [ifindex, link] : links_) by_name[link.name] = &link;

  std::vector<Port> next;
  std::set<std::string> taken;

  for (const SysfsNetdev& netdev : gaudi_) {
    if (!selection_.gaudi_scale_out_ports.empty() &&
        !selection_.gaudi_scale_out_ports.contains(netdev.pci.port_index)) {
      continue;
    }
    Port port;
    port.name = netdev.name;
    port.pci = netdev.pci;
    port.discovery = Discovery::kGaudiSysfs;
    if (auto it = by_name.find(netdev.name); it != by_name.end()) {
      port.present = true;
      port.link = *it->second;
      if (ethtool_ != nullptr) {
        port.pci.firmware_version = DriverOf(it->second->ifindex, netdev.name).firmware_version;
      }
    }
    port.id = MakePortId(port.pci, port.link, port.name);
    taken.insert(port.name);
    next.push_back(std::move(port));
  }

  for (const auto& [ifindex, link] : links_) {
    if (taken.contains(link.name)) continue;
    const bool by_pattern =
        std::any_of(selection_.interfaces.begin(), selection_.interfaces.end(),
                    [&name = link.name](const std::string& p) { return MatchesPattern(p, name); });
    if (!by_pattern && selection_.drivers.empty()) continue;
    auto placement = placement_.find(ifindex);
    if (placement == placement_.end()) {
      placement = placement_.emplace(ifindex, scanner_.DescribeNetdev(link.name)).first;
    }
    PciInfo& pci = placement->second;
    auto configured = [this](const std::string& driver) {
      return !driver.empty() && std::find(selection_.drivers.begin(), selection_.drivers.end(),
                                          driver) != selection_.drivers.end();
    };
    if (ethtool_ != nullptr) {
      // The name `ethtool -i` shows ("habanalabs_en") is what admins see and
      // write; it may differ from the PCI driver, and virtual devices have
      // only this one. Asked once per device: a device without a driver
      // name (lo) says so every time.
      const os::DriverInfo& info = DriverOf(ifindex, link.name);
      pci.netdev_driver = info.driver;
      pci.firmware_version = info.firmware_version;
    }
    const bool by_driver = configured(pci.driver) || configured(pci.netdev_driver);
    if (!by_pattern && !by_driver) continue;
    Port port;
    port.name = link.name;
    port.present = true;
    port.link = link;
    port.pci = pci;
    port.discovery = by_pattern ? Discovery::kInterfaceName : Discovery::kDriver;
    port.id = MakePortId(port.pci, port.link, port.name);
    taken.insert(port.name);
    next.push_back(std::move(port));
  }

  // Ports in pods are listed wherever they are: the host's sysfs no longer
  // shows them, but they are managed ports in use.
  std::map<std::string, const AttachedPort*> attached_by_id;
  for (const AttachedPort& away : attached_) attached_by_id[away.port_id] = &away;
  for (Port& port : next) {
    if (auto it = attached_by_id.find(port.id); it != attached_by_id.end()) {
      port.attached_to = it->second->netns;
      attached_by_id.erase(it);
    }
  }
  for (const auto& [id, away] : attached_by_id) {
    if (taken.contains(away->host_ifname)) continue;  // another device has its name now
    Port port;
    port.id = id;
    port.name = away->host_ifname;
    port.attached_to = away->netns;
    if (auto it = attached_placement_.find(away->pci_address); it != attached_placement_.end()) {
      port.pci = it->second;
    }
    // "<pci>-p<dev_port>": the id says which port of the function it is.
    const std::string prefix = absl::StrCat(away->pci_address, "-p");
    int index = -1;
    if (!away->pci_address.empty() && absl::StartsWith(id, prefix) &&
        absl::SimpleAtoi(absl::string_view(id).substr(prefix.size()), &index)) {
      port.pci.port_index = index;
    }
    port.discovery = port.pci.driver == kGaudiDriver ? Discovery::kGaudiSysfs
                     : !port.pci.driver.empty() &&
                             std::find(selection_.drivers.begin(), selection_.drivers.end(),
                                       port.pci.driver) != selection_.drivers.end()
                         ? Discovery::kDriver
                         : Discovery::kInterfaceName;
    taken.insert(port.name);
    next.push_back(std::move(port));
  }

  // A port configured by its exact name that does not exist is reported, so
  // a typo or a missing driver is visible rather than silently ignored.
  for (const std::string& pattern : selection_.interfaces) {
    if (IsGlob(pattern) || taken.contains(pattern)) continue;
    Port port;
    port.name = pattern;
    port.id = MakePortId({}, {}, pattern);
    port.discovery = Discovery::kInterfaceName;
    taken.insert(pattern);
    next.push_back(std::move(port));
  }

  for (Port& port : next) {
    if (auto it = mac_.find(port.id); it != mac_.end() && port.present) port.mac = it->second;
    if (auto it = rdma_counters_.find(port.id); it != rdma_counters_.end()) {
      port.rdma_counters = it->second;
    }
    if (auto it = events_.find(port.id); it != events_.end()) port.events = it->second;
    if (auto it = modules_.find(port.id); it != modules_.end() && port.present) {
      port.module = it->second;
    }
    // A reason holds while the carrier stays down.
    if (auto it = down_reasons_.find(port.id);
        it != down_reasons_.end() && port.present && !port.link.carrier) {
      std::tie(port.link_down_reason, port.link_down_detail) = it->second;
    }
    // A port in a pod keeps what the host saw last: the GID table names its
    // net device by the name it has in the pod.
    if (!port.attached_to.empty()) {
      if (auto last = rdma_by_id_.find(port.id); last != rdma_by_id_.end()) {
        port.rdma = last->second;
      }
    } else if (auto it = rdma_.find(port.name); it != rdma_.end() && port.present) {
      port.rdma = it->second;
      rdma_by_id_[port.id] = it->second;
    }
  }
  AssignRails(next);
  AssignModuleLanes(next);
  std::sort(next.begin(), next.end(), [](const Port& a, const Port& b) { return a.name < b.name; });
  const bool changed = next.size() != ports_.size() ||
                       !std::equal(next.begin(), next.end(), ports_.begin(),
                                   [](const Port& a, const Port& b) { return a.SameState(b); });
  ports_ = std::move(next);
  return changed;
}

}  // namespace rocenet::inventory
