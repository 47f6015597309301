// SPDX-License-Identifier: Apache-2.0
// NetlinkLinux: link state changes (up/down, MTU, name, namespace) and IPv4
// policy rules.
#include <linux/fib_rules.h>
#include <linux/if.h>
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

nl_msg* LinkMessage(int ifindex, unsigned flags, unsigned change) {
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = ifindex;
  ifi.ifi_flags = flags;
  ifi.ifi_change = change;
  nl_msg* msg = nlmsg_alloc_simple(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK);
  if (msg != nullptr && nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0) {
    nlmsg_free(msg);
    return nullptr;
  }
  return msg;
}

nl_msg* RuleMessage(int type, int flags, const RuleInfo& rule) {
  fib_rule_hdr hdr{};
  hdr.family = AF_INET;
  hdr.src_len = static_cast<uint8_t>(rule.source.length());
  hdr.table = rule.table < 256 ? static_cast<uint8_t>(rule.table) : 0;
  hdr.action = FR_ACT_TO_TBL;
  nl_msg* msg = nlmsg_alloc_simple(type, flags);
  if (msg == nullptr) return nullptr;
  if (nlmsg_append(msg, &hdr, sizeof(hdr), NLMSG_ALIGNTO) < 0) {
    nlmsg_free(msg);
    return nullptr;
  }
  const std::array<uint8_t, 4> src = rule.source.Network().address().NetworkBytes();
  nla_put(msg, FRA_SRC, 4, src.data());
  nla_put_u32(msg, FRA_TABLE, rule.table);
  if (rule.priority > 0) nla_put_u32(msg, FRA_PRIORITY, rule.priority);
  if (rule.protocol > 0) nla_put_u8(msg, FRA_PROTOCOL, rule.protocol);
  return msg;
}

int CollectRules(nl_msg* msg, void* arg) {
  nlmsghdr* hdr = nlmsg_hdr(msg);
  if (hdr->nlmsg_type != RTM_NEWRULE || !nlmsg_valid_hdr(hdr, sizeof(fib_rule_hdr))) return NL_OK;
  const auto* frh = static_cast<const fib_rule_hdr*>(nlmsg_data(hdr));
  if (frh->family != AF_INET || frh->src_len > 32) return NL_OK;
  nlattr* tb[FRA_MAX + 1];
  if (nlmsg_parse(hdr, sizeof(fib_rule_hdr), tb, FRA_MAX, nullptr) < 0) return NL_OK;
  RuleInfo rule;
  uint8_t src[4] = {0, 0, 0, 0};
  if (tb[FRA_SRC] != nullptr && nla_len(tb[FRA_SRC]) == 4)
    std::memcpy(src, nla_data(tb[FRA_SRC]), 4);
  rule.source = Ipv4Prefix(Ipv4Address::FromNetworkBytes(src), frh->src_len);
  rule.table = tb[FRA_TABLE] != nullptr ? nla_get_u32(tb[FRA_TABLE]) : frh->table;
  if (tb[FRA_PRIORITY] != nullptr) rule.priority = nla_get_u32(tb[FRA_PRIORITY]);
  if (tb[FRA_PROTOCOL] != nullptr) rule.protocol = nla_get_u8(tb[FRA_PROTOCOL]);
  static_cast<std::vector<RuleInfo>*>(arg)->push_back(rule);
  return NL_OK;
}

std::string RuleName(const RuleInfo& rule) {
  return absl::StrCat("from ", rule.source.ToString(), " lookup ", rule.table);
}

}  // namespace

absl::Status NetlinkLinux::SetLinkDown(int ifindex) {
  const std::string what = absl::StrCat("netlink: set ifindex ", ifindex, " down");
  nl_msg* msg = LinkMessage(ifindex, 0, IFF_UP);
  if (msg == nullptr) return NoMemory(what);
  return Transact(msg, what);
}

absl::Status NetlinkLinux::RenameLink(int ifindex, absl::string_view name) {
  const std::string what = absl::StrCat("netlink: rename ifindex ", ifindex, " to ", name);
  nl_msg* msg = LinkMessage(ifindex, 0, 0);
  if (msg == nullptr) return NoMemory(what);
  nla_put_string(msg, IFLA_IFNAME, std::string(name).c_str());
  return Transact(msg, what);
}

absl::Status NetlinkLinux::MoveLink(int ifindex, int netns_fd, absl::string_view new_name,
                                    const AfterMove& after) {
  std::string what = absl::StrCat("netlink: move ifindex ", ifindex, " into netns fd ", netns_fd,
                                  " as ", new_name);
  if (after.mtu != 0) absl::StrAppend(&what, ", MTU ", after.mtu);
  if (after.up) absl::StrAppend(&what, ", up");
  // The kernel moves the link first, then applies the MTU and the flags to
  // it in its new namespace (do_setlink).
  nl_msg* msg = LinkMessage(ifindex, after.up ? IFF_UP : 0, IFF_UP);
  if (msg == nullptr) return NoMemory(what);
  nla_put_u32(msg, IFLA_NET_NS_FD, static_cast<uint32_t>(netns_fd));
  nla_put_string(msg, IFLA_IFNAME, std::string(new_name).c_str());
  if (after.mtu != 0) nla_put_u32(msg, IFLA_MTU, after.mtu);
  return Transact(msg, what);
}

absl::StatusOr<std::vector<RuleInfo>> NetlinkLinux::ListRules() {
  fib_rule_hdr request{};
  request.family = AF_INET;
  std::vector<RuleInfo> out;
  RETURN_IF_ERROR(Dump(RTM_GETRULE, &request, sizeof(request), CollectRules, &out, "rule dump"));
  return out;
}

absl::Status NetlinkLinux::AddRule(const RuleInfo& rule) {
  const std::string what = absl::StrCat("netlink: add rule ", RuleName(rule));
  nl_msg* msg =
      RuleMessage(RTM_NEWRULE, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, rule);
  if (msg == nullptr) return NoMemory(what);
  absl::Status status = Transact(msg, what);
  if (absl::IsAlreadyExists(status)) return absl::OkStatus();
  return status;
}

absl::Status NetlinkLinux::DeleteRule(const RuleInfo& rule) {
  const std::string what = absl::StrCat("netlink: delete rule ", RuleName(rule));
  nl_msg* msg = RuleMessage(RTM_DELRULE, NLM_F_REQUEST | NLM_F_ACK, rule);
  if (msg == nullptr) return NoMemory(what);
  absl::Status status = Transact(msg, what);
  if (absl::IsNotFound(status)) return absl::OkStatus();
  return status;
}

}  // namespace rocenet::os
