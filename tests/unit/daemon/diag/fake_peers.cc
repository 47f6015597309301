// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/daemon/diag/fake_peers.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "daemon/diag/analysis.h"
#include "daemon/diag/suspects.h"

namespace rocenet::diag::testing {
namespace {

bool InRail(const std::string& rail, const std::string& address) {
  absl::StatusOr<Ipv4Prefix> prefix = Ipv4Prefix::Parse(rail);
  absl::StatusOr<Ipv4Address> a = Ipv4Address::Parse(address.substr(0, address.find('/')));
  return prefix.ok() && a.ok() && prefix->Contains(*a);
}

}  // namespace

std::string FakePeers::AddressOf(size_t i) { return absl::StrCat("10.0.0.", i + 1); }

std::vector<std::pair<std::string, peer::PeerRequest>> FakePeers::requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

int FakePeers::released() const {
  absl::MutexLock lock(&mu_);
  return released_;
}

CoordinatorParts PartsFor(FakePeers* peers, const os::Clock* clock, LocalPort port,
                          ValidationSink validation) {
  return CoordinatorParts{
      .peers = peers,
      .local = peers,
      .clock = clock,
      .ports = [port = std::move(port)]() -> absl::StatusOr<std::vector<LocalPort>> {
        return std::vector<LocalPort>{port};
      },
      .node_name = "coordinator",
      .data_port = kDefaultDataPort,
      .validation = std::move(validation),
      .rdma = nullptr};
}

std::vector<FakeNode> TwoRailNodes(int n) {
  std::vector<FakeNode> nodes;
  for (int i = 0; i < n; ++i) nodes.push_back(TwoRailNode(i));
  return nodes;
}

LocalPort Rail0Port() {
  LocalPort port;
  port.name = "so0";
  port.address = *Ipv4Prefix::Parse("10.201.9.1/30");
  port.gateway = *Ipv4Address::Parse("10.201.9.2");
  port.network = *Ipv4Prefix::Parse(kFakeRails[0]);
  port.rail = kFakeRails[0];
  port.up = true;
  port.speed_mbps = 100000;
  return port;
}

FakeNode TwoRailNode(int i) {
  FakeNode node;
  node.name = absl::StrCat("n", i);
  for (int r = 0; r < 2; ++r) {
    node.ports.push_back({.name = absl::StrCat("so", r),
                          .address = absl::StrCat("10.", 201 + r, ".", i, ".1/30"),
                          .gateway = absl::StrCat("10.", 201 + r, ".", i, ".2"),
                          .rail = kFakeRails[r]});
  }
  return node;
}

absl::StatusOr<peer::PeerReply> FakePeers::Call(const NodeAddress& address,
                                                const peer::PeerRequest& request, absl::Time,
                                                CallGroup* group) {
  // The node at the first of its addresses that is one (as the engine
  // tries a node's addresses in turn).
  const FakeNode* node = nullptr;
  std::vector<Ipv4Address> addresses = {address.address};
  for (const NodeAddress& other : address.alternates) addresses.push_back(other.address);
  for (Ipv4Address a : addresses) {
    for (size_t i = 0; i < nodes_.size() && node == nullptr; ++i) {
      if (a.ToString() == AddressOf(i)) node = &nodes_[i];
    }
  }
  const std::string who = absl::StrCat("node ", address.ToString());
  if (node == nullptr || node->dead) {
    return absl::UnavailableError(absl::StrCat(who, ": connect: Connection refused"));
  }
  {
    absl::MutexLock lock(&mu_);
    requests_.emplace_back(node->name, request);
  }
  peer::PeerReply reply;
  if (request.as<peer::PeerInfoRequest>() != nullptr) {
    peer::PeerInfo* info = &reply.info;
    info->node = node->name;
    info->data_port = kDefaultDataPort;
    for (const FakePort& port : node->ports) {
      peer::PeerPort* p = &info->ports.emplace_back();
      p->name = port.name;
      p->address = port.address;
      p->gateway = port.gateway;
      if (!port.unnamed_rail) p->rail = port.rail;
      p->network = port.network.empty() ? port.rail : port.network;
      p->up = true;
      p->speed_mbps = 100000;
    }
    return reply;
  }
  if (const peer::RingJoin* join = request.as<peer::RingJoin>()) {
    if (node->dies_in_ring) {
      return absl::UnavailableError(absl::StrCat(who, ": recv: Connection reset by peer"));
    }
    return Ring(*node, *join, group);
  }
  if (const ReachRequest* reach = request.as<ReachRequest>()) {
    for (const FakePort& port : node->ports) {
      reply.reach.ports.push_back(ProbeFrom(node->name, port.name, port.address,
                                            port.network.empty() ? port.rail : port.network,
                                            reach->peers));
    }
    // As the engine: a planned run without the matrix gets the failures.
    if (!reach->plan.empty() && !reach->matrix) ReduceToFailures(&reply.reach.ports);
    return reply;
  }
  if (request.as<peer::SendRequest>() != nullptr) {
    peer::SendReport* send = &reply.send;
    send->port = node->ports.empty() ? "" : node->ports.front().name;
    send->source_address = node->ports.empty() ? "" : node->ports.front().address;
    send->bytes = node->send_error.empty() ? node->send_bytes : 0;
    send->seconds = node->send_seconds;
    send->error = node->send_error;
    return reply;
  }
  if (const peer::RdmaRun* run = request.as<peer::RdmaRun>()) {
    RdmaLink* link = &reply.rdma_link;
    link->tool = "ib_write_bw";
    link->message_bytes = run->message_bytes;
    link->link_bits_per_second = 100e9;
    // The far end: the node with a port at the run's address. A node
    // without RDMA skips its links both ways, as its server end would.
    const FakeNode* far = nullptr;
    for (const FakeNode& other : nodes_) {
      for (const FakePort& port : other.ports) {
        if (port.address.substr(0, port.address.find('/')) == run->address) far = &other;
      }
    }
    const std::string far_skip = far != nullptr ? far->rdma_skipped : "";
    if (node->hangs_in_rdma) {
      link->error = AwaitRelease(group) ? "stopped on request" : "did not finish";
    } else if (!node->rdma_error.empty()) {
      link->error = node->rdma_error;
    } else if (!node->rdma_skipped.empty()) {
      link->skipped = node->rdma_skipped;
    } else if (!far_skip.empty()) {
      link->skipped = far_skip;
    } else {
      link->bits_per_second = node->rdma_bits_per_second;
      link->fraction_of_link = node->rdma_bits_per_second / 100e9;
    }
    return reply;
  }
  if (request.as<peer::ValidationNotice>() != nullptr) {
    reply.recorded = true;
    return reply;
  }
  if (request.as<peer::CountersRequest>() != nullptr) {
    if (!node->counters_error.empty()) {
      reply.error = node->counters_error;
      return reply;
    }
    uint64_t reads = 0;
    {
      absl::MutexLock lock(&mu_);
      reads = counter_reads_[node->name]++;
    }
    reply.counters.node = node->name;
    for (const FakePort& port : node->ports) {
      reply.counters.ports.push_back(
          {.port = port.name,
           .values = {{"link.receive_drops", 7},
                      {"transport.retry", 100 + reads * node->retries_per_read}}});
    }
    return reply;
  }
  return absl::FailedPreconditionError(absl::StrCat(who, ": unknown request"));
}

bool FakePeers::AwaitRelease(CallGroup* group) {
  absl::Notification released;
  const int member = group != nullptr ? group->Join([&released] { released.Notify(); }) : -1;
  const bool was_released = released.WaitForNotificationWithTimeout(absl::Seconds(10));
  if (group != nullptr) group->Leave(member);
  absl::MutexLock lock(&mu_);
  if (was_released) ++released_;
  return was_released;
}

std::vector<std::string> FakePeers::streams() const {
  absl::MutexLock lock(&mu_);
  return streams_;
}

peer::PeerReply FakePeers::Ring(const FakeNode& node, const peer::RingJoin& join,
                                CallGroup* group) {
  peer::PeerReply reply;
  peer::RingReport* report = &reply.ring;
  for (const FakePort& port : node.ports) {
    if (port.rail == join.rail) {
      report->port = port.name;
      report->in_bits_per_second = port.in_bits_per_second;
    }
  }
  if (node.hangs_in_ring) {
    report->error = AwaitRelease(group) ? "stopped: the coordinator ended the ring"
                                        : "timed out waiting for the previous rank";
    return reply;
  }
  for (size_t s = 0; s < join.sizes.size(); ++s) {
    // 10 GB/s a size after a fixed 0.5 ms.
    const double seconds = 0.0005 + static_cast<double>(join.sizes[s]) / 10e9;
    report->seconds.push_back(seconds * node.ring_slowdown);
  }
  report->verified = true;
  return reply;
}

PortReach FakePeers::ProbeFrom(const std::string& node, const std::string& port,
                               const std::string& address, const std::string& rail,
                               const std::vector<std::string>& peers) const {
  PortReach reach;
  reach.node = node;
  reach.port = port;
  reach.address = address;
  reach.rail = rail;
  const std::string own = address.substr(0, address.find('/'));
  for (const std::string& peer : peers) {
    if (peer == own || !InRail(rail, peer)) continue;
    ReachTarget* target = &reach.targets.emplace_back();
    target->address = peer;
    target->kind = "peer";
    target->sent = 3;
    const bool lost =
        std::find(unreachable.begin(), unreachable.end(), peer) != unreachable.end() ||
        std::find(unreachable.begin(), unreachable.end(), own) != unreachable.end();
    target->received = lost ? 0 : 3;
    target->loss_ratio = lost ? 1.0 : 0.0;
    target->reachable = !lost;
  }
  return reach;
}

std::vector<PortReach> FakePeers::Probe(const std::vector<LocalPort>& ports,
                                        const std::vector<Ipv4Address>& peers, const ReachRequest&,
                                        const std::string& node) {
  std::vector<std::string> addresses;
  for (const Ipv4Address& peer : peers) addresses.push_back(peer.ToString());
  std::vector<PortReach> out;
  for (const LocalPort& port : ports) {
    out.push_back(
        ProbeFrom(node, port.name, port.address.ToString(), port.network.ToString(), addresses));
  }
  return out;
}

StreamResult FakePeers::Send(const LocalPort&, Ipv4Address to, uint16_t, absl::Duration duration,
                             CallGroup* stop) {
  {
    absl::MutexLock lock(&mu_);
    streams_.push_back(to.ToString());
  }
  StreamResult stream;
  if (streams_hang) {
    AwaitRelease(stop);
    stream.error = "stopped";
    return stream;
  }
  if (failing_streams.contains(to.ToString())) {
    stream.error = absl::StrCat("to ", to.ToString(), ": connect: Connection refused");
    return stream;
  }
  stream.seconds = absl::ToDoubleSeconds(duration);
  stream.bits_per_second = stream_bits_per_second;
  stream.bytes = static_cast<uint64_t>(stream_bits_per_second / 8 * stream.seconds);
  return stream;
}

StreamResult FakePeers::Receive(const LocalPort& from, Ipv4Address to, uint16_t port,
                                absl::Duration duration, CallGroup* stop) {
  return Send(from, to, port, duration, stop);
}

}  // namespace rocenet::diag::testing
