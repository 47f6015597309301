// SPDX-License-Identifier: Apache-2.0
// Reloader: rocenetd's answer to SIGHUP and to a changed config file.
//
// Loads the configuration again through a ConfigSource (the --config file,
// then the command-line flags over it, fully validated, exactly as at start).
// A configuration that does not load or validate is refused with an error
// naming the key, and everything keeps running as it was. A valid one is
// compared with the running options (config::PlanReload): live keys take effect at
// once, without disturbing configured ports (addressing changes re-plan, so
// ports whose plan is unchanged are left as they are); keys that need a
// restart are logged and keep their running value. Every outcome is logged
// and counted in ConfigReloadMetrics.
//
// Loop thread only.
#pragma once

#include <functional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/addressing/driver.h"
#include "daemon/api/auth.h"
#include "daemon/api/metrics_config.h"
#include "daemon/config/options.h"
#include "daemon/node/node.h"

namespace rocenet::server {

using ConfigSource = std::function<absl::StatusOr<config::DaemonOptions>()>;

struct ReloadTargets {
  api::RequestGate* gate = nullptr;
  addressing::AddressingDriver* addressing = nullptr;
  node::Node* node = nullptr;
  api::ConfigReloadMetrics* metrics = nullptr;
};

class Reloader {
 public:
  // Pointers in `targets` are not owned and must outlive the reloader.
  Reloader(config::DaemonOptions running, ConfigSource source, ReloadTargets targets)
      : running_(std::move(running)), source_(std::move(source)), targets_(targets) {}

  // Loads, checks and applies; OK when the new configuration was taken.
  // `why` says in the log what asked for it ("received SIGHUP").
  absl::Status Reload(absl::string_view why);

  const config::DaemonOptions& running() const { return running_; }

 private:
  absl::Status Apply(const config::DaemonOptions& loaded);

  config::DaemonOptions running_;
  ConfigSource source_;
  ReloadTargets targets_;
};

}  // namespace rocenet::server
