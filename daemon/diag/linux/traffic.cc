// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/linux/traffic.h"

#include "absl/strings/str_cat.h"
#include "daemon/diag/linux/frames.h"
#include "daemon/diag/stats.h"

namespace rocenet::diag {
namespace {

void Fill(v1::StreamResult* result, uint64_t bytes, double seconds) {
  result->set_bytes(bytes);
  result->set_seconds(seconds);
  result->set_bits_per_second(BitsPerSecond(bytes, seconds));
}

double SecondsOf(const os::Drained& drained) {
  return drained.bytes == 0 ? 0 : absl::ToDoubleSeconds(drained.last - drained.first);
}

os::TcpSource SourceOf(const LocalPort& port) {
  return os::TcpSource{.device = port.name, .address = port.address.address()};
}

}  // namespace

v1::StreamResult SendStream(const LocalPort& from, Ipv4Address to, uint16_t port,
                            absl::Duration duration, const PeerCredentials& credentials) {
  const os::Clock& clock = credentials.clock();
  v1::StreamResult result;
  const absl::Time start = clock.Now();
  const absl::Time deadline = start + duration + kTrafficSlack;
  const os::TcpSource source = SourceOf(from);
  absl::StatusOr<Fd> fd = os::ConnectTcp(clock, &source, to, port, start + kTrafficSlack);
  if (!fd.ok()) {
    result.set_error(std::string(fd.status().message()));
    return result;
  }
  peer::v1::PeerRequest request;
  request.mutable_sink()->set_duration_ms(
      static_cast<uint32_t>(absl::ToInt64Milliseconds(duration)));
  if (absl::Status s = WriteRequest(fd->get(), credentials, request, to, port, deadline);
      !s.ok()) {
    result.set_error(absl::StrCat("to ", to.ToString(), ": ", s.message()));
    return result;
  }
  const absl::Status sent = os::StreamUntil(clock, fd->get(), clock.Now() + duration);
  peer::v1::PeerReply reply;
  absl::Status read = ReadMessage(clock, fd->get(), &reply, deadline);
  result.set_retransmits(os::TcpRetransmits(fd->get()));
  if (!read.ok() || !reply.error().empty()) {
    result.set_error(
        absl::StrCat("to ", to.ToString(), ": ",
                     !sent.ok() ? sent.message() : (read.ok() ? reply.error() : read.message())));
    return result;
  }
  Fill(&result, reply.sink().bytes(), reply.sink().seconds());
  if (!sent.ok()) result.set_error(absl::StrCat("to ", to.ToString(), ": ", sent.message()));
  return result;
}

v1::StreamResult ReceiveStream(const LocalPort& from, Ipv4Address to, uint16_t port,
                               absl::Duration duration, const PeerCredentials& credentials) {
  const os::Clock& clock = credentials.clock();
  v1::StreamResult result;
  const absl::Time start = clock.Now();
  const absl::Time deadline = start + duration + kTrafficSlack;
  const os::TcpSource source = SourceOf(from);
  absl::StatusOr<Fd> fd = os::ConnectTcp(clock, &source, to, port, start + kTrafficSlack);
  if (!fd.ok()) {
    result.set_error(std::string(fd.status().message()));
    return result;
  }
  peer::v1::PeerRequest request;
  request.mutable_source()->set_duration_ms(
      static_cast<uint32_t>(absl::ToInt64Milliseconds(duration)));
  if (absl::Status s = WriteRequest(fd->get(), credentials, request, to, port, deadline);
      !s.ok()) {
    result.set_error(absl::StrCat("to ", to.ToString(), ": ", s.message()));
    return result;
  }
  const os::Drained drained = os::DrainUntilClosed(clock, fd->get(), deadline);
  if (!drained.status.ok()) {
    result.set_error(absl::StrCat("from ", to.ToString(), ": ", drained.status.message()));
  }
  Fill(&result, drained.bytes, SecondsOf(drained));
  if (drained.bytes == 0 && result.error().empty()) {
    result.set_error(absl::StrCat("from ", to.ToString(), ": no data"));
  }
  return result;
}

void ServeSink(Fd fd, const peer::v1::SinkRequest& request, const os::Clock& clock) {
  const absl::Time deadline =
      clock.Now() + absl::Milliseconds(request.duration_ms()) + kTrafficSlack;
  const os::Drained drained = os::DrainUntilClosed(clock, fd.get(), deadline);
  if (!drained.status.ok()) return;  // the sender is gone
  peer::v1::PeerReply reply;
  reply.mutable_sink()->set_bytes(drained.bytes);
  reply.mutable_sink()->set_seconds(SecondsOf(drained));
  (void)WriteMessage(clock, fd.get(), reply, clock.Now() + kTrafficSlack).ok();
}

void ServeSource(Fd fd, const peer::v1::SourceRequest& request, const os::Clock& clock) {
  (void)os::StreamUntil(clock, fd.get(), clock.Now() + absl::Milliseconds(request.duration_ms()))
      .ok();
}

}  // namespace rocenet::diag
