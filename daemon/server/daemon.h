// SPDX-License-Identifier: Apache-2.0
// Daemon: the composition root of rocenetd, in three steps.
//
// Build makes the real OS implementations, loads what rocenetd keeps (its
// record of applied addresses, the attachment journal, the reservations),
// starts the node and the gRPC server and the metrics exposer from
// validated options; Run serves until SIGTERM or SIGINT; Shutdown stops
// serving without touching any network setting. Build and Run from main with
// kHandledSignals blocked in every thread (os::BlockSignals), so the loop
// receives them through a signalfd.
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

class Daemon {
 public:
  // Waits, before it touches any port, for an older rocenetd that still
  // holds the socket (up to options.takeover_wait), then builds and starts
  // every part; a part that cannot start stops the build with its error.
  static absl::StatusOr<std::unique_ptr<Daemon>> Build(const config::DaemonOptions& options,
                                                       const std::string& version,
                                                       ConfigOrigin config = {},
                                                       const OsOverrides& os = {});
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Serves on the calling thread until SIGTERM or SIGINT.
  absl::Status Run();

  // Hands the socket over to a successor that waits, ends the watch
  // streams, withdraws the readiness label, finishes the calls in flight
  // (for up to 2 s) and stops the metrics. Ports stay as they are.
  void Shutdown();

 private:
  struct Parts;
  explicit Daemon(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

// Build, Run, Shutdown.
absl::Status RunDaemon(const config::DaemonOptions& options, const std::string& version,
                       ConfigOrigin config = {}, const OsOverrides& os = {});

}  // namespace rocenet::server
