// SPDX-License-Identifier: Apache-2.0
// Configuring a port inside a pod's network namespace, and undoing it.
//
// Works through a Netlink bound to the pod's namespace (IPv4 settings too:
// /proc/sys is read-only in a container that is not privileged). Each port gets a policy-routing
// table of its own and a rule "from <its address> lookup <table>", plus
// arp_ignore=1/arp_announce=2, so that several ports in one pod each answer and send for their own
// address (one rail per port). Errors name the step; on error the caller rolls back.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "daemon/attach/record.h"
#include "daemon/os/netlink.h"

namespace rocenet::attach {

// Priority of the per-port source rules: before the main table (32766).
inline constexpr uint32_t kRulePriority = 1000;
// Per-port routing tables are kTableBase + the port's host ifindex.
inline constexpr uint32_t kTableBase = 1000;

// Finds the pod-side ifindex of `ifname`; NotFound if it is not there.
absl::StatusOr<int> FindLink(os::Netlink& netlink, absl::string_view ifname);

// The link whose MAC or permanent MAC is `mac`, wherever a move or the kernel
// renamed it; NotFound if it is not there.
absl::StatusOr<os::LinkInfo> FindByMac(os::Netlink& netlink, const std::string& mac);

// MTU, link up, and for L3 records arp_ignore/arp_announce, the address,
// routes and rule.
absl::Status ConfigurePodPort(os::Netlink& pod, int ifindex, const AttachmentRecord& record);

// Removes what ConfigurePodPort added that would outlive the link's move
// (the rule; routes and addresses go with the link).
absl::Status UnconfigurePodPort(os::Netlink& pod, const AttachmentRecord& record);

}  // namespace rocenet::attach
