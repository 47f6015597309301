// SPDX-License-Identifier: Apache-2.0
#include "daemon/config/security_options.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "daemon/common/status_macros.h"
#include "daemon/config/config_yaml.h"
#include "daemon/config/options.h"

namespace rocenet::config {
namespace {

absl::StatusOr<int> PositiveInt(const YAML::Node& node, const std::string& origin,
                                absl::string_view key) {
  int value = 0;
  // A quoted scalar ("64") is a string in YAML: refused like any other.
  if (!node.IsScalar() || node.Tag() == "!" || !absl::SimpleAtoi(node.Scalar(), &value) ||
      value <= 0) {
    return KeyError(origin, key, "must be a positive integer");
  }
  return value;
}

absl::Status ApplyTls(const YAML::Node& node, const std::string& origin, TlsListenerOptions& tls) {
  if (!node.IsMap()) return KeyError(origin, "tls", "must be a mapping");
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const std::string path = absl::StrCat("tls.", key);
    if (!TlsKeys().contains(key)) return UnknownKeyError(origin, path);
    ASSIGN_OR_RETURN(std::string value, Scalar(entry.second, origin, path));
    if (key == "address") tls.address = value;
    if (key == "cert") tls.cert = value;
    if (key == "key") tls.key = value;
    if (key == "client_ca") tls.client_ca = value;
    if (key == "client_cert") {
      absl::StatusOr<ClientCertMode> mode = ParseClientCertMode(value);
      if (!mode.ok()) return KeyError(origin, path, mode.status().message());
      tls.client_cert = *mode;
    }
  }
  return absl::OkStatus();
}

absl::Status ApplyLimits(const YAML::Node& node, const std::string& origin, LimitOptions& limits) {
  if (!node.IsMap()) return KeyError(origin, "limits", "must be a mapping");
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const std::string path = absl::StrCat("limits.", key);
    if (!LimitKeys().contains(key)) return UnknownKeyError(origin, path);
    if (key == "mutating_rpcs_per_second") {
      double rate = 0;
      if (!entry.second.IsScalar() || !absl::SimpleAtod(entry.second.Scalar(), &rate) ||
          !(rate > 0)) {
        return KeyError(origin, path, "must be a positive number");
      }
      limits.mutating_rpcs_per_second = rate;
      continue;
    }
    ASSIGN_OR_RETURN(int value, PositiveInt(entry.second, origin, path));
    if (key == "max_request_bytes") limits.max_request_bytes = value;
    if (key == "max_concurrent_streams") limits.max_concurrent_streams = value;
    if (key == "mutating_rpc_burst") limits.mutating_rpc_burst = value;
    if (key == "max_string_bytes") limits.max_string_bytes = value;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ClientCertMode> ParseClientCertMode(absl::string_view text) {
  if (text == "none") return ClientCertMode::kNone;
  if (text == "optional") return ClientCertMode::kOptional;
  if (text == "require") return ClientCertMode::kRequire;
  return absl::InvalidArgumentError(absl::StrCat("client certificate mode \"", text,
                                                 "\" is not one of: none, optional, require"));
}

std::string ClientCertModeName(ClientCertMode mode) {
  switch (mode) {
    case ClientCertMode::kNone:
      return "none";
    case ClientCertMode::kOptional:
      return "optional";
    case ClientCertMode::kRequire:
      return "require";
  }
  return "none";
}

const std::set<std::string>& TlsKeys() {
  static const auto* keys =
      new std::set<std::string>{"address", "cert", "key", "client_ca", "client_cert"};
  return *keys;
}

const std::set<std::string>& LimitKeys() {
  static const auto* keys = new std::set<std::string>{"max_request_bytes", "max_concurrent_streams",
                                                      "mutating_rpcs_per_second",
                                                      "mutating_rpc_burst", "max_string_bytes"};
  return *keys;
}

absl::Status ApplySecurityKey(const std::string& key, const YAML::Node& value,
                              const std::string& origin, SecurityOptions& options) {
  if (key == "tls") return ApplyTls(value, origin, options.tls);
  if (key == "limits") return ApplyLimits(value, origin, options.limits);
  if (key == "read_group") {
    ASSIGN_OR_RETURN(options.read_group, Scalar(value, origin, key));
    return absl::OkStatus();
  }
  return UnknownKeyError(origin, key);
}

absl::Status ValidateSecurityOptions(const SecurityOptions& options) {
  const TlsListenerOptions& tls = options.tls;
  if (!tls.address.empty()) {
    absl::StatusOr<std::pair<std::string, int>> listen = ParseListenAddress(tls.address);
    if (!listen.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tls.address (--tls-address): ", listen.status().message()));
    }
    if (tls.cert.empty()) {
      return absl::InvalidArgumentError(
          "tls.cert (--tls-cert): a server certificate is required for the TLS listener");
    }
    if (tls.key.empty()) {
      return absl::InvalidArgumentError(
          "tls.key (--tls-key): the server certificate's key is required for the TLS listener");
    }
    if (tls.client_cert != ClientCertMode::kNone && tls.client_ca.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tls.client_ca (--tls-client-ca): required to verify client certificates with "
          "tls.client_cert ",
          ClientCertModeName(tls.client_cert)));
    }
  }
  const LimitOptions& limits = options.limits;
  if (limits.max_request_bytes <= 0 || limits.max_concurrent_streams <= 0 ||
      limits.mutating_rpc_burst <= 0 || limits.max_string_bytes <= 0 ||
      !(limits.mutating_rpcs_per_second > 0)) {
    return absl::InvalidArgumentError("limits: every limit must be positive");
  }
  return absl::OkStatus();
}

}  // namespace rocenet::config
