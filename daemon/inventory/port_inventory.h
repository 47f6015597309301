// PortInventory: the node's managed ports, kept current from link events.
//
// Owned by the event loop thread and used only there. It holds the last link
// state the kernel reported for every interface of the namespace and derives
// the managed ports from that, the selection and sysfs. Callers feed it a full
// dump (Resync) at start and after an event overflow, and each link event
// (Apply) in between; both say whether the ports changed, ignoring counters.
#pragma once

#include <map>
#include <vector>

#include "absl/strings/string_view.h"
#include "daemon/inventory/port.h"
#include "daemon/inventory/port_selection.h"
#include "daemon/inventory/sysfs_scanner.h"
#include "daemon/os/link.h"
#include "daemon/os/sysfs.h"

namespace rocenet::inventory {

class PortInventory {
 public:
  // `sysfs` must outlive the inventory. `selection` must be valid
  // (ValidateSelection).
  PortInventory(PortSelection selection, const os::Sysfs* sysfs);

  // Replaces every link with `links`. Returns true when the ports changed.
  bool Resync(const std::vector<os::LinkInfo>& links);

  // Applies one link event. Returns true when the ports changed.
  bool Apply(const os::LinkEvent& event);

  // Managed ports sorted by name; absent ports included with present=false.
  const std::vector<Port>& ports() const { return ports_; }

  // By id or interface name; nullptr when neither matches.
  const Port* Find(absl::string_view id_or_name) const;

 private:
  // Recomputes ports_ from links_; returns true when it changed.
  bool Rebuild();

  PortSelection selection_;
  SysfsScanner scanner_;
  std::map<int, os::LinkInfo> links_;  // by ifindex
  // Sysfs placement of selected non-Gaudi links, by ifindex; read once.
  std::map<int, PciInfo> placement_;
  std::vector<SysfsNetdev> gaudi_;
  std::vector<Port> ports_;
};

}  // namespace rocenet::inventory
