// SPDX-License-Identifier: Apache-2.0
#include "daemon/attach/pod_config.h"

#include "absl/strings/str_cat.h"
#include "daemon/addressing/applied.h"
#include "daemon/common/status_context.h"
#include "daemon/common/status_macros.h"

namespace rocenet::attach {
absl::StatusOr<int> FindLink(os::Netlink& netlink, absl::string_view ifname) {
  ASSIGN_OR_RETURN(std::vector<os::LinkInfo> links, netlink.ListLinks());
  for (const os::LinkInfo& link : links) {
    if (link.name == ifname) return link.ifindex;
  }
  return absl::NotFoundError(absl::StrCat("no interface ", ifname));
}

absl::StatusOr<os::LinkInfo> FindByMac(os::Netlink& netlink, const std::string& mac) {
  ASSIGN_OR_RETURN(std::vector<os::LinkInfo> links, netlink.ListLinks());
  for (os::LinkInfo& link : links) {
    if (link.mac.ToString() == mac ||
        (!link.permanent_mac.IsZero() && link.permanent_mac.ToString() == mac)) {
      return std::move(link);
    }
  }
  return absl::NotFoundError(absl::StrCat("no interface with MAC ", mac));
}

absl::Status ConfigurePodPort(os::Netlink& pod, int ifindex, const AttachmentRecord& r) {
  if (r.mtu != 0)
    RETURN_IF_ERROR(WithContext(pod.SetMtu(ifindex, r.mtu), absl::StrCat("set MTU ", r.mtu)));
  RETURN_IF_ERROR(WithContext(pod.SetLinkUp(ifindex), "set link up"));
  if (!r.local.has_value() || !r.peer.has_value()) return absl::OkStatus();

  // Several ports in one pod: each answers ARP only for its own address and
  // announces with the address of the port it sends from.
  RETURN_IF_ERROR(
      WithContext(pod.SetIpv4Conf(ifindex, os::Ipv4Conf::kArpIgnore, 1), "set arp_ignore"));
  RETURN_IF_ERROR(
      WithContext(pod.SetIpv4Conf(ifindex, os::Ipv4Conf::kArpAnnounce, 2), "set arp_announce"));
  RETURN_IF_ERROR(WithContext(pod.AddAddress({ifindex, *r.local}),
                              absl::StrCat("add address ", r.local->ToString())));

  auto route = [&](const Ipv4Prefix& destination, std::optional<Ipv4Address> gateway,
                   uint32_t table) {
    os::RouteInfo out;
    out.destination = destination.Network();
    out.gateway = gateway;
    out.ifindex = ifindex;
    out.protocol = addressing::kRouteProtocol;
    out.table = table;
    out.metric =
        table == os::kMainTable ? addressing::kRouteMetricBase + static_cast<uint32_t>(ifindex) : 0;
    return out;
  };
  // The port's own table: its subnet and everything reached through its
  // switch, so replies and new flows from its address leave through it.
  RETURN_IF_ERROR(
      WithContext(pod.ReplaceRoute(route(*r.local, std::nullopt, r.table)),
                  absl::StrCat("add route ", r.local->Network().ToString(), " table ", r.table)));
  for (const addressing::Route& via : r.routes) {
    const Ipv4Address gateway = via.gateway.value_or(*r.peer);
    RETURN_IF_ERROR(
        WithContext(pod.ReplaceRoute(route(via.destination, gateway, r.table)),
                    absl::StrCat("add route ", via.destination.ToString(), " table ", r.table)));
    RETURN_IF_ERROR(WithContext(pod.ReplaceRoute(route(via.destination, gateway, os::kMainTable)),
                                absl::StrCat("add route ", via.destination.ToString())));
  }
  os::RuleInfo rule{Ipv4Prefix(r.local->address(), 32), r.table, kRulePriority,
                    addressing::kRouteProtocol};
  return WithContext(pod.AddRule(rule),
                     absl::StrCat("add rule from ", r.local->address().ToString()));
}

absl::Status UnconfigurePodPort(os::Netlink& pod, const AttachmentRecord& r) {
  if (!r.local.has_value()) return absl::OkStatus();
  os::RuleInfo rule{Ipv4Prefix(r.local->address(), 32), r.table, kRulePriority,
                    addressing::kRouteProtocol};
  return WithContext(pod.DeleteRule(rule),
                     absl::StrCat("delete rule from ", r.local->address().ToString()));
}

}  // namespace rocenet::attach
