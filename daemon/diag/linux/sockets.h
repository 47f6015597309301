// SPDX-License-Identifier: Apache-2.0
// The socket operations of the diagnostics: TCP connections bound to a
// scale-out port, reads and writes with a deadline, the data port's frames
// (a 4-byte big-endian length, then a serialized message), TCP_INFO.
//
// These and the other files of daemon/diag/linux are the only diagnostics
// code that includes socket headers. Every call takes an absolute deadline
// and never blocks past it; errors name the peer and the step. Functions
// are thread-safe; a Fd is owned by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "daemon/common/ipv4.h"
#include "daemon/diag/local_port.h"
#include "google/protobuf/message_lite.h"

namespace rocenet::diag {

// Largest control frame accepted.
inline constexpr uint32_t kMaxFrameBytes = 1 << 20;

// An owned file descriptor, closed on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// A TCP connection to `address`:`port`, made non-blocking. With `from`, the
// socket is bound to that port's device (SO_BINDTODEVICE) and address, so
// the traffic takes that port whatever the routing table prefers (a port
// without a name is bound by address only: tests on loopback).
absl::StatusOr<Fd> ConnectTcp(const LocalPort* from, Ipv4Address address, uint16_t port,
                              absl::Time deadline);

// A non-blocking listening TCP socket on `address`:`port`.
absl::StatusOr<Fd> ListenTcp(Ipv4Address address, uint16_t port);

// The two ends of a connected TCP socket.
struct TcpEnds {
  Ipv4Address local;
  Ipv4Address peer;
};
absl::StatusOr<TcpEnds> EndsOf(int fd);

// Waits until `fd` is readable (or writable) or `deadline`; DeadlineExceeded
// then. `cancel_fd` (>= 0), when readable or hung up, aborts with Cancelled.
absl::Status WaitFd(int fd, bool write, absl::Time deadline, int cancel_fd = -1);

// Writes or reads exactly `size` bytes on a non-blocking socket.
absl::Status WriteAll(int fd, const void* data, size_t size, absl::Time deadline);
absl::Status ReadAll(int fd, void* data, size_t size, absl::Time deadline);

absl::Status WriteFrame(int fd, const google::protobuf::MessageLite& message, absl::Time deadline);
absl::Status ReadFrame(int fd, google::protobuf::MessageLite* message, absl::Time deadline);

// Total retransmitted segments of a TCP socket (TCP_INFO); 0 if unknown.
uint32_t TcpRetransmits(int fd);

// Seconds since an arbitrary fixed point (CLOCK_MONOTONIC).
double MonotonicSeconds();

}  // namespace rocenet::diag
