// SPDX-License-Identifier: Apache-2.0
// DiagEngine's data port handlers of the ethernet stage: a rank of an
// all-reduce ring (RingJoin, and the previous rank's RingHello that it
// waits for) and the sending end of a bandwidth or incast stream
// (SendRequest).
#include <string>

#include "absl/strings/str_cat.h"
#include "daemon/common/logging.h"
#include "daemon/diag/limits.h"
#include "daemon/diag/linux/control_watch.h"
#include "daemon/diag/linux/engine.h"
#include "daemon/diag/linux/engine_reply.h"
#include "daemon/diag/linux/ring.h"
#include "daemon/diag/linux/traffic.h"

namespace rocenet::diag {
namespace {

using engine::Reply;
using engine::ReplyError;

std::string HelloKey(const std::string& session, const std::string& rail) {
  return absl::StrCat(session, "/", rail);
}

}  // namespace

void DiagEngine::ServeRingJoin(Fd fd, const peer::RingJoin& join) {
  if (absl::Status s = CheckRingJoin(join); !s.ok()) {
    return ReplyError(clock(), fd.get(), s.message());
  }
  absl::StatusOr<std::vector<LocalPort>> ports = ports_();
  if (!ports.ok()) return ReplyError(clock(), fd.get(), ports.status().message());
  absl::StatusOr<Ipv4Address> next = Ipv4Address::Parse(join.next_address);
  if (!next.ok()) return ReplyError(clock(), fd.get(), "next_address: not an IPv4 address");
  const LocalPort* port = FindPortInRail(*ports, join.rail, *next);
  if (port == nullptr) {
    return ReplyError(clock(), fd.get(),
                      absl::StrCat("node ", options_.node_name, " has no port in rail ", join.rail,
                                   " that reaches ", join.next_address));
  }
  const std::string key = HelloKey(join.session, join.rail);
  peer::PeerReply reply;
  reply.ring = RunRingRank(
      join, *port, [&](absl::Time deadline) { return AwaitHello(key, deadline, fd.get()); },
      fd.get(), credentials_);
  {
    absl::MutexLock lock(&mu_);
    hellos_.erase(key);
  }
  Reply(clock(), fd.get(), reply);
}

void DiagEngine::ServeRingHello(Fd fd, const peer::RingHello& hello) {
  const std::string key = HelloKey(hello.session, hello.rail);
  {
    absl::MutexLock lock(&mu_);
    if (hellos_.size() >= 64 || hellos_.contains(key)) return;
    hellos_[key] = std::move(fd);
  }
  // The rank takes the connection within its time bound; one left unclaimed
  // (its rank failed to start) is dropped after the longest bound.
  const absl::Time until = clock().Now() + absl::Milliseconds(kMaxAllreduceTimeoutMs);
  absl::MutexLock lock(&mu_);
  auto taken = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = hellos_.find(key);
    return stopping_ || it == hellos_.end() || !it->second.valid();
  };
  mu_.AwaitWithDeadline(absl::Condition(&taken), until);
  hellos_.erase(key);
}

Fd DiagEngine::AwaitHello(const std::string& key, absl::Time deadline, int cancel_fd) {
  while (clock().Now() < deadline) {
    {
      absl::MutexLock lock(&mu_);
      auto it = hellos_.find(key);
      if (it != hellos_.end() && it->second.valid()) return std::move(it->second);
    }
    const absl::Time until = std::min(deadline, clock().Now() + absl::Milliseconds(20));
    if (os::WaitFd(clock(), cancel_fd, false, until).ok()) {
      return Fd();
    }
  }
  return Fd();
}

void DiagEngine::ServeSend(Fd fd, const peer::SendRequest& request) {
  if (absl::Status s = CheckDurationMs(request.duration_ms, "duration_ms"); !s.ok()) {
    return ReplyError(clock(), fd.get(), s.message());
  }
  if (request.streams < 1 || request.streams > kMaxIncastStreams) {
    return ReplyError(clock(), fd.get(), "streams: out of range");
  }
  absl::StatusOr<Ipv4Address> to = Ipv4Address::Parse(request.address);
  if (!to.ok()) return ReplyError(clock(), fd.get(), "address: not an IPv4 address");
  absl::StatusOr<std::vector<LocalPort>> ports = ports_();
  if (!ports.ok()) return ReplyError(clock(), fd.get(), ports.status().message());
  const LocalPort* port = FindPortForAddress(*ports, *to);
  peer::PeerReply reply;
  peer::SendReport* report = &reply.send;
  if (port == nullptr) {
    report->error = absl::StrCat("no port in the rail of ", request.address);
    return Reply(clock(), fd.get(), reply);
  }
  report->port = port->name;
  report->source_address = port->address.address().ToString();
  std::vector<StreamResult> streams(request.streams);
  {
    // The coordinator half-closes the connection to stop the run: the
    // streams end at once.
    CallGroup stop;
    const ControlWatch watch(clock(), fd.get(), &stop);
    std::vector<std::thread> threads;
    for (uint32_t i = 0; i < request.streams; ++i) {
      threads.emplace_back([&, i] {
        streams[i] = SendStream(*port, *to, static_cast<uint16_t>(request.data_port),
                                absl::Milliseconds(request.duration_ms), credentials_, &stop);
      });
    }
    for (std::thread& t : threads) t.join();
  }
  double seconds = 0;
  for (const StreamResult& s : streams) {
    report->bytes = report->bytes + s.bytes;
    seconds = std::max(seconds, s.seconds);
    report->retransmits = report->retransmits + s.retransmits;
    if (!s.error.empty() && report->error.empty()) report->error = s.error;
  }
  report->seconds = seconds;
  Reply(clock(), fd.get(), reply);
}

}  // namespace rocenet::diag
