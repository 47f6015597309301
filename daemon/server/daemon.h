// RunDaemon: the composition root of rocenetd.
//
// Builds the real OS implementations, the domain modules, the gRPC server and
// the metrics exposer from validated options, serves until SIGTERM or SIGINT,
// then stops serving without touching any network setting. Call from main
// with kHandledSignals blocked in every thread (os::BlockSignals), so
// the event loop receives them through a signalfd.
#pragma once

#include <csignal>
#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "daemon/server/options.h"
#include "daemon/server/reloader.h"

namespace rocenet::server {

// The signals the daemon handles on its loop. main blocks them before any
// thread starts, so every thread inherits the mask.
inline constexpr std::initializer_list<int> kHandledSignals = {SIGTERM, SIGINT, SIGHUP};

// `reload` loads the configuration again on SIGHUP (see reloader.h); without
// one, SIGHUP is refused with an error and nothing changes.
absl::Status RunDaemon(const DaemonOptions& options, const std::string& version,
                       ConfigSource reload = nullptr);

}  // namespace rocenet::server
