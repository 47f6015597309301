// SPDX-License-Identifier: Apache-2.0
// AddressingDriver: LLDP neighbors + ports -> plans -> kernel, on every change.
//
// Runs on the event loop thread. Each Run() re-plans every port from the
// current neighbors (the planner is pure and cheap), reads the kernel's
// addresses and routes once, and applies what differs. What it keeps when a
// plan cannot be applied is the design's promise that a running job is never
// disturbed:
//   - no neighbor any more (aged out, TTL 0, or not heard since a restart):
//     the configuration rocenet applied before stays, and is repaired if
//     someone removes part of it;
//   - a refused plan (bad description, conflict): nothing changes.
// The node is planned as a whole: an address rocenet put on one port that
// the switches now give to another moves, taken off the first port before
// it goes on the second. Every port in the host is set up first, whatever its plan: a port that is
// down hears no LLDP. L2 mode applies link up and MTU only and removes
// rocenet's addresses. RemoveAll takes back what rocenet put on the ports
// when rocenet leaves the node.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "daemon/addressing/applied_store.h"
#include "daemon/addressing/planner.h"
#include "daemon/addressing/port_addressing.h"
#include "daemon/addressing/reconciler.h"
#include "daemon/common/removal.h"
#include "daemon/inventory/port.h"
#include "daemon/lldp/neighbor_table.h"
#include "daemon/os/netlink.h"

namespace rocenet::addressing {

class AddressingDriver {
 public:
  // Pointers are not owned and must outlive the driver.
  AddressingDriver(os::Netlink* netlink, addressing::AppliedStore* store,
                   addressing::PlannerConfig config);

  // Re-plans and applies. Returns true when any port's addressing changed
  // (plan, applied configuration, provisioned state or error).
  bool Run(const std::vector<inventory::Port>& ports, const lldp::NeighborTable& neighbors);

  // In the order of the ports of the last Run().
  const std::vector<PortAddressing>& ports() const { return ports_; }

  addressing::Mode mode() const { return config_.mode; }

  // Takes a new configuration (SIGHUP reload); the next Run() plans with it.
  void SetConfig(const addressing::PlannerConfig& config) { config_ = config; }

  // Netlink requests that changed something, since start.
  uint64_t changes() const { return changes_; }

  // rocenet leaving the node (docs/rocenetd.md#uninstall): from every port
  // of `ports` in the host, the routes rocenet installed (protocol
  // kRouteProtocol) and the address the store records it applied; an
  // address it did not record is never touched, nor a port in a pod, nor
  // the MTU or link state. A port whose removal went through is forgotten
  // by the store and shows nothing applied; one that failed keeps its
  // record (a second call tries again) and is reported kept with the
  // error. Call Run no more afterwards: it would configure the ports again.
  RemovalReport RemoveAll(const std::vector<inventory::Port>& ports);

 private:
  // Takes rocenet's address off every host port whose address the new
  // plans give to another port (a cable swap, a refused port's kept address
  // that a valid plan claims), before anything is added: by port id, why a
  // port that has no new address of its own lost it. Updates `kernel` and
  // the store to match.
  std::map<std::string, std::string> YieldMovedAddresses(
      const std::vector<inventory::Port>& ports, const std::vector<addressing::AddressPlan>& plans,
      addressing::KernelState& kernel);
  // The host's routes among `routes` (the main table), for the planner:
  // not rocenet's, not on one of `ports` (host ports by ifindex), not the
  // default; their interfaces named.
  std::vector<addressing::HostRoute> HostRoutes(const std::vector<os::RouteInfo>& routes,
                                                const std::map<int, const inventory::Port*>& ports);
  PortAddressing ApplyOne(const inventory::Port& port, addressing::AddressPlan plan,
                          const addressing::KernelState& kernel);

  os::Netlink* netlink_;
  addressing::AppliedStore* store_;
  addressing::PlannerConfig config_;
  addressing::Reconciler reconciler_;
  std::vector<PortAddressing> ports_;
  uint64_t changes_ = 0;
  // Ports (by id) that lost their kept address to another port's plan,
  // and why; until they have a ready plan of their own.
  std::map<std::string, std::string> yielded_;
  // Times each port (by id) was found administratively down and set up.
  std::map<std::string, uint64_t> links_set_up_;
};

}  // namespace rocenet::addressing
