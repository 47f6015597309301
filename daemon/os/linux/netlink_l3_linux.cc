// SPDX-License-Identifier: Apache-2.0
// NetlinkLinux: link settings, IPv4 addresses and routes.
#include <linux/if.h>
#include <linux/ip.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <sys/socket.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "daemon/common/status_macros.h"
#include "daemon/os/linux/netlink_error.h"
#include "daemon/os/linux/netlink_linux.h"

namespace rocenet::os {
namespace {

nl_msg* NewMessage(int type, int flags, const void* header, size_t size) {
  nl_msg* msg = nlmsg_alloc_simple(type, flags);
  if (msg != nullptr && nlmsg_append(msg, const_cast<void*>(header), size, NLMSG_ALIGNTO) < 0) {
    nlmsg_free(msg);
    return nullptr;
  }
  return msg;
}

void PutAddress(nl_msg* msg, int attr, Ipv4Address address) {
  const std::array<uint8_t, 4> bytes = address.NetworkBytes();
  nla_put(msg, attr, 4, bytes.data());
}

Ipv4Address GetAddress(nlattr* attr) {
  uint8_t bytes[4];
  std::memcpy(bytes, nla_data(attr), 4);
  return Ipv4Address::FromNetworkBytes(bytes);
}

int CollectAddresses(nl_msg* msg, void* arg) {
  nlmsghdr* hdr = nlmsg_hdr(msg);
  if (hdr->nlmsg_type != RTM_NEWADDR || !nlmsg_valid_hdr(hdr, sizeof(ifaddrmsg))) return NL_OK;
  const auto* ifa = static_cast<const ifaddrmsg*>(nlmsg_data(hdr));
  if (ifa->ifa_family != AF_INET) return NL_OK;
  nlattr* tb[IFA_MAX + 1];
  if (nlmsg_parse(hdr, sizeof(ifaddrmsg), tb, IFA_MAX, nullptr) < 0) return NL_OK;
  nlattr* local = tb[IFA_LOCAL] != nullptr ? tb[IFA_LOCAL] : tb[IFA_ADDRESS];
  if (local == nullptr || nla_len(local) != 4 || ifa->ifa_prefixlen > 32) return NL_OK;
  static_cast<std::vector<AddressInfo>*>(arg)->push_back(
      {static_cast<int>(ifa->ifa_index), Ipv4Prefix(GetAddress(local), ifa->ifa_prefixlen)});
  return NL_OK;
}

struct RouteDump {
  uint32_t table;
  std::vector<RouteInfo> routes;
};

int CollectRoutes(nl_msg* msg, void* arg) {
  nlmsghdr* hdr = nlmsg_hdr(msg);
  if (hdr->nlmsg_type != RTM_NEWROUTE || !nlmsg_valid_hdr(hdr, sizeof(rtmsg))) return NL_OK;
  const auto* rtm = static_cast<const rtmsg*>(nlmsg_data(hdr));
  if (rtm->rtm_family != AF_INET || rtm->rtm_type != RTN_UNICAST || rtm->rtm_dst_len > 32) {
    return NL_OK;
  }
  nlattr* tb[RTA_MAX + 1];
  if (nlmsg_parse(hdr, sizeof(rtmsg), tb, RTA_MAX, nullptr) < 0) return NL_OK;
  auto* dump = static_cast<RouteDump*>(arg);
  const uint32_t table = tb[RTA_TABLE] != nullptr ? nla_get_u32(tb[RTA_TABLE]) : rtm->rtm_table;
  if (table != dump->table) return NL_OK;
  RouteInfo route;
  Ipv4Address destination;
  if (tb[RTA_DST] != nullptr && nla_len(tb[RTA_DST]) == 4) destination = GetAddress(tb[RTA_DST]);
  route.destination = Ipv4Prefix(destination, rtm->rtm_dst_len);
  if (tb[RTA_GATEWAY] != nullptr && nla_len(tb[RTA_GATEWAY]) == 4) {
    route.gateway = GetAddress(tb[RTA_GATEWAY]);
  }
  if (tb[RTA_OIF] != nullptr) route.ifindex = static_cast<int>(nla_get_u32(tb[RTA_OIF]));
  if (tb[RTA_PRIORITY] != nullptr) route.metric = nla_get_u32(tb[RTA_PRIORITY]);
  route.protocol = rtm->rtm_protocol;
  route.table = table;
  dump->routes.push_back(route);
  return NL_OK;
}

}  // namespace

absl::Status NetlinkLinux::SetLinkUp(int ifindex) {
  const std::string what = absl::StrCat("netlink: set ifindex ", ifindex, " up");
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = ifindex;
  ifi.ifi_flags = IFF_UP;
  ifi.ifi_change = IFF_UP;
  nl_msg* msg = NewMessage(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, &ifi, sizeof(ifi));
  if (msg == nullptr) return NoMemory(what);
  return Transact(msg, what);
}

absl::Status NetlinkLinux::SetMtu(int ifindex, uint32_t mtu) {
  const std::string what = absl::StrCat("netlink: set MTU ", mtu, " on ifindex ", ifindex);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = ifindex;
  nl_msg* msg = NewMessage(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, &ifi, sizeof(ifi));
  if (msg == nullptr) return NoMemory(what);
  nla_put_u32(msg, IFLA_MTU, mtu);
  return Transact(msg, what);
}

absl::Status NetlinkLinux::SetIpv4Conf(int ifindex, Ipv4Conf key, uint32_t value) {
  const char* name = key == Ipv4Conf::kArpIgnore ? "arp_ignore" : "arp_announce";
  const int attribute =
      key == Ipv4Conf::kArpIgnore ? IPV4_DEVCONF_ARP_IGNORE : IPV4_DEVCONF_ARP_ANNOUNCE;
  const std::string what = absl::StrCat("netlink: set ", name, "=", value, " on ifindex ", ifindex);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = ifindex;
  nl_msg* msg = NewMessage(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, &ifi, sizeof(ifi));
  if (msg == nullptr) return NoMemory(what);
  // IFLA_AF_SPEC { AF_INET { IFLA_INET_CONF { <devconf index>: u32 } } }
  nlattr* af_spec = nla_nest_start(msg, IFLA_AF_SPEC);
  nlattr* inet = af_spec == nullptr ? nullptr : nla_nest_start(msg, AF_INET);
  nlattr* conf = inet == nullptr ? nullptr : nla_nest_start(msg, IFLA_INET_CONF);
  if (conf == nullptr || nla_put_u32(msg, attribute, value) < 0) {
    nlmsg_free(msg);
    return NoMemory(what);
  }
  nla_nest_end(msg, conf);
  nla_nest_end(msg, inet);
  nla_nest_end(msg, af_spec);
  return Transact(msg, what);
}

absl::StatusOr<std::vector<AddressInfo>> NetlinkLinux::ListAddresses() {
  ifaddrmsg request{};
  request.ifa_family = AF_INET;
  std::vector<AddressInfo> out;
  RETURN_IF_ERROR(
      Dump(RTM_GETADDR, &request, sizeof(request), CollectAddresses, &out, "address dump"));
  return out;
}

namespace {

nl_msg* AddressMessage(int type, int flags, const AddressInfo& address) {
  ifaddrmsg ifa{};
  ifa.ifa_family = AF_INET;
  ifa.ifa_prefixlen = static_cast<uint8_t>(address.prefix.length());
  ifa.ifa_index = static_cast<uint32_t>(address.ifindex);
  nl_msg* msg = NewMessage(type, flags, &ifa, sizeof(ifa));
  if (msg == nullptr) return nullptr;
  PutAddress(msg, IFA_LOCAL, address.prefix.address());
  PutAddress(msg, IFA_ADDRESS, address.prefix.address());
  if (address.prefix.length() < 31) PutAddress(msg, IFA_BROADCAST, address.prefix.Broadcast());
  return msg;
}

}  // namespace

absl::Status NetlinkLinux::AddAddress(const AddressInfo& address) {
  const std::string what = absl::StrCat("netlink: add address ", address.prefix.ToString(),
                                        " on ifindex ", address.ifindex);
  nl_msg* msg = AddressMessage(RTM_NEWADDR,
                               NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE, address);
  if (msg == nullptr) return NoMemory(what);
  return Transact(msg, what);
}

absl::Status NetlinkLinux::DeleteAddress(const AddressInfo& address) {
  const std::string what = absl::StrCat("netlink: delete address ", address.prefix.ToString(),
                                        " on ifindex ", address.ifindex);
  nl_msg* msg = AddressMessage(RTM_DELADDR, NLM_F_REQUEST | NLM_F_ACK, address);
  if (msg == nullptr) return NoMemory(what);
  absl::Status status = Transact(msg, what);
  // EADDRNOTAVAIL: it is already gone.
  if (absl::IsNotFound(status)) return absl::OkStatus();
  return status;
}

absl::StatusOr<std::vector<RouteInfo>> NetlinkLinux::ListRoutes(uint32_t table) {
  rtmsg request{};
  request.rtm_family = AF_INET;
  RouteDump dump{table, {}};
  RETURN_IF_ERROR(
      Dump(RTM_GETROUTE, &request, sizeof(request), CollectRoutes, &dump, "route dump"));
  return std::move(dump.routes);
}

namespace {

nl_msg* RouteMessage(int type, int flags, const RouteInfo& route) {
  rtmsg rtm{};
  rtm.rtm_family = AF_INET;
  rtm.rtm_dst_len = static_cast<uint8_t>(route.destination.length());
  rtm.rtm_table =
      route.table < 256 ? static_cast<uint8_t>(route.table) : static_cast<uint8_t>(RT_TABLE_UNSPEC);
  rtm.rtm_protocol = route.protocol;
  rtm.rtm_scope = route.gateway.has_value() ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;
  rtm.rtm_type = RTN_UNICAST;
  nl_msg* msg = NewMessage(type, flags, &rtm, sizeof(rtm));
  if (msg == nullptr) return nullptr;
  PutAddress(msg, RTA_DST, route.destination.Network().address());
  if (route.gateway.has_value()) PutAddress(msg, RTA_GATEWAY, *route.gateway);
  if (route.ifindex > 0) nla_put_u32(msg, RTA_OIF, static_cast<uint32_t>(route.ifindex));
  nla_put_u32(msg, RTA_TABLE, route.table);
  if (route.metric > 0) nla_put_u32(msg, RTA_PRIORITY, route.metric);
  return msg;
}

std::string RouteName(const RouteInfo& route) {
  return absl::StrCat(
      route.destination.Network().ToString(),
      route.gateway.has_value() ? absl::StrCat(" via ", route.gateway->ToString()) : std::string(),
      " dev ifindex ", route.ifindex);
}

}  // namespace

absl::Status NetlinkLinux::ReplaceRoute(const RouteInfo& route) {
  const std::string what = absl::StrCat("netlink: replace route ", RouteName(route));
  nl_msg* msg =
      RouteMessage(RTM_NEWROUTE, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE, route);
  if (msg == nullptr) return NoMemory(what);
  return Transact(msg, what);
}

absl::Status NetlinkLinux::DeleteRoute(const RouteInfo& route) {
  const std::string what = absl::StrCat("netlink: delete route ", RouteName(route));
  nl_msg* msg = RouteMessage(RTM_DELROUTE, NLM_F_REQUEST | NLM_F_ACK, route);
  if (msg == nullptr) return NoMemory(what);
  absl::Status status = Transact(msg, what);
  if (absl::IsNotFound(status)) return absl::OkStatus();
  return status;
}

}  // namespace rocenet::os
