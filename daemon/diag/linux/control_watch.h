// SPDX-License-Identifier: Apache-2.0
// ControlWatch: a data port handler's ear on the coordinator while it runs
// its part of a test (the senders of an incast, the client of an RDMA
// link). The coordinator sends nothing more after its request: the
// connection turning readable means it half-closed it (it stopped the run,
// or it went away), and the handler's `stop` group is abandoned, which ends
// its streams and programs at once.
//
// One thread from construction to destruction; the destructor wakes and
// joins it. Not copyable.
#pragma once

#include <thread>

#include "daemon/diag/peers.h"
#include "daemon/os/clock.h"
#include "daemon/os/linux/tcp_socket.h"

namespace rocenet::diag {

class ControlWatch {
 public:
  // `control_fd` and `stop` are borrowed and must outlive the watch.
  ControlWatch(const os::Clock& clock, int control_fd, CallGroup* stop);
  ~ControlWatch();
  ControlWatch(const ControlWatch&) = delete;
  ControlWatch& operator=(const ControlWatch&) = delete;

 private:
  os::Wakeup wakeup_;
  std::thread thread_;
};

}  // namespace rocenet::diag
