// SPDX-License-Identifier: Apache-2.0
// Reactor: how domain modules get called when a file descriptor they own
// becomes readable, without knowing about the event loop behind it.
//
// The daemon's EventLoop implements it; every callback runs on the loop
// thread, and the methods may only be called from that thread.
#pragma once

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"

namespace rocenet::os {

class Reactor {
 public:
  virtual ~Reactor() = default;

  // Calls `on_readable` whenever `fd` is readable, until RemoveReader. The
  // reactor does not own `fd`; remove it before closing it.
  virtual absl::Status AddReader(int fd, absl::AnyInvocable<void()> on_readable) = 0;
  virtual void RemoveReader(int fd) = 0;
};

}  // namespace rocenet::os
