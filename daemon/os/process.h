// SPDX-License-Identifier: Apache-2.0
// ProcessRunner and Process: starting an external program (the RDMA
// benchmarks of the triage stage, perftest's ib_write_bw and Habana's
// perf_test) and collecting what it prints, behind one seam so the
// coordinator is unit-tested against a fake.
//
// Ownership: Start() hands the caller a Process that owns the child; the
// child never outlives it (the destructor kills and reaps it). A runner may
// be shared; it holds no per-child state.
//
// Thread-safety: ProcessRunner is thread-safe. A Process may be used from
// several threads at once: Stop() from one thread ends a Wait() or a
// WaitForOutput() blocked in another.
//
// Errors: Find() is NotFound naming the program and the search path;
// Start() names the program and the system's reason (errno). What the
// program itself reports (its exit code, stderr) is data in ProcessResult,
// not an error of the seam.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace rocenet::os {

// At most this much of each of stdout and stderr is kept (the first bytes);
// the rest is read and dropped so the child never blocks on a full pipe.
inline constexpr size_t kMaxProcessOutput = 1 << 20;

struct ProcessResult {
  int exit_code = 0;       // the exit status; 128+signal when killed by a signal
  bool timed_out = false;  // killed because the deadline passed
  std::string out;         // stdout, at most kMaxProcessOutput kept
  std::string err;         // stderr, likewise
};

// One started program.
class Process {
 public:
  virtual ~Process() = default;  // kills (SIGKILL) and reaps it if still running

  // Waits until it exits or `deadline` passes (then SIGTERM, 1 s later
  // SIGKILL), and returns what it printed. Call it once; a second call
  // returns the same result.
  virtual ProcessResult Wait(absl::Time deadline) = 0;

  // Asks it to stop now (SIGTERM, then SIGKILL after 1 s); a Wait() then
  // returns as soon as it has exited.
  virtual void Stop() = 0;

  // Blocks until `text` appears in its stdout or stderr, it exits, or
  // `deadline` passes: true only when the text appeared (for a server that
  // prints a line once it listens).
  virtual bool WaitForOutput(absl::string_view text, absl::Time deadline) = 0;
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;

  // The absolute path of `program` (a bare name, no '/') in the runner's
  // search path, or NotFound naming it and the path searched.
  virtual absl::StatusOr<std::string> Find(absl::string_view program) = 0;

  // Starts argv[0] (an absolute path) with `argv`: no shell, stdin
  // /dev/null, its own process group, an environment of PATH only. Errors
  // name the program and the errno reason.
  virtual absl::StatusOr<std::unique_ptr<Process>> Start(const std::vector<std::string>& argv) = 0;
};

}  // namespace rocenet::os
