// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/daemon/diag/fake_peers.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "daemon/diag/analysis.h"
#include "absl/synchronization/notification.h"

namespace rocenet::diag::testing {
namespace {

bool InRail(const std::string& rail, const std::string& address) {
  absl::StatusOr<Ipv4Prefix> prefix = Ipv4Prefix::Parse(rail);
  absl::StatusOr<Ipv4Address> a = Ipv4Address::Parse(address.substr(0, address.find('/')));
  return prefix.ok() && a.ok() && prefix->Contains(*a);
}

}  // namespace

std::string FakePeers::AddressOf(size_t i) { return absl::StrCat("10.0.0.", i + 1); }

std::vector<std::pair<std::string, peer::v1::PeerRequest>> FakePeers::requests() const {
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

absl::StatusOr<peer::v1::PeerReply> FakePeers::Call(const NodeAddress& address,
                                              const peer::v1::PeerRequest& request, absl::Time,
                                              CallGroup* group) {
  const FakeNode* node = nullptr;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (address.address.ToString() == AddressOf(i)) node = &nodes_[i];
  }
  const std::string who = absl::StrCat("node ", address.ToString());
  if (node == nullptr || node->dead) {
    return absl::UnavailableError(absl::StrCat(who, ": connect: Connection refused"));
  }
  {
    absl::MutexLock lock(&mu_);
    requests_.emplace_back(node->name, request);
  }
  peer::v1::PeerReply reply;
  switch (request.kind_case()) {
    case peer::v1::PeerRequest::kInfo: {
      peer::v1::PeerInfo* info = reply.mutable_info();
      info->set_node(node->name);
      info->set_data_port(kDefaultDataPort);
      for (const FakePort& port : node->ports) {
        peer::v1::PeerPort* p = info->add_ports();
        p->set_name(port.name);
        p->set_address(port.address);
        p->set_gateway(port.gateway);
        if (!port.unnamed_rail) p->set_rail(port.rail);
        p->set_network(port.network.empty() ? port.rail : port.network);
        p->set_up(true);
        p->set_speed_mbps(100000);
      }
      return reply;
    }
    case peer::v1::PeerRequest::kRingJoin:
      if (node->dies_in_ring) {
        return absl::UnavailableError(absl::StrCat(who, ": recv: Connection reset by peer"));
      }
      return Ring(*node, request.ring_join(), group);
    case peer::v1::PeerRequest::kReach:
      for (const FakePort& port : node->ports) {
        std::vector<std::string> peers(request.reach().peers().begin(),
                                       request.reach().peers().end());
        *reply.mutable_reach()->add_ports() =
            ProbeFrom(node->name, port.name, port.address,
                      port.network.empty() ? port.rail : port.network, peers);
      }
      return reply;
    case peer::v1::PeerRequest::kSend: {
      peer::v1::SendReport* send = reply.mutable_send();
      send->set_port(node->ports.empty() ? "" : node->ports.front().name);
      send->set_source_address(node->ports.empty() ? "" : node->ports.front().address);
      send->set_bytes(node->send_error.empty() ? node->send_bytes : 0);
      send->set_seconds(node->send_seconds);
      send->set_error(node->send_error);
      return reply;
    }
    case peer::v1::PeerRequest::kRdmaRun: {
      v1::RdmaLink* link = reply.mutable_rdma_link();
      link->set_tool("ib_write_bw");
      link->set_message_bytes(request.rdma_run().message_bytes());
      link->set_link_bits_per_second(100e9);
      if (!node->rdma_skipped.empty()) {
        link->set_skipped(node->rdma_skipped);
      } else {
        link->set_bits_per_second(node->rdma_bits_per_second);
        link->set_fraction_of_link(node->rdma_bits_per_second / 100e9);
      }
      return reply;
    }
    case peer::v1::PeerRequest::kValidation:
      reply.set_recorded(true);
      return reply;
    default:
      return absl::FailedPreconditionError(absl::StrCat(who, ": unknown request"));
  }
}

peer::v1::PeerReply FakePeers::Ring(const FakeNode& node, const peer::v1::RingJoin& join, CallGroup* group) {
  peer::v1::PeerReply reply;
  peer::v1::RingReport* report = reply.mutable_ring();
  for (const FakePort& port : node.ports) {
    if (port.rail == join.rail()) {
      report->set_port(port.name);
      report->set_in_bits_per_second(port.in_bits_per_second);
    }
  }
  if (node.hangs_in_ring) {
    absl::Notification released;
    const int member = group != nullptr ? group->Join([&released] { released.Notify(); }) : -1;
    const bool was_released = released.WaitForNotificationWithTimeout(absl::Seconds(10));
    if (group != nullptr) group->Leave(member);
    absl::MutexLock lock(&mu_);
    if (was_released) ++released_;
    report->set_error(was_released ? "stopped: the coordinator ended the ring"
                                   : "timed out waiting for the previous rank");
    return reply;
  }
  for (int s = 0; s < join.sizes_size(); ++s) report->add_seconds(0.001 * (s + 1));
  report->set_verified(true);
  return reply;
}

v1::PortReach FakePeers::ProbeFrom(const std::string& node, const std::string& port,
                                   const std::string& address, const std::string& rail,
                                   const std::vector<std::string>& peers) const {
  v1::PortReach reach;
  reach.set_node(node);
  reach.set_port(port);
  reach.set_address(address);
  reach.set_rail(rail);
  const std::string own = address.substr(0, address.find('/'));
  for (const std::string& peer : peers) {
    if (peer == own || !InRail(rail, peer)) continue;
    v1::ReachTarget* target = reach.add_targets();
    target->set_address(peer);
    target->set_kind("peer");
    target->set_sent(3);
    const bool lost = std::find(unreachable.begin(), unreachable.end(), peer) != unreachable.end() ||
                      std::find(unreachable.begin(), unreachable.end(), own) != unreachable.end();
    target->set_received(lost ? 0 : 3);
    target->set_loss_ratio(lost ? 1.0 : 0.0);
    target->set_reachable(!lost);
  }
  return reach;
}

std::vector<v1::PortReach> FakePeers::Probe(const std::vector<LocalPort>& ports,
                                            const std::vector<Ipv4Address>& peers,
                                            const v1::ReachRequest&, const std::string& node) {
  std::vector<std::string> addresses;
  for (const Ipv4Address& peer : peers) addresses.push_back(peer.ToString());
  std::vector<v1::PortReach> out;
  for (const LocalPort& port : ports) {
    out.push_back(ProbeFrom(node, port.name, port.address.ToString(), port.network.ToString(),
                            addresses));
  }
  return out;
}

v1::StreamResult FakePeers::Send(const LocalPort&, Ipv4Address, uint16_t,
                                 absl::Duration duration) {
  v1::StreamResult stream;
  stream.set_seconds(absl::ToDoubleSeconds(duration));
  stream.set_bits_per_second(stream_bits_per_second);
  stream.set_bytes(static_cast<uint64_t>(stream_bits_per_second / 8 * stream.seconds()));
  return stream;
}

v1::StreamResult FakePeers::Receive(const LocalPort& from, Ipv4Address to, uint16_t port,
                                    absl::Duration duration) {
  return Send(from, to, port, duration);
}

}  // namespace rocenet::diag::testing
