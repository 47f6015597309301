// SPDX-License-Identifier: Apache-2.0
// PortInventory: the node's managed ports, kept current from link events.
//
// Owned by the event loop thread and used only there. It holds the last link
// state the kernel reported for every interface of the namespace and derives
// the managed ports from that, the selection and sysfs. Callers feed it a full
// dump (Resync) at start and after an event overflow, and each link event
// (Apply) in between; both say whether the ports changed, ignoring counters.
#pragma once

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "daemon/inventory/port.h"
#include "daemon/inventory/port_selection.h"
#include "daemon/inventory/rdma_scanner.h"
#include "daemon/inventory/sysfs_scanner.h"
#include "daemon/os/ethtool.h"
#include "daemon/os/link.h"
#include "daemon/os/sysfs.h"

namespace rocenet::inventory {

// A port handed to a pod, as the attachment journal knows it. The kernel
// hides a net device moved to another namespace from the host's sysfs
// (sysfs is tagged by namespace), so the inventory cannot find it there; it
// keeps listing it from this.
struct AttachedPort {
  std::string port_id;
  std::string host_ifname;
  std::string pci_address;  // empty for a port without one
  std::string netns;        // the pod's namespace
};

// Sets pci.rail of every Gaudi port: its order by dev_port among the ports of
// its module (its PCI function when the module id is unknown).
void AssignRails(std::vector<Port>& ports);

// A port's module is read every this many dumps (every 30 s at the 5 s
// counter sample), the ports' turns spread over the dumps: an EEPROM page
// is an I2C transfer of milliseconds, and a module's temperature and
// powers move slowly.
inline constexpr int kModuleReadEvery = 6;

class PortInventory {
 public:
  // `sysfs` (and `ethtool`, when given) must outlive the inventory.
  // `selection` must be valid (ValidateSelection). Without `ethtool`,
  // drivers are matched by their PCI driver only and no MAC counters are
  // read.
  PortInventory(PortSelection selection, const os::Sysfs* sysfs, os::Ethtool* ethtool = nullptr);

  // Replaces every link with `links` and re-reads the RDMA GID tables and
  // port states, the MAC counters of the ports in this namespace and the
  // RDMA counters of every port whose device is here. Returns true when the ports changed.
  bool Resync(const std::vector<os::LinkInfo>& links);

  // Applies one link event. Returns true when the ports changed.
  bool Apply(const os::LinkEvent& event);

  // Reads the RDMA devices' GID tables again (they follow the ports'
  // addresses). Returns true when the ports changed.
  bool RescanRdma();

  // The ports in pods now (the whole set). Each is listed with attached_to
  // set whether or not sysfs still shows it; present stays false unless its
  // name is a link of this namespace (the caller fills in the pod's view).
  // Returns true when the ports changed.
  bool SetAttached(std::vector<AttachedPort> attached);

  // Managed ports sorted by name; absent ports included with present=false.
  const std::vector<Port>& ports() const { return ports_; }

  // By id or interface name; nullptr when neither matches.
  const Port* Find(absl::string_view id_or_name) const;

 private:
  // Recomputes ports_ from links_; returns true when it changed.
  bool Rebuild();
  // The driver's FEC statistics (into `sources`) and, while the carrier is
  // down, the link-down reason, over ethtool netlink.
  void ReadLinkExtras(Port& port, PortEventSources& sources);
  // The module's EEPROM pages, decoded; nullopt when there is none to read.
  std::optional<ModuleDiagnostics> ReadModule(const Port& port);
  // What `ethtool -i` says of a net device, asked once per device: a
  // device without a driver name (lo) says so every time.
  const os::DriverInfo& DriverOf(int ifindex, const std::string& name);

  PortSelection selection_;
  SysfsScanner scanner_;
  RdmaScanner rdma_scanner_;
  os::Ethtool* ethtool_;
  // `ethtool -i` driver names of links, by ifindex ("" when it has none);
  // asked only for links that nothing else selects.
  std::map<int, os::DriverInfo> netdev_drivers_;
  // MAC counters, RDMA hw_counters and the mapped events by port id, from
  // the last Resync.
  std::map<std::string, MacCounters> mac_;
  std::map<std::string, std::vector<os::NamedCounter>> rdma_counters_;
  std::map<std::string, PortEvents> events_;
  // Each port's events from dump to dump, by port id (counter_names.h).
  std::map<std::string, EventTotals> event_totals_;
  // Link-down reasons by port id, from the last Resync; and the devices,
  // by ifindex, whose driver has no FEC statistics (not asked again).
  std::map<std::string, std::pair<std::string, std::string>> down_reasons_;
  std::set<int> no_fec_stats_;
  // Module diagnostics by port id, and the devices, by ifindex, without a
  // module to read; the dumps so far.
  std::map<std::string, ModuleDiagnostics> modules_;
  std::set<int> no_module_;
  uint64_t dumps_ = 0;
  std::map<int, os::LinkInfo> links_;  // by ifindex
  // Sysfs placement of selected non-Gaudi links, by ifindex; read once.
  std::map<int, PciInfo> placement_;
  std::vector<SysfsNetdev> gaudi_;
  std::vector<AttachedPort> attached_;
  // PCI placement of attached ports' functions, by PCI address; read when a
  // port is first seen attached (the function stays in sysfs).
  std::map<std::string, PciInfo> attached_placement_;
  std::vector<Port> ports_;
  // RDMA devices by net device name, from the last Resync; and the last
  // seen of each port, by id, for the ports that are in pods now.
  std::map<std::string, RdmaInfo> rdma_;
  std::map<std::string, RdmaInfo> rdma_by_id_;
};

}  // namespace rocenet::inventory
