// SPDX-License-Identifier: Apache-2.0
#include "daemon/config/config_reload.h"

namespace rocenet::config {
namespace {

// A rule comparing and copying one member, reached through `get`.
template <typename Get>
ReloadRule Rule(const char* key, bool live, Get get) {
  return ReloadRule{
      .key = key,
      .live = live,
      .same = [get](const DaemonOptions& a, const DaemonOptions& b) { return get(a) == get(b); },
      .take = [get](DaemonOptions& into, const DaemonOptions& from) { get(into) = get(from); }};
}

constexpr bool kLive = true;
constexpr bool kRestart = false;

}  // namespace

const std::vector<ReloadRule>& ReloadRules() {
  static const auto* rules = new std::vector<ReloadRule>{
      Rule(
          "log_level", kLive, [](auto& o) -> auto& { return o.log_level; }),
      Rule(
          "read_group", kLive, [](auto& o) -> auto& { return o.security.read_group; }),
      Rule(
          "limits.mutating_rpcs_per_second", kLive,
          [](auto& o) -> auto& { return o.security.limits.mutating_rpcs_per_second; }),
      Rule(
          "limits.mutating_rpc_burst", kLive,
          [](auto& o) -> auto& { return o.security.limits.mutating_rpc_burst; }),
      Rule(
          "limits.max_string_bytes", kLive,
          [](auto& o) -> auto& { return o.security.limits.max_string_bytes; }),
      Rule(
          "addressing.mtu", kLive, [](auto& o) -> auto& { return o.mtu; }),
      Rule(
          "addressing.routed_prefix_length", kLive,
          [](auto& o) -> auto& { return o.routed_prefix_length; }),
      Rule(
          "addressing.static_routes", kLive, [](auto& o) -> auto& { return o.static_routes; }),
      Rule(
          "addressing.reserved_networks", kLive,
          [](auto& o) -> auto& { return o.reserved_networks; }),
      Rule(
          "qos.pfc", kLive, [](auto& o) -> auto& { return o.pfc; }),
      Rule(
          "qos.pfc_unhealthy", kLive, [](auto& o) -> auto& { return o.pfc_unhealthy; }),
      Rule(
          "health.flap_downs", kLive, [](auto& o) -> auto& { return o.health.flaps.downs; }),
      Rule(
          "health.flap_window", kLive, [](auto& o) -> auto& { return o.health.flaps.window; }),
      Rule(
          "health.flap_stable", kLive, [](auto& o) -> auto& { return o.health.flaps.stable_for; }),
      Rule(
          "health.flap_unhealthy", kLive,
          [](auto& o) -> auto& { return o.health.flaps.unhealthy; }),
      Rule(
          "health.retransmit_rate", kLive,
          [](auto& o) -> auto& { return o.health.retransmits.events_per_second; }),
      Rule(
          "health.retransmit_quiet", kLive,
          [](auto& o) -> auto& { return o.health.retransmits.quiet_period; }),
      Rule(
          "health.retransmit_unhealthy", kLive,
          [](auto& o) -> auto& { return o.health.retransmits.unhealthy; }),
      Rule(
          "health.fec_corrected_rate", kLive,
          [](auto& o) -> auto& { return o.health.fec.corrected_per_second; }),
      Rule(
          "health.fec_uncorrectable_rate", kLive,
          [](auto& o) -> auto& { return o.health.fec.uncorrectable_per_second; }),

      Rule(
          "socket", kRestart, [](auto& o) -> auto& { return o.socket_path; }),
      Rule(
          "sysfs_root", kRestart, [](auto& o) -> auto& { return o.sysfs_root; }),
      Rule(
          "metrics_address", kRestart, [](auto& o) -> auto& { return o.metrics_address; }),
      Rule(
          "state_dir", kRestart, [](auto& o) -> auto& { return o.state_dir; }),
      Rule(
          "runtime_dir", kRestart, [](auto& o) -> auto& { return o.runtime_dir; }),
      Rule(
          "hcl_dir", kRestart, [](auto& o) -> auto& { return o.hcl_dir; }),
      Rule(
          "mode", kRestart, [](auto& o) -> auto& { return o.mode; }),
      Rule(
          "log_format", kRestart, [](auto& o) -> auto& { return o.log_format; }),
      Rule(
          "interfaces", kRestart, [](auto& o) -> auto& { return o.selection.interfaces; }),
      Rule(
          "drivers", kRestart, [](auto& o) -> auto& { return o.selection.drivers; }),
      Rule(
          "gaudi.enabled", kRestart, [](auto& o) -> auto& { return o.selection.gaudi; }),
      Rule(
          "gaudi.scale_out_ports", kRestart,
          [](auto& o) -> auto& { return o.selection.gaudi_scale_out_ports; }),
      Rule(
          "outputs.gaudinet", kRestart, [](auto& o) -> auto& { return o.outputs.gaudinet_path; }),
      Rule(
          "outputs.networkd_dir", kRestart,
          [](auto& o) -> auto& { return o.outputs.networkd_dir; }),
      Rule(
          "outputs.nfd_features", kRestart,
          [](auto& o) -> auto& { return o.outputs.nfd_features_path; }),
      Rule(
          "outputs.nfd_label", kRestart, [](auto& o) -> auto& { return o.outputs.nfd_label; }),
      Rule(
          "outputs.network_manager", kRestart,
          [](auto& o) -> auto& { return o.outputs.network_manager_path; }),
      Rule(
          "outputs.cni_plugin", kRestart,
          [](auto& o) -> auto& { return o.outputs.cni_plugin_path; }),
      Rule(
          "tls.address", kRestart, [](auto& o) -> auto& { return o.security.tls.address; }),
      Rule(
          "tls.cert", kRestart, [](auto& o) -> auto& { return o.security.tls.cert; }),
      Rule(
          "tls.key", kRestart, [](auto& o) -> auto& { return o.security.tls.key; }),
      Rule(
          "tls.client_ca", kRestart, [](auto& o) -> auto& { return o.security.tls.client_ca; }),
      Rule(
          "tls.client_cert", kRestart, [](auto& o) -> auto& { return o.security.tls.client_cert; }),
      Rule(
          "limits.max_request_bytes", kRestart,
          [](auto& o) -> auto& { return o.security.limits.max_request_bytes; }),
      Rule(
          "limits.max_concurrent_streams", kRestart,
          [](auto& o) -> auto& { return o.security.limits.max_concurrent_streams; }),
  };
  return *rules;
}

ReloadPlan PlanReload(const DaemonOptions& running, const DaemonOptions& loaded) {
  ReloadPlan plan{.next = running, .applied = {}, .needs_restart = {}};
  for (const ReloadRule& rule : ReloadRules()) {
    if (rule.same(running, loaded)) continue;
    if (rule.live) {
      rule.take(plan.next, loaded);
      plan.applied.push_back(rule.key);
    } else {
      plan.needs_restart.push_back(rule.key);
    }
  }
  return plan;
}

}  // namespace rocenet::config
