// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/linux/traffic.h"

#include "absl/strings/str_cat.h"
#include "daemon/diag/linux/frames.h"
#include "daemon/diag/stats.h"

namespace rocenet::diag {
namespace {

void Fill(StreamResult* result, uint64_t bytes, double seconds) {
  result->bytes = bytes;
  result->seconds = seconds;
  result->bits_per_second = BitsPerSecond(bytes, seconds);
}

double SecondsOf(const os::Drained& drained) {
  return drained.bytes == 0 ? 0 : absl::ToDoubleSeconds(drained.last - drained.first);
}

os::TcpSource SourceOf(const LocalPort& port) {
  return os::TcpSource{.device = port.name, .address = port.address.address()};
}

// A stream's membership of its run's stop scope: stopped, the socket is
// shut down both ways, which ends the stream's loop and tells the far end.
class StreamStop {
 public:
  StreamStop(CallGroup* stop, int fd) : stop_(stop) {
    if (stop_ != nullptr) id_ = stop_->Join([fd] { os::ShutdownBoth(fd); });
  }
  ~StreamStop() {
    if (stop_ != nullptr) stop_->Leave(id_);
  }
  StreamStop(const StreamStop&) = delete;
  StreamStop& operator=(const StreamStop&) = delete;

 private:
  CallGroup* const stop_;
  int id_ = -1;
};

}  // namespace

StreamResult SendStream(const LocalPort& from, Ipv4Address to, uint16_t port,
                        absl::Duration duration, const PeerCredentials& credentials,
                        CallGroup* stop) {
  const os::Clock& clock = credentials.clock();
  StreamResult result;
  const absl::Time start = clock.Now();
  const absl::Time deadline = start + duration + kTrafficSlack;
  const os::TcpSource source = SourceOf(from);
  absl::StatusOr<Fd> fd = os::ConnectTcp(clock, &source, to, port, start + kTrafficSlack);
  if (!fd.ok()) {
    result.error = std::string(fd.status().message());
    return result;
  }
  const StreamStop member(stop, fd->get());
  const peer::PeerRequest request{
      .kind = peer::SinkRequest{.duration_ms =
                                    static_cast<uint32_t>(absl::ToInt64Milliseconds(duration))}};
  if (absl::Status s = WriteRequest(fd->get(), credentials, request, to, port, deadline); !s.ok()) {
    result.error = absl::StrCat("to ", to.ToString(), ": ", s.message());
    return result;
  }
  const absl::Status sent = os::StreamUntil(clock, fd->get(), clock.Now() + duration);
  const absl::StatusOr<peer::PeerReply> reply = ReadReply(clock, fd->get(), deadline);
  result.retransmits = os::TcpRetransmits(fd->get());
  if (!reply.ok() || !reply->error.empty()) {
    result.error = absl::StrCat(
        "to ", to.ToString(), ": ",
        !sent.ok() ? sent.message()
                   : (reply.ok() ? absl::string_view(reply->error) : reply.status().message()));
    return result;
  }
  Fill(&result, reply->sink.bytes, reply->sink.seconds);
  if (!sent.ok()) result.error = absl::StrCat("to ", to.ToString(), ": ", sent.message());
  return result;
}

StreamResult ReceiveStream(const LocalPort& from, Ipv4Address to, uint16_t port,
                           absl::Duration duration, const PeerCredentials& credentials,
                           CallGroup* stop) {
  const os::Clock& clock = credentials.clock();
  StreamResult result;
  const absl::Time start = clock.Now();
  const absl::Time deadline = start + duration + kTrafficSlack;
  const os::TcpSource source = SourceOf(from);
  absl::StatusOr<Fd> fd = os::ConnectTcp(clock, &source, to, port, start + kTrafficSlack);
  if (!fd.ok()) {
    result.error = std::string(fd.status().message());
    return result;
  }
  const StreamStop member(stop, fd->get());
  const peer::PeerRequest request{
      .kind = peer::SourceRequest{.duration_ms =
                                      static_cast<uint32_t>(absl::ToInt64Milliseconds(duration))}};
  if (absl::Status s = WriteRequest(fd->get(), credentials, request, to, port, deadline); !s.ok()) {
    result.error = absl::StrCat("to ", to.ToString(), ": ", s.message());
    return result;
  }
  const os::Drained drained = os::DrainUntilClosed(clock, fd->get(), deadline);
  if (!drained.status.ok()) {
    result.error = absl::StrCat("from ", to.ToString(), ": ", drained.status.message());
  }
  Fill(&result, drained.bytes, SecondsOf(drained));
  if (drained.bytes == 0 && result.error.empty()) {
    result.error = absl::StrCat("from ", to.ToString(), ": no data");
  }
  return result;
}

void ServeSink(Fd fd, const peer::SinkRequest& request, const os::Clock& clock) {
  const absl::Time deadline = clock.Now() + absl::Milliseconds(request.duration_ms) + kTrafficSlack;
  const os::Drained drained = os::DrainUntilClosed(clock, fd.get(), deadline);
  if (!drained.status.ok()) return;  // the sender is gone
  peer::PeerReply reply;
  reply.sink.bytes = drained.bytes;
  reply.sink.seconds = SecondsOf(drained);
  (void)WriteReply(clock, fd.get(), reply, clock.Now() + kTrafficSlack).ok();
}

void ServeSource(Fd fd, const peer::SourceRequest& request, const os::Clock& clock) {
  (void)os::StreamUntil(clock, fd.get(), clock.Now() + absl::Milliseconds(request.duration_ms))
      .ok();
}

}  // namespace rocenet::diag
