// SPDX-License-Identifier: Apache-2.0
// Signals delivered as a readable file descriptor (signalfd), so the event
// loop handles them like any other event.
#pragma once

#include <csignal>
#include <initializer_list>

#include "absl/status/statusor.h"

namespace rocenet::os {

// Blocks `signals` in the calling thread; threads started afterwards inherit
// the mask. Call from main before any thread starts.
absl::Status BlockSignals(std::initializer_list<int> signals);

// A non-blocking signalfd for `signals` (which must be blocked). The caller
// owns the descriptor.
absl::StatusOr<int> OpenSignalFd(std::initializer_list<int> signals);

// Reads one pending signal from the descriptor; 0 when none is pending.
int ReadSignal(int fd);

}  // namespace rocenet::os
