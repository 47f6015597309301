// SPDX-License-Identifier: Apache-2.0
// Port: one managed scale-out port as the inventory sees it.
//
// Value type, thread-compatible. The inventory produces these on the event
// loop; snapshots copy them to other threads.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/inventory/counter_names.h"
#include "daemon/inventory/mac_counters.h"
#include "daemon/inventory/module_eeprom.h"
#include "daemon/os/link.h"

namespace rocenet::inventory {

enum class Discovery {
  kGaudiSysfs,     // a net device of a habanalabs PCI function
  kInterfaceName,  // an interface name or glob from the configuration
  kDriver,         // a kernel driver name from the configuration
};

// Where the port sits in the machine; empty / -1 where unknown.
struct PciInfo {
  std::string address;    // "0000:19:00.0"
  std::string pcie_root;  // "pci0000:17"
  std::string driver;     // "habanalabs" (the PCI driver)
  // What the net device's driver calls itself (`ethtool -i`: "habanalabs_en");
  // `drivers` matches either name. Empty for ports found in Gaudi's sysfs.
  std::string netdev_driver;
  // The NIC's firmware as its driver reports it (`ethtool -i`'s
  // firmware-version); empty when it gives none.
  std::string firmware_version;
  int numa_node = -1;
  int module_id = -1;   // accelerator module (Gaudi OAM) id
  int port_index = -1;  // sysfs dev_port
  // The port's scale-out order inside its accelerator module (HCL's sub-NIC
  // index): ports of the same rail on every module go to the same leaf in a
  // rail-optimised fabric. -1 where there is no module (generic NICs).
  int rail = -1;

  friend bool operator==(const PciInfo&, const PciInfo&) = default;
};

// The RDMA device serving a port (RoCE), from sysfs (rdma_scanner.h).
struct RdmaInfo {
  std::string device;  // "mlx5_0", "hbl_0"
  int port = -1;       // its port number (1-based) for this net device
  std::string uverbs;  // "uverbs0" (/dev/infiniband/uverbs0); "" when unknown
  // The RoCE v2 GID of the port's IPv4 address, and that address; -1 and
  // "" until the port has one.
  int gid_index = -1;
  std::string gid_ipv4;
  // The port's logical and physical state as the RDMA core reports them
  // (sysfs ports/<n>/state "4: ACTIVE", phys_state "5: LinkUp"): the
  // number (IB spec's PortState and PortPhysicalState) and its name; 0 and
  // "" when unknown (a port in a pod whose device left the host with it).
  int state = 0;
  std::string state_name;
  int physical_state = 0;
  std::string physical_state_name;

  friend bool operator==(const RdmaInfo&, const RdmaInfo&) = default;
};

// The RDMA port state that carries traffic (IB spec PortState ACTIVE).
inline constexpr int kRdmaPortActive = 4;

struct Port {
  // Stable id, valid as a kubelet device id (<= 63 characters); see MakePortId.
  std::string id;
  std::string name;
  // False for a port that is expected (configured by name, or listed by the
  // driver) but has no net device in this namespace.
  bool present = false;
  os::LinkInfo link;
  PciInfo pci;
  Discovery discovery = Discovery::kInterfaceName;
  // The pod network namespace the port is attached to, empty in the host. The
  // inventory never sets it; the daemon fills it in from its attachments.
  std::string attached_to;
  // The driver's MAC-level counters (ethtool statistics) as of the last full
  // dump; nullopt when the driver has none or they were not read.
  std::optional<MacCounters> mac;
  // The RDMA device behind the port; nullopt for a NIC without one.
  std::optional<RdmaInfo> rdma;
  // Counters only, as of the last full dump: every hw_counters entry of the
  // RDMA port by the driver's own name, and the events of each family
  // mapped from those and the driver's ethtool names (counter_names.h).
  std::vector<os::NamedCounter> rdma_counters;
  PortEvents events;
  // Why the link is down, as the driver tells ethtool (LINKSTATE_GET's
  // extended state, "NO_CABLE", "LINK_TRAINING_FAILURE", ...) and the
  // detail ("KR_FRAME_LOCK_NOT_ACQUIRED"); read while the carrier is down,
  // empty when the driver says nothing (veth, virtio, hbl_en).
  std::string link_down_reason;
  std::string link_down_detail;
  // The transceiver's diagnostics, read every kModuleReadEvery dumps;
  // nullopt without a module the driver can read (veth, virtio).
  std::optional<ModuleDiagnostics> module;
  // The module's lanes (0-based media lanes) that are this port's: all of
  // a module of its own, its share of a breakout's (module_lanes.h);
  // empty when that cannot be told (none of them is judged then).
  std::vector<int> module_lanes;

  // Equality that ignores traffic counters: counters move all the time and are
  // not a change worth telling watchers about.
  bool SameState(const Port& other) const;
};

// "<pci-address>-p<port-index>" when both are known, else
// "mac-<permanent mac without colons>", else "if-<name>".
std::string MakePortId(const PciInfo& pci, const os::LinkInfo& link, const std::string& name);

absl::string_view DiscoveryName(Discovery discovery);

}  // namespace rocenet::inventory
