// SPDX-License-Identifier: Apache-2.0
// What Habana's collective library (HCL) reads in a container, built from
// the ports given to it: the same files whether the kubelet device plugin
// hands the ports out (an allocation) or rocenetd keeps them for a DRA claim
// (a reservation), so the two paths cannot drift apart. Pure functions, no
// I/O; thread-compatible.
//
// gaudinet.json ({"NIC_NET_CONFIG":[{"NIC_MAC","NIC_IP","SUBNET_MASK",
// "GATEWAY_MAC"}]}): HCL refuses the whole file when one entry has an empty
// or zero address or mask, and the file's mere presence switches it to L3.
// So it lists only ports with a usable address and is not written at all in
// L2 mode or when no given port has one.
//
// macAddrInfo.json ({"MAC_ADDR_INFO":[{"PCI_ID","MAC_ADDR_LIST"}]}): HCL
// takes each accelerator's port MACs from it, by NIC index, before it looks
// for netdevs, so it finds scale-out ports that have left the host for the
// pod (which Habana's container runtime, reading the host's sysfs at
// container create, cannot see). One entry per PCI function of the given
// Gaudi ports, 24 MACs by NIC index: the function's scale-out ports where
// rocenetd knows them, broadcast for the internal NICs (no netdev), as
// Habana's runtime writes them.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace rocenet {

inline constexpr int kGaudiNicCount = 24;
inline constexpr char kInternalNicMac[] = "ff:ff:ff:ff:ff:ff";
inline constexpr char kGaudinetFile[] = "gaudinet.json";
inline constexpr char kMacInfoFile[] = "macAddrInfo.json";

// One port as HCL's files need it, in the API's spelling (what rocenetd's
// node stream says of it), so both of its users fill it the same way.
// Value type.
struct HclPort {
  std::string id;           // stable port id
  std::string name;         // host interface name, e.g. "so1"
  std::string pci_address;  // empty when unknown
  std::string mac;
  int port_index = -1;  // NIC index on its device (sysfs dev_port), -1: unknown
  bool gaudi = false;   // a scale-out port of a Gaudi (habanalabs) function
  // From a ready addressing plan only: a refused or waiting port has no
  // address HCL may count on.
  std::string local;        // "10.200.2.1/30", empty when not addressed
  std::string gateway_mac;  // the switch port's MAC, empty when unknown
  bool l2 = false;          // rocenetd runs in L2 mode: no addresses at all
};

// A file of an HCL directory: its name (kGaudinetFile, kMacInfoFile) and
// content.
struct HclFile {
  std::string name;
  std::string content;

  friend bool operator==(const HclFile&, const HclFile&) = default;
};

// The given ports with an address HCL accepts, sorted by interface name;
// nullopt in L2 or when there is none.
std::optional<std::string> GaudinetJson(const std::vector<HclPort>& given);

// Entries for the PCI functions of the given Gaudi ports, with the MACs of
// every port of `all` on those functions; nullopt when no given port is a
// Gaudi port with a PCI address and NIC index.
std::optional<std::string> MacAddrInfoJson(const std::vector<HclPort>& given,
                                           const std::vector<HclPort>& all);

// What a directory of HCL files for `given` holds, macAddrInfo.json first:
// only the files that have content (a file that is not listed must not be
// there).
std::vector<HclFile> HclFiles(const std::vector<HclPort>& given, const std::vector<HclPort>& all);

}  // namespace rocenet
