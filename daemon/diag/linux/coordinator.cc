// The coordinator side of DiagEngine: what rocectl asks this daemon for.
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "daemon/diag/analysis.h"
#include "daemon/diag/linux/engine.h"
#include "daemon/diag/linux/prober.h"
#include "daemon/diag/linux/traffic.h"
#include "daemon/diag/stats.h"

namespace rocenet::diag {
namespace {

constexpr absl::Duration kInfoTimeout = absl::Seconds(3);
constexpr absl::Duration kReplySlack = absl::Seconds(3);

// Runs fn(i) for i in [0, n) on threads of their own and waits for all.
template <typename Fn>
void ParallelFor(size_t n, Fn fn) {
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (size_t i = 0; i < n; ++i) threads.emplace_back([&fn, i] { fn(i); });
  for (std::thread& t : threads) t.join();
}

std::string RandomSession() {
  std::random_device rd;
  return absl::StrFormat("%08x%08x", rd(), rd());
}

std::vector<NodeAddress> ParseNodes(const google::protobuf::RepeatedPtrField<std::string>& nodes) {
  std::vector<NodeAddress> out;
  for (const std::string& node : nodes) out.push_back(*ParseNodeAddress(node));
  return out;
}

const v1::PeerPort* PortInRail(const v1::PeerInfo& info, const std::string& rail) {
  for (const v1::PeerPort& port : info.ports()) {
    if (port.rail() == rail) return &port;
  }
  return nullptr;
}

std::string AddressOf(const std::string& cidr) { return cidr.substr(0, cidr.find('/')); }

// The node's name as it calls itself, else the address it was given as.
std::string NameOf(const absl::StatusOr<v1::PeerInfo>& info, const NodeAddress& node) {
  if (info.ok() && !info->node().empty()) return info->node();
  return node.ToString();
}

}  // namespace

absl::StatusOr<v1::ReachResult> DiagEngine::Reach(const v1::ReachRequest& request,
                                                  const Progress& progress) {
  v1::ReachResult result;
  absl::StatusOr<std::vector<LocalPort>> local = ports_();
  if (!local.ok()) return local.status();

  if (request.nodes().empty()) {
    std::vector<LocalPort> selected;
    for (const LocalPort& port : *local) {
      if (request.ports().empty() || std::find(request.ports().begin(), request.ports().end(),
                                               port.name) != request.ports().end()) {
        selected.push_back(port);
      }
    }
    for (const std::string& name : request.ports()) {
      if (FindPortByName(*local, name) == nullptr) {
        return absl::NotFoundError(
            absl::StrCat("port \"", name, "\" has no address to probe from"));
      }
    }
    std::vector<Ipv4Address> peers;
    for (const std::string& peer : request.peers()) {
      peers.push_back(*Ipv4Address::Parse(peer));
      if (FindPortForAddress(selected, peers.back()) == nullptr) {
        result.add_problems(absl::StrCat("peer ", peer, ": in the rail of no port probed"));
      }
    }
    progress(absl::StrCat("probing from ", selected.size(), " ports"), 0);
    result.add_nodes(options_.node_name);
    for (v1::PortReach& port : ProbePorts(selected, peers, request, options_.node_name)) {
      *result.add_ports() = std::move(port);
    }
    AnalyzeReach({}, &result);
    return result;
  }

  // Mesh: learn every node's ports, then let every node probe all the others.
  const std::vector<NodeAddress> nodes = ParseNodes(request.nodes());
  std::vector<absl::StatusOr<v1::PeerInfo>> infos(nodes.size(), absl::UnknownError(""));
  progress(absl::StrCat("asking ", nodes.size(), " daemons for their ports"), 0);
  ParallelFor(nodes.size(),
              [&](size_t i) { infos[i] = Info(nodes[i], absl::Now() + kInfoTimeout); });
  std::vector<std::string> silent;
  std::map<std::string, std::pair<std::string, std::string>> owner;  // address -> node, port
  for (size_t i = 0; i < nodes.size(); ++i) {
    result.add_nodes(NameOf(infos[i], nodes[i]));
    if (!infos[i].ok()) {
      silent.push_back(nodes[i].ToString());
      result.add_problems(std::string(infos[i].status().message()));
      continue;
    }
    for (const v1::PeerPort& port : infos[i]->ports()) {
      owner[AddressOf(port.address())] = {infos[i]->node(), port.name()};
    }
  }
  std::vector<absl::StatusOr<v1::PeerReply>> replies(nodes.size(), absl::UnknownError(""));
  std::atomic<int> done{0};
  ParallelFor(nodes.size(), [&](size_t i) {
    if (!infos[i].ok()) return;
    v1::PeerRequest peer;
    *peer.mutable_reach() = request;
    peer.mutable_reach()->clear_nodes();
    peer.mutable_reach()->clear_ports();
    peer.mutable_reach()->clear_peers();
    for (size_t j = 0; j < nodes.size(); ++j) {
      if (j == i || !infos[j].ok()) continue;
      for (const v1::PeerPort& port : infos[j]->ports()) {
        peer.mutable_reach()->add_peers(AddressOf(port.address()));
      }
    }
    replies[i] =
        Call(nodes[i], peer, absl::Now() + absl::Milliseconds(request.timeout_ms()) + kReplySlack);
    progress(absl::StrCat("node ", NameOf(infos[i], nodes[i]), " done"),
             static_cast<double>(++done) / nodes.size());
  });
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!infos[i].ok()) continue;
    if (!replies[i].ok()) {
      silent.push_back(NameOf(infos[i], nodes[i]));
      result.add_problems(std::string(replies[i].status().message()));
      continue;
    }
    for (v1::PortReach port : replies[i]->reach().ports()) {
      port.set_node(infos[i]->node());
      for (v1::ReachTarget& target : *port.mutable_targets()) {
        if (auto it = owner.find(target.address()); it != owner.end()) {
          target.set_node(it->second.first);
          target.set_port(it->second.second);
        }
      }
      *result.add_ports() = std::move(port);
    }
  }
  AnalyzeReach(silent, &result);
  return result;
}

absl::StatusOr<v1::BandwidthResult> DiagEngine::Bandwidth(const v1::BandwidthRequest& request,
                                                          const Progress& progress) {
  absl::StatusOr<std::vector<LocalPort>> local = ports_();
  if (!local.ok()) return local.status();
  const LocalPort* port = FindPortByName(*local, request.port());
  if (port == nullptr) {
    return absl::NotFoundError(absl::StrCat("port \"", request.port(), "\" has no address"));
  }
  const NodeAddress peer = *ParseNodeAddress(request.peer());
  if (!port->rail.Contains(peer.address)) {
    return absl::InvalidArgumentError(absl::StrCat("peer: ", peer.address.ToString(),
                                                   " is not in the rail ", port->rail.ToString(),
                                                   " of port ", port->name));
  }
  v1::BandwidthResult result;
  result.set_node(options_.node_name);
  result.set_port(port->name);
  result.set_local_address(port->address.ToString());
  result.set_peer(peer.ToString());
  const double link = static_cast<double>(port->speed_mbps) * 1e6;
  result.set_link_bits_per_second(link);
  const absl::Duration duration = absl::Milliseconds(request.duration_ms());
  for (const char* direction : {"transmit", "receive"}) {
    const bool transmit = std::string(direction) == "transmit";
    progress(absl::StrCat(direction, ": ", request.streams(), " streams for ",
                          absl::FormatDuration(duration)),
             transmit ? 0 : 0.5);
    std::vector<v1::StreamResult> streams(request.streams());
    ParallelFor(streams.size(), [&](size_t i) {
      streams[i] = transmit ? SendStream(*port, peer.address, peer.port, duration)
                            : ReceiveStream(*port, peer.address, peer.port, duration);
      streams[i].set_index(static_cast<uint32_t>(i));
    });
    v1::DirectionResult* d = result.add_directions();
    d->set_direction(direction);
    for (const v1::StreamResult& s : streams) {
      d->set_bits_per_second(d->bits_per_second() + s.bits_per_second());
      d->set_bytes(d->bytes() + s.bytes());
      d->set_retransmits(d->retransmits() + s.retransmits());
      if (!s.error().empty()) {
        result.add_problems(absl::StrCat(direction, " stream ", s.index(), ": ", s.error()));
      }
      *d->add_streams() = s;
    }
    if (link > 0) d->set_fraction_of_link(d->bits_per_second() / link);
    if (d->bits_per_second() <= 0) {
      result.add_problems(absl::StrCat(direction, ": no data got through"));
    } else if (link > 0 && request.min_fraction() > 0 &&
               d->fraction_of_link() < request.min_fraction()) {
      result.add_problems(absl::StrFormat("%s: %.2f Gb/s is %.0f%% of the link's %.0f Gb/s",
                                          direction, d->bits_per_second() / 1e9,
                                          d->fraction_of_link() * 100, link / 1e9));
    }
  }
  result.set_ok(result.problems().empty());
  return result;
}

absl::StatusOr<v1::AllreduceResult> DiagEngine::Allreduce(const v1::AllreduceRequest& request,
                                                          const Progress& progress) {
  v1::AllreduceResult result;
  const std::vector<NodeAddress> nodes = ParseNodes(request.nodes());
  const size_t n = nodes.size();
  result.set_ranks(static_cast<uint32_t>(n));
  std::vector<absl::StatusOr<v1::PeerInfo>> infos(n, absl::UnknownError(""));
  progress(absl::StrCat("asking ", n, " daemons for their ports"), 0);
  ParallelFor(n, [&](size_t i) { infos[i] = Info(nodes[i], absl::Now() + kInfoTimeout); });
  for (size_t i = 0; i < n; ++i) {
    result.add_nodes(NameOf(infos[i], nodes[i]));
    if (!infos[i].ok()) result.add_problems(std::string(infos[i].status().message()));
  }
  if (!result.problems().empty()) {
    result.set_ok(false);
    return result;
  }
  // A ring per rail that every node has a port in.
  std::set<std::string> rails;
  for (const v1::PeerPort& port : infos[0]->ports()) rails.insert(port.rail());
  std::vector<std::string> ring_rails;
  for (const std::string& rail : rails) {
    std::vector<std::string> missing;
    for (size_t i = 0; i < n; ++i) {
      if (PortInRail(*infos[i], rail) == nullptr) missing.push_back(infos[i]->node());
    }
    if (missing.empty()) {
      ring_rails.push_back(rail);
    } else {
      result.add_problems(
          absl::StrCat("rail ", rail, ": no port on ", absl::StrJoin(missing, ", ")));
    }
  }
  if (ring_rails.empty()) result.add_problems("no rail that every node has a port in");
  const std::vector<uint64_t> sizes =
      SizeSweep(request.min_bytes(), request.max_bytes(), request.step_factor());
  const std::string session = RandomSession();
  const uint64_t probe_bytes = std::min<uint64_t>(request.max_bytes(), 4 << 20);
  progress(absl::StrCat(ring_rails.size(), " rings of ", n, " ranks, ", sizes.size(),
                        " sizes from ", sizes.front(), " to ", sizes.back(), " bytes"),
           0.05);

  // reports[r][i]: rank i of rail r.
  std::vector<std::vector<absl::StatusOr<v1::PeerReply>>> reports(
      ring_rails.size(), std::vector<absl::StatusOr<v1::PeerReply>>(n, absl::UnknownError("")));
  std::vector<std::vector<std::atomic<int>>> control(ring_rails.size());
  for (auto& rail_control : control) {
    rail_control = std::vector<std::atomic<int>>(n);
    for (auto& fd : rail_control) fd.store(-1);
  }
  std::atomic<int> finished{0};
  const absl::Time deadline = absl::Now() + absl::Milliseconds(request.timeout_ms()) + kReplySlack;
  ParallelFor(ring_rails.size() * n, [&](size_t k) {
    const size_t r = k / n, i = k % n;
    const std::string& rail = ring_rails[r];
    const v1::PeerPort* next = PortInRail(*infos[(i + 1) % n], rail);
    v1::PeerRequest join_request;
    v1::RingJoin* join = join_request.mutable_ring_join();
    join->set_session(session);
    join->set_rail(rail);
    join->set_rank(static_cast<uint32_t>(i));
    join->set_ranks(static_cast<uint32_t>(n));
    join->set_next_address(AddressOf(next->address()));
    join->set_next_data_port(nodes[(i + 1) % n].port);
    for (uint64_t size : sizes) join->add_sizes(size);
    join->set_iterations(request.iterations());
    join->set_timeout_ms(request.timeout_ms());
    join->set_probe_bytes(probe_bytes);
    reports[r][i] = Call(nodes[i], join_request, deadline, &control[r][i]);
    const bool failed = !reports[r][i].ok() || !reports[r][i]->ring().error().empty();
    if (failed) {
      // The ring cannot complete: release the other ranks at once.
      for (size_t j = 0; j < n; ++j) {
        const int fd = control[r][j].load();
        if (j != i && fd >= 0) shutdown(fd, SHUT_WR);
      }
    }
    progress(absl::StrCat("rail ", rail, ": rank ", i, " (", infos[i]->node(), ") ",
                          failed ? "failed" : "done"),
             0.05 + 0.95 * static_cast<double>(++finished) / (ring_rails.size() * n));
  });

  for (size_t r = 0; r < ring_rails.size(); ++r) {
    v1::RailResult* rail = result.add_rails();
    rail->set_rail(ring_rails[r]);
    std::vector<std::string> errors;
    std::vector<const v1::RingReport*> ring(n, nullptr);
    for (size_t i = 0; i < n; ++i) {
      if (reports[r][i].ok()) ring[i] = &reports[r][i]->ring();
    }
    // Links: rank i -> rank i+1, measured by rank i+1.
    for (size_t i = 0; i < n; ++i) {
      const size_t j = (i + 1) % n;
      v1::RingLink* link = rail->add_links();
      link->set_from_node(infos[i]->node());
      link->set_from_port(PortInRail(*infos[i], ring_rails[r])->name());
      link->set_to_node(infos[j]->node());
      link->set_to_port(PortInRail(*infos[j], ring_rails[r])->name());
      if (ring[j] != nullptr) link->set_bits_per_second(ring[j]->in_bits_per_second());
      std::string error;
      if (ring[i] != nullptr && ring[i]->failed_link() == "out") error = ring[i]->error();
      if (ring[j] != nullptr && ring[j]->failed_link() == "in" && error.empty()) {
        error = ring[j]->error();
      }
      link->set_error(error);
    }
    for (size_t i = 0; i < n; ++i) {
      if (!reports[r][i].ok()) {
        errors.push_back(std::string(reports[r][i].status().message()));
      }
    }
    for (const v1::RingLink& link : rail->links()) {
      if (!link.error().empty()) {
        errors.push_back(absl::StrCat(link.from_node(), "/", link.from_port(), " -> ",
                                      link.to_node(), "/", link.to_port(), ": ", link.error()));
      }
    }
    // A rank cancelled because another failed has no link to blame.
    if (errors.empty()) {
      for (size_t i = 0; i < n; ++i) {
        if (ring[i] != nullptr && !ring[i]->error().empty()) {
          errors.push_back(absl::StrCat(infos[i]->node(), ": ", ring[i]->error()));
        }
      }
    }
    MarkSlowestLink(rail->mutable_links());
    if (!errors.empty()) {
      rail->set_broken(true);
      rail->set_error(absl::StrJoin(errors, "; "));
      result.add_problems(absl::StrCat("rail ", ring_rails[r], " broken: ", rail->error()));
      continue;
    }
    bool verified = true;
    for (size_t i = 0; i < n; ++i) verified = verified && ring[i]->verified();
    for (size_t s = 0; s < sizes.size(); ++s) {
      double seconds = 0;
      for (size_t i = 0; i < n; ++i) {
        if (s < static_cast<size_t>(ring[i]->seconds_size())) {
          seconds = std::max(seconds, ring[i]->seconds(static_cast<int>(s)));
        }
      }
      v1::AllreduceSize* size = rail->add_sizes();
      size->set_bytes(sizes[s]);
      size->set_seconds(seconds);
      size->set_algbw_bytes_per_second(AlgorithmBandwidth(sizes[s], seconds));
      size->set_busbw_bytes_per_second(
          AllreduceBusBandwidth(size->algbw_bytes_per_second(), static_cast<int>(n)));
      size->set_verified(verified);
    }
    if (!verified) {
      result.add_problems(absl::StrCat("rail ", ring_rails[r], ": wrong all-reduce result"));
    }
  }
  result.set_ok(result.problems().empty());
  return result;
}

absl::StatusOr<v1::IncastResult> DiagEngine::Incast(const v1::IncastRequest& request,
                                                    const Progress& progress) {
  absl::StatusOr<std::vector<LocalPort>> local = ports_();
  if (!local.ok()) return local.status();
  const LocalPort* port = FindPortByName(*local, request.port());
  if (port == nullptr) {
    return absl::NotFoundError(absl::StrCat("port \"", request.port(), "\" has no address"));
  }
  if (options_.data_port == 0) {
    return absl::FailedPreconditionError(
        "the data port is off (--diag_port=0): nothing to receive on");
  }
  const LocalPort receiver = *port;
  v1::IncastResult result;
  result.set_node(options_.node_name);
  result.set_port(receiver.name);
  result.set_address(receiver.address.ToString());
  result.set_link_bits_per_second(static_cast<double>(receiver.speed_mbps) * 1e6);
  const std::vector<NodeAddress> nodes = ParseNodes(request.senders());
  std::vector<absl::StatusOr<v1::PeerInfo>> infos(nodes.size(), absl::UnknownError(""));
  ParallelFor(nodes.size(),
              [&](size_t i) { infos[i] = Info(nodes[i], absl::Now() + kInfoTimeout); });
  progress(absl::StrCat(nodes.size(), " senders to ", receiver.name, " for ", request.duration_ms(),
                        " ms"),
           0.1);
  std::vector<absl::StatusOr<v1::PeerReply>> replies(nodes.size(), absl::UnknownError(""));
  ParallelFor(nodes.size(), [&](size_t i) {
    if (!infos[i].ok()) {
      replies[i] = infos[i].status();
      return;
    }
    v1::PeerRequest send;
    send.mutable_send()->set_address(receiver.address.address().ToString());
    send.mutable_send()->set_data_port(options_.data_port);
    send.mutable_send()->set_duration_ms(request.duration_ms());
    send.mutable_send()->set_streams(request.streams());
    replies[i] =
        Call(nodes[i], send,
             absl::Now() + absl::Milliseconds(request.duration_ms()) + kTrafficSlack + kReplySlack);
  });
  std::vector<double> rates;
  for (size_t i = 0; i < nodes.size(); ++i) {
    v1::IncastSender* sender = result.add_senders();
    sender->set_node(NameOf(infos[i], nodes[i]));
    if (!replies[i].ok()) {
      sender->set_error(std::string(replies[i].status().message()));
    } else {
      const v1::SendReport& report = replies[i]->send();
      sender->set_port(report.port());
      sender->set_address(report.source_address());
      sender->set_bytes(report.bytes());
      sender->set_bits_per_second(BitsPerSecond(report.bytes(), report.seconds()));
      sender->set_retransmits(report.retransmits());
      sender->set_error(report.error());
    }
    if (!sender->error().empty()) {
      result.add_problems(absl::StrCat("sender ", sender->node(), ": ", sender->error()));
    }
    rates.push_back(sender->bits_per_second());
    result.set_total_bits_per_second(result.total_bits_per_second() + sender->bits_per_second());
    result.set_retransmits(result.retransmits() + sender->retransmits());
  }
  result.set_fairness(JainIndex(rates));
  if (absl::StatusOr<std::vector<LocalPort>> after = ports_(); after.ok()) {
    if (const LocalPort* p = FindPortByName(*after, receiver.name); p != nullptr) {
      result.set_receive_drops(p->rx_dropped - std::min(p->rx_dropped, receiver.rx_dropped));
    }
  }
  result.set_ok(result.problems().empty());
  return result;
}

}  // namespace rocenet::diag
