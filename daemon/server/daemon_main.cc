// SPDX-License-Identifier: Apache-2.0
// rocenetd's command line. Flags are defined here and only here, turned into
// config::DaemonOptions on top of the optional config file, validated, and handed
// to RunDaemon.
#include "daemon/server/daemon_main.h"

#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "daemon/common/flag_parser.h"
#include "daemon/common/logging.h"
#include "daemon/config/config_files.h"
#include "daemon/config/options.h"
#include "daemon/os/linux/filesystem_linux.h"
#include "daemon/os/linux/signals.h"
#include "daemon/server/daemon.h"
#include "daemon/server/security_files.h"

ABSL_FLAG(std::string, config, "",
          "YAML config file, or a directory: its config.yaml, then every other *.yaml in name "
          "order over it; flags given on the command line win");
ABSL_FLAG(bool, watch_config, true,
          "reload the configuration when the --config file or directory changes, as on SIGHUP");
ABSL_FLAG(std::string, socket, "/run/rocenet/rocenetd.sock", "unix socket for the gRPC API");
ABSL_FLAG(std::string, interfaces, "",
          "comma-separated interface names or globs to manage besides Gaudi ports");
ABSL_FLAG(std::string, drivers, "", "comma-separated kernel drivers whose net devices to manage");
ABSL_FLAG(bool, gaudi, true, "manage the scale-out ports of Gaudi (habanalabs) devices");
ABSL_FLAG(std::string, sysfs_root, "/sys", "root of the sysfs tree to discover ports in");
ABSL_FLAG(std::string, metrics_address, ":50152",
          "host:port for Prometheus metrics (port 0: any free port; empty: off)");
ABSL_FLAG(std::string, state_dir, "/var/lib/rocenet", "directory for persistent state");
ABSL_FLAG(std::string, runtime_dir, "",
          "directory for state of this boot, the attachment journal (empty: the socket's "
          "directory)");
ABSL_FLAG(std::string, hcl_dir, "/run/rocenet/hcl",
          "directory for each reservation's Habana HCL files, claim-<owner uid> (empty: off)");
ABSL_FLAG(std::string, mode, "L3", "L3 (addresses from LLDP) or L2 (link up and MTU only)");
ABSL_FLAG(int32_t, mtu, 0, "MTU for every port (0: leave it as it is)");
ABSL_FLAG(std::string, pfc, "keep",
          "PFC on the ports: keep (do not touch it), none, all, or priorities such as 0-3");
ABSL_FLAG(bool, pfc_unhealthy, false,
          "whether PfcUnsupported and PfcMismatch make a port unhealthy (else advisory)");
ABSL_FLAG(std::string, gaudinet_path, "",
          "where to write gaudinet.json once every port is provisioned (empty: off)");
ABSL_FLAG(std::string, log_format, "text", "text (klog-like) or json");
ABSL_FLAG(std::string, log_level, "info", "debug, info, warning or error");
ABSL_FLAG(std::string, read_group, "",
          "group whose members may call read-only RPCs on the socket (socket 0660 root:GROUP)");
ABSL_FLAG(std::string, tls_address, "",
          "host:port of a TCP listener for remote admin, TLS only (empty: off)");
ABSL_FLAG(std::string, tls_cert, "", "PEM server certificate of the TLS listener");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls-cert");
ABSL_FLAG(std::string, tls_client_ca, "", "PEM CA bundle that verifies client certificates");
ABSL_FLAG(std::string, tls_client_cert, "none",
          "client certificates on the TLS listener: none, optional or require");
ABSL_FLAG(std::string, diag_port, "", "moved to rocenet-diagd (--data-port); accepted and ignored");
ABSL_FLAG(std::string, diag_secret_file, "",
          "moved to rocenet-diagd (--secret-file); accepted and ignored");
ABSL_FLAG(std::string, node_name, "", "moved to rocenet-diagd (--node-name); accepted and ignored");
ABSL_FLAG(std::string, takeover_wait, "30s",
          "how long to wait for a rocenetd still holding the socket to stop (e.g. 30s)");
ABSL_FLAG(std::string, errors_interval, "30s",
          "how often the ports' error counters are sampled; two rising intervals in a row "
          "raise ErrorsRising (1s or more)");
ABSL_FLAG(bool, check_config, false,
          "load and validate the configuration (--config and flags), then exit: 0 valid, 2 not");

#ifndef ROCENET_VERSION
#define ROCENET_VERSION "unknown"
#endif

namespace rocenet::server {
namespace {

std::vector<std::string> SplitList(const std::string& text) {
  return absl::StrSplit(text, ',', absl::SkipWhitespace());
}

// Applies each flag given on the command line over `options`.
absl::Status ApplyFlags(const ParsedCommandLine& cmd, config::DaemonOptions& options) {
  auto given = [&](const char* name) { return cmd.specified.contains(name); };
  if (given("socket")) options.socket_path = absl::GetFlag(FLAGS_socket);
  if (given("interfaces"))
    options.selection.interfaces = SplitList(absl::GetFlag(FLAGS_interfaces));
  if (given("drivers")) options.selection.drivers = SplitList(absl::GetFlag(FLAGS_drivers));
  if (given("gaudi")) options.selection.gaudi = absl::GetFlag(FLAGS_gaudi);
  if (given("sysfs_root")) options.sysfs_root = absl::GetFlag(FLAGS_sysfs_root);
  if (given("metrics_address")) options.metrics_address = absl::GetFlag(FLAGS_metrics_address);
  if (given("state_dir")) options.state_dir = absl::GetFlag(FLAGS_state_dir);
  if (given("runtime_dir")) options.runtime_dir = absl::GetFlag(FLAGS_runtime_dir);
  if (given("hcl_dir")) options.hcl_dir = absl::GetFlag(FLAGS_hcl_dir);
  if (given("read_group")) options.security.read_group = absl::GetFlag(FLAGS_read_group);
  if (given("tls_address")) options.security.tls.address = absl::GetFlag(FLAGS_tls_address);
  if (given("tls_cert")) options.security.tls.cert = absl::GetFlag(FLAGS_tls_cert);
  if (given("tls_key")) options.security.tls.key = absl::GetFlag(FLAGS_tls_key);
  if (given("tls_client_ca")) options.security.tls.client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  if (given("tls_client_cert")) {
    auto mode = config::ParseClientCertMode(absl::GetFlag(FLAGS_tls_client_cert));
    if (!mode.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("flag --tls-client-cert: ", mode.status().message()));
    }
    options.security.tls.client_cert = *mode;
  }
  for (const char* moved : {"diag_port", "diag_secret_file", "node_name"}) {
    if (given(moved)) options.moved_to_diagd.insert(moved);
  }
  if (given("takeover_wait")) {
    absl::Duration wait;
    if (!absl::ParseDuration(absl::GetFlag(FLAGS_takeover_wait), &wait) ||
        wait < absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat("flag --takeover-wait: \"", absl::GetFlag(FLAGS_takeover_wait),
                       "\" is not a duration; write it like 30s, 2m or 0s"));
    }
    options.takeover_wait = wait;
  }
  if (given("errors_interval")) {
    absl::Duration interval;
    if (!absl::ParseDuration(absl::GetFlag(FLAGS_errors_interval), &interval) ||
        interval < absl::Seconds(1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("flag --errors-interval: \"", absl::GetFlag(FLAGS_errors_interval),
                       "\" is not a duration of 1s or more; write it like 30s or 2m"));
    }
    options.errors_interval = interval;
  }
  if (given("gaudinet_path")) options.outputs.gaudinet_path = absl::GetFlag(FLAGS_gaudinet_path);
  if (given("mtu")) {
    if (absl::GetFlag(FLAGS_mtu) < 0) {
      return absl::InvalidArgumentError("flag --mtu: must not be negative");
    }
    options.mtu = static_cast<uint32_t>(absl::GetFlag(FLAGS_mtu));
  }
  if (given("pfc_unhealthy")) options.pfc_unhealthy = absl::GetFlag(FLAGS_pfc_unhealthy);
  auto flag_error = [](const char* name, const absl::Status& s) {
    return absl::InvalidArgumentError(
        absl::StrCat("flag --", absl::StrReplaceAll(name, {{"_", "-"}}), ": ", s.message()));
  };
  if (given("pfc")) {
    auto pfc = qos::ParsePfcRequest(absl::GetFlag(FLAGS_pfc));
    if (!pfc.ok()) return flag_error("pfc", pfc.status());
    options.pfc = *pfc;
  }
  if (given("mode")) {
    auto mode = config::ParseMode(absl::GetFlag(FLAGS_mode));
    if (!mode.ok()) return flag_error("mode", mode.status());
    options.mode = *mode;
  }
  if (given("log_format")) {
    auto format = ParseLogFormat(absl::GetFlag(FLAGS_log_format));
    if (!format.ok()) return flag_error("log_format", format.status());
    options.log_format = *format;
  }
  if (given("log_level")) {
    auto level = ParseLogLevel(absl::GetFlag(FLAGS_log_level));
    if (!level.ok()) return flag_error("log_level", level.status());
    options.log_level = *level;
  }
  return absl::OkStatus();
}

// The options from the --config documents with the flags over them,
// validated; `fingerprint`, when given, receives config::ConfigFingerprint() of the
// documents read.
absl::StatusOr<config::DaemonOptions> BuildOptions(const ParsedCommandLine& cmd,
                                                   std::string* fingerprint = nullptr) {
  config::DaemonOptions options;
  if (!cmd.positional.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected argument \"", cmd.positional.front(), "\""));
  }
  if (const std::string config = absl::GetFlag(FLAGS_config); !config.empty()) {
    absl::StatusOr<std::vector<config::ConfigDocument>> documents =
        config::ReadConfigDocuments(os::FileSystemLinux(), config);
    if (!documents.ok()) return documents.status();
    if (fingerprint != nullptr) *fingerprint = config::ConfigFingerprint(*documents);
    if (absl::Status s = config::ApplyConfigDocuments(*documents, options); !s.ok()) return s;
  }
  if (absl::Status s = ApplyFlags(cmd, options); !s.ok()) return s;
  if (absl::Status s = config::ValidateOptions(options); !s.ok()) return s;
  if (absl::Status s = CheckSecurityFiles(options.security); !s.ok()) return s;
  return options;
}

}  // namespace

int RocenetdMain(int argc, char** argv, const OsOverrides& os) {
  absl::StatusOr<ParsedCommandLine> cmd = ParseFlags(argc, argv);
  if (!cmd.ok()) {
    std::cerr << "rocenetd: " << cmd.status().message() << "\n"
              << "Try 'rocenetd --help'.\n";
    return 2;
  }
  if (cmd->help) {
    std::cout << "Usage: rocenetd [flags]\n\n"
              << "The rocenet node daemon: discovers the node's RoCE scale-out ports,\n"
              << "keeps them configured and serves the rocenet.v1 gRPC API.\n\nFlags:\n"
              << FlagUsage("daemon/server/daemon_main.cc");
    return 0;
  }
  if (cmd->version) {
    std::cout << "rocenetd " << ROCENET_VERSION << "\n";
    return 0;
  }
  std::string loaded;
  absl::StatusOr<config::DaemonOptions> options = BuildOptions(*cmd, &loaded);
  if (!options.ok()) {
    std::cerr << "rocenetd: " << options.status().message() << "\n";
    return 2;
  }
  if (absl::GetFlag(FLAGS_check_config)) {
    std::cout << "rocenetd: configuration is valid\n";
    return 0;
  }
  InitLogging(options->log_format, options->log_level);
  if (absl::Status s = os::BlockSignals(kHandledSignals); !s.ok()) {
    SPDLOG_ERROR("{}", s.ToString());
    return 1;
  }
  SPDLOG_INFO("rocenetd {} starting", ROCENET_VERSION);
  ConfigOrigin origin{
      .load = [&] { return BuildOptions(*cmd); },
      .watch_path = absl::GetFlag(FLAGS_watch_config) ? absl::GetFlag(FLAGS_config) : std::string(),
      .loaded = loaded};
  if (absl::Status s = RunDaemon(*options, ROCENET_VERSION, std::move(origin), os); !s.ok()) {
    SPDLOG_ERROR("{}", s.message());
    // A configuration this node cannot have (a qos.pfc a port's driver
    // refuses, a sysfs_root that is not there) is a configuration error too.
    return absl::IsInvalidArgument(s) ? 2 : 1;
  }
  return 0;
}

}  // namespace rocenet::server
