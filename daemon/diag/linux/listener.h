// SPDX-License-Identifier: Apache-2.0
// DataListener: the daemon's data port, listening on the addresses of the
// scale-out ports only (never on 0.0.0.0), following them as they change.
//
// One thread polls the listening sockets; each accepted connection is
// handed to `handler` on a thread of its own (at most kMaxConnections at
// once; more are closed at once). SetAddresses() may be called from any
// thread; an address that cannot be bound yet (the kernel has not finished
// adding it) is retried every second. Stop() closes everything, shuts the
// open connections down so handlers return, and joins every thread.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "daemon/common/ipv4.h"
#include "daemon/os/linux/tcp_socket.h"

namespace rocenet::diag {

class DataListener {
 public:
  static constexpr int kMaxConnections = 64;
  using Handler = std::function<void(os::Fd connection)>;

  DataListener(uint16_t port, Handler handler);
  ~DataListener();

  absl::Status Start();
  void SetAddresses(std::set<Ipv4Address> addresses);
  void Stop();

  // The addresses listened on now.
  std::set<Ipv4Address> Bound() const;

 private:
  struct Connection {
    int fd = -1;
    bool done = false;
    std::thread thread;
  };
  void Run();
  void Rebind();
  void Accept(int listen_fd);
  void ReapDone();

  const uint16_t port_;
  Handler handler_;
  os::Wakeup wake_;
  std::thread thread_;
  mutable absl::Mutex mu_;
  std::set<Ipv4Address> wanted_ ABSL_GUARDED_BY(mu_);
  std::map<Ipv4Address, os::Fd> listening_ ABSL_GUARDED_BY(mu_);
  std::list<std::unique_ptr<Connection>> connections_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace rocenet::diag
