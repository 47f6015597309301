// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/linux/ring.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "daemon/common/errno_status.h"
#include "daemon/diag/stats.h"

namespace rocenet::diag {
namespace {

struct ExchangeError {
  absl::Status status;
  const char* link = "";  // "in" or "out"
};

// Sends `out` to the next rank while receiving `in` from the previous one,
// so neither side can block the ring on a full socket buffer.
ExchangeError Exchange(int next, const char* out, size_t out_size, int prev, char* in,
                       size_t in_size, absl::Time deadline, int cancel_fd) {
  while (out_size > 0 || in_size > 0) {
    pollfd fds[3] = {{out_size > 0 ? next : -1, POLLOUT, 0},
                     {in_size > 0 ? prev : -1, POLLIN, 0},
                     {cancel_fd, POLLIN, 0}};
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return {absl::DeadlineExceededError("timed out"), in_size > 0 ? "in" : "out"};
    }
    const int ms = static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 500));
    if (poll(fds, 3, ms) < 0 && errno != EINTR) {
      return {ErrnoToStatus(errno, "poll"), "in"};
    }
    if (fds[2].revents != 0) return {absl::CancelledError("cancelled by the coordinator"), ""};
    if (fds[0].revents != 0) {
      const ssize_t n = send(next, out, out_size, MSG_NOSIGNAL);
      if (n > 0) {
        out += n;
        out_size -= static_cast<size_t>(n);
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        return {absl::UnavailableError(ErrnoMessage(errno, "send")), "out"};
      }
    }
    if (fds[1].revents != 0) {
      const ssize_t n = recv(prev, in, in_size, 0);
      if (n > 0) {
        in += n;
        in_size -= static_cast<size_t>(n);
      } else if (n == 0) {
        return {absl::UnavailableError("the previous rank closed the connection"), "in"};
      } else if (errno != EAGAIN && errno != EINTR) {
        return {absl::UnavailableError(ErrnoMessage(errno, "recv")), "in"};
      }
    }
  }
  return {absl::OkStatus(), ""};
}

}  // namespace

peer::v1::RingReport RunRingRank(const peer::v1::RingJoin& join, const LocalPort& port,
                           const std::function<Fd(absl::Time deadline)>& await_prev,
                           int cancel_fd, const PeerCredentials& credentials) {
  peer::v1::RingReport report;
  report.set_port(port.name);
  const absl::Time deadline = absl::Now() + absl::Milliseconds(join.timeout_ms());
  const int ranks = static_cast<int>(join.ranks());
  const int rank = static_cast<int>(join.rank());
  auto fail = [&](const absl::Status& s, const std::string& link, const std::string& what) {
    report.set_error(absl::StrCat(what, ": ", s.message()));
    report.set_failed_link(link);
    return report;
  };

  absl::StatusOr<Ipv4Address> next_address = Ipv4Address::Parse(join.next_address());
  if (!next_address.ok()) return fail(next_address.status(), "out", "next_address");
  // The next rank may not listen on its address yet: retry refusals.
  absl::StatusOr<Fd> next = absl::UnavailableError("not tried");
  while (absl::Now() < deadline) {
    next = ConnectTcp(&port, *next_address, static_cast<uint16_t>(join.next_data_port()),
                      std::min(deadline, absl::Now() + absl::Seconds(2)));
    if (next.ok() || !absl::IsUnavailable(next.status())) break;
    if (WaitFd(cancel_fd, false, absl::Now() + absl::Milliseconds(100)).ok()) {
      return fail(absl::CancelledError("cancelled by the coordinator"), "", "connect");
    }
  }
  if (!next.ok()) return fail(next.status(), "out", "to the next rank");
  peer::v1::PeerRequest hello;
  hello.mutable_ring_hello()->set_session(join.session());
  hello.mutable_ring_hello()->set_rail(join.rail());
  hello.mutable_ring_hello()->set_from_rank(join.rank());
  if (absl::Status s = WriteRequest(next->get(), credentials, hello, *next_address,
                                    static_cast<uint16_t>(join.next_data_port()), deadline);
      !s.ok()) {
    return fail(s, "out", "to the next rank");
  }
  Fd prev = await_prev(deadline);
  if (!prev.valid()) {
    return fail(absl::DeadlineExceededError("no connection within the time bound"), "in",
                "from the previous rank");
  }

  // Link probe: every rank sends probe_bytes to the next at once; the rate
  // is measured from the first byte received to the last.
  {
    std::vector<char> out(join.probe_bytes(), 'p');
    std::vector<char> in(join.probe_bytes());
    // One byte first, to start the clock on arrival rather than on waiting.
    ExchangeError e =
        Exchange(next->get(), out.data(), 1, prev.get(), in.data(), 1, deadline, cancel_fd);
    if (!e.status.ok()) return fail(e.status, e.link, "link probe");
    const double start = MonotonicSeconds();
    e = Exchange(next->get(), out.data() + 1, out.size() - 1, prev.get(), in.data() + 1,
                 in.size() - 1, deadline, cancel_fd);
    if (!e.status.ok()) return fail(e.status, e.link, "link probe");
    report.set_in_bits_per_second(BitsPerSecond(in.size() - 1, MonotonicSeconds() - start));
  }

  bool verified = true;
  const std::vector<RingStep> schedule = RingSchedule(ranks, rank);
  const float expected = static_cast<float>(ranks * (ranks + 1) / 2);
  for (uint64_t size : join.sizes()) {
    const size_t count = std::max<size_t>(1, size / sizeof(float));
    std::vector<float> data(count);
    std::vector<float> scratch(count / ranks + 1);
    double total = 0;
    for (uint32_t it = 0; it <= join.iterations(); ++it) {  // iteration 0 warms up
      std::fill(data.begin(), data.end(), static_cast<float>(rank + 1));
      const double start = MonotonicSeconds();
      for (const RingStep& step : schedule) {
        const ChunkRange out = Chunk(count, ranks, step.send);
        const ChunkRange in = Chunk(count, ranks, step.receive);
        float* target = step.reduce ? scratch.data() : data.data() + in.begin;
        ExchangeError e =
            Exchange(next->get(), reinterpret_cast<const char*>(data.data() + out.begin),
                     out.size() * sizeof(float), prev.get(), reinterpret_cast<char*>(target),
                     in.size() * sizeof(float), deadline, cancel_fd);
        if (!e.status.ok()) {
          return fail(e.status, e.link, absl::StrCat("all-reduce of ", size, " bytes"));
        }
        if (step.reduce) {
          for (size_t i = 0; i < in.size(); ++i) data[in.begin + i] += scratch[i];
        }
      }
      if (it > 0) total += MonotonicSeconds() - start;
    }
    for (float v : data) {
      if (v != expected) {
        verified = false;
        break;
      }
    }
    report.add_seconds(total / join.iterations());
  }
  report.set_verified(verified);
  return report;
}

}  // namespace rocenet::diag
