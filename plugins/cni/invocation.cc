// SPDX-License-Identifier: Apache-2.0
#include "plugins/cni/invocation.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "daemon/common/status_macros.h"
#include "plugins/cni/errors.h"

namespace rocenet::cni {
namespace {

struct CommandEntry {
  absl::string_view name;
  Command command;
};

constexpr std::array<CommandEntry, 6> kCommands = {{
    {"ADD", Command::kAdd},
    {"DEL", Command::kDel},
    {"CHECK", Command::kCheck},
    {"VERSION", Command::kVersion},
    {"GC", Command::kGc},
    {"STATUS", Command::kStatus},
}};

// Linux's IFNAMSIZ is 16 including the terminating NUL.
constexpr size_t kMaxInterfaceName = 15;

absl::Status EnvError(absl::string_view msg) { return CniError(CniCode::kInvalidEnvironment, msg); }

// An unset and an empty variable are the same to CNI.
absl::string_view Lookup(const Environment& env, absl::string_view name) {
  const auto it = env.find(name);
  return it == env.end() ? absl::string_view() : absl::string_view(it->second);
}

bool IsNameStart(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)); }

bool IsNameChar(char c) { return IsNameStart(c) || c == '_' || c == '.' || c == '-'; }

// The kernel's isspace() (lib/ctype.c) also counts Latin-1 NBSP, 0xA0.
bool IsKernelSpace(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  return u == ' ' || (u >= '\t' && u <= '\r') || u == 0xA0;
}

absl::StatusOr<bool> ParseBool(absl::string_view key, absl::string_view value) {
  const std::string lower = absl::AsciiStrToLower(value);
  if (lower == "1" || lower == "true") return true;
  if (lower == "0" || lower == "false") return false;
  return EnvError(
      absl::StrCat("CNI_ARGS: ", key, "=", value, " is not a boolean (want true or false)"));
}

}  // namespace

Environment EnvironmentFrom(const char* const* envp) {
  Environment env;
  for (const char* const* entry = envp; entry != nullptr && *entry != nullptr; ++entry) {
    const absl::string_view pair(*entry);
    const size_t equals = pair.find('=');
    if (equals != absl::string_view::npos) {
      env.emplace(std::string(pair.substr(0, equals)), std::string(pair.substr(equals + 1)));
    }
  }
  return env;
}

absl::string_view CommandName(Command command) {
  for (const CommandEntry& entry : kCommands) {
    if (entry.command == command) return entry.name;
  }
  return "UNKNOWN";
}

absl::StatusOr<Command> ParseCommand(const Environment& env) {
  const absl::string_view value = Lookup(env, "CNI_COMMAND");
  if (value.empty()) {
    return EnvError("CNI_COMMAND: missing (want ADD, DEL, CHECK, GC, STATUS or VERSION)");
  }
  for (const CommandEntry& entry : kCommands) {
    if (entry.name == value) return entry.command;
  }
  return EnvError(absl::StrCat("CNI_COMMAND: unknown command \"", value,
                               "\" (want ADD, DEL, CHECK, GC, STATUS or VERSION)"));
}

absl::Status ValidateContainerId(absl::string_view variable, absl::string_view id) {
  if (id.empty()) return EnvError(absl::StrCat(variable, ": empty"));
  if (!IsNameStart(id.front())) {
    return EnvError(absl::StrCat(variable, ": \"", id, "\" must start with a letter or a digit"));
  }
  for (const char c : id) {
    if (!IsNameChar(c)) {
      return EnvError(absl::StrCat(variable, ": \"", id, "\" contains '",
                                   absl::CHexEscape(absl::string_view(&c, 1)),
                                   "' (allowed: letters, digits, '_', '.', '-')"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateInterfaceName(absl::string_view variable, absl::string_view name) {
  if (name.empty()) return EnvError(absl::StrCat(variable, ": empty"));
  if (name.size() > kMaxInterfaceName) {
    return EnvError(absl::StrCat(variable, ": \"", name, "\" is ", name.size(),
                                 " bytes long, Linux allows at most ", kMaxInterfaceName));
  }
  if (name == "." || name == "..") {
    return EnvError(absl::StrCat(variable, ": \"", name, "\" is not a valid interface name"));
  }
  for (const char c : name) {
    if (c == '/' || c == ':' || IsKernelSpace(c)) {
      return EnvError(absl::StrCat(variable, ": \"", absl::CHexEscape(name), "\" contains '",
                                   absl::CHexEscape(absl::string_view(&c, 1)),
                                   "' (no '/', ':' or whitespace in interface names)"));
    }
    // The kernel would take the name as a template ("net%d" -> "net0"), so
    // the interface would not get the name the runtime asked for.
    if (c == '%') {
      return EnvError(absl::StrCat(variable, ": \"", name,
                                   "\" contains '%' (Linux treats it as a name template)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<PodIdentity> ParseCniArgs(absl::string_view args) {
  PodIdentity pod;
  bool ignore_unknown = false;
  std::vector<std::string> unknown;
  for (const absl::string_view pair : absl::StrSplit(args, ';', absl::SkipEmpty())) {
    const size_t equals = pair.find('=');
    if (equals == absl::string_view::npos || equals == 0) {
      return EnvError(absl::StrCat("CNI_ARGS: \"", pair, "\" is not KEY=VALUE"));
    }
    const absl::string_view key = pair.substr(0, equals);
    const absl::string_view value = pair.substr(equals + 1);
    if (key == "K8S_POD_NAMESPACE") {
      pod.namespace_name = std::string(value);
    } else if (key == "K8S_POD_NAME") {
      pod.name = std::string(value);
    } else if (key == "K8S_POD_UID") {
      pod.uid = std::string(value);
    } else if (key == "K8S_POD_INFRA_CONTAINER_ID") {
      // Known to the Kubernetes convention; the container id comes from
      // CNI_CONTAINERID.
    } else if (key == "IgnoreUnknown") {
      ASSIGN_OR_RETURN(ignore_unknown, ParseBool(key, value));
    } else {
      unknown.emplace_back(key);
    }
  }
  if (!unknown.empty() && !ignore_unknown) {
    return EnvError(absl::StrCat("CNI_ARGS: unknown key", unknown.size() > 1 ? "s " : " ",
                                 absl::StrJoin(unknown, ", "),
                                 " (set IgnoreUnknown=1 to pass other keys)"));
  }
  return pod;
}

absl::StatusOr<Invocation> ParseInvocation(Command command, const Environment& env) {
  Invocation invocation;
  invocation.command = command;
  const bool attachment_verb =
      command == Command::kAdd || command == Command::kCheck || command == Command::kDel;
  if (!attachment_verb) return invocation;

  invocation.container_id = std::string(Lookup(env, "CNI_CONTAINERID"));
  invocation.netns = std::string(Lookup(env, "CNI_NETNS"));
  invocation.ifname = std::string(Lookup(env, "CNI_IFNAME"));
  const bool needs_netns = command != Command::kDel;

  std::vector<absl::string_view> missing;
  if (invocation.container_id.empty()) missing.push_back("CNI_CONTAINERID");
  if (needs_netns && invocation.netns.empty()) missing.push_back("CNI_NETNS");
  if (invocation.ifname.empty()) missing.push_back("CNI_IFNAME");
  if (!missing.empty()) {
    return EnvError(absl::StrCat("required environment variable", missing.size() > 1 ? "s " : " ",
                                 absl::StrJoin(missing, ", "), " missing for ",
                                 CommandName(command)));
  }

  RETURN_IF_ERROR(ValidateContainerId("CNI_CONTAINERID", invocation.container_id));
  RETURN_IF_ERROR(ValidateInterfaceName("CNI_IFNAME", invocation.ifname));
  if (needs_netns && invocation.netns.front() != '/') {
    return EnvError(absl::StrCat("CNI_NETNS: \"", invocation.netns, "\" is not an absolute path"));
  }
  if (command == Command::kAdd) {
    ASSIGN_OR_RETURN(invocation.pod, ParseCniArgs(Lookup(env, "CNI_ARGS")));
  }
  return invocation;
}

}  // namespace rocenet::cni
