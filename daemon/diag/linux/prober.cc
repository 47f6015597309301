// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/linux/prober.h"

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "daemon/common/errno_status.h"
#include "daemon/diag/linux/sockets.h"
#include "daemon/diag/stats.h"

namespace rocenet::diag {
namespace {

constexpr int kIcmpPayload = 56;

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

struct TargetState {
  Ipv4Address address;
  bool gateway = false;
  std::vector<double> sent_at;  // by sequence, -1: not sent
  std::vector<double> rtts;
  std::string error;
};

struct ArpState {
  std::vector<double> sent_at;
  std::vector<double> rtts;
  bool resolved = false;
  std::string mac;
  std::string error;
};

// The ARP socket of a port, or an error naming why there is none.
class ArpProbe {
 public:
  ArpProbe(const LocalPort& port, Ipv4Address gateway) : port_(port), gateway_(gateway) {
    fd_.reset(socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ARP)));
    if (!fd_.valid()) {
      error_ = ErrnoMessage(errno, "ARP socket");
      return;
    }
    ifreq ifr{};
    strncpy(ifr.ifr_name, port.name.c_str(), IFNAMSIZ - 1);
    if (ioctl(fd_.get(), SIOCGIFHWADDR, &ifr) < 0) {
      error_ = ErrnoMessage(errno, absl::StrCat("ARP: MAC of ", port.name));
      fd_.reset();
      return;
    }
    memcpy(mac_, ifr.ifr_hwaddr.sa_data, 6);
    if (ioctl(fd_.get(), SIOCGIFINDEX, &ifr) < 0) {
      error_ = ErrnoMessage(errno, absl::StrCat("ARP: index of ", port.name));
      fd_.reset();
      return;
    }
    ifindex_ = ifr.ifr_ifindex;
    sockaddr_ll sll{};
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ETH_P_ARP);
    sll.sll_ifindex = ifindex_;
    if (bind(fd_.get(), reinterpret_cast<sockaddr*>(&sll), sizeof(sll)) < 0) {
      error_ = ErrnoMessage(errno, absl::StrCat("ARP: bind to ", port.name));
      fd_.reset();
    }
  }

  int fd() const { return fd_.get(); }
  const std::string& error() const { return error_; }

  bool Send() {
    uint8_t arp[28] = {0, 1, 8, 0, 6, 4, 0, 1};
    memcpy(arp + 8, mac_, 6);
    const auto spa = port_.address.address().NetworkBytes();
    memcpy(arp + 14, spa.data(), 4);
    const auto tpa = gateway_.NetworkBytes();
    memcpy(arp + 24, tpa.data(), 4);
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_protocol = htons(ETH_P_ARP);
    to.sll_ifindex = ifindex_;
    to.sll_halen = 6;
    memset(to.sll_addr, 0xff, 6);
    if (sendto(fd_.get(), arp, sizeof(arp), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)) < 0) {
      error_ = ErrnoMessage(errno, absl::StrCat("ARP: send on ", port_.name));
      return false;
    }
    return true;
  }

  // The sender MAC of an ARP reply from the gateway to us, if one is queued.
  std::optional<std::string> Receive() {
    uint8_t buf[128];
    for (;;) {
      const ssize_t n = recv(fd_.get(), buf, sizeof(buf), 0);
      if (n < 28) return std::nullopt;
      const bool reply = buf[6] == 0 && buf[7] == 2;
      const auto gw = gateway_.NetworkBytes();
      const auto me = port_.address.address().NetworkBytes();
      if (reply && memcmp(buf + 14, gw.data(), 4) == 0 && memcmp(buf + 24, me.data(), 4) == 0) {
        return absl::StrFormat("%02x:%02x:%02x:%02x:%02x:%02x", buf[8], buf[9], buf[10], buf[11],
                               buf[12], buf[13]);
      }
    }
  }

 private:
  const LocalPort& port_;
  Ipv4Address gateway_;
  Fd fd_;
  int ifindex_ = 0;
  uint8_t mac_[6] = {};
  std::string error_;
};

Fd OpenIcmp(const LocalPort& port, std::string* error) {
  Fd fd(socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ICMP));
  if (!fd.valid()) {
    *error = ErrnoMessage(errno, "ICMP socket");
    return fd;
  }
  if (setsockopt(fd.get(), SOL_SOCKET, SO_BINDTODEVICE, port.name.c_str(), port.name.size()) < 0) {
    *error = ErrnoMessage(errno, absl::StrCat("ICMP: bind to device ", port.name));
    return Fd();
  }
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_addr.s_addr = htonl(port.address.address().value());
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&local), sizeof(local)) < 0) {
    *error =
        ErrnoMessage(errno, absl::StrCat("ICMP: bind to ", port.address.address().ToString()));
    return Fd();
  }
  // Only echo replies; the kernel's filter has a bit set per type to drop.
  uint32_t filter = ~(1u << ICMP_ECHOREPLY);
  setsockopt(fd.get(), SOL_RAW, ICMP_FILTER, &filter, sizeof(filter));
  return fd;
}

v1::PortReach ProbePort(const LocalPort& port, const std::vector<Ipv4Address>& peers,
                        const v1::ReachRequest& request, const std::string& node) {
  v1::PortReach out;
  out.set_node(node);
  out.set_port(port.name);
  out.set_address(port.address.ToString());
  out.set_rail(port.rail);
  out.set_network(port.network.ToString());
  const int count = static_cast<int>(request.count());
  const absl::Time deadline = absl::Now() + absl::Milliseconds(request.timeout_ms());

  std::vector<TargetState> targets;
  targets.push_back({port.gateway, true, std::vector<double>(count, -1), {}, {}});
  for (Ipv4Address peer : peers) {
    if (peer == port.address.address() || !port.network.Contains(peer)) continue;
    targets.push_back({peer, false, std::vector<double>(count, -1), {}, {}});
  }
  if (!port.up) out.set_error("port is down");

  std::string icmp_error;
  Fd icmp = OpenIcmp(port, &icmp_error);
  ArpProbe arp(port, port.gateway);
  ArpState arp_state;
  arp_state.sent_at.assign(count, -1);
  arp_state.error = arp.error();

  std::mt19937 rng(std::random_device{}());
  const uint16_t id = static_cast<uint16_t>(rng());
  const size_t n = targets.size();
  auto receive = [&] {
    if (arp.fd() >= 0) {
      while (std::optional<std::string> mac = arp.Receive()) {
        const double now = MonotonicSeconds();
        arp_state.resolved = true;
        arp_state.mac = *mac;
        // Replies are not numbered: match the oldest unanswered request.
        for (double& sent : arp_state.sent_at) {
          if (sent >= 0) {
            arp_state.rtts.push_back(now - sent);
            sent = -2;
            break;
          }
        }
      }
    }
    if (!icmp.valid()) return;
    uint8_t buf[1500];
    for (;;) {
      sockaddr_in from{};
      socklen_t len = sizeof(from);
      const ssize_t got =
          recvfrom(icmp.get(), buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&from), &len);
      if (got <= 0) return;
      const double now = MonotonicSeconds();
      const size_t ihl = static_cast<size_t>(buf[0] & 0x0f) * 4;
      if (static_cast<size_t>(got) < ihl + 8) continue;
      const uint8_t* icmp_hdr = buf + ihl;
      if (icmp_hdr[0] != ICMP_ECHOREPLY) continue;
      if (((icmp_hdr[4] << 8) | icmp_hdr[5]) != id) continue;
      const uint16_t seq = static_cast<uint16_t>((icmp_hdr[6] << 8) | icmp_hdr[7]);
      const size_t t = seq % n;
      const size_t k = seq / n;
      if (t >= n || k >= static_cast<size_t>(count)) continue;
      if (ntohl(from.sin_addr.s_addr) != targets[t].address.value()) continue;
      double& sent = targets[t].sent_at[k];
      if (sent < 0) continue;
      targets[t].rtts.push_back(now - sent);
      sent = -2;  // answered; a duplicate is ignored
    }
  };
  auto wait = [&](absl::Time until) {
    while (absl::Now() < until) {
      pollfd fds[2] = {{icmp.get(), POLLIN, 0}, {arp.fd(), POLLIN, 0}};
      const int ms = static_cast<int>(
          std::max<int64_t>(1, absl::ToInt64Milliseconds(until - absl::Now()) + 1));
      if (poll(fds, 2, std::min(ms, 100)) > 0) receive();
    }
    receive();
  };

  for (int k = 0; k < count && absl::Now() < deadline; ++k) {
    if (arp.fd() >= 0 && arp.Send()) arp_state.sent_at[k] = MonotonicSeconds();
    for (size_t t = 0; t < n && icmp.valid(); ++t) {
      uint8_t packet[8 + kIcmpPayload] = {ICMP_ECHO, 0, 0, 0};
      packet[4] = static_cast<uint8_t>(id >> 8);
      packet[5] = static_cast<uint8_t>(id);
      const uint16_t seq = static_cast<uint16_t>(k * n + t);
      packet[6] = static_cast<uint8_t>(seq >> 8);
      packet[7] = static_cast<uint8_t>(seq);
      for (int i = 0; i < kIcmpPayload; ++i) packet[8 + i] = static_cast<uint8_t>(i);
      const uint16_t sum = Checksum(packet, sizeof(packet));
      packet[2] = static_cast<uint8_t>(sum >> 8);
      packet[3] = static_cast<uint8_t>(sum);
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_addr.s_addr = htonl(targets[t].address.value());
      if (sendto(icmp.get(), packet, sizeof(packet), 0, reinterpret_cast<sockaddr*>(&to),
                 sizeof(to)) < 0) {
        targets[t].error = ErrnoMessage(errno, "send");
      } else {
        targets[t].sent_at[k] = MonotonicSeconds();
      }
    }
    wait(std::min(deadline, absl::Now() + absl::Milliseconds(request.interval_ms())));
  }
  // The rest of the time bound, or until everything sent was answered.
  auto pending = [&] {
    for (const TargetState& t : targets) {
      for (double s : t.sent_at) {
        if (s >= 0) return true;
      }
    }
    return false;
  };
  while (absl::Now() < deadline && pending()) {
    wait(std::min(deadline, absl::Now() + absl::Milliseconds(20)));
  }

  for (const TargetState& t : targets) {
    v1::ReachTarget* target = out.add_targets();
    target->set_address(t.address.ToString());
    target->set_kind(t.gateway ? "gateway" : "peer");
    uint32_t sent = 0;
    for (double s : t.sent_at) sent += (s != -1) ? 1 : 0;
    target->set_sent(sent);
    target->set_received(static_cast<uint32_t>(t.rtts.size()));
    const uint32_t asked = static_cast<uint32_t>(count);
    target->set_loss_ratio(1.0 - static_cast<double>(t.rtts.size()) / asked);
    target->set_rtt_p50_seconds(Percentile(t.rtts, 0.5));
    target->set_rtt_p90_seconds(Percentile(t.rtts, 0.9));
    target->set_rtt_p99_seconds(Percentile(t.rtts, 0.99));
    target->set_rtt_max_seconds(Percentile(t.rtts, 1.0));
    std::string error = !icmp_error.empty() ? icmp_error : t.error;
    bool reachable = !t.rtts.empty();
    if (t.gateway) {
      target->set_arp_resolved(arp_state.resolved);
      target->set_arp_mac(arp_state.mac);
      target->set_arp_rtt_seconds(Percentile(arp_state.rtts, 0.5));
      reachable = reachable && arp_state.resolved;
      if (error.empty() && !arp_state.resolved) {
        error = !arp_state.error.empty() ? arp_state.error : "no ARP reply";
      }
    }
    if (!reachable && error.empty() && !out.error().empty()) error = out.error();
    if (reachable) error.clear();
    target->set_reachable(reachable);
    target->set_error(error);
  }
  return out;
}

}  // namespace

std::vector<v1::PortReach> ProbePorts(const std::vector<LocalPort>& ports,
                                      const std::vector<Ipv4Address>& peers,
                                      const v1::ReachRequest& request, const std::string& node) {
  std::vector<v1::PortReach> results(ports.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ports.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = ProbePort(ports[i], peers, request, node); });
  }
  for (std::thread& t : threads) t.join();
  return results;
}

}  // namespace rocenet::diag
