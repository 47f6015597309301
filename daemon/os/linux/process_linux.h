// SPDX-License-Identifier: Apache-2.0
// ProcessRunnerLinux: the ProcessRunner seam over posix_spawn.
//
// The child's stdout is a pseudo-terminal in raw mode (no echo, no "\r\n"
// translation), its stderr a pipe. The terminal is what makes
// Process::WaitForOutput useful: C programs (perftest's ib_write_bw among
// them) buffer stdout fully when it is a pipe, so the line a server prints
// once it listens would only arrive when it exits; on a terminal stdio
// flushes every line. The child gets its own process group (signals go to
// the whole group, so helpers it forks die with it), an emptied signal mask
// with default dispositions, stdin /dev/null, no descriptor of ours but 0-2,
// and PATH as its only environment variable.
//
// One thread per started process reads both streams, reaps the child (a
// pidfd tells when it exited) and carries out the SIGTERM-then-SIGKILL
// escalation. Thread-safe; errors as documented in daemon/os/process.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "daemon/os/process.h"

namespace rocenet::os {

class ProcessRunnerLinux final : public ProcessRunner {
 public:
  // Where Debian installs perftest (/usr/bin) and what a root shell searches
  // besides. Habana's habanalabs-perf-test package does not document where
  // it puts perf_test: add its directory through the constructor.
  static constexpr char kDefaultSearchPath[] =
      "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

  // `search_path`: directories separated by ':', searched in order by
  // Find() and given to children as PATH.
  explicit ProcessRunnerLinux(std::string search_path = kDefaultSearchPath);

  absl::StatusOr<std::string> Find(absl::string_view program) override;
  absl::StatusOr<std::unique_ptr<Process>> Start(const std::vector<std::string>& argv) override;

 private:
  const std::string search_path_;
};

}  // namespace rocenet::os
