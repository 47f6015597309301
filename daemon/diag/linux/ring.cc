// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/linux/ring.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/diag/stats.h"

namespace rocenet::diag {

peer::RingReport RunRingRank(const peer::RingJoin& join, const LocalPort& port,
                             const std::function<Fd(absl::Time deadline)>& await_prev,
                             int cancel_fd, const PeerCredentials& credentials) {
  const os::Clock& clock = credentials.clock();
  peer::RingReport report;
  report.port = port.name;
  const absl::Time deadline = clock.Now() + absl::Milliseconds(join.timeout_ms);
  const int ranks = static_cast<int>(join.ranks);
  const int rank = static_cast<int>(join.rank);
  auto fail = [&](const absl::Status& s, const std::string& link, const std::string& what) {
    report.error = absl::StrCat(what, ": ", s.message());
    report.failed_link = link;
    return report;
  };

  absl::StatusOr<Ipv4Address> next_address = Ipv4Address::Parse(join.next_address);
  if (!next_address.ok()) return fail(next_address.status(), "out", "next_address");
  // The next rank may not listen on its address yet: retry refusals.
  absl::StatusOr<Fd> next = absl::UnavailableError("not tried");
  const os::TcpSource source{.device = port.name, .address = port.address.address()};
  while (clock.Now() < deadline) {
    next = os::ConnectTcp(clock, &source, *next_address, static_cast<uint16_t>(join.next_data_port),
                          std::min(deadline, clock.Now() + absl::Seconds(2)));
    if (next.ok() || !absl::IsUnavailable(next.status())) break;
    if (os::WaitFd(clock, cancel_fd, false, clock.Now() + absl::Milliseconds(100)).ok()) {
      return fail(absl::CancelledError("cancelled by the coordinator"), "", "connect");
    }
  }
  if (!next.ok()) return fail(next.status(), "out", "to the next rank");
  const peer::PeerRequest hello{
      .kind = peer::RingHello{.session = join.session, .rail = join.rail, .from_rank = join.rank}};
  if (absl::Status s = WriteRequest(next->get(), credentials, hello, *next_address,
                                    static_cast<uint16_t>(join.next_data_port), deadline);
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
    std::vector<char> out(join.probe_bytes, 'p');
    std::vector<char> in(join.probe_bytes);
    // One byte first, to start the clock on arrival rather than on waiting.
    os::ExchangeResult e = os::Exchange(clock, next->get(), out.data(), 1, prev.get(), in.data(), 1,
                                        deadline, cancel_fd);
    if (!e.status.ok()) return fail(e.status, e.side, "link probe");
    const absl::Time start = clock.Now();
    e = os::Exchange(clock, next->get(), out.data() + 1, out.size() - 1, prev.get(), in.data() + 1,
                     in.size() - 1, deadline, cancel_fd);
    if (!e.status.ok()) return fail(e.status, e.side, "link probe");
    report.in_bits_per_second =
        BitsPerSecond(in.size() - 1, absl::ToDoubleSeconds(clock.Now() - start));
  }

  bool verified = true;
  const std::vector<RingStep> schedule = RingSchedule(ranks, rank);
  const float expected = static_cast<float>(ranks * (ranks + 1) / 2);
  for (uint64_t size : join.sizes) {
    const size_t count = std::max<size_t>(1, size / sizeof(float));
    std::vector<float> data(count);
    std::vector<float> scratch(count / ranks + 1);
    double total = 0;
    for (uint32_t it = 0; it <= join.iterations; ++it) {  // iteration 0 warms up
      std::fill(data.begin(), data.end(), static_cast<float>(rank + 1));
      const absl::Time start = clock.Now();
      for (const RingStep& step : schedule) {
        const ChunkRange out = Chunk(count, ranks, step.send);
        const ChunkRange in = Chunk(count, ranks, step.receive);
        float* target = step.reduce ? scratch.data() : data.data() + in.begin;
        const os::ExchangeResult e =
            os::Exchange(clock, next->get(), reinterpret_cast<const char*>(data.data() + out.begin),
                         out.size() * sizeof(float), prev.get(), reinterpret_cast<char*>(target),
                         in.size() * sizeof(float), deadline, cancel_fd);
        if (!e.status.ok()) {
          return fail(e.status, e.side, absl::StrCat("all-reduce of ", size, " bytes"));
        }
        if (step.reduce) {
          for (size_t i = 0; i < in.size(); ++i) data[in.begin + i] += scratch[i];
        }
      }
      if (it > 0) total += absl::ToDoubleSeconds(clock.Now() - start);
    }
    for (float v : data) {
      if (v != expected) {
        verified = false;
        break;
      }
    }
    report.seconds.push_back(total / join.iterations);
  }
  report.verified = verified;
  return report;
}

}  // namespace rocenet::diag
