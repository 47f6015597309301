// SPDX-License-Identifier: Apache-2.0
// What every rocectl command is told by the command line: where the daemon is,
// how long to wait for it, and how to print the answer.
//
// Plain values, thread-compatible. The flags that fill GlobalOptions live next
// to main (client/flags.cc); this header only knows the values and how to
// parse the output format, so the commands and their tests need no flags.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace rocenet::rocectl {

inline constexpr absl::string_view kDefaultSocketPath = "/run/rocenet/rocenetd.sock";
// rocenet-diagd's socket, beside rocenetd's unless --diag-socket says.
inline constexpr absl::string_view kDiagdSocketName = "diagd.sock";

// Which daemon a connection is for, in messages: its name and the flag
// that names its socket.
struct DaemonRef {
  std::string name = "rocenetd";
  std::string socket_flag = "--socket";
};

enum class OutputFormat {
  kTable,  // the columns an operator scans first
  kWide,   // the table plus every column we have
  kJson,   // the response message, for scripts
  kYaml,   // the same data as YAML, for people who prefer it to JSON
};

// "table", "wide", "json" or "yaml"; InvalidArgument naming the choices
// otherwise.
absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view text);
std::string OutputFormatName(OutputFormat format);

struct GlobalOptions {
  std::string socket_path = std::string(kDefaultSocketPath);
  // rocenet-diagd's socket (rocectl diag); empty: kDiagdSocketName in the
  // directory of socket_path.
  std::string diag_socket_path;
  // The daemon socket_path belongs to.
  DaemonRef daemon;
  // Deadline of each call to rocenetd.
  absl::Duration timeout = absl::Seconds(5);
  // Whether --timeout was on the command line (wait has a default of its own).
  bool timeout_given = false;
  OutputFormat output = OutputFormat::kTable;
  // rocenetd's TLS listener ("host:port") instead of the unix socket: the CA
  // that signed the daemon's certificate, and a client certificate and key
  // (needed to change the node remotely).
  std::string server;
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
};

// The options of a command that talks to rocenet-diagd: its socket in place
// of rocenetd's. FailedPrecondition with --server: rocenet-diagd serves its
// unix socket only.
absl::StatusOr<GlobalOptions> ForDiagd(const GlobalOptions& options);

}  // namespace rocenet::rocectl
