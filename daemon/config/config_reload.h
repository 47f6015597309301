// SPDX-License-Identifier: Apache-2.0
// What a configuration reload (SIGHUP) may change while rocenetd runs.
//
// Every config key is in ReloadRules(), either live (applied at once,
// without disturbing configured ports) or restart (a new value is reported
// as needing a restart and the running value is kept). A unit test checks
// that every key the loader accepts has a rule. PlanReload() is pure: it
// compares the running options with freshly loaded (and already validated)
// ones and says which keys changed and what the daemon runs with next.
//
// Live keys: log_level, read_group, limits.mutating_rpcs_per_second,
// limits.mutating_rpc_burst, limits.max_string_bytes, addressing.mtu,
// addressing.routed_prefix_length, addressing.static_routes,
// addressing.reserved_networks, qos.pfc,
// qos.pfc_unhealthy. Everything else
// (socket, directories, listeners, port selection, mode, outputs, log
// format, message and stream limits) is fixed at start.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "daemon/config/options.h"

namespace rocenet::config {

struct ReloadRule {
  const char* key;
  bool live;
  std::function<bool(const DaemonOptions&, const DaemonOptions&)> same;
  // Copies the key's value from `from` into `into`.
  std::function<void(DaemonOptions& into, const DaemonOptions& from)> take;
};

const std::vector<ReloadRule>& ReloadRules();

struct ReloadPlan {
  // The running options with the live keys' new values.
  DaemonOptions next;
  std::vector<std::string> applied;        // live keys that changed
  std::vector<std::string> needs_restart;  // other keys that changed, kept as they run
};

ReloadPlan PlanReload(const DaemonOptions& running, const DaemonOptions& loaded);

}  // namespace rocenet::config
