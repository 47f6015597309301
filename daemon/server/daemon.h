// SPDX-License-Identifier: Apache-2.0
// RunDaemon: the composition root of rocenetd.
//
// Builds the real OS implementations, the domain modules, the gRPC server and
// the metrics exposer from validated options, serves until SIGTERM or SIGINT,
// then stops serving without touching any network setting. Call from main
// with kHandledSignals blocked in every thread (os::BlockSignals), so
// the event loop receives them through a signalfd.
#pragma once

#include <csignal>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "daemon/config/options.h"
#include "daemon/os/dcb.h"
#include "daemon/server/reloader.h"

namespace rocenet::server {

// The signals the daemon handles on its loop. main blocks them before any
// thread starts, so every thread inherits the mask.
inline constexpr std::initializer_list<int> kHandledSignals = {SIGTERM, SIGINT, SIGHUP};

// Where the running configuration came from. `load` loads it again (the
// file with the flags over it, validated); SIGHUP calls it, and so does a
// change on disk to `watch_path` (the --config file or directory) when that
// is set. `loaded` is the config::ConfigFingerprint() of the documents `options`
// came from. Without `load`, a reload is refused and nothing changes.
struct ConfigOrigin {
  ConfigSource load;
  std::string watch_path;
  std::string loaded;
};

// OS implementations that replace the Linux ones, for the daemon's test
// build only (tests/sim: a driver's dcbnl where this machine has none).
// Unset members mean the Linux implementation.
struct OsOverrides {
  std::function<absl::StatusOr<std::unique_ptr<os::Dcb>>()> open_dcb;
};

absl::Status RunDaemon(const config::DaemonOptions& options, const std::string& version,
                       ConfigOrigin config = {}, const OsOverrides& os = {});

}  // namespace rocenet::server
