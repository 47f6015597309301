// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/tcp_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"

namespace rocenet::os {
namespace {

constexpr size_t kStreamBufferBytes = 256 << 10;

sockaddr_in SockAddr(Ipv4Address address, uint16_t port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(address.value());
  return sa;
}

// Milliseconds for one poll() until `deadline`, at most `cap`.
int PollMillis(const Clock& clock, absl::Time deadline, absl::Duration cap) {
  const absl::Duration left = deadline - clock.Now();
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(
      std::min(absl::ToInt64Milliseconds(left) + 1, absl::ToInt64Milliseconds(cap)));
}

bool WouldBlock(int error) { return error == EAGAIN || error == EWOULDBLOCK || error == EINTR; }

}  // namespace

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

void Fd::reset(int fd) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
}

absl::Status WaitFd(const Clock& clock, int fd, bool write, absl::Time deadline, int cancel_fd) {
  for (;;) {
    pollfd fds[2] = {{fd, static_cast<short>(write ? POLLOUT : POLLIN), 0}, {cancel_fd, POLLIN, 0}};
    const int n = poll(fds, cancel_fd >= 0 ? 2 : 1, PollMillis(clock, deadline, absl::Seconds(1)));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoToStatus(errno, "poll");
    }
    if (cancel_fd >= 0 && fds[1].revents != 0) return absl::CancelledError("cancelled");
    if (fds[0].revents != 0) return absl::OkStatus();
    if (clock.Now() >= deadline) return absl::DeadlineExceededError("timed out");
  }
}

absl::StatusOr<std::vector<bool>> PollReadable(const std::vector<int>& fds,
                                               absl::Duration timeout) {
  std::vector<pollfd> polled;
  polled.reserve(fds.size());
  for (int fd : fds) polled.push_back({fd, POLLIN, 0});
  const int ms = static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(timeout)));
  std::vector<bool> readable(fds.size(), false);
  if (poll(polled.data(), polled.size(), ms) < 0) {
    if (errno == EINTR) return readable;
    return ErrnoToStatus(errno, "poll");
  }
  for (size_t i = 0; i < polled.size(); ++i) readable[i] = polled[i].revents != 0;
  return readable;
}

absl::StatusOr<Fd> ConnectTcp(const Clock& clock, const TcpSource* from, Ipv4Address address,
                              uint16_t port, absl::Time deadline) {
  const std::string peer = absl::StrCat(address.ToString(), ":", port);
  Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoToStatus(errno, "socket");
  const int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (from != nullptr) {
    if (!from->device.empty() && setsockopt(fd.get(), SOL_SOCKET, SO_BINDTODEVICE,
                                            from->device.c_str(), from->device.size()) < 0) {
      return ErrnoToStatus(errno, absl::StrCat("bind to device ", from->device));
    }
    const sockaddr_in local = SockAddr(from->address, 0);
    if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&local), sizeof(local)) < 0) {
      return ErrnoToStatus(errno, absl::StrCat("bind to ", from->address.ToString()));
    }
  }
  const sockaddr_in sa = SockAddr(address, port);
  if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) < 0 &&
      errno != EINPROGRESS) {
    return ErrnoToStatus(errno, absl::StrCat("connect to ", peer));
  }
  if (absl::Status s = WaitFd(clock, fd.get(), true, deadline); !s.ok()) {
    return absl::DeadlineExceededError(absl::StrCat("connect to ", peer, ": timed out"));
  }
  int err = 0;
  socklen_t len = sizeof(err);
  getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) return ErrnoToStatus(err, absl::StrCat("connect to ", peer));
  return fd;
}

absl::StatusOr<Fd> ListenTcp(Ipv4Address address, uint16_t port) {
  Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoToStatus(errno, "socket");
  const int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  const sockaddr_in sa = SockAddr(address, port);
  if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) < 0) {
    return ErrnoToStatus(errno, absl::StrCat("bind to ", address.ToString(), ":", port));
  }
  if (listen(fd.get(), 128) < 0) {
    return ErrnoToStatus(errno, absl::StrCat("listen on ", address.ToString(), ":", port));
  }
  return fd;
}

Fd AcceptTcp(int listen_fd) {
  return Fd(accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
}

absl::StatusOr<TcpEnds> EndsOf(int fd) {
  sockaddr_in local{}, peer{};
  socklen_t local_len = sizeof(local), peer_len = sizeof(peer);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) < 0) {
    return ErrnoToStatus(errno, "getsockname");
  }
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) < 0) {
    return ErrnoToStatus(errno, "getpeername");
  }
  if (local.sin_family != AF_INET || peer.sin_family != AF_INET) {
    return absl::InvalidArgumentError("not an IPv4 connection");
  }
  return TcpEnds{.local = Ipv4Address(ntohl(local.sin_addr.s_addr)),
                 .peer = Ipv4Address(ntohl(peer.sin_addr.s_addr))};
}

absl::Status WriteAll(const Clock& clock, int fd, const void* data, size_t size,
                      absl::Time deadline) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = send(fd, p, size, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (absl::Status s = WaitFd(clock, fd, true, deadline); !s.ok()) return s;
      continue;
    }
    return ErrnoToStatus(errno, "send");
  }
  return absl::OkStatus();
}

absl::Status ReadAll(const Clock& clock, int fd, void* data, size_t size, absl::Time deadline) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = recv(fd, p, size, 0);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return absl::UnavailableError("connection closed by the peer");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (absl::Status s = WaitFd(clock, fd, false, deadline); !s.ok()) return s;
      continue;
    }
    return ErrnoToStatus(errno, "recv");
  }
  return absl::OkStatus();
}

absl::Status WriteFrame(const Clock& clock, int fd, absl::string_view payload,
                        absl::Time deadline) {
  if (payload.size() > kMaxFrameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("frame of ", payload.size(), " bytes is above the limit of ", kMaxFrameBytes));
  }
  const uint32_t length = htonl(static_cast<uint32_t>(payload.size()));
  std::string frame(reinterpret_cast<const char*>(&length), sizeof(length));
  frame.append(payload.data(), payload.size());
  return WriteAll(clock, fd, frame.data(), frame.size(), deadline);
}

absl::StatusOr<std::string> ReadFrame(const Clock& clock, int fd, absl::Time deadline) {
  uint32_t length = 0;
  if (absl::Status s = ReadAll(clock, fd, &length, sizeof(length), deadline); !s.ok()) return s;
  length = ntohl(length);
  if (length > kMaxFrameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("frame of ", length, " bytes is above the limit of ", kMaxFrameBytes));
  }
  std::string payload(length, '\0');
  if (absl::Status s = ReadAll(clock, fd, payload.data(), length, deadline); !s.ok()) return s;
  return payload;
}

absl::Status StreamUntil(const Clock& clock, int fd, absl::Time stop) {
  const std::string filler(kStreamBufferBytes, 's');
  absl::Status status;
  while (clock.Now() < stop) {
    const ssize_t n = send(fd, filler.data(), filler.size(), MSG_NOSIGNAL);
    if (n > 0) continue;
    if (n < 0 && WouldBlock(errno)) {
      absl::Status s = WaitFd(clock, fd, true, stop);
      if (s.ok() || absl::IsDeadlineExceeded(s)) continue;
      status = s;
      break;
    }
    status = absl::UnavailableError(ErrnoMessage(errno, "send"));
    break;
  }
  ShutdownWrite(fd);
  return status;
}

Drained DrainUntilClosed(const Clock& clock, int fd, absl::Time deadline) {
  Drained out;
  std::string buffer(kStreamBufferBytes, '\0');
  for (;;) {
    const ssize_t n = recv(fd, buffer.data(), buffer.size(), 0);
    if (n > 0) {
      out.last = clock.Now();
      if (out.bytes == 0) out.first = out.last;
      out.bytes += static_cast<uint64_t>(n);
      continue;
    }
    if (n == 0) return out;
    if (WouldBlock(errno)) {
      if (absl::Status s = WaitFd(clock, fd, false, deadline); !s.ok()) {
        out.status = s;
        return out;
      }
      continue;
    }
    out.status = absl::UnavailableError(ErrnoMessage(errno, "recv"));
    return out;
  }
}

ExchangeResult Exchange(const Clock& clock, int next, const char* out, size_t out_size, int prev,
                        char* in, size_t in_size, absl::Time deadline, int cancel_fd) {
  while (out_size > 0 || in_size > 0) {
    pollfd fds[3] = {{out_size > 0 ? next : -1, POLLOUT, 0},
                     {in_size > 0 ? prev : -1, POLLIN, 0},
                     {cancel_fd, POLLIN, 0}};
    if (clock.Now() >= deadline) {
      return {absl::DeadlineExceededError("timed out"), in_size > 0 ? "in" : "out"};
    }
    if (poll(fds, 3, PollMillis(clock, deadline, absl::Milliseconds(500))) < 0 && errno != EINTR) {
      return {ErrnoToStatus(errno, "poll"), "in"};
    }
    if (fds[2].revents != 0) return {absl::CancelledError("cancelled by the coordinator"), ""};
    if (fds[0].revents != 0) {
      const ssize_t n = send(next, out, out_size, MSG_NOSIGNAL);
      if (n > 0) {
        out += n;
        out_size -= static_cast<size_t>(n);
      } else if (n < 0 && !WouldBlock(errno)) {
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
      } else if (!WouldBlock(errno)) {
        return {absl::UnavailableError(ErrnoMessage(errno, "recv")), "in"};
      }
    }
  }
  return {absl::OkStatus(), ""};
}

void ShutdownWrite(int fd) { shutdown(fd, SHUT_WR); }

void ShutdownBoth(int fd) { shutdown(fd, SHUT_RDWR); }

uint32_t TcpRetransmits(int fd) {
  tcp_info info{};
  socklen_t len = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) < 0) return 0;
  return info.tcpi_total_retrans;
}

absl::Status Wakeup::Open() {
  fd_.reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!fd_.valid()) return ErrnoToStatus(errno, "eventfd");
  return absl::OkStatus();
}

void Wakeup::Signal() {
  const uint64_t one = 1;
  if (fd_.valid()) (void)!write(fd_.get(), &one, sizeof(one));
}

void Wakeup::Clear() {
  uint64_t value = 0;
  if (fd_.valid()) (void)!read(fd_.get(), &value, sizeof(value));
}

}  // namespace rocenet::os
