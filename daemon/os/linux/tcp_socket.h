// SPDX-License-Identifier: Apache-2.0
// TCP over real sockets for the diagnostics' data port: connections bound to
// a scale-out port, reads and writes with a deadline, length-prefixed frames
// (a 4-byte big-endian length, then the payload), timed streams, the ring's
// simultaneous send and receive, TCP_INFO, and a wake-up descriptor.
//
// Every call that waits takes an absolute deadline on `clock` (the caller's
// one clock) and never blocks past it; errors name the step and the peer.
// Functions are thread-safe; an Fd is owned by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "daemon/common/ipv4.h"
#include "daemon/os/clock.h"

namespace rocenet::os {

// Largest frame accepted.
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

// Where a connection leaves from: the port's device (SO_BINDTODEVICE, so
// the traffic takes that port whatever the routing table prefers) and its
// address. An empty device binds by address only (tests on loopback).
struct TcpSource {
  std::string device;
  Ipv4Address address;
};

// A non-blocking TCP connection to `address`:`port`, from `from` when given.
absl::StatusOr<Fd> ConnectTcp(const Clock& clock, const TcpSource* from, Ipv4Address address,
                              uint16_t port, absl::Time deadline);

// A non-blocking listening TCP socket on `address`:`port`.
absl::StatusOr<Fd> ListenTcp(Ipv4Address address, uint16_t port);

// The next queued connection of a listening socket, non-blocking; an
// invalid Fd when none is queued.
Fd AcceptTcp(int listen_fd);

// The two ends of a connected TCP socket.
struct TcpEnds {
  Ipv4Address local;
  Ipv4Address peer;
};
absl::StatusOr<TcpEnds> EndsOf(int fd);

// Waits until `fd` is readable (or writable) or `deadline`; DeadlineExceeded
// then. `cancel_fd` (>= 0), when readable or hung up, aborts with Cancelled.
absl::Status WaitFd(const Clock& clock, int fd, bool write, absl::Time deadline,
                    int cancel_fd = -1);

// Which of `fds` are readable, waiting at most `timeout` for one to be.
absl::StatusOr<std::vector<bool>> PollReadable(const std::vector<int>& fds, absl::Duration timeout);

// Writes or reads exactly `size` bytes on a non-blocking socket.
absl::Status WriteAll(const Clock& clock, int fd, const void* data, size_t size,
                      absl::Time deadline);
absl::Status ReadAll(const Clock& clock, int fd, void* data, size_t size, absl::Time deadline);

// One frame: `payload` after its length (at most kMaxFrameBytes).
absl::Status WriteFrame(const Clock& clock, int fd, absl::string_view payload, absl::Time deadline);
absl::StatusOr<std::string> ReadFrame(const Clock& clock, int fd, absl::Time deadline);

// Sends filler until `stop`, then half-closes. An error ends it early.
absl::Status StreamUntil(const Clock& clock, int fd, absl::Time stop);

// Reads until the peer half-closes (or `deadline`, or an error, which
// `status` carries): how many bytes came and when the first and the last did.
struct Drained {
  uint64_t bytes = 0;
  absl::Time first = absl::InfinitePast();
  absl::Time last = absl::InfinitePast();
  absl::Status status;
};
Drained DrainUntilClosed(const Clock& clock, int fd, absl::Time deadline);

// Sends `out` on `next` while receiving `in` on `prev`, so neither side of a
// ring can block it on a full socket buffer. `cancel_fd` (>= 0) aborts with
// Cancelled. On an error, `side` says which link it was on ("in"/"out").
struct ExchangeResult {
  absl::Status status;
  const char* side = "";
};
ExchangeResult Exchange(const Clock& clock, int next, const char* out, size_t out_size, int prev,
                        char* in, size_t in_size, absl::Time deadline, int cancel_fd);

// Shuts the writing half (the peer reads end of stream) or both halves (a
// thread blocked on the socket returns).
void ShutdownWrite(int fd);
void ShutdownBoth(int fd);

// Total retransmitted segments of a TCP socket (TCP_INFO); 0 if unknown.
uint32_t TcpRetransmits(int fd);

// A descriptor another thread makes readable to wake a poller (eventfd).
class Wakeup {
 public:
  absl::Status Open();
  int fd() const { return fd_.get(); }
  void Signal();
  // Reads the pending wake-ups so the descriptor is quiet again.
  void Clear();

 private:
  Fd fd_;
};

}  // namespace rocenet::os
