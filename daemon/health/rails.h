// SPDX-License-Identifier: Apache-2.0
// Rail check: is each port cabled to its rail's switch?
//
// In a rail-optimised fabric the k-th scale-out port of every accelerator
// module goes to leaf k, and every port of a rail routes the same fabric
// network. A cable in the wrong leaf still gets an address (the wrong
// leaf's), and traffic for one rail then leaves through another rail's
// switch: collectives slow down or hang with nothing else to see. CheckRails
// compares each port with the other ports of its rail. Pure; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "daemon/addressing/port_addressing.h"
#include "daemon/health/port_health.h"

namespace rocenet::health {

// One port as the rail check sees it; the server fills it from the
// inventory, the LLDP neighbor table and the address plans.
struct RailMember {
  std::string port_id;
  std::string name;
  int module_id = -1;
  int rail = -1;  // -1: no rail (not checked)
  // The switch LLDP hears behind the port: chassis id, and a name for
  // people (system name, else the chassis id). Empty when none is heard.
  std::string switch_id;
  std::string switch_name;
  // The fabric network the port's plan routes (e.g. "10.201.0.0/16"); empty
  // without a plan.
  std::string network;
};

// The name of a port's rail, the one every part of rocenet groups ports by
// (the device plugin's spreading, rocectl topology, the diagnostics' rings):
// the port's scale-out order in its accelerator module ("0", "1", ...)
// where it has one; else, for a NIC without a module, the fabric network
// its address plan routes ("10.201.0.0/16"), or the one applied and kept
// while the plan waits, or failing a route the network of its own address
// (a flat L2 fabric); empty when none of these is known.
std::string RailName(int rail, const addressing::PortAddressing* addressing);

// The Miscabled condition (since unset) of every port whose switch, or
// failing that whose routed network, differs from the one a strict majority
// of its rail's ports share. The message names both sides: the port's
// switch and network, and its rail's. A rail without such a majority (two
// ports that disagree) says nothing.
std::map<std::string, Condition> CheckRails(const std::vector<RailMember>& members);

}  // namespace rocenet::health
