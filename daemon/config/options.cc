// SPDX-License-Identifier: Apache-2.0
#include "daemon/config/options.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/common/status_macros.h"
#include "daemon/common/suggest.h"
#include "daemon/config/config_yaml.h"
#include "daemon/config/health_options.h"
#include "daemon/config/qos_options.h"
#include "yaml-cpp/yaml.h"

namespace rocenet::config {
namespace {

// The config file's schema: every key rocenetd knows. Anything else is an
// error, so a typo never silently falls back to a default.
const std::set<std::string>& TopLevelKeys() {
  static const auto* keys = new std::set<std::string>{
      "socket",  "sysfs_root", "metrics_address", "state_dir",        "runtime_dir",
      "mode",    "log_format", "log_level",       "interfaces",       "drivers",
      "gaudi",   "addressing", "outputs",         "read_group",       "tls",
      "limits",  "diag_port",  "node_name",       "diag_secret_file", "qos",
      "hcl_dir", "health"};
  return *keys;
}
// Keys of the diagnostics, which moved to rocenet-diagd: still accepted (an
// older configuration starts), ignored, and no longer offered as
// suggestions.
const std::set<std::string>& MovedToDiagdKeys() {
  static const auto* keys = new std::set<std::string>{"diag_port", "node_name", "diag_secret_file"};
  return *keys;
}
const std::set<std::string>& GaudiKeys() {
  static const auto* keys = new std::set<std::string>{"enabled", "scale_out_ports"};
  return *keys;
}
const std::set<std::string>& AddressingKeys() {
  static const auto* keys = new std::set<std::string>{"mtu", "routed_prefix_length",
                                                      "static_routes", "reserved_networks"};
  return *keys;
}
const std::set<std::string>& OutputKeys() {
  static const auto* keys = new std::set<std::string>{
      "gaudinet", "networkd_dir", "nfd_features", "nfd_label", "network_manager", "cni_plugin"};
  return *keys;
}

absl::StatusOr<std::vector<std::string>> StringList(const YAML::Node& node,
                                                    const std::string& origin,
                                                    absl::string_view key) {
  if (!node.IsSequence()) return KeyError(origin, key, "must be a list of strings");
  std::vector<std::string> out;
  for (const YAML::Node& item : node) {
    if (!item.IsScalar()) return KeyError(origin, key, "must be a list of strings");
    out.push_back(item.Scalar());
  }
  return out;
}

// The largest NIC index of a Gaudi ASIC: 24 ports, 0..23.
constexpr int kMaxGaudiNicIndex = 23;

absl::Status ApplyGaudi(const YAML::Node& node, const std::string& origin, DaemonOptions& options) {
  if (!node.IsMap()) return KeyError(origin, "gaudi", "must be a mapping");
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const std::string path = absl::StrCat("gaudi.", key);
    if (!GaudiKeys().contains(key)) return UnknownKeyError(origin, path);
    if (key == "enabled") {
      ASSIGN_OR_RETURN(options.selection.gaudi, Bool(entry.second, origin, path));
    } else if (key == "scale_out_ports") {
      if (!entry.second.IsSequence()) {
        return KeyError(origin, path, "must be a list of port indices");
      }
      options.selection.gaudi_scale_out_ports.clear();
      for (const YAML::Node& item : entry.second) {
        int index = 0;
        if (!item.IsScalar() || IsQuoted(item) || !absl::SimpleAtoi(item.Scalar(), &index)) {
          return KeyError(origin, path, "must be a list of port indices");
        }
        // The NIC indices of a Gaudi ASIC (sysfs dev_port).
        if (index < 0 || index > kMaxGaudiNicIndex) {
          return KeyError(origin, path,
                          absl::StrCat("port index ", index, " is not a Gaudi NIC index (0..",
                                       kMaxGaudiNicIndex, ")"));
        }
        options.selection.gaudi_scale_out_ports.insert(index);
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int> Int(const YAML::Node& node, const std::string& origin, absl::string_view key) {
  int value = 0;
  if (!node.IsScalar() || !absl::SimpleAtoi(node.Scalar(), &value)) {
    return KeyError(origin, key, "must be an integer");
  }
  if (IsQuoted(node)) {
    return KeyError(origin, key,
                    absl::StrCat("must be an integer, not the string \"", node.Scalar(),
                                 "\" (write it without quotes)"));
  }
  return value;
}

absl::Status ApplyAddressing(const YAML::Node& node, const std::string& origin,
                             DaemonOptions& options) {
  if (!node.IsMap()) return KeyError(origin, "addressing", "must be a mapping");
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const std::string path = absl::StrCat("addressing.", key);
    if (!AddressingKeys().contains(key)) return UnknownKeyError(origin, path);
    if (key == "mtu") {
      ASSIGN_OR_RETURN(int mtu, Int(entry.second, origin, path));
      if (mtu < 0) return KeyError(origin, path, "must not be negative");
      options.mtu = static_cast<uint32_t>(mtu);
    } else if (key == "routed_prefix_length") {
      ASSIGN_OR_RETURN(options.routed_prefix_length, Int(entry.second, origin, path));
    } else if (key == "static_routes") {
      ASSIGN_OR_RETURN(std::vector<std::string> routes, StringList(entry.second, origin, path));
      options.static_routes.clear();
      for (const std::string& route : routes) {
        absl::StatusOr<Ipv4Prefix> prefix = Ipv4Prefix::Parse(route);
        if (!prefix.ok()) return KeyError(origin, path, prefix.status().message());
        options.static_routes.push_back({*prefix});
      }
    } else if (key == "reserved_networks") {
      ASSIGN_OR_RETURN(std::vector<std::string> networks, StringList(entry.second, origin, path));
      options.reserved_networks.clear();
      for (const std::string& network : networks) {
        absl::StatusOr<Ipv4Prefix> prefix = Ipv4Prefix::Parse(network);
        if (!prefix.ok()) return KeyError(origin, path, prefix.status().message());
        options.reserved_networks.push_back(*prefix);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ApplyOutputs(const YAML::Node& node, const std::string& origin,
                          DaemonOptions& options) {
  if (!node.IsMap()) return KeyError(origin, "outputs", "must be a mapping");
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const std::string path = absl::StrCat("outputs.", key);
    if (!OutputKeys().contains(key)) return UnknownKeyError(origin, path);
    ASSIGN_OR_RETURN(std::string value, Scalar(entry.second, origin, path));
    if (key == "gaudinet") options.outputs.gaudinet_path = value;
    if (key == "networkd_dir") options.outputs.networkd_dir = value;
    if (key == "nfd_features") options.outputs.nfd_features_path = value;
    if (key == "nfd_label") options.outputs.nfd_label = value;
    if (key == "network_manager") options.outputs.network_manager_path = value;
    if (key == "cni_plugin") options.outputs.cni_plugin_path = value;
  }
  return absl::OkStatus();
}

absl::Status ApplyKey(const std::string& key, const YAML::Node& value, const std::string& origin,
                      DaemonOptions& options) {
  if (key == "gaudi") return ApplyGaudi(value, origin, options);
  if (key == "addressing") return ApplyAddressing(value, origin, options);
  if (key == "outputs") return ApplyOutputs(value, origin, options);
  if (key == "qos") return ApplyQos(value, origin, options.pfc, options.pfc_unhealthy);
  if (key == "health") return ApplyHealth(value, origin, options.health);
  if (key == "read_group" || key == "tls" || key == "limits") {
    return ApplySecurityKey(key, value, origin, options.security);
  }
  if (key == "interfaces") {
    ASSIGN_OR_RETURN(options.selection.interfaces, StringList(value, origin, key));
    return absl::OkStatus();
  }
  if (MovedToDiagdKeys().contains(key)) {
    options.moved_to_diagd.insert(key);
    return absl::OkStatus();
  }
  if (key == "drivers") {
    ASSIGN_OR_RETURN(options.selection.drivers, StringList(value, origin, key));
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(std::string text, Scalar(value, origin, key));
  auto wrap = [&](absl::Status s) { return s.ok() ? s : KeyError(origin, key, s.message()); };
  if (key == "socket") {
    options.socket_path = text;
  } else if (key == "sysfs_root") {
    options.sysfs_root = text;
  } else if (key == "metrics_address") {
    options.metrics_address = text;
  } else if (key == "state_dir") {
    options.state_dir = text;
  } else if (key == "runtime_dir") {
    options.runtime_dir = text;
  } else if (key == "hcl_dir") {
    options.hcl_dir = text;
  } else if (key == "mode") {
    absl::StatusOr<AddressingMode> mode = ParseMode(text);
    if (!mode.ok()) return wrap(mode.status());
    options.mode = *mode;
  } else if (key == "log_format") {
    absl::StatusOr<LogFormat> format = ParseLogFormat(text);
    if (!format.ok()) return wrap(format.status());
    options.log_format = *format;
  } else if (key == "log_level") {
    absl::StatusOr<spdlog::level::level_enum> level = ParseLogLevel(text);
    if (!level.ok()) return wrap(level.status());
    options.log_level = *level;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AddressingMode> ParseMode(absl::string_view text) {
  if (text == "L3") return AddressingMode::kL3;
  if (text == "L2") return AddressingMode::kL2;
  return absl::InvalidArgumentError(absl::StrCat("mode \"", text, "\" is not one of: L3, L2"));
}

std::string RuntimeDirOf(const DaemonOptions& options) {
  if (!options.runtime_dir.empty()) return options.runtime_dir;
  const size_t slash = options.socket_path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : options.socket_path.substr(0, slash);
}

std::vector<std::string> ConfigKeys() {
  const std::map<std::string, const std::set<std::string>*> sections = {
      {"gaudi", &GaudiKeys()}, {"addressing", &AddressingKeys()}, {"outputs", &OutputKeys()},
      {"qos", &QosKeys()},     {"health", &HealthKeys()},         {"tls", &TlsKeys()},
      {"limits", &LimitKeys()}};
  std::vector<std::string> keys;
  for (const std::string& key : TopLevelKeys()) {
    if (MovedToDiagdKeys().contains(key)) continue;
    auto section = sections.find(key);
    if (section == sections.end()) {
      keys.push_back(key);
      continue;
    }
    for (const std::string& sub : *section->second) keys.push_back(absl::StrCat(key, ".", sub));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

absl::Status UnknownKeyError(const std::string& origin, const std::string& path) {
  const size_t dot = path.rfind('.');
  const std::string parent = dot == std::string::npos ? "" : path.substr(0, dot + 1);
  const std::string leaf = dot == std::string::npos ? path : path.substr(dot + 1);
  // First the keys beside it ("mtuu" for "addressing.mtu"), then the same
  // key at another level ("mtu" for "addressing.mtu").
  std::vector<std::string> beside;
  std::vector<std::string> leaves;
  std::vector<std::string> keys = ConfigKeys();
  for (const std::string& key : keys) {
    const size_t key_dot = key.rfind('.');
    const std::string key_parent = key_dot == std::string::npos ? "" : key.substr(0, key_dot + 1);
    const std::string key_leaf = key_dot == std::string::npos ? key : key.substr(key_dot + 1);
    if (key_parent == parent) beside.push_back(key_leaf);
    if (parent.empty() && key_dot != std::string::npos) beside.push_back(key.substr(0, key_dot));
    leaves.push_back(key_leaf);
  }
  std::string hint;
  if (const std::string near = ClosestMatch(leaf, beside); !near.empty()) {
    hint = absl::StrCat("; did you mean \"", parent, near, "\"?");
  } else if (const std::string other = ClosestMatch(leaf, leaves); !other.empty()) {
    for (const std::string& key : keys) {
      if (key == other || absl::EndsWith(key, absl::StrCat(".", other))) {
        hint = absl::StrCat("; did you mean \"", key, "\" (",
                            key.find('.') == std::string::npos
                                ? std::string("a top-level key")
                                : absl::StrCat("under ", key.substr(0, key.rfind('.')), ":"),
                            ")?");
        break;
      }
    }
  }
  return KeyError(origin, path, absl::StrCat("unknown key", hint));
}

absl::Status ApplyConfigYaml(const std::string& yaml, const std::string& origin,
                             DaemonOptions& options) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": not valid YAML: ", e.what()));
  }
  if (root.IsNull()) return absl::OkStatus();  // an empty file sets nothing
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": must be a mapping of keys"));
  }
  DaemonOptions next = options;
  try {
    for (const auto& entry : root) {
      if (!entry.first.IsScalar()) {
        return absl::InvalidArgumentError(absl::StrCat(origin, ": keys must be strings"));
      }
      const std::string key = entry.first.Scalar();
      if (!TopLevelKeys().contains(key)) return UnknownKeyError(origin, key);
      RETURN_IF_ERROR(ApplyKey(key, entry.second, origin, next));
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": ", e.what()));
  }
  options = std::move(next);
  return absl::OkStatus();
}

absl::Status ValidateOptions(const DaemonOptions& options) {
  if (options.socket_path.empty() || options.socket_path[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("socket \"", options.socket_path, "\": must be an absolute path"));
  }
  // sun_path holds 108 bytes including the terminating NUL.
  if (options.socket_path.size() > 107) {
    return absl::InvalidArgumentError(
        absl::StrCat("socket \"", options.socket_path, "\": longer than 107 bytes"));
  }
  if (options.state_dir.empty() || options.state_dir[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("state_dir \"", options.state_dir, "\": must be an absolute path"));
  }
  if (!options.runtime_dir.empty() && options.runtime_dir[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("runtime_dir \"", options.runtime_dir, "\": must be an absolute path"));
  }
  if (!options.hcl_dir.empty() && options.hcl_dir[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("hcl_dir \"", options.hcl_dir, "\": must be an absolute path or \"\""));
  }
  if (options.sysfs_root.empty()) {
    return absl::InvalidArgumentError("sysfs_root: must not be empty");
  }
  if (!options.metrics_address.empty()) {
    absl::StatusOr<std::pair<std::string, int>> listen =
        ParseListenAddress(options.metrics_address);
    if (!listen.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("metrics_address: ", listen.status().message()));
    }
  }
  for (const std::string* path :
       {&options.outputs.gaudinet_path, &options.outputs.networkd_dir,
        &options.outputs.nfd_features_path, &options.outputs.network_manager_path,
        &options.outputs.cni_plugin_path}) {
    if (!path->empty() && (*path)[0] != '/') {
      return absl::InvalidArgumentError(
          absl::StrCat("outputs: path \"", *path, "\" must be absolute"));
    }
  }
  if (absl::Status s = addressing::ValidatePlannerConfig(PlannerConfigOf(options)); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("addressing: ", s.message()));
  }
  RETURN_IF_ERROR(ValidateSecurityOptions(options.security));
  return inventory::ValidateSelection(options.selection);
}

addressing::PlannerConfig PlannerConfigOf(const DaemonOptions& options) {
  addressing::PlannerConfig config;
  config.mode = options.mode;
  config.mtu = options.mtu;
  config.routed_prefix_length = options.routed_prefix_length;
  config.static_routes = options.static_routes;
  config.reserved_networks = options.reserved_networks;
  return config;
}

}  // namespace rocenet::config
