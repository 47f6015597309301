// SPDX-License-Identifier: Apache-2.0
// FakeProcessRunner: the ProcessRunner seam for unit tests. Programs are
// installed by bare name (Find() answers with their path) and scripted: what
// they print, their exit code, how long they run (on the injected clock) and
// whether they print a "ready" line at start, as a benchmark server does
// once it listens. Every argv started is recorded.
//
// Nothing blocks and nothing runs: a scripted program "ends" at its start
// time plus its run time, so Wait() returns at once, timed out when its
// deadline comes before that end (then only the ready line was printed and
// the exit is 128+SIGTERM, as the real runner reports it). A program that
// was not scripted prints nothing and exits 0. Stop() ends it the same way.
// Not thread-safe; tests drive it between calls. The runner must outlive
// the processes it started.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "daemon/os/clock.h"
#include "daemon/os/process.h"

namespace rocenet::testing {

struct FakeProgram {
  std::string out;
  std::string err;
  int exit_code = 0;
  // How long it runs before exiting; absl::InfiniteDuration(): until stopped.
  absl::Duration run_time = absl::ZeroDuration();
  // Printed on stdout as soon as it starts (the rest of `out` at its end);
  // empty: no such line.
  std::string ready_line;
};

class FakeProcessRunner final : public os::ProcessRunner {
 public:
  explicit FakeProcessRunner(const os::Clock& clock) : clock_(clock) {}

  // Find(name) answers `dir`/name from now on.
  void Install(const std::string& name, const std::string& dir = "/usr/bin");
  void Uninstall(const std::string& name) { installed_.erase(name); }
  // What the program whose argv[0] ends in "/`name`" does from now on.
  void Script(const std::string& name, FakeProgram program) { scripts_[name] = std::move(program); }
  // The next Start() fails with `status` and starts nothing.
  void FailNextStart(absl::Status status) { start_failure_ = std::move(status); }

  // Every argv started, in order.
  const std::vector<std::vector<std::string>>& started() const { return started_; }
  // How many started processes were stopped by Stop() or a passed deadline.
  int stopped() const { return stopped_; }

  absl::StatusOr<std::string> Find(absl::string_view program) override;
  absl::StatusOr<std::unique_ptr<os::Process>> Start(const std::vector<std::string>& argv) override;

 private:
  friend class FakeProcess;
  const os::Clock& clock_;
  std::map<std::string, std::string> installed_;  // name -> path
  std::map<std::string, FakeProgram> scripts_;
  absl::Status start_failure_;
  std::vector<std::vector<std::string>> started_;
  int stopped_ = 0;
};

}  // namespace rocenet::testing
