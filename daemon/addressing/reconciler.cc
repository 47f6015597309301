// SPDX-License-Identifier: Apache-2.0
#include "daemon/addressing/reconciler.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "daemon/common/status_context.h"

namespace rocenet::addressing {
namespace {

os::RouteInfo KernelRoute(const LinkTarget& link, const Route& route,
                          const std::optional<Ipv4Address>& peer) {
  os::RouteInfo out;
  out.destination = route.destination.Network();
  out.gateway = route.gateway.has_value() ? route.gateway : peer;
  out.ifindex = link.ifindex;
  out.protocol = kRouteProtocol;
  out.table = os::kMainTable;
  // Every port routes the same fabric network via its own switch; a metric
  // of its own keeps the routes side by side instead of replacing each other,
  // and a lookup bound to the device (as RoCE does) takes that port's route.
  out.metric = kRouteMetricBase + static_cast<uint32_t>(link.ifindex);
  return out;
}

bool SameRoute(const os::RouteInfo& a, const os::RouteInfo& b) {
  return a.destination == b.destination && a.gateway == b.gateway && a.ifindex == b.ifindex &&
         a.protocol == b.protocol && a.table == b.table && a.metric == b.metric;
}

bool HasAddress(const KernelState& kernel, int ifindex, const Ipv4Prefix& prefix) {
  return std::any_of(
      kernel.addresses.begin(), kernel.addresses.end(),
      [&](const os::AddressInfo& a) { return a.ifindex == ifindex && a.prefix == prefix; });
}

std::vector<os::RouteInfo> WantedRoutes(const LinkTarget& link, const AppliedConfig& config) {
  std::vector<os::RouteInfo> out;
  for (const Route& route : config.routes) out.push_back(KernelRoute(link, route, config.peer));
  return out;
}

absl::Status Step(const absl::Status& status, const LinkTarget& link, absl::string_view step) {
  return WithContext(status, absl::StrCat("port ", link.ifname, ": ", step));
}

}  // namespace

AppliedConfig FromPlan(const AddressPlan& plan, const std::string& ifname) {
  AppliedConfig out;
  out.port_id = plan.port_id;
  out.ifname = ifname;
  out.mtu = plan.mtu;
  if (plan.state == PlanState::kReady) {
    out.local = plan.local;
    out.peer = plan.peer;
    out.routes = plan.routes;
    out.gateway_mac = plan.gateway_mac;
    out.description = plan.description;
  }
  return out;
}

absl::StatusOr<ReconcileResult> Reconciler::Apply(const LinkTarget& link,
                                                  const AppliedConfig& wanted,
                                                  const std::optional<AppliedConfig>& previous,
                                                  const KernelState& kernel) {
  ReconcileResult result;
  result.applied = wanted;
  if (!link.admin_up) {
    if (absl::Status s = netlink_->SetLinkUp(link.ifindex); !s.ok()) {
      return Step(s, link, "set link up");
    }
    ++result.changes;
  }
  if (wanted.mtu != 0 && wanted.mtu != link.mtu) {
    if (absl::Status s = netlink_->SetMtu(link.ifindex, wanted.mtu); !s.ok()) {
      return Step(s, link, absl::StrCat("set MTU ", wanted.mtu));
    }
    ++result.changes;
  }

  // The new address goes on before the old one comes off: the port is never
  // without an address while the switch moves it to another subnet.
  if (wanted.local.has_value() && !HasAddress(kernel, link.ifindex, *wanted.local)) {
    absl::Status s = netlink_->AddAddress({link.ifindex, *wanted.local});
    if (!s.ok()) return Step(s, link, absl::StrCat("add address ", wanted.local->ToString()));
    ++result.changes;
  }
  if (previous.has_value() && previous->local.has_value() && previous->local != wanted.local &&
      HasAddress(kernel, link.ifindex, *previous->local)) {
    absl::Status s = netlink_->DeleteAddress({link.ifindex, *previous->local});
    if (!s.ok()) return Step(s, link, absl::StrCat("delete address ", previous->local->ToString()));
    ++result.changes;
  }

  const std::vector<os::RouteInfo> want = WantedRoutes(link, wanted);
  for (const os::RouteInfo& route : kernel.routes) {
    if (route.protocol != kRouteProtocol || route.ifindex != link.ifindex) continue;
    const bool wanted_route = std::any_of(
        want.begin(), want.end(), [&](const os::RouteInfo& w) { return SameRoute(w, route); });
    if (wanted_route) continue;
    if (absl::Status s = netlink_->DeleteRoute(route); !s.ok()) {
      return Step(s, link, absl::StrCat("delete route ", route.destination.ToString()));
    }
    ++result.changes;
  }
  for (const os::RouteInfo& route : want) {
    const bool present = std::any_of(kernel.routes.begin(), kernel.routes.end(),
                                     [&](const os::RouteInfo& k) { return SameRoute(k, route); });
    if (present) continue;
    if (absl::Status s = netlink_->ReplaceRoute(route); !s.ok()) {
      return Step(s, link, absl::StrCat("add route ", route.destination.ToString()));
    }
    ++result.changes;
  }
  return result;
}

absl::StatusOr<int> Reconciler::Remove(const LinkTarget& link, const AppliedConfig& previous,
                                       const KernelState& kernel) {
  int changes = 0;
  for (const os::RouteInfo& route : kernel.routes) {
    if (route.protocol != kRouteProtocol || route.ifindex != link.ifindex) continue;
    if (absl::Status s = netlink_->DeleteRoute(route); !s.ok()) {
      return Step(s, link, absl::StrCat("delete route ", route.destination.ToString()));
    }
    ++changes;
  }
  if (previous.local.has_value() && HasAddress(kernel, link.ifindex, *previous.local)) {
    absl::Status s = netlink_->DeleteAddress({link.ifindex, *previous.local});
    if (!s.ok()) return Step(s, link, absl::StrCat("delete address ", previous.local->ToString()));
    ++changes;
  }
  return changes;
}

bool Reconciler::InPlace(const LinkTarget& link, const AppliedConfig& applied,
                         const KernelState& kernel) {
  if (!link.admin_up || (applied.mtu != 0 && applied.mtu != link.mtu)) return false;
  if (applied.local.has_value() && !HasAddress(kernel, link.ifindex, *applied.local)) return false;
  for (const os::RouteInfo& route : WantedRoutes(link, applied)) {
    const bool present = std::any_of(kernel.routes.begin(), kernel.routes.end(),
                                     [&](const os::RouteInfo& k) { return SameRoute(k, route); });
    if (!present) return false;
  }
  return true;
}

}  // namespace rocenet::addressing
