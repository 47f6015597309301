// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/linux/sockets.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"

namespace rocenet::diag {
namespace {

sockaddr_in SockAddr(Ipv4Address address, uint16_t port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(address.value());
  return sa;
}

int PollMillis(absl::Time deadline) {
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1000));
}

}  // namespace

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

void Fd::reset(int fd) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
}

absl::Status WaitFd(int fd, bool write, absl::Time deadline, int cancel_fd) {
  for (;;) {
    pollfd fds[2] = {{fd, static_cast<short>(write ? POLLOUT : POLLIN), 0}, {cancel_fd, POLLIN, 0}};
    const int n = poll(fds, cancel_fd >= 0 ? 2 : 1, PollMillis(deadline));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoToStatus(errno, "poll");
    }
    if (cancel_fd >= 0 && fds[1].revents != 0) return absl::CancelledError("cancelled");
    if (fds[0].revents != 0) return absl::OkStatus();
    if (absl::Now() >= deadline) return absl::DeadlineExceededError("timed out");
  }
}

absl::StatusOr<Fd> ConnectTcp(const LocalPort* from, Ipv4Address address, uint16_t port,
                              absl::Time deadline) {
  const std::string peer = absl::StrCat(address.ToString(), ":", port);
  Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoToStatus(errno, "socket");
  const int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (from != nullptr) {
    if (!from->name.empty() && setsockopt(fd.get(), SOL_SOCKET, SO_BINDTODEVICE, from->name.c_str(),
                                          from->name.size()) < 0) {
      return ErrnoToStatus(errno, absl::StrCat("bind to device ", from->name));
    }
    const sockaddr_in local = SockAddr(from->address.address(), 0);
    if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&local), sizeof(local)) < 0) {
      return ErrnoToStatus(errno, absl::StrCat("bind to ", from->address.address().ToString()));
    }
  }
  const sockaddr_in sa = SockAddr(address, port);
  if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) < 0 &&
      errno != EINPROGRESS) {
    return ErrnoToStatus(errno, absl::StrCat("connect to ", peer));
  }
  if (absl::Status s = WaitFd(fd.get(), true, deadline); !s.ok()) {
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

absl::Status WriteAll(int fd, const void* data, size_t size, absl::Time deadline) {
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
      if (absl::Status s = WaitFd(fd, true, deadline); !s.ok()) return s;
      continue;
    }
    return ErrnoToStatus(errno, "send");
  }
  return absl::OkStatus();
}

absl::Status ReadAll(int fd, void* data, size_t size, absl::Time deadline) {
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
      if (absl::Status s = WaitFd(fd, false, deadline); !s.ok()) return s;
      continue;
    }
    return ErrnoToStatus(errno, "recv");
  }
  return absl::OkStatus();
}

absl::Status WriteFrame(int fd, const google::protobuf::MessageLite& message, absl::Time deadline) {
  std::string bytes;
  if (!message.SerializeToString(&bytes) || bytes.size() > kMaxFrameBytes) {
    return absl::InternalError("cannot serialize a data port frame");
  }
  const uint32_t length = htonl(static_cast<uint32_t>(bytes.size()));
  std::string frame(reinterpret_cast<const char*>(&length), sizeof(length));
  frame += bytes;
  return WriteAll(fd, frame.data(), frame.size(), deadline);
}

absl::Status ReadFrame(int fd, google::protobuf::MessageLite* message, absl::Time deadline) {
  uint32_t length = 0;
  if (absl::Status s = ReadAll(fd, &length, sizeof(length), deadline); !s.ok()) return s;
  length = ntohl(length);
  if (length > kMaxFrameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("frame of ", length, " bytes is above the limit of ", kMaxFrameBytes));
  }
  std::string bytes(length, '\0');
  if (absl::Status s = ReadAll(fd, bytes.data(), length, deadline); !s.ok()) return s;
  if (!message->ParseFromString(bytes)) return absl::InvalidArgumentError("malformed frame");
  return absl::OkStatus();
}

uint32_t TcpRetransmits(int fd) {
  tcp_info info{};
  socklen_t len = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) < 0) return 0;
  return info.tcpi_total_retrans;
}

double MonotonicSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace rocenet::diag
