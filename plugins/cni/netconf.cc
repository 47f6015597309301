// SPDX-License-Identifier: Apache-2.0
#include "plugins/cni/netconf.h"

#include <sys/un.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/common/status_macros.h"
#include "plugins/cni/errors.h"

namespace rocenet::cni {
namespace {

using Json = nlohmann::ordered_json;

constexpr int64_t kMinMtu = 68;  // the IPv4 minimum (RFC 791)
constexpr int64_t kMaxMtu = 65535;
// sun_path holds the path and its terminating NUL.
constexpr size_t kMaxSocketPath = sizeof(sockaddr_un::sun_path) - 1;
// Objects and arrays inside one another in the configuration, at most.
constexpr int kMaxJsonDepth = 64;

absl::Status ConfigError(absl::string_view msg) {
  return CniError(CniCode::kInvalidNetworkConfig, msg);
}

// A JSON value for a message, cut short.
std::string Shown(const Json& value) {
  std::string text = value.dump();
  if (text.size() > 64) text = absl::StrCat(text.substr(0, 61), "...");
  return text;
}

std::string Supported() { return absl::StrJoin(kSupportedVersions, ", "); }

bool IsSupported(absl::string_view version) {
  return std::find(kSupportedVersions.begin(), kSupportedVersions.end(), version) !=
         kSupportedVersions.end();
}

// The member `key` of `object`, or nullptr when absent or null.
const Json* Member(const Json& object, absl::string_view key) {
  const auto it = object.find(std::string(key));
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

// A string member; nullopt when absent. `path` names it in messages.
absl::StatusOr<std::optional<std::string>> StringMember(const Json& object, absl::string_view key,
                                                        absl::string_view path) {
  const Json* value = Member(object, key);
  if (value == nullptr) return std::optional<std::string>();
  if (!value->is_string()) {
    return ConfigError(absl::StrCat(path, ": must be a string, got ", Shown(*value)));
  }
  return std::optional<std::string>(value->get<std::string>());
}

absl::StatusOr<std::string> RequiredString(const Json& object, absl::string_view key) {
  ASSIGN_OR_RETURN(std::optional<std::string> value, StringMember(object, key, key));
  if (!value.has_value() || value->empty()) return ConfigError(absl::StrCat(key, ": missing"));
  return *std::move(value);
}

absl::StatusOr<Json> ParseObject(absl::string_view config) {
  if (absl::StripAsciiWhitespace(config).empty()) {
    return CniError(CniCode::kDecodingFailure,
                    "network configuration: stdin is empty (want a JSON object)");
  }
  // The parser itself is iterative, but printing a value in a message
  // recurses once per level, so a deeply nested value (`"mtu": [[[...]]]`,
  // a few hundred KB of brackets) overflowed the stack. No configuration
  // needs more than a handful of levels.
  bool too_deep = false;
  const Json::parser_callback_t limit_depth = [&too_deep](int depth, Json::parse_event_t, Json&) {
    if (depth > kMaxJsonDepth) too_deep = true;
    return !too_deep;
  };
  Json parsed;
  try {
    parsed = Json::parse(config.begin(), config.end(), limit_depth);
  } catch (const Json::exception& error) {
    // parse_error, or out_of_range for a number too large for a double
    // ("1e400"), which escaped and aborted the plugin.
    // what() starts with "[json.exception.parse_error.101] ".
    absl::string_view what = error.what();
    if (const size_t bracket = what.find("] "); bracket != absl::string_view::npos) {
      what.remove_prefix(bracket + 2);
    }
    return CniError(CniCode::kDecodingFailure,
                    absl::StrCat("network configuration: invalid JSON: ", what));
  }
  if (too_deep) {
    return CniError(
        CniCode::kDecodingFailure,
        absl::StrCat("network configuration: nested deeper than ", kMaxJsonDepth, " levels"));
  }
  if (!parsed.is_object()) {
    return CniError(
        CniCode::kDecodingFailure,
        absl::StrCat("network configuration: want a JSON object, got ", parsed.type_name()));
  }
  return parsed;
}

absl::StatusOr<std::string> ParseVersion(Command command, const Json& config) {
  const Json* value = Member(config, "cniVersion");
  if (value == nullptr) {
    return ConfigError(absl::StrCat("cniVersion: missing (rocenet supports ", Supported(), ")"));
  }
  if (!value->is_string()) {
    return ConfigError(absl::StrCat("cniVersion: must be a string, got ", Shown(*value)));
  }
  const std::string version = value->get<std::string>();
  if (!IsSupported(version)) {
    return CniError(CniCode::kIncompatibleVersion,
                    absl::StrCat("cniVersion: \"", version,
                                 "\" is not supported (rocenet supports ", Supported(), ")"));
  }
  if ((command == Command::kGc || command == Command::kStatus) && version != "1.1.0") {
    return CniError(CniCode::kIncompatibleVersion,
                    absl::StrCat("cniVersion: ", CommandName(command),
                                 " needs 1.1.0, the configuration says ", version));
  }
  return version;
}

absl::Status ValidateNetworkName(absl::string_view name) {
  const auto bad = std::find_if(name.begin(), name.end(), [](char c) {
    return !absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-';
  });
  if (!absl::ascii_isalnum(static_cast<unsigned char>(name.front())) || bad != name.end()) {
    return ConfigError(absl::StrCat("name: \"", name,
                                    "\" must be a letter or digit followed by letters, digits, "
                                    "'_', '.' or '-'"));
  }
  return absl::OkStatus();
}

absl::Status ParseDaemonKeys(const Json& config, NetConf& conf) {
  ASSIGN_OR_RETURN(std::optional<std::string> socket, StringMember(config, "socket", "socket"));
  if (socket.has_value()) {
    if (socket->empty() || socket->front() != '/') {
      return ConfigError(absl::StrCat("socket: \"", *socket, "\" is not an absolute path"));
    }
    if (socket->size() > kMaxSocketPath) {
      return ConfigError(absl::StrCat("socket: path is ", socket->size(),
                                      " bytes long, a unix socket path allows at most ",
                                      kMaxSocketPath));
    }
    conf.socket = *std::move(socket);
  }
  if (const Json* timeout = Member(config, "timeout"); timeout != nullptr) {
    absl::Duration parsed;
    if (!timeout->is_string() ||
        !absl::ParseDuration(timeout->get_ref<const std::string&>(), &parsed)) {
      return ConfigError(absl::StrCat(
          "timeout: must be a duration such as \"10s\" or \"500ms\", got ", Shown(*timeout)));
    }
    if (parsed <= absl::ZeroDuration() || parsed > kMaxTimeout) {
      return ConfigError(absl::StrCat("timeout: ", Shown(*timeout), " is out of range (0, ",
                                      absl::FormatDuration(kMaxTimeout), "]"));
    }
    conf.timeout = parsed;
  }
  return absl::OkStatus();
}

absl::Status ParseAttachKeys(const Json& config, NetConf& conf) {
  if (const Json* routes = Member(config, "routes"); routes != nullptr) {
    return CniError(
        CniCode::kUnsupportedField,
        absl::StrCat("routes: ", Shown(*routes),
                     " is not supported: rocenetd sets the routes of the port's LLDP plan"));
  }
  ASSIGN_OR_RETURN(std::optional<std::string> mode, StringMember(config, "mode", "mode"));
  if (mode.has_value()) {
    if (*mode != "L3" && *mode != "L2") {
      return ConfigError(absl::StrCat("mode: \"", *mode, "\" is not L3 or L2"));
    }
    conf.mode = *std::move(mode);
  }
  if (const Json* mtu = Member(config, "mtu"); mtu != nullptr) {
    if (!mtu->is_number_integer()) {
      return ConfigError(absl::StrCat("mtu: must be an integer, got ", Shown(*mtu)));
    }
    const bool in_range = mtu->is_number_unsigned()
                              ? mtu->get<uint64_t>() <= static_cast<uint64_t>(kMaxMtu) &&
                                    mtu->get<uint64_t>() >= static_cast<uint64_t>(kMinMtu)
                              : mtu->get<int64_t>() >= kMinMtu && mtu->get<int64_t>() <= kMaxMtu;
    if (!in_range) {
      return ConfigError(absl::StrCat("mtu: ", Shown(*mtu), " is out of range ", kMinMtu, "..",
                                      kMaxMtu, " (leave mtu out to keep the port's MTU)"));
    }
    conf.mtu = static_cast<uint32_t>(mtu->get<int64_t>());
  }
  ASSIGN_OR_RETURN(std::optional<std::string> device_id,
                   StringMember(config, "deviceID", "deviceID"));
  if (const Json* runtime = Member(config, "runtimeConfig"); runtime != nullptr) {
    if (!runtime->is_object()) {
      return ConfigError(absl::StrCat("runtimeConfig: must be an object, got ", Shown(*runtime)));
    }
    ASSIGN_OR_RETURN(std::optional<std::string> runtime_device,
                     StringMember(*runtime, "deviceID", "runtimeConfig.deviceID"));
    if (runtime_device.has_value() && !runtime_device->empty()) device_id = runtime_device;
  }
  if (device_id.has_value()) conf.device_id = *std::move(device_id);
  if (const Json* any = Member(config, "anyFreePort"); any != nullptr) {
    if (!any->is_boolean()) {
      return ConfigError(absl::StrCat("anyFreePort: must be true or false, got ", Shown(*any)));
    }
    conf.any_free_port = any->get<bool>();
  }
  return absl::OkStatus();
}

absl::Status CheckArrayOfObjects(const Json& object, absl::string_view key,
                                 absl::string_view path) {
  const Json* array = Member(object, key);
  if (array == nullptr) return absl::OkStatus();
  if (!array->is_array()) {
    return ConfigError(absl::StrCat(path, ".", key, ": must be an array, got ", Shown(*array)));
  }
  for (size_t i = 0; i < array->size(); ++i) {
    if (!(*array)[i].is_object()) {
      return ConfigError(
          absl::StrCat(path, ".", key, "[", i, "]: must be an object, got ", Shown((*array)[i])));
    }
  }
  return absl::OkStatus();
}

absl::Status ParsePrevResult(const Json& config, NetConf& conf) {
  const Json* prev = Member(config, "prevResult");
  if (prev == nullptr) return absl::OkStatus();
  if (!prev->is_object()) {
    return ConfigError(absl::StrCat("prevResult: must be an object, got ", Shown(*prev)));
  }
  for (const absl::string_view key : {"interfaces", "ips", "routes"}) {
    RETURN_IF_ERROR(CheckArrayOfObjects(*prev, key, "prevResult"));
  }
  conf.prev_result = *prev;
  return absl::OkStatus();
}

absl::Status ParseValidAttachments(const Json& config, NetConf& conf) {
  absl::string_view key = "cni.dev/valid-attachments";
  const Json* list = Member(config, key);
  if (list == nullptr) {
    key = "cni.dev/attachments";
    list = Member(config, key);
  }
  // Without the list every attachment would look stale: refuse rather than
  // release the ports of running pods.
  if (list == nullptr) {
    return ConfigError("cni.dev/valid-attachments: missing (GC needs the attachments to keep)");
  }
  if (!list->is_array()) {
    return ConfigError(absl::StrCat(key, ": must be an array, got ", Shown(*list)));
  }
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& entry = (*list)[i];
    const std::string path = absl::StrCat(key, "[", i, "]");
    if (!entry.is_object()) {
      return ConfigError(absl::StrCat(path, ": must be an object, got ", Shown(entry)));
    }
    ASSIGN_OR_RETURN(std::optional<std::string> id,
                     StringMember(entry, "containerID", absl::StrCat(path, ".containerID")));
    if (!id.has_value() || id->empty()) {
      return ConfigError(absl::StrCat(path, ".containerID: missing"));
    }
    ASSIGN_OR_RETURN(std::optional<std::string> ifname,
                     StringMember(entry, "ifname", absl::StrCat(path, ".ifname")));
    conf.valid_attachments.push_back({*std::move(id), ifname.value_or("")});
  }
  return absl::OkStatus();
}

}  // namespace

std::string ReplyVersion(absl::string_view config) {
  const Json parsed = Json::parse(config.begin(), config.end(), nullptr,
                                  /*allow_exceptions=*/false);
  if (parsed.is_object()) {
    const Json* version = Member(parsed, "cniVersion");
    if (version != nullptr && version->is_string() &&
        IsSupported(version->get_ref<const std::string&>())) {
      return version->get<std::string>();
    }
  }
  return std::string(kLatestVersion);
}

absl::StatusOr<NetConf> ParseNetConf(Command command, absl::string_view config_text) {
  ASSIGN_OR_RETURN(const Json config, ParseObject(config_text));
  NetConf conf;
  ASSIGN_OR_RETURN(conf.cni_version, ParseVersion(command, config));
  ASSIGN_OR_RETURN(conf.name, RequiredString(config, "name"));
  RETURN_IF_ERROR(ValidateNetworkName(conf.name));
  ASSIGN_OR_RETURN(conf.type, RequiredString(config, "type"));
  RETURN_IF_ERROR(ParseDaemonKeys(config, conf));
  if (command == Command::kAdd || command == Command::kCheck) {
    RETURN_IF_ERROR(ParseAttachKeys(config, conf));
    RETURN_IF_ERROR(ParsePrevResult(config, conf));
  }
  if (command == Command::kCheck && !conf.prev_result.has_value()) {
    return ConfigError("prevResult: missing (CHECK compares the attachment with the ADD result)");
  }
  if (command == Command::kGc) RETURN_IF_ERROR(ParseValidAttachments(config, conf));
  return conf;
}

absl::StatusOr<Request> ParseRequest(Command command, const Environment& env,
                                     absl::string_view config) {
  Request request;
  ASSIGN_OR_RETURN(request.invocation, ParseInvocation(command, env));
  ASSIGN_OR_RETURN(request.conf, ParseNetConf(command, config));
  return request;
}

}  // namespace rocenet::cni
