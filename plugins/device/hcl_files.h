// SPDX-License-Identifier: Apache-2.0
// What Habana's collective library (HCL) reads in a container, built from
// the ports allocated to it. Pure functions, no I/O; thread-compatible.
//
// gaudinet.json ({"NIC_NET_CONFIG":[{"NIC_MAC","NIC_IP","SUBNET_MASK",
// "GATEWAY_MAC"}]}): HCL refuses the whole file when one entry has an empty
// or zero address or mask, and the file's mere presence switches it to L3.
// So it lists only ports with a usable address and is not written at all in
// L2 mode or when no allocated port has one.
//
// macAddrInfo.json ({"MAC_ADDR_INFO":[{"PCI_ID","MAC_ADDR_LIST"}]}): HCL
// takes each accelerator's port MACs from it, by NIC index, before it looks
// for netdevs, so it finds scale-out ports that have left the host for the
// pod (which Habana's container runtime, reading the host's sysfs at
// container create, cannot see). One entry per PCI function of the
// allocated Gaudi ports, 24 MACs by NIC index: the function's scale-out
// ports where rocenetd knows them, broadcast for the internal NICs (no
// netdev), as Habana's runtime writes them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plugins/device/port_info.h"

namespace rocenet::device {

inline constexpr int kGaudiNicCount = 24;
inline constexpr char kInternalNicMac[] = "ff:ff:ff:ff:ff:ff";

// The allocated ports with an address HCL accepts, sorted by interface
// name; nullopt in L2 or when there is none.
std::optional<std::string> GaudinetJson(const std::vector<const PortInfo*>& allocated);

// Entries for the PCI functions of the allocated Gaudi ports, with the MACs
// of every port of `all` on those functions; nullopt when no allocated port
// is a Gaudi port with a PCI address and NIC index.
std::optional<std::string> MacAddrInfoJson(const std::vector<const PortInfo*>& allocated,
                                           const PortMap& all);

}  // namespace rocenet::device
