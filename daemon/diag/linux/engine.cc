// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/linux/engine.h"

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/common/logging.h"
#include "daemon/common/status_macros.h"
#include "daemon/diag/limits.h"
#include "daemon/diag/linux/engine_reply.h"
#include "daemon/diag/linux/prober.h"
#include "daemon/diag/linux/ring.h"
#include "daemon/diag/linux/traffic.h"
#include "daemon/diag/suspects.h"
#include "daemon/diag/wire/convert.h"

namespace rocenet::diag {
namespace {

using engine::Reply;
using engine::ReplyError;

// A data port connection must say what it wants this soon.
constexpr absl::Duration kFirstFrameTimeout = absl::Seconds(5);

}  // namespace

DiagEngine::DiagEngine(EngineOptions options, PortsSource ports)
    : options_(std::move(options)),
      ports_(std::move(ports)),
      rdma_(options_.runner, this, options_.clock, options_.node_name),
      credentials_(options_.node_name, options_.secret, options_.clock),
      coordinator_({.peers = this,
                    .local = this,
                    .clock = options_.clock,
                    .ports = ports_,
                    .node_name = options_.node_name,
                    .data_port = options_.data_port,
                    .validation = options_.validation,
                    .rdma = &rdma_,
                    .counters = options_.counters}) {}

DiagEngine::~DiagEngine() { Stop(); }

absl::Status DiagEngine::Start() {
  if (options_.data_port == 0) return absl::OkStatus();
  if (!credentials_.configured()) {
    SPDLOG_WARN(
        "data port: not opened: no shared secret (--secret-file); this node runs local "
        "tests only");
    return absl::OkStatus();
  }
  // A Secret mounted as optional may appear later: until it can be read,
  // every request is refused (and this node's own requests fail), loudly.
  if (absl::StatusOr<std::string> secret = credentials_.Secret(); !secret.ok()) {
    SPDLOG_ERROR("data port: {}; every request is refused until it can be read",
                 secret.status().message());
  }
  listener_ =
      std::make_unique<DataListener>(options_.data_port, [this](Fd fd) { Serve(std::move(fd)); });
  return listener_->Start();
}

absl::Status DiagEngine::RequirePeers() const {
  if (credentials_.configured()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      "this test needs other nodes' daemons, and this rocenet-diagd has no shared secret for the "
      "data port (--secret-file)");
}

std::map<std::string, uint64_t> DiagEngine::PeerRefusals() const {
  return credentials_.gate().Refusals();
}

absl::StatusOr<ReachResult> DiagEngine::Reach(const ReachRequest& request, const Progress& progress,
                                              CallGroup* stop) {
  if (!request.nodes.empty()) RETURN_IF_ERROR(RequirePeers());
  return coordinator_.Reach(request, progress, stop);
}

absl::StatusOr<BandwidthResult> DiagEngine::Bandwidth(const BandwidthRequest& request,
                                                      const Progress& progress, CallGroup* stop) {
  RETURN_IF_ERROR(RequirePeers());
  return coordinator_.Bandwidth(request, progress, stop);
}

absl::StatusOr<AllreduceResult> DiagEngine::Allreduce(const AllreduceRequest& request,
                                                      const Progress& progress, CallGroup* stop) {
  RETURN_IF_ERROR(RequirePeers());
  return coordinator_.Allreduce(request, progress, stop);
}

absl::StatusOr<IncastResult> DiagEngine::Incast(const IncastRequest& request,
                                                const Progress& progress, CallGroup* stop) {
  RETURN_IF_ERROR(RequirePeers());
  return coordinator_.Incast(request, progress, stop);
}

absl::StatusOr<RdmaResult> DiagEngine::Rdma(const RdmaRequest& request, const Progress& progress,
                                            CallGroup* stop) {
  RETURN_IF_ERROR(RequirePeers());
  return coordinator_.Rdma(request, progress, stop);
}

std::vector<PortReach> DiagEngine::Probe(const std::vector<LocalPort>& ports,
                                         const std::vector<Ipv4Address>& peers,
                                         const ReachRequest& request, const std::string& node) {
  return ProbePorts(ports, peers, request, node, clock());
}

StreamResult DiagEngine::Send(const LocalPort& from, Ipv4Address to, uint16_t port,
                              absl::Duration duration, CallGroup* stop) {
  return SendStream(from, to, port, duration, credentials_, stop);
}

StreamResult DiagEngine::Receive(const LocalPort& from, Ipv4Address to, uint16_t port,
                                 absl::Duration duration, CallGroup* stop) {
  return ReceiveStream(from, to, port, duration, credentials_, stop);
}

void DiagEngine::SetAddresses(std::set<Ipv4Address> addresses) {
  if (listener_ != nullptr) listener_->SetAddresses(std::move(addresses));
}

void DiagEngine::Stop() {
  {
    // Wakes connections parked in ServeRingHello, and calls waiting for
    // other daemons.
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    for (int fd : calls_) os::ShutdownBoth(fd);
  }
  if (listener_ != nullptr) listener_->Stop();
}

peer::PeerInfo DiagEngine::LocalInfo(const std::vector<LocalPort>& ports) const {
  peer::PeerInfo info;
  info.node = options_.node_name;
  info.data_port = options_.data_port;
  for (const LocalPort& port : ports) {
    peer::PeerPort* p = &info.ports.emplace_back();
    p->name = port.name;
    p->address = port.address.ToString();
    p->gateway = port.gateway.ToString();
    p->network = port.network.ToString();
    p->rail = port.rail;
    p->leaf = port.leaf;
    p->up = port.up;
    p->speed_mbps = port.speed_mbps;
    p->driver = port.driver;
    p->netdev_is_control_path = port.netdev_is_control_path;
  }
  return info;
}

absl::StatusOr<peer::PeerRequest> DiagEngine::AdmitRequest(int fd) {
  absl::StatusOr<os::TcpEnds> ends = os::EndsOf(fd);
  if (!ends.ok()) return ends.status();
  absl::StatusOr<peer::PeerEnvelope> envelope =
      ReadEnvelope(clock(), fd, clock().Now() + kFirstFrameTimeout);
  if (!envelope.ok()) {
    credentials_.gate().Count(Refusal::kMalformed);
    return absl::Status(envelope.status().code(), absl::StrCat("peer ", ends->peer.ToString(), ": ",
                                                               envelope.status().message()));
  }
  absl::StatusOr<std::string> secret = credentials_.Secret();
  if (!secret.ok()) {
    credentials_.gate().Count(Refusal::kUnauthenticated);
    return secret.status();
  }
  absl::StatusOr<PeerGate::Admitted> admitted = credentials_.gate().Admit(
      *envelope, *secret, ends->peer, ends->local, options_.data_port, clock().Now());
  if (!admitted.ok()) return admitted.status();
  absl::StatusOr<peer::PeerRequest> request = wire::ParseRequest(admitted->request);
  if (!request.ok()) {
    credentials_.gate().Count(Refusal::kMalformed);
    return absl::Status(request.status().code(), absl::StrCat("peer ", ends->peer.ToString(), ": ",
                                                              request.status().message()));
  }
  return request;
}

void DiagEngine::Serve(Fd fd) {
  absl::StatusOr<peer::PeerRequest> admitted = AdmitRequest(fd.get());
  if (!admitted.ok()) {
    // A flood is counted, not logged line by line.
    if (absl::IsResourceExhausted(admitted.status())) {
      SPDLOG_DEBUG("data port: refused: {}", admitted.status().message());
      return;
    }
    SPDLOG_WARN("data port: refused: {}", admitted.status().message());
    // A peer that proved it holds the secret, but whose clock disagrees
    // with this one, is told why: its run names the clocks instead of a
    // closed connection. Anyone else learns nothing.
    if (absl::IsFailedPrecondition(admitted.status())) {
      return ReplyError(clock(), fd.get(),
                        absl::StrCat("node ", options_.node_name,
                                     " refused the request: ", admitted.status().message()));
    }
    return;
  }
  const peer::PeerRequest& request = *admitted;
  if (request.as<peer::PeerInfoRequest>() != nullptr) {
    absl::StatusOr<std::vector<LocalPort>> ports = ports_();
    if (!ports.ok()) return ReplyError(clock(), fd.get(), ports.status().message());
    peer::PeerReply reply;
    reply.info = LocalInfo(*ports);
    return Reply(clock(), fd.get(), reply);
  }
  if (request.as<peer::CountersRequest>() != nullptr) {
    if (options_.counters == nullptr) return ReplyError(clock(), fd.get(), "no counters here");
    absl::StatusOr<std::vector<peer::PortCounterValues>> counters = options_.counters();
    if (!counters.ok()) return ReplyError(clock(), fd.get(), counters.status().message());
    peer::PeerReply reply;
    reply.counters = {.node = options_.node_name, .ports = std::move(*counters)};
    return Reply(clock(), fd.get(), reply);
  }
  if (const ReachRequest* reach = request.as<ReachRequest>()) {
    return ServeReach(std::move(fd), *reach);
  }
  if (const peer::RingJoin* join = request.as<peer::RingJoin>()) {
    return ServeRingJoin(std::move(fd), *join);
  }
  if (const peer::RingHello* hello = request.as<peer::RingHello>()) {
    return ServeRingHello(std::move(fd), *hello);
  }
  if (const peer::SinkRequest* sink = request.as<peer::SinkRequest>()) {
    if (!CheckDurationMs(sink->duration_ms, "duration_ms").ok()) return;
    return ServeSink(std::move(fd), *sink, clock());
  }
  if (const peer::SourceRequest* source = request.as<peer::SourceRequest>()) {
    if (!CheckDurationMs(source->duration_ms, "duration_ms").ok()) return;
    return ServeSource(std::move(fd), *source, clock());
  }
  if (const peer::SendRequest* send = request.as<peer::SendRequest>()) {
    return ServeSend(std::move(fd), *send);
  }
  if (const peer::ValidationNotice* notice = request.as<peer::ValidationNotice>()) {
    if (options_.validation != nullptr) options_.validation(*notice);
    peer::PeerReply reply;
    reply.recorded = options_.validation != nullptr;
    return Reply(clock(), fd.get(), reply);
  }
  if (const peer::RdmaServe* serve = request.as<peer::RdmaServe>()) {
    return ServeRdma(std::move(fd), *serve);
  }
  if (const peer::RdmaRun* run = request.as<peer::RdmaRun>()) {
    return ServeRdmaRun(std::move(fd), *run);
  }
  return ReplyError(clock(), fd.get(), "unknown request");
}

void DiagEngine::ServeReach(Fd fd, const ReachRequest& request) {
  ReachRequest probe = request;
  probe.nodes.clear();  // a peer never fans out further
  absl::StatusOr<ReachRequest> normal = NormalizeReach(probe);
  if (!normal.ok()) return ReplyError(clock(), fd.get(), normal.status().message());
  absl::StatusOr<std::vector<LocalPort>> ports = ports_();
  if (!ports.ok()) return ReplyError(clock(), fd.get(), ports.status().message());
  std::vector<Ipv4Address> peers;
  for (const std::string& peer : normal->peers) peers.push_back(*Ipv4Address::Parse(peer));
  if (absl::Status s = CheckPeersPerPort(*ports, peers); !s.ok()) {
    return ReplyError(clock(), fd.get(), s.message());
  }
  peer::PeerReply reply;
  for (PortReach& port : ProbePorts(*ports, peers, *normal, options_.node_name, clock())) {
    reply.reach.ports.push_back(std::move(port));
  }
  // A planned run without the matrix: what the coordinator needs, figures
  // per port and the failures, not every target. (A coordinator from before
  // plans names none and gets every target.)
  if (!normal->plan.empty() && !normal->matrix) ReduceToFailures(&reply.reach.ports);
  Reply(clock(), fd.get(), reply);
}

absl::StatusOr<peer::PeerReply> DiagEngine::Call(const NodeAddress& node,
                                                 const peer::PeerRequest& request,
                                                 absl::Time deadline, CallGroup* group) {
  const std::string who = absl::StrCat("node ", node.ToString());
  std::vector<NodeAddress> addresses = {node};
  addresses[0].alternates.clear();
  for (const NodeAddress& other : node.alternates) addresses.push_back(other);
  if (addresses.size() > 1) {
    absl::MutexLock lock(&mu_);
    if (auto it = connected_.find(who); it != connected_.end()) {
      std::stable_partition(addresses.begin(), addresses.end(),
                            [&](const NodeAddress& a) { return a.ToString() == it->second; });
    }
  }
  absl::StatusOr<Fd> fd = absl::UnavailableError("no address");
  std::vector<std::string> failures;
  NodeAddress to;
  for (size_t i = 0; i < addresses.size(); ++i) {
    to = addresses[i];
    const absl::Duration bound = i + 1 < addresses.size() ? absl::Seconds(1) : absl::Seconds(3);
    fd = os::ConnectTcp(clock(), nullptr, to.address, to.port,
                        std::min(deadline, clock().Now() + bound));
    if (fd.ok()) break;
    failures.push_back(addresses.size() > 1
                           ? absl::StrCat(to.ToString(), ": ", fd.status().message())
                           : std::string(fd.status().message()));
  }
  if (!fd.ok()) {
    return absl::UnavailableError(absl::StrCat(who, ": ", absl::StrJoin(failures, "; ")));
  }
  if (addresses.size() > 1) {
    absl::MutexLock lock(&mu_);
    connected_[who] = to.ToString();
  }
  const int raw = fd->get();
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::UnavailableError(absl::StrCat(who, ": rocenet-diagd is stopping"));
    calls_.insert(raw);
  }
  absl::Status s = WriteRequest(raw, credentials_, request, to.address, to.port, deadline);
  absl::StatusOr<peer::PeerReply> reply = absl::UnknownError("not sent");
  if (s.ok()) {
    // Released, the call is half-closed: its daemon stops the test and
    // answers. Cut, it stops waiting for that answer.
    const int member = group != nullptr ? group->Join([raw] { os::ShutdownWrite(raw); },
                                                      [raw] { os::ShutdownBoth(raw); }, who)
                                        : -1;
    reply = ReadReply(clock(), raw, deadline);
    s = reply.status();
    if (group != nullptr) group->Leave(member);
  }
  {
    absl::MutexLock lock(&mu_);
    calls_.erase(raw);
  }
  if (!s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat(who, ": ",
                                     absl::IsDeadlineExceeded(s) ? "no answer within the time bound"
                                                                 : s.message()));
  }
  if (!reply->error.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(who, ": ", reply->error));
  }
  return reply;
}

}  // namespace rocenet::diag
