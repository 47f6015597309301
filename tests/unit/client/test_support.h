// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the rocectl tests: a private temporary directory and
// unix sockets bound in it. Each test makes its own; nothing is shared
// between tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tests/unit/support/temp_dir.h"

namespace rocenet::rocectl::testutil {

// The shared per-test directory (tests/unit/support/temp_dir.h).
using TempDir = ::rocenet::testing::TempDir;

// A unix stream socket bound to `path`, listening if `listen` is set (a bound
// socket nobody listens on refuses connections, like one a dead daemon left
// behind). Returns the descriptor, or -1 with a gtest failure recorded.
int BindUnixSocket(const std::string& path, bool listen);

// A regular file with some content at `path`.
void WriteFile(const std::string& path);

// What one in-process rocectl run printed and returned.
struct CliResult {
  int exit_code;
  std::string out;
  std::string err;
};

// Runs rocectl with `args` (without the program name) through the
// dispatcher, telling it whether stderr is a terminal.
CliResult RunCli(std::vector<std::string> args, bool err_is_terminal = false);

// `rocectl args...`, its stderr not a terminal.
inline CliResult Rocectl(std::vector<std::string> args) { return RunCli(std::move(args)); }

}  // namespace rocenet::rocectl::testutil
