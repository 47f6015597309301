// SPDX-License-Identifier: Apache-2.0
#include "daemon/server/reloader.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/common/logging.h"
#include "daemon/common/status_macros.h"
#include "daemon/config/config_reload.h"
#include "daemon/os/linux/unix_listener.h"
#include "daemon/os/linux/unix_socket.h"
#include "daemon/server/api_server.h"
#include "daemon/server/security_files.h"

namespace rocenet::server {
namespace {

bool Changed(const std::vector<std::string>& keys, absl::string_view prefix) {
  return std::any_of(keys.begin(), keys.end(),
                     [&](const std::string& key) { return absl::StartsWith(key, prefix); });
}

}  // namespace

absl::Status Reloader::Reload(absl::string_view why) {
  SPDLOG_INFO("{}; reloading the configuration", why);
  absl::Status result;
  if (source_ == nullptr) {
    result = absl::FailedPreconditionError("no configuration source to reload from");
  } else if (absl::StatusOr<config::DaemonOptions> loaded = source_(); !loaded.ok()) {
    result = loaded.status();
  } else {
    result = Apply(*loaded);
  }
  if (!result.ok()) {
    SPDLOG_ERROR("configuration reload refused, the running configuration stays: {}",
                 result.message());
  }
  if (targets_.metrics != nullptr) targets_.metrics->Record(result.ok(), absl::Now());
  return result;
}

absl::Status Reloader::Apply(const config::DaemonOptions& loaded) {
  config::ReloadPlan plan = config::PlanReload(running_, loaded);
  // Everything that can fail is checked before anything changes.
  ASSIGN_OR_RETURN(api::GateConfig gate_config, GateConfigOf(plan.next.security));
  RETURN_IF_ERROR(CheckSecurityFiles(plan.next.security));
  const bool qos_changed = Changed(plan.applied, "qos.");
  // Only a new qos.pfc is checked against the ports: a port that cannot
  // have the running one is reported already, and must not hold up other
  // keys.
  const bool pfc_changed =
      std::find(plan.applied.begin(), plan.applied.end(), "qos.pfc") != plan.applied.end();
  if (pfc_changed && targets_.node != nullptr) {
    RETURN_IF_ERROR(targets_.node->CheckPfc(plan.next.pfc));
  }
  if (Changed(plan.applied, "read_group")) {
    const std::string& group = plan.next.security.read_group;
    if (group.empty()) {
      RETURN_IF_ERROR(os::RestrictSocket(plan.next.socket_path));
    } else {
      RETURN_IF_ERROR(
          os::ShareSocketWithGroup(plan.next.socket_path, *gate_config.access.read_gid));
    }
  }
  if (Changed(plan.applied, "log_level")) spdlog::set_level(plan.next.log_level);
  if (targets_.gate != nullptr) targets_.gate->Reconfigure(gate_config);
  if (Changed(plan.applied, "addressing.") && targets_.addressing != nullptr) {
    targets_.addressing->SetConfig(config::PlannerConfigOf(plan.next));
    if (targets_.node != nullptr) targets_.node->Replan();
  }
  if (qos_changed && targets_.node != nullptr) {
    targets_.node->SetPfc(plan.next.pfc, plan.next.pfc_unhealthy);
  }
  if (Changed(plan.applied, "health.") && targets_.node != nullptr) {
    targets_.node->SetHealthPolicies(plan.next.health);
  }
  for (const std::string& key : plan.needs_restart) {
    SPDLOG_WARN(
        "configuration reload: key \"{}\" changed but needs a restart of rocenetd; it "
        "keeps its running value until then",
        key);
  }
  SPDLOG_INFO("configuration reloaded: applied [{}], needs restart [{}]",
              absl::StrJoin(plan.applied, ", "), absl::StrJoin(plan.needs_restart, ", "));
  if (targets_.metrics != nullptr) targets_.metrics->SetRestartPending(plan.needs_restart);
  running_ = std::move(plan.next);
  return absl::OkStatus();
}

}  // namespace rocenet::server
