// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the CNI plugin tests: running the dispatcher in process
// and a private temporary directory for sockets. Nothing is shared between
// tests.
#pragma once

#include <string>

#include "nlohmann/json.hpp"
#include "plugins/cni/attachments_client.h"
#include "plugins/cni/invocation.h"
#include "tests/unit/support/temp_dir.h"

namespace rocenet::cni::testutil {

// What one plugin invocation printed and returned.
struct PluginRun {
  int exit_code = -1;
  std::string out;
  std::string err;

  // stdout parsed as JSON (ordered as printed); null JSON if it does not
  // parse, with a gtest failure.
  nlohmann::ordered_json Json() const;
};

// Dispatch() with `env`, `config` on stdin and `connect` for the daemon.
PluginRun RunPlugin(const Environment& env, const std::string& config,
                    const AttachmentsClientFactory& connect);

// A factory that fails the test when called: for invocations that must be
// refused before the daemon is asked.
AttachmentsClientFactory NoDaemon();

// The shared per-test directory (tests/unit/support/temp_dir.h).
using TempDir = ::rocenet::testing::TempDir;

}  // namespace rocenet::cni::testutil
