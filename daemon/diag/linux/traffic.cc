// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/linux/traffic.h"

#include <sys/socket.h>

#include <cerrno>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "daemon/common/errno_status.h"
#include "daemon/diag/stats.h"

namespace rocenet::diag {
namespace {

constexpr size_t kBufferBytes = 256 << 10;

void Fill(v1::StreamResult* result, uint64_t bytes, double seconds) {
  result->set_bytes(bytes);
  result->set_seconds(seconds);
  result->set_bits_per_second(BitsPerSecond(bytes, seconds));
}

}  // namespace

v1::StreamResult SendStream(const LocalPort& from, Ipv4Address to, uint16_t port,
                            absl::Duration duration, const PeerCredentials& credentials) {
  v1::StreamResult result;
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + duration + kTrafficSlack;
  absl::StatusOr<Fd> fd = ConnectTcp(&from, to, port, start + kTrafficSlack);
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
  std::vector<char> buffer(kBufferBytes, 'r');
  const absl::Time stop = absl::Now() + duration;
  absl::Status sent = absl::OkStatus();
  while (absl::Now() < stop) {
    const ssize_t n = send(fd->get(), buffer.data(), buffer.size(), MSG_NOSIGNAL);
    if (n > 0) continue;
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      absl::Status s = WaitFd(fd->get(), true, stop);
      if (s.ok() || absl::IsDeadlineExceeded(s)) continue;
      sent = s;
      break;
    }
    sent = absl::UnavailableError(ErrnoMessage(errno, "send"));
    break;
  }
  shutdown(fd->get(), SHUT_WR);
  peer::v1::PeerReply reply;
  absl::Status read = ReadFrame(fd->get(), &reply, deadline);
  result.set_retransmits(TcpRetransmits(fd->get()));
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
  v1::StreamResult result;
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + duration + kTrafficSlack;
  absl::StatusOr<Fd> fd = ConnectTcp(&from, to, port, start + kTrafficSlack);
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
  std::vector<char> buffer(kBufferBytes);
  uint64_t bytes = 0;
  double first = 0, last = 0;
  for (;;) {
    const ssize_t n = recv(fd->get(), buffer.data(), buffer.size(), 0);
    if (n > 0) {
      last = MonotonicSeconds();
      if (bytes == 0) first = last;
      bytes += static_cast<uint64_t>(n);
      continue;
    }
    if (n == 0) break;
    if (errno == EAGAIN || errno == EINTR) {
      if (absl::Status s = WaitFd(fd->get(), false, deadline); !s.ok()) {
        result.set_error(absl::StrCat("from ", to.ToString(), ": ", s.message()));
        break;
      }
      continue;
    }
    result.set_error(ErrnoMessage(errno, absl::StrCat("from ", to.ToString(), ": recv")));
    break;
  }
  Fill(&result, bytes, last - first);
  if (bytes == 0 && result.error().empty()) {
    result.set_error(absl::StrCat("from ", to.ToString(), ": no data"));
  }
  return result;
}

void ServeSink(Fd fd, const peer::v1::SinkRequest& request) {
  const absl::Time deadline =
      absl::Now() + absl::Milliseconds(request.duration_ms()) + kTrafficSlack;
  std::vector<char> buffer(kBufferBytes);
  uint64_t bytes = 0;
  double first = 0, last = 0;
  for (;;) {
    const ssize_t n = recv(fd.get(), buffer.data(), buffer.size(), 0);
    if (n > 0) {
      last = MonotonicSeconds();
      if (bytes == 0) first = last;
      bytes += static_cast<uint64_t>(n);
      continue;
    }
    if (n == 0) break;
    if (errno == EAGAIN || errno == EINTR) {
      if (!WaitFd(fd.get(), false, deadline).ok()) return;  // the sender is gone
      continue;
    }
    return;
  }
  peer::v1::PeerReply reply;
  reply.mutable_sink()->set_bytes(bytes);
  reply.mutable_sink()->set_seconds(last - first);
  (void)WriteFrame(fd.get(), reply, absl::Now() + kTrafficSlack).ok();
}

void ServeSource(Fd fd, const peer::v1::SourceRequest& request) {
  std::vector<char> buffer(kBufferBytes, 's');
  const absl::Time stop = absl::Now() + absl::Milliseconds(request.duration_ms());
  while (absl::Now() < stop) {
    const ssize_t n = send(fd.get(), buffer.data(), buffer.size(), MSG_NOSIGNAL);
    if (n > 0) continue;
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      absl::Status s = WaitFd(fd.get(), true, stop);
      if (s.ok() || absl::IsDeadlineExceeded(s)) continue;
    }
    return;
  }
  shutdown(fd.get(), SHUT_WR);
}

}  // namespace rocenet::diag
