// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/linux/prober.h"

#include <algorithm>
#include <optional>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "daemon/diag/stats.h"
#include "daemon/os/linux/probe_socket.h"

namespace rocenet::diag {
namespace {

constexpr int kIcmpPayload = 56;
// An IP datagram carrying an echo: 20 bytes of IP header, 8 of ICMP.
constexpr int kEchoOverhead = 28;

// Times of a target's requests by sequence: unset (never sent), answered
// (a duplicate reply is ignored), or when it was sent.
struct Sent {
  enum class State { kNotSent, kPending, kAnswered } state = State::kNotSent;
  absl::Time at;
};

struct TargetState {
  Ipv4Address address;
  bool gateway = false;
  std::vector<Sent> sent;  // by sequence
  std::vector<double> rtts;
  std::string error;
  // The full-size echoes, by round.
  std::vector<Sent> full_sent;
  std::vector<double> full_rtts;
  // A router's "fragmentation needed" for one of them.
  Ipv4Address too_big_from;
  uint32_t too_big_mtu = 0;
};

// Sequence numbers: echo k (round) of target t, small or full-size. At most
// 100 rounds of 129 targets: below 2^15, so the doubled number fits.
uint16_t Sequence(size_t k, size_t n, size_t t, bool full) {
  return static_cast<uint16_t>((k * n + t) * 2 + (full ? 1 : 0));
}

struct ArpState {
  std::vector<Sent> sent;
  std::vector<double> rtts;
  bool resolved = false;
  std::string mac;
  std::string error;
};

bool Pending(const std::vector<Sent>& sent) {
  return std::any_of(sent.begin(), sent.end(),
                     [](const Sent& s) { return s.state == Sent::State::kPending; });
}

PortReach ProbePort(const LocalPort& port, const std::vector<Ipv4Address>& peers,
                    const ReachRequest& request, const std::string& node, const os::Clock& clock) {
  PortReach out;
  out.node = node;
  out.port = port.name;
  out.address = port.address.ToString();
  out.rail = port.rail;
  out.network = port.network.ToString();
  out.leaf = port.leaf;
  out.driver = port.driver;
  out.netdev_is_control_path = port.netdev_is_control_path;
  const int count = static_cast<int>(request.count);
  const absl::Time deadline = clock.Now() + absl::Milliseconds(request.timeout_ms);
  const Ipv4Address me = port.address.address();

  std::vector<TargetState> targets;
  auto add = [&](Ipv4Address address, bool gateway) {
    TargetState& t = targets.emplace_back();
    t.address = address;
    t.gateway = gateway;
    t.sent.resize(count);
    t.full_sent.resize(count);
  };
  add(port.gateway, true);
  for (Ipv4Address peer : peers) {
    if (peer == me || !port.network.Contains(peer)) continue;
    add(peer, false);
  }
  if (!port.up) out.error = "port is down";
  // The full-size echoes fill the port's MTU; without it only small ones go.
  absl::StatusOr<uint32_t> mtu = os::DeviceMtu(port.name);
  const int full_payload =
      mtu.ok() && *mtu > kEchoOverhead + kIcmpPayload ? static_cast<int>(*mtu) - kEchoOverhead : 0;
  if (full_payload > 0) out.mtu = *mtu;

  std::string icmp_error;
  absl::StatusOr<os::IcmpEchoSocket> icmp = os::IcmpEchoSocket::Open(port.name, me);
  if (!icmp.ok()) icmp_error = std::string(icmp.status().message());
  absl::StatusOr<os::ArpSocket> arp = os::ArpSocket::Open(port.name);
  ArpState arp_state;
  arp_state.sent.resize(count);
  if (!arp.ok()) arp_state.error = std::string(arp.status().message());

  std::mt19937 rng(std::random_device{}());
  const uint16_t id = static_cast<uint16_t>(rng());
  const size_t n = targets.size();
  // Replies are matched to the oldest unanswered request (ARP replies are
  // not numbered) or to their sequence (ICMP).
  auto answer = [&](Sent& sent, std::vector<double>& rtts, absl::Time now) {
    if (sent.state != Sent::State::kPending) return;
    rtts.push_back(absl::ToDoubleSeconds(now - sent.at));
    sent.state = Sent::State::kAnswered;
  };
  auto receive = [&] {
    if (arp.ok()) {
      while (std::optional<os::ArpReply> reply = arp->Receive()) {
        if (reply->sender != port.gateway || reply->target != me) continue;
        arp_state.resolved = true;
        arp_state.mac = reply->sender_mac;
        const absl::Time now = clock.Now();
        for (Sent& sent : arp_state.sent) {
          if (sent.state == Sent::State::kPending) {
            answer(sent, arp_state.rtts, now);
            break;
          }
        }
      }
    }
    if (!icmp.ok()) return;
    while (std::optional<os::EchoReply> reply = icmp->Receive()) {
      if (reply->id != id) continue;
      const bool full = reply->sequence % 2 == 1;
      const size_t t = reply->sequence / 2 % n;
      const size_t k = reply->sequence / 2 / n;
      if (k >= static_cast<size_t>(count)) continue;
      TargetState& target = targets[t];
      if (reply->too_big) {
        // From a router on the way, not the target.
        if (full) {
          target.too_big_from = reply->from;
          target.too_big_mtu = reply->too_big_mtu;
        }
        continue;
      }
      if (reply->from != target.address) continue;
      if (full) {
        answer(target.full_sent[k], target.full_rtts, clock.Now());
      } else {
        answer(target.sent[k], target.rtts, clock.Now());
      }
    }
  };
  auto wait = [&](absl::Time until) {
    std::vector<int> fds;
    if (icmp.ok()) fds.push_back(icmp->fd());
    if (arp.ok()) fds.push_back(arp->fd());
    while (clock.Now() < until) {
      const absl::Duration left = until - clock.Now() + absl::Milliseconds(1);
      absl::StatusOr<std::vector<bool>> readable =
          os::PollReadable(fds, std::clamp(left, absl::Milliseconds(1), absl::Milliseconds(100)));
      if (readable.ok() && std::find(readable->begin(), readable->end(), true) != readable->end()) {
        receive();
      }
    }
    receive();
  };

  for (int k = 0; k < count && clock.Now() < deadline; ++k) {
    if (arp.ok()) {
      if (absl::Status s = arp->Request(me, port.gateway); s.ok()) {
        arp_state.sent[k] = {Sent::State::kPending, clock.Now()};
      } else {
        arp_state.error = std::string(s.message());
      }
    }
    for (size_t t = 0; t < n && icmp.ok(); ++t) {
      TargetState& target = targets[t];
      if (absl::Status s =
              icmp->SendEcho(target.address, id, Sequence(k, n, t, false), kIcmpPayload);
          !s.ok()) {
        target.error = std::string(s.message());
      } else {
        target.sent[k] = {Sent::State::kPending, clock.Now()};
      }
      if (full_payload == 0) continue;
      if (icmp->SendEcho(target.address, id, Sequence(k, n, t, true), full_payload).ok()) {
        target.full_sent[k] = {Sent::State::kPending, clock.Now()};
      }
      // Full-size replies are read as they come, so that a burst of them
      // does not overflow the socket's queue and count as lost.
      receive();
    }
    wait(std::min(deadline, clock.Now() + absl::Milliseconds(request.interval_ms)));
  }
  // The rest of the time bound, or until everything sent was answered.
  auto pending = [&] {
    return std::any_of(targets.begin(), targets.end(), [](const TargetState& t) {
      return Pending(t.sent) || Pending(t.full_sent);
    });
  };
  while (clock.Now() < deadline && pending()) {
    wait(std::min(deadline, clock.Now() + absl::Milliseconds(20)));
  }

  for (const TargetState& t : targets) {
    ReachTarget* target = &out.targets.emplace_back();
    target->address = t.address.ToString();
    target->kind = t.gateway ? "gateway" : "peer";
    uint32_t sent = 0;
    for (const Sent& s : t.sent) sent += s.state != Sent::State::kNotSent ? 1 : 0;
    target->sent = sent;
    target->received = static_cast<uint32_t>(t.rtts.size());
    const uint32_t asked = static_cast<uint32_t>(count);
    target->loss_ratio = 1.0 - static_cast<double>(t.rtts.size()) / asked;
    target->rtt_p50_seconds = Percentile(t.rtts, 0.5);
    target->rtt_p90_seconds = Percentile(t.rtts, 0.9);
    target->rtt_p99_seconds = Percentile(t.rtts, 0.99);
    target->rtt_max_seconds = Percentile(t.rtts, 1.0);
    std::string error = !icmp_error.empty() ? icmp_error : t.error;
    bool reachable = !t.rtts.empty();
    if (t.gateway) {
      target->arp_resolved = arp_state.resolved;
      target->arp_mac = arp_state.mac;
      target->arp_rtt_seconds = Percentile(arp_state.rtts, 0.5);
      reachable = reachable && arp_state.resolved;
      if (error.empty() && !arp_state.resolved) {
        error = !arp_state.error.empty() ? arp_state.error : "no ARP reply";
      }
    }
    if (!reachable && error.empty() && !out.error.empty()) error = out.error;
    if (reachable) error.clear();
    target->reachable = reachable;
    target->error = error;
    if (full_payload > 0) {
      target->full_size_bytes = out.mtu;
      for (const Sent& s : t.full_sent)
        target->full_size_sent += s.state != Sent::State::kNotSent ? 1 : 0;
      target->full_size_received = static_cast<uint32_t>(t.full_rtts.size());
      if (t.too_big_mtu > 0 || t.too_big_from != Ipv4Address()) {
        target->mtu_reported_by = t.too_big_from.ToString();
        target->reported_mtu = t.too_big_mtu;
      }
    }
  }
  // The port's figures over all its peers, from every echo.
  std::vector<double> rtts;
  size_t received = 0;
  for (const TargetState& t : targets) {
    if (t.gateway) continue;
    ++out.peers_probed;
    if (t.rtts.empty()) ++out.peers_failed;
    if (!t.rtts.empty() && full_payload > 0 && t.full_rtts.empty()) ++out.peers_failed_full_size;
    received += t.rtts.size();
    rtts.insert(rtts.end(), t.rtts.begin(), t.rtts.end());
  }
  if (out.peers_probed > 0) {
    out.peer_loss_ratio =
        1.0 - static_cast<double>(received) / (static_cast<double>(out.peers_probed) * count);
    out.peer_rtt_p50_seconds = Percentile(rtts, 0.5);
    out.peer_rtt_p90_seconds = Percentile(rtts, 0.9);
    out.peer_rtt_p99_seconds = Percentile(rtts, 0.99);
  }
  return out;
}

}  // namespace

std::vector<PortReach> ProbePorts(const std::vector<LocalPort>& ports,
                                  const std::vector<Ipv4Address>& peers,
                                  const ReachRequest& request, const std::string& node,
                                  const os::Clock& clock) {
  std::vector<PortReach> results(ports.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ports.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = ProbePort(ports[i], peers, request, node, clock); });
  }
  for (std::thread& t : threads) t.join();
  return results;
}

}  // namespace rocenet::diag
