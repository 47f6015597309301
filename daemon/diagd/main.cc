// SPDX-License-Identifier: Apache-2.0
// rocenet-diagd's command line: flags into DiagdOptions, then RunDiagd.
//
// Exit codes: 0 clean stop, 1 runtime failure, 2 bad flags.
#include <cstdint>
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "daemon/common/flag_parser.h"
#include "daemon/common/listen_address.h"
#include "daemon/common/logging.h"
#include "daemon/diagd/diagd.h"
#include "daemon/os/linux/signals.h"

ABSL_FLAG(std::string, socket, "/run/rocenet/diagd.sock",
          "unix socket for rocenet.v1.Diagnostics, what rocectl diag calls (mode 0600)");
ABSL_FLAG(std::string, node_socket, "/run/rocenet/rocenetd.sock",
          "rocenetd's socket: the node's ports come from its WatchPorts stream");
ABSL_FLAG(int32_t, data_port, 50153,
          "TCP data port for the other nodes' rocenet-diagd, on the scale-out ports' addresses "
          "only (0: off)");
ABSL_FLAG(std::string, secret_file, "",
          "file with the cluster's shared secret (16 bytes or more) that data port requests "
          "must be signed with; read again on each request (empty: the data port refuses all)");
ABSL_FLAG(std::string, node_name, "",
          "this node's name in diagnostics results (empty: $NODE_NAME, else the host name)");
ABSL_FLAG(
    std::string, metrics_address, ":50154",
    "host:port for Prometheus metrics of the diagnostics (port 0: any free port; empty: off)");
ABSL_FLAG(std::string, validation_file, "",
          "NFD feature file for the rocenet.io/scale-out-validated label (empty: off)");
ABSL_FLAG(std::string, takeover_wait, "30s",
          "how long to wait for a rocenet-diagd still holding the socket to stop (e.g. 30s)");
ABSL_FLAG(std::string, log_format, "text", "text (klog-like) or json");
ABSL_FLAG(std::string, log_level, "info", "debug, info, warning or error");

#ifndef ROCENET_VERSION
#define ROCENET_VERSION "unknown"
#endif

namespace rocenet::diagd {
namespace {

absl::StatusOr<DiagdOptions> OptionsOf(const ParsedCommandLine& cmd) {
  if (!cmd.positional.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected argument \"", cmd.positional.front(), "\""));
  }
  DiagdOptions options;
  options.socket_path = absl::GetFlag(FLAGS_socket);
  options.node_socket = absl::GetFlag(FLAGS_node_socket);
  options.secret_file = absl::GetFlag(FLAGS_secret_file);
  options.node_name = absl::GetFlag(FLAGS_node_name);
  options.metrics_address = absl::GetFlag(FLAGS_metrics_address);
  options.validation_file = absl::GetFlag(FLAGS_validation_file);
  if (!options.metrics_address.empty()) {
    if (absl::Status s = ParseListenAddress(options.metrics_address).status(); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("flag --metrics-address: ", s.message()));
    }
  }
  if (options.socket_path.empty() || options.socket_path.front() != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("flag --socket: \"", options.socket_path, "\" is not an absolute path"));
  }
  if (options.node_socket.empty() || options.node_socket.front() != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("flag --node-socket: \"", options.node_socket, "\" is not an absolute path"));
  }
  if (options.socket_path == options.node_socket) {
    return absl::InvalidArgumentError(
        "flag --socket: must differ from --node-socket (rocenetd's socket)");
  }
  const int32_t port = absl::GetFlag(FLAGS_data_port);
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("flag --data-port: ", port, " is not 0..65535"));
  }
  options.data_port = static_cast<uint16_t>(port);
  absl::Duration wait;
  if (!absl::ParseDuration(absl::GetFlag(FLAGS_takeover_wait), &wait) ||
      wait < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("flag --takeover-wait: \"", absl::GetFlag(FLAGS_takeover_wait),
                     "\" is not a duration; write it like 30s, 2m or 0s"));
  }
  options.takeover_wait = wait;
  return options;
}

int Main(int argc, char** argv) {
  absl::StatusOr<ParsedCommandLine> cmd = ParseFlags(argc, argv);
  if (!cmd.ok()) {
    std::cerr << "rocenet-diagd: " << cmd.status().message() << "\n"
              << "Try 'rocenet-diagd --help'.\n";
    return 2;
  }
  if (cmd->help) {
    std::cout << "Usage: rocenet-diagd [flags]\n\n"
              << "The rocenet triage daemon: runs the scale-out network's diagnostics\n"
              << "(reach, bandwidth, all-reduce, incast, RDMA) with the other nodes'\n"
              << "rocenet-diagd, on the ports rocenetd configured, and serves them to\n"
              << "rocectl diag. It changes nothing on the node.\n\nFlags:\n"
              << FlagUsage("daemon/diagd/main.cc");
    return 0;
  }
  if (cmd->version) {
    std::cout << "rocenet-diagd " << ROCENET_VERSION << "\n";
    return 0;
  }
  absl::StatusOr<DiagdOptions> options = OptionsOf(*cmd);
  absl::StatusOr<LogFormat> format = ParseLogFormat(absl::GetFlag(FLAGS_log_format));
  absl::StatusOr<spdlog::level::level_enum> level = ParseLogLevel(absl::GetFlag(FLAGS_log_level));
  for (const absl::Status& s : {options.status(), format.status(), level.status()}) {
    if (!s.ok()) {
      std::cerr << "rocenet-diagd: " << s.message() << "\n";
      return 2;
    }
  }
  InitLogging(*format, *level);
  if (absl::Status s = os::BlockSignals(kDiagdSignals); !s.ok()) {
    SPDLOG_ERROR("{}", s.ToString());
    return 1;
  }
  SPDLOG_INFO("rocenet-diagd {} starting", ROCENET_VERSION);
  if (absl::Status s = RunDiagd(*options); !s.ok()) {
    SPDLOG_ERROR("{}", s.message());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace rocenet::diagd

int main(int argc, char** argv) { return rocenet::diagd::Main(argc, argv); }
