// SPDX-License-Identifier: Apache-2.0
// RocenetdMain: rocenetd from its command line to its exit code.
//
// Exit codes: 0 clean stop, 1 runtime failure, 2 bad flags or
// configuration (including one this node cannot have, found at start). `os` replaces OS
// implementations for the daemon's test build only (tests/sim); rocenetd itself passes none.
#pragma once

#include "daemon/server/daemon.h"

namespace rocenet::server {

int RocenetdMain(int argc, char** argv, const OsOverrides& os = {});

}  // namespace rocenet::server
