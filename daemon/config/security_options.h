// SPDX-License-Identifier: Apache-2.0
// The security part of rocenetd's options: who may use the unix socket, the
// optional TLS listener for remote admin, and the limits on requests.
//
// Parsed from the YAML keys `read_group`, `tls.*` and `limits.*` (and their
// flags in daemon_main.cc). Pure functions; the files and the group the
// options name are checked by the daemon (server/security_files.h). Errors
// are InvalidArgument naming the key.
#pragma once

#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "yaml-cpp/yaml.h"

namespace rocenet::config {

enum class ClientCertMode {
  kNone,      // no client certificate asked for
  kOptional,  // asked for, verified against client_ca when presented
  kRequire,   // a verified client certificate is required to connect
};

absl::StatusOr<ClientCertMode> ParseClientCertMode(absl::string_view text);
std::string ClientCertModeName(ClientCertMode mode);

struct TlsListenerOptions {
  // "host:port"; empty: no TCP listener. Port 0 picks a free port.
  std::string address;
  std::string cert;       // PEM server certificate (chain)
  std::string key;        // PEM private key of cert
  std::string client_ca;  // PEM CA bundle that client certificates must chain to
  ClientCertMode client_cert = ClientCertMode::kNone;
};

struct LimitOptions {
  int max_request_bytes = 1 << 20;
  int max_concurrent_streams = 64;
  // Calls that change the node (Reconcile, Attach, Detach, Gc), all callers
  // together: a sustained rate and a burst.
  double mutating_rpcs_per_second = 20;
  int mutating_rpc_burst = 100;
  // Bound on every string field of a request.
  int max_string_bytes = 4096;
};

struct SecurityOptions {
  // Group (name or gid) whose members may call read-only RPCs on the unix
  // socket; the socket is then root:<group> 0660. Empty: root only, 0600.
  std::string read_group;
  TlsListenerOptions tls;
  LimitOptions limits;
};

// The keys of sections "tls" and "limits".
const std::set<std::string>& TlsKeys();
const std::set<std::string>& LimitKeys();

// Applies top-level key `key` ("read_group", "tls" or "limits") of a config
// document. `origin` names the document in messages.
absl::Status ApplySecurityKey(const std::string& key, const YAML::Node& value,
                              const std::string& origin, SecurityOptions& options);

// Checks what no single key can: the TLS listener needs cert and key, client
// certificates need client_ca, limits are positive.
absl::Status ValidateSecurityOptions(const SecurityOptions& options);

}  // namespace rocenet::config
