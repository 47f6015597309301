// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/probe_socket.h"

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "daemon/common/errno_status.h"

namespace rocenet::os {
namespace {

#ifndef ICMP_FILTER
#define ICMP_FILTER 1
#endif

uint16_t Checksum(const uint8_t* data, size_t size) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < size; i += 2) sum += (data[i] << 8) | data[i + 1];
  if (size % 2 == 1) sum += data[size - 1] << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

absl::Status Failed(absl::string_view what) {
  return absl::UnavailableError(ErrnoMessage(errno, what));
}

// Room for a burst of full-size replies (up to 128 peers' at 9000 bytes)
// before the prober reads them; the kernel caps it at net.core.rmem_max.
constexpr int kSocketBuffer = 4 << 20;

}  // namespace

absl::StatusOr<uint32_t> DeviceMtu(const std::string& device) {
  Fd fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Failed("MTU: socket");
  ifreq ifr{};
  strncpy(ifr.ifr_name, device.c_str(), IFNAMSIZ - 1);
  if (ioctl(fd.get(), SIOCGIFMTU, &ifr) < 0) return Failed(absl::StrCat("MTU of ", device));
  return static_cast<uint32_t>(ifr.ifr_mtu);
}

absl::StatusOr<IcmpEchoSocket> IcmpEchoSocket::Open(const std::string& device, Ipv4Address source) {
  Fd fd(socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ICMP));
  if (!fd.valid()) return Failed("ICMP socket");
  if (setsockopt(fd.get(), SOL_SOCKET, SO_BINDTODEVICE, device.c_str(), device.size()) < 0) {
    return Failed(absl::StrCat("ICMP: bind to device ", device));
  }
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_addr.s_addr = htonl(source.value());
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&local), sizeof(local)) < 0) {
    return Failed(absl::StrCat("ICMP: bind to ", source.ToString()));
  }
  // Only echo replies and destination unreachable (of which "fragmentation
  // needed" is read); the kernel's filter has a bit set per type to drop.
  uint32_t filter = ~((1u << ICMP_ECHOREPLY) | (1u << ICMP_DEST_UNREACH));
  setsockopt(fd.get(), SOL_RAW, ICMP_FILTER, &filter, sizeof(filter));
  // Don't Fragment, at the device's MTU: the path MTU the kernel may have
  // learned from an earlier "fragmentation needed" must not shrink the
  // full-size echoes, which exist to find that path.
  const int pmtu = IP_PMTUDISC_PROBE;
  if (setsockopt(fd.get(), IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) < 0) {
    return Failed("ICMP: IP_MTU_DISCOVER");
  }
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &kSocketBuffer, sizeof(kSocketBuffer));
  setsockopt(fd.get(), SOL_SOCKET, SO_SNDBUF, &kSocketBuffer, sizeof(kSocketBuffer));
  return IcmpEchoSocket(std::move(fd));
}

absl::Status IcmpEchoSocket::SendEcho(Ipv4Address to, uint16_t id, uint16_t sequence,
                                      int payload_bytes) {
  std::string packet(8 + static_cast<size_t>(std::max(payload_bytes, 0)), '\0');
  auto* p = reinterpret_cast<uint8_t*>(packet.data());
  p[0] = ICMP_ECHO;
  p[4] = static_cast<uint8_t>(id >> 8);
  p[5] = static_cast<uint8_t>(id);
  p[6] = static_cast<uint8_t>(sequence >> 8);
  p[7] = static_cast<uint8_t>(sequence);
  for (size_t i = 8; i < packet.size(); ++i) p[i] = static_cast<uint8_t>(i - 8);
  const uint16_t sum = Checksum(p, packet.size());
  p[2] = static_cast<uint8_t>(sum >> 8);
  p[3] = static_cast<uint8_t>(sum);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(to.value());
  for (int attempt = 0;; ++attempt) {
    if (sendto(fd_.get(), p, packet.size(), 0, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) >= 0) {
      return absl::OkStatus();
    }
    if ((errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS) || attempt > 0) {
      return Failed("send");
    }
    pollfd room{.fd = fd_.get(), .events = POLLOUT, .revents = 0};
    poll(&room, 1, 50);
  }
}

std::optional<EchoReply> IcmpEchoSocket::Receive() {
  // The headers are all that is read: a longer datagram is cut short.
  uint8_t buf[256];
  for (;;) {
    sockaddr_in from{};
    socklen_t len = sizeof(from);
    const ssize_t got =
        recvfrom(fd_.get(), buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&from), &len);
    if (got <= 0) return std::nullopt;
    const size_t size = static_cast<size_t>(got);
    const size_t ihl = static_cast<size_t>(buf[0] & 0x0f) * 4;
    if (size < ihl + 8) continue;
    const uint8_t* icmp = buf + ihl;
    const Ipv4Address sender(ntohl(from.sin_addr.s_addr));
    if (icmp[0] == ICMP_ECHOREPLY) {
      return EchoReply{.from = sender,
                       .id = static_cast<uint16_t>((icmp[4] << 8) | icmp[5]),
                       .sequence = static_cast<uint16_t>((icmp[6] << 8) | icmp[7])};
    }
    if (icmp[0] != ICMP_DEST_UNREACH || icmp[1] != ICMP_FRAG_NEEDED) continue;
    // The error quotes our request: its IP header, then the first 8 bytes
    // of its ICMP header (type, code, checksum, id, sequence).
    const uint8_t* quoted = icmp + 8;
    if (size < ihl + 8 + 20) continue;
    const size_t quoted_ihl = static_cast<size_t>(quoted[0] & 0x0f) * 4;
    if (quoted[9] != IPPROTO_ICMP || size < ihl + 8 + quoted_ihl + 8) continue;
    const uint8_t* request = quoted + quoted_ihl;
    if (request[0] != ICMP_ECHO) continue;
    return EchoReply{.from = sender,
                     .id = static_cast<uint16_t>((request[4] << 8) | request[5]),
                     .sequence = static_cast<uint16_t>((request[6] << 8) | request[7]),
                     .too_big = true,
                     .too_big_mtu = static_cast<uint16_t>((icmp[6] << 8) | icmp[7])};
  }
}

ArpSocket::ArpSocket(Fd fd, std::string device, int ifindex, const uint8_t mac[6])
    : fd_(std::move(fd)), device_(std::move(device)), ifindex_(ifindex) {
  memcpy(mac_, mac, sizeof(mac_));
}

absl::StatusOr<ArpSocket> ArpSocket::Open(const std::string& device) {
  Fd fd(socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ARP)));
  if (!fd.valid()) return Failed("ARP socket");
  ifreq ifr{};
  strncpy(ifr.ifr_name, device.c_str(), IFNAMSIZ - 1);
  if (ioctl(fd.get(), SIOCGIFHWADDR, &ifr) < 0) return Failed(absl::StrCat("ARP: MAC of ", device));
  uint8_t mac[6];
  memcpy(mac, ifr.ifr_hwaddr.sa_data, sizeof(mac));
  if (ioctl(fd.get(), SIOCGIFINDEX, &ifr) < 0) {
    return Failed(absl::StrCat("ARP: index of ", device));
  }
  const int ifindex = ifr.ifr_ifindex;
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ETH_P_ARP);
  sll.sll_ifindex = ifindex;
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&sll), sizeof(sll)) < 0) {
    return Failed(absl::StrCat("ARP: bind to ", device));
  }
  return ArpSocket(std::move(fd), device, ifindex, mac);
}

absl::Status ArpSocket::Request(Ipv4Address sender, Ipv4Address target) {
  uint8_t arp[28] = {0, 1, 8, 0, 6, 4, 0, 1};
  memcpy(arp + 8, mac_, 6);
  const auto spa = sender.NetworkBytes();
  memcpy(arp + 14, spa.data(), 4);
  const auto tpa = target.NetworkBytes();
  memcpy(arp + 24, tpa.data(), 4);
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_protocol = htons(ETH_P_ARP);
  to.sll_ifindex = ifindex_;
  to.sll_halen = 6;
  memset(to.sll_addr, 0xff, 6);
  if (sendto(fd_.get(), arp, sizeof(arp), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)) < 0) {
    return Failed(absl::StrCat("ARP: send on ", device_));
  }
  return absl::OkStatus();
}

std::optional<ArpReply> ArpSocket::Receive() {
  uint8_t buf[128];
  for (;;) {
    const ssize_t n = recv(fd_.get(), buf, sizeof(buf), 0);
    if (n < 0) return std::nullopt;
    if (n < 28 || buf[6] != 0 || buf[7] != 2) continue;  // not a reply
    auto address = [&](int at) { return Ipv4Address::FromNetworkBytes(buf + at); };
    return ArpReply{.sender = address(14),
                    .sender_mac = absl::StrFormat("%02x:%02x:%02x:%02x:%02x:%02x", buf[8], buf[9],
                                                  buf[10], buf[11], buf[12], buf[13]),
                    .target = address(24)};
  }
}

}  // namespace rocenet::os
