// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/link_message.h"

#include <linux/ethtool.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <sys/ioctl.h>

#include <cstring>

namespace rocenet::os {
namespace {

// The kernel's MAX_ADDR_LEN, which no uapi header exports.
constexpr int kMaxHardwareAddress = 32;

MacAddress MacFromAttr(const nlattr* attr) {
  if (attr == nullptr || nla_len(attr) != static_cast<int>(MacAddress::kSize)) return {};
  std::array<uint8_t, MacAddress::kSize> bytes;
  std::memcpy(bytes.data(), nla_data(attr), bytes.size());
  return MacAddress(bytes);
}

uint32_t U32(const nlattr* attr) {
  return attr != nullptr && nla_len(attr) >= 4 ? nla_get_u32(const_cast<nlattr*>(attr)) : 0;
}

}  // namespace

std::optional<LinkEvent> ParseLinkMessage(const nlmsghdr* header) {
  if (header->nlmsg_type != RTM_NEWLINK && header->nlmsg_type != RTM_DELLINK) {
    return std::nullopt;
  }
  auto* hdr = const_cast<nlmsghdr*>(header);
  if (!nlmsg_valid_hdr(hdr, sizeof(ifinfomsg))) return std::nullopt;
  const auto* ifi = static_cast<const ifinfomsg*>(nlmsg_data(hdr));
  nlattr* tb[IFLA_MAX + 1];
  if (nlmsg_parse(hdr, sizeof(ifinfomsg), tb, IFLA_MAX, nullptr) < 0) return std::nullopt;

  LinkEvent event;
  event.type =
      header->nlmsg_type == RTM_DELLINK ? LinkEvent::Type::kRemoved : LinkEvent::Type::kChanged;
  LinkInfo& link = event.link;
  link.ifindex = ifi->ifi_index;
  if (tb[IFLA_IFNAME] != nullptr) link.name = nla_get_string(tb[IFLA_IFNAME]);
  link.mac = MacFromAttr(tb[IFLA_ADDRESS]);
  link.permanent_mac = MacFromAttr(tb[IFLA_PERM_ADDRESS]);
  link.mtu = U32(tb[IFLA_MTU]);
  link.min_mtu = U32(tb[IFLA_MIN_MTU]);
  link.max_mtu = U32(tb[IFLA_MAX_MTU]);
  link.admin_up = (ifi->ifi_flags & IFF_UP) != 0;
  link.carrier = tb[IFLA_CARRIER] != nullptr ? nla_get_u8(tb[IFLA_CARRIER]) != 0
                                             : (ifi->ifi_flags & IFF_LOWER_UP) != 0;
  if (tb[IFLA_OPERSTATE] != nullptr) {
    const uint8_t state = nla_get_u8(tb[IFLA_OPERSTATE]);
    link.oper_state = state <= static_cast<uint8_t>(OperState::kUp) ? static_cast<OperState>(state)
                                                                    : OperState::kUnknown;
  }
  if (tb[IFLA_CARRIER_CHANGES] != nullptr) {
    link.has_carrier_counts = true;
    link.carrier_changes = U32(tb[IFLA_CARRIER_CHANGES]);
    link.carrier_up_count = U32(tb[IFLA_CARRIER_UP_COUNT]);
    link.carrier_down_count = U32(tb[IFLA_CARRIER_DOWN_COUNT]);
  }
  if (tb[IFLA_LINKINFO] != nullptr) {
    nlattr* info[IFLA_INFO_MAX + 1];
    if (nla_parse_nested(info, IFLA_INFO_MAX, tb[IFLA_LINKINFO], nullptr) == 0 &&
        info[IFLA_INFO_KIND] != nullptr) {
      link.kind = nla_get_string(info[IFLA_INFO_KIND]);
    }
  }
  if (tb[IFLA_STATS64] != nullptr &&
      nla_len(tb[IFLA_STATS64]) >= static_cast<int>(sizeof(rtnl_link_stats64))) {
    rtnl_link_stats64 stats;
    std::memcpy(&stats, nla_data(tb[IFLA_STATS64]), sizeof(stats));
    link.stats = LinkStats{
        .rx_bytes = stats.rx_bytes,
        .rx_packets = stats.rx_packets,
        .rx_errors = stats.rx_errors,
        .rx_dropped = stats.rx_dropped,
        .tx_bytes = stats.tx_bytes,
        .tx_packets = stats.tx_packets,
        .tx_errors = stats.tx_errors,
        .tx_dropped = stats.tx_dropped,
    };
  }
  return event;
}

void AddEthtoolInfo(int ethtool_fd, LinkInfo& link) {
  if (ethtool_fd < 0 || link.name.empty() || link.name.size() >= IFNAMSIZ) return;
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, link.name.data(), link.name.size());

  // ETHTOOL_GLINKSETTINGS wants a handshake for the mode bitmaps' size; the
  // legacy ETHTOOL_GSET still answers speed on every driver that knows it.
  ethtool_cmd cmd{};
  cmd.cmd = ETHTOOL_GSET;
  ifr.ifr_data = reinterpret_cast<char*>(&cmd);
  if (ioctl(ethtool_fd, SIOCETHTOOL, &ifr) == 0) {
    const uint32_t speed = ethtool_cmd_speed(&cmd);
    link.speed_mbps = speed == static_cast<uint32_t>(SPEED_UNKNOWN) ? 0 : speed;
  }

  if (link.permanent_mac.IsZero()) {
    // ethtool_perm_addr ends in a flexible array: give it room behind it.
    alignas(ethtool_perm_addr) uint8_t buffer[sizeof(ethtool_perm_addr) + kMaxHardwareAddress]{};
    auto* perm = reinterpret_cast<ethtool_perm_addr*>(buffer);
    perm->cmd = ETHTOOL_GPERMADDR;
    perm->size = kMaxHardwareAddress;
    ifr.ifr_data = reinterpret_cast<char*>(perm);
    if (ioctl(ethtool_fd, SIOCETHTOOL, &ifr) == 0 && perm->size == MacAddress::kSize) {
      std::array<uint8_t, MacAddress::kSize> bytes;
      std::memcpy(bytes.data(), buffer + sizeof(ethtool_perm_addr), bytes.size());
      link.permanent_mac = MacAddress(bytes);
    }
  }
}

}  // namespace rocenet::os
