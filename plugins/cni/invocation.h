// SPDX-License-Identifier: Apache-2.0
// The CNI_* environment of one plugin invocation, parsed and validated.
//
// CNI passes the verb and the attachment's identity in environment variables
// (CNI_COMMAND, CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME, CNI_ARGS, CNI_PATH).
// Which are required depends on the verb, as the spec's tables say:
//
//   ADD, CHECK   CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME
//   DEL          CNI_CONTAINERID, CNI_IFNAME (CNI_NETNS may be empty: the
//                namespace can be gone already)
//   GC, STATUS, VERSION   none besides CNI_COMMAND
//
// CNI_PATH is never required: rocenet delegates to no other plugin, so it
// has no use for it. An empty variable counts as missing, as in libcni.
//
// Values are checked against the spec's rules (container id charset, the
// kernel's interface-name rules) and nothing more; rocenetd validates again
// with what only it knows (e.g. which netns paths it accepts).
//
// Pure: the environment is a parameter, never read from the process. Errors
// carry CNI code 4 and name the variable (errors.h).
#pragma once

#include <functional>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rocenet::cni {

// The process environment, by name.
using Environment = std::map<std::string, std::string, std::less<>>;

// `envp` ("NAME=value" strings, null-terminated, as `environ`) as an
// Environment. Entries without '=' are skipped; the first of duplicate names
// wins, as with getenv().
Environment EnvironmentFrom(const char* const* envp);

enum class Command { kAdd, kDel, kCheck, kVersion, kGc, kStatus };

// "ADD", "DEL", ... as CNI_COMMAND spells it.
absl::string_view CommandName(Command command);

// The pod, from CNI_ARGS (K8S_POD_NAMESPACE, K8S_POD_NAME, K8S_POD_UID).
struct PodIdentity {
  std::string namespace_name;
  std::string name;
  std::string uid;
};

struct Invocation {
  Command command = Command::kVersion;
  std::string container_id;
  std::string netns;
  std::string ifname;
  PodIdentity pod;
};

// CNI_COMMAND, which must be set and one of the six verbs.
absl::StatusOr<Command> ParseCommand(const Environment& env);

// The variables `command` needs, checked. All missing required variables
// are named in one message. CNI_ARGS is read for ADD only, the one verb
// that sends the pod's identity to the daemon.
absl::StatusOr<Invocation> ParseInvocation(Command command, const Environment& env);

// The spec's rules, exposed for tests and reuse. Each returns OK or a code-4
// error naming `variable`.
absl::Status ValidateContainerId(absl::string_view variable, absl::string_view id);
absl::Status ValidateInterfaceName(absl::string_view variable, absl::string_view name);

// CNI_ARGS ("K=V;K=V"): the pod identity. Keys other than the Kubernetes
// ones are an error unless IgnoreUnknown is true, the libcni convention.
absl::StatusOr<PodIdentity> ParseCniArgs(absl::string_view args);

}  // namespace rocenet::cni
