// SPDX-License-Identifier: Apache-2.0
// DaemonOptions: everything rocenetd is told at start, from the YAML config
// file and the command line (flags win), validated before anything runs.
//
// Pure functions; errors are InvalidArgument naming the key or flag and the
// reason, which main turns into exit code 2.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "daemon/addressing/planner.h"
#include "daemon/common/listen_address.h"
#include "daemon/common/logging.h"
#include "daemon/config/security_options.h"
#include "daemon/health/port_health.h"
#include "daemon/inventory/port_selection.h"
#include "daemon/outputs/host_outputs.h"
#include "daemon/qos/pfc.h"

namespace rocenet::config {

using AddressingMode = addressing::Mode;

struct DaemonOptions {
  std::string socket_path = "/run/rocenet/rocenetd.sock";
  std::string sysfs_root = "/sys";
  // "host:port" or ":port"; port 0 picks a free port. Empty disables metrics.
  std::string metrics_address = ":50152";
  std::string state_dir = "/var/lib/rocenet";
  // State that lives only as long as this boot: the attachment journal, which
  // names pod namespaces and ports moved into them. Empty: the socket's
  // directory (/run/rocenet, a tmpfs cleared at boot).
  std::string runtime_dir;
  AddressingMode mode = AddressingMode::kL3;
  // Addressing: mode is mirrored into planner.mode by ValidateOptions users
  // through PlannerConfigOf().
  uint32_t mtu = 0;
  int routed_prefix_length = 16;
  std::vector<addressing::StaticRoute> static_routes;
  // addressing.reserved_networks: networks the fabric must stay out of.
  std::vector<Ipv4Prefix> reserved_networks;
  // qos.pfc: what rocenet sets the ports' PFC to (keep: nothing), and
  // qos.pfc_unhealthy: whether PfcUnsupported and PfcMismatch make a port
  // unhealthy (else they are advisory).
  qos::PfcRequest pfc;
  bool pfc_unhealthy = false;
  // health.flap_*: when a link counts as flapping (LinkFlapping), and
  // whether that makes the port unhealthy.
  health::HealthPolicies health;
  outputs::OutputConfig outputs;
  // A directory of Habana HCL files per reservation, claim-<owner uid>,
  // beside the device plugin's alloc-* directories (its --hcl-dir). Empty:
  // reservations have no HCL files.
  std::string hcl_dir = "/run/rocenet/hcl";
  LogFormat log_format = LogFormat::kText;
  spdlog::level::level_enum log_level = spdlog::level::info;
  inventory::PortSelection selection;
  // read_group, tls.*, limits.* (security_options.h).
  SecurityOptions security;
  // Keys and flags of the diagnostics, which moved to rocenet-diagd
  // (diag_port, diag_secret_file, node_name), that the configuration still
  // gives: accepted so that an older configuration still starts, ignored,
  // and named in a warning at start.
  std::set<std::string> moved_to_diagd;
  // How long a starting rocenetd waits for another one still holding the
  // socket (shutting down during an overlapping restart) before it gives up.
  absl::Duration takeover_wait = absl::Seconds(30);
  // How often the ports' error counters are sampled for ErrorsRising (raised
  // after two rising intervals in a row).
  absl::Duration errors_interval = absl::Seconds(30);
};

absl::StatusOr<AddressingMode> ParseMode(absl::string_view text);

// Every key the config file accepts, sections flattened ("tls.cert"), sorted.
std::vector<std::string> ConfigKeys();

// InvalidArgument for the unknown key `path` ("addressing.mtuu"), with the
// key that was probably meant, at its level or another ("mtu" ->
// "addressing.mtu").
absl::Status UnknownKeyError(const std::string& origin, const std::string& path);

// `runtime_dir`, or the socket's directory when it is not set.
std::string RuntimeDirOf(const DaemonOptions& options);

// Applies the keys of the YAML document `yaml` on top of `options`. `origin`
// names the document in messages ("config /etc/rocenet/config.yaml").
absl::Status ApplyConfigYaml(const std::string& yaml, const std::string& origin,
                             DaemonOptions& options);

// Checks values that no single key can check alone.
absl::Status ValidateOptions(const DaemonOptions& options);

addressing::PlannerConfig PlannerConfigOf(const DaemonOptions& options);

}  // namespace rocenet::config
