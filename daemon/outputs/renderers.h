// SPDX-License-Identifier: Apache-2.0
// Pure renderers of the host output files: ports in, file content out.
//
// No I/O and no state, so any thread may call them; the output is a function
// of the input only (entries sorted, no timestamps), which lets HostOutputs
// compare it byte for byte with what is on disk and skip identical writes.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "daemon/outputs/host_outputs.h"

namespace rocenet::outputs {

// The dotted-quad netmask of an IPv4 prefix length ("255.255.255.252" for
// 30). Lengths outside 0..32 are clamped.
std::string SubnetMask(int prefix_length);

// What the host gaudinet.json holds for the Gaudi L3 ports among `ports`
// (HCL drives no other NIC), from what HCL accepts (docs/rocenetd.md):
// an entry for every port with an address and its switch's MAC (one that
// is down keeps its entry: HCL skips a down port); a port without one is
// left out and named in `missing`, as HCL gives a port it finds no entry
// for the IP 0. That is harmless for a port that is down (HCL drops it at
// start) and fatal for one that is up (the rank ends at "source GID not
// found"), so while an up port has no entry the file is not `writable`
// and `held_by` names that port.
struct GaudinetPlan {
  std::vector<PortOutput> entries;   // sorted by interface name
  std::vector<std::string> missing;  // sorted
  bool writable = false;
  std::string held_by;  // the first up port without an entry
};
GaudinetPlan PlanGaudinet(const std::vector<PortOutput>& ports);

// gaudinet.json of the plan's entries:
// {"NIC_NET_CONFIG": [{"NIC_MAC", "NIC_IP", "SUBNET_MASK", "GATEWAY_MAC"}]},
// keys in that order, indented by four spaces, with a trailing newline.
// Habana HCL requires all four keys in every entry.
std::string RenderGaudinet(const GaudinetPlan& plan);

// "50-rocenet-<ifname>.network". The number orders it among the host's own
// files: after distribution defaults in the 10s-40s, before catch-alls
// such as 99-default.network, so our [Match] wins for the port.
std::string NetworkdFileName(absl::string_view interface_name);

// True for names of files rocenet writes into the networkd directory
// ("<digits>-rocenet-<ifname>.network"): the ones it may remove.
bool IsNetworkdFileName(absl::string_view file_name);

// A systemd-networkd .network file for `port`: [Match] on the name, [Link]
// with the MTU (when set), [Network] with the address (L3 ports only) and
// networkd's own link-local addressing, router advertisements and LLDP turned
// off (rocenet owns the port's LLDP), and one [Route] per routed network.
std::string RenderNetworkdFile(const PortOutput& port);

// The label that carries the ready port count, in the namespace of `label`:
// "rocenet.io/scale-out-ready" -> "rocenet.io/scale-out-ports".
std::string NfdPortsLabel(absl::string_view label);

// NFD local-source feature file: "<label>=true|false" (true when there is at
// least one port and every port is healthy and provisioned) and
// "<ports label>=<count of healthy, provisioned ports>", after a comment.
// NFD skips lines that start with '#' but reads "# +" as a directive, so the
// comment never starts that way.
std::string RenderNfdFeatures(absl::string_view label, const std::vector<PortOutput>& ports);

// OK when `interface_name` can stand literally in NetworkManager's device
// list (NetworkManager.conf(5), "Device List Format"): letters, digits and
// "_-.@+", at most 15 bytes. The list separates with ',' and ';', escapes
// with a backslash, trims whitespace, and globs '*' and '?' unless told not
// to: a name with any of them could match another device or none, so it is
// refused, naming it, rather than escaped.
absl::Status CheckNetworkManagerName(absl::string_view interface_name);

// A NetworkManager configuration drop-in whose [device-rocenet] section
// matches exactly the interfaces `names` (sorted, each passing
// CheckNetworkManagerName; "interface-name:=" turns globbing off) and sets
// managed=0: NetworkManager then creates no connection on them and leaves
// their addresses, routes and MTU alone.
std::string RenderNetworkManagerDropIn(const std::vector<std::string>& names);

}  // namespace rocenet::outputs
