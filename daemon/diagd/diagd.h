// SPDX-License-Identifier: Apache-2.0
// RunDiagd: the composition root of rocenet-diagd, the node's triage daemon.
//
// rocenet-diagd runs the diagnostics (reach, bandwidth, all-reduce, incast,
// RDMA) beside rocenetd, in a process of its own with only CAP_NET_RAW: it
// learns the scale-out ports from rocenetd's node stream (NodeWatch), serves
// rocenet.v1.Diagnostics on its own unix socket for rocectl, listens for the
// other nodes' rocenet-diagd on the data port (the ports' addresses only),
// writes the node's validation label, and never configures anything.
//
// Builds the real OS implementations, serves until SIGTERM or SIGINT, then
// ends the tests in flight and stops. Call from main with kDiagdSignals
// blocked in every thread (os::BlockSignals); they are taken with sigwait.
#pragma once

#include <csignal>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "daemon/diag/analysis.h"

namespace rocenet::diagd {

inline constexpr std::initializer_list<int> kDiagdSignals = {SIGTERM, SIGINT};

struct DiagdOptions {
  // The unix socket of rocenet.v1.Diagnostics (mode 0600: root only).
  std::string socket_path = "/run/rocenet/diagd.sock";
  // rocenetd's socket, for its WatchPorts stream.
  std::string node_socket = "/run/rocenet/rocenetd.sock";
  // TCP port of the data port; 0: do not listen (this node can coordinate
  // but not take part).
  uint16_t data_port = diag::kDefaultDataPort;
  // The cluster's shared secret for the data port; empty: none (the data
  // port stays closed).
  std::string secret_file;
  // Empty: $NODE_NAME, else the host name.
  std::string node_name;
  // host:port for Prometheus metrics (port 0: any free port; empty: off).
  std::string metrics_address = ":50154";
  // The NFD feature file of rocenet.io/scale-out-validated; empty: off.
  std::string validation_file;
  // How long a starting rocenet-diagd waits for another one still holding
  // the socket (a rolling update) before it gives up.
  absl::Duration takeover_wait = absl::Seconds(30);
};

absl::Status RunDiagd(const DiagdOptions& options);

}  // namespace rocenet::diagd
