// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the CNI plugin's request parser: the CNI_* environment
// and the network configuration on stdin, as Multus hands them over. Built and
// run by `tests/fuzz/run.sh cni_request`.
//
// An input is the environment, one NAME=value per line, then an empty line,
// then stdin (the seeds in tests/fuzz/seeds/cni_request/ are written that
// way). Without an empty line the whole input is stdin and the environment is
// that of a well-formed ADD, so the fuzzer also spends time on the JSON alone.
//
// Beyond "never crash, no undefined behaviour", every input is checked
// against the contract the dispatcher relies on, aborting on a violation:
//   - a refusal carries one of the CNI codes the parser documents (1, 2, 4,
//     6, 7), a message, and renders as the spec's error object;
//   - the reply version is always one rocenet supports;
//   - what is accepted obeys the rules the parser promises (interface name
//     and container id rules, MTU and timeout ranges, absolute socket path).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "plugins/cni/errors.h"
#include "plugins/cni/invocation.h"
#include "plugins/cni/netconf.h"

namespace rocenet::cni {
namespace {

[[noreturn]] void Fail(const char* what, absl::string_view detail = "") {
  std::fprintf(stderr, "cni_request_fuzz: %s %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

Environment DefaultAddEnvironment() {
  return {{"CNI_COMMAND", "ADD"},
          {"CNI_CONTAINERID", "3f2a9c0d8e7b"},
          {"CNI_NETNS", "/var/run/netns/pod-1"},
          {"CNI_IFNAME", "net1"},
          {"CNI_ARGS", "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=trainer-0"},
          {"CNI_PATH", "/opt/cni/bin"}};
}

// Splits the input into the environment and stdin (see the top comment).
void SplitInput(absl::string_view input, Environment& env, absl::string_view& config) {
  const size_t blank = input.find("\n\n");
  if (blank == absl::string_view::npos) {
    env = DefaultAddEnvironment();
    config = input;
    return;
  }
  for (absl::string_view line : absl::StrSplit(input.substr(0, blank), '\n')) {
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;  // as EnvironmentFrom: skipped
    // The first of duplicate names wins, as with getenv().
    env.emplace(std::string(line.substr(0, eq)), std::string(line.substr(eq + 1)));
  }
  config = input.substr(blank + 2);
}

void CheckRefusal(const absl::Status& status, absl::string_view config) {
  if (status.ok()) Fail("refusal with an OK status");
  switch (CniCodeOf(status)) {
    case CniCode::kIncompatibleVersion:
    case CniCode::kUnsupportedField:
    case CniCode::kInvalidEnvironment:
    case CniCode::kDecodingFailure:
    case CniCode::kInvalidNetworkConfig:
      break;
    default:
      Fail("refusal with an undocumented CNI code:", status.ToString());
  }
  if (status.message().empty()) Fail("refusal without a message");
  // What the dispatcher prints on stdout: must render whatever the input was.
  const std::string printed = ErrorJson(ReplyVersion(config), status)
                                  .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const nlohmann::json back = nlohmann::json::parse(printed, nullptr, false);
  if (!back.is_object() || !back.contains("code") || !back.contains("msg")) {
    Fail("error object does not parse back:", printed);
  }
}

void CheckAccepted(const Request& request) {
  const Invocation& inv = request.invocation;
  if (inv.command == Command::kAdd || inv.command == Command::kCheck ||
      inv.command == Command::kDel) {
    if (!ValidateInterfaceName("CNI_IFNAME", inv.ifname).ok()) Fail("bad ifname accepted");
    if (!ValidateContainerId("CNI_CONTAINERID", inv.container_id).ok()) {
      Fail("bad container id accepted");
    }
    if (inv.ifname.size() > 15 || absl::StrContains(inv.ifname, '/')) {
      Fail("interface name breaks the kernel's rules:", inv.ifname);
    }
  }
  if ((inv.command == Command::kAdd || inv.command == Command::kCheck) && inv.netns.empty()) {
    Fail("ADD/CHECK without a netns accepted");
  }
  const NetConf& conf = request.conf;
  if (conf.mtu != 0 && (conf.mtu < 68 || conf.mtu > 65535)) Fail("mtu out of range accepted");
  if (conf.timeout <= absl::ZeroDuration() || conf.timeout > kMaxTimeout) {
    Fail("timeout out of range accepted");
  }
  if (conf.socket.empty() || conf.socket[0] != '/') Fail("relative socket accepted:", conf.socket);
  if (conf.name.empty() || conf.type.empty()) Fail("empty name or type accepted");
  bool supported = false;
  for (absl::string_view v : kSupportedVersions) supported |= (v == conf.cni_version);
  if (!supported) Fail("unsupported cniVersion accepted:", conf.cni_version);
}

}  // namespace
}  // namespace rocenet::cni

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rocenet::cni;
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  Environment env;
  absl::string_view config;
  SplitInput(input, env, config);

  const std::string version = ReplyVersion(config);
  bool supported = false;
  for (absl::string_view v : kSupportedVersions) supported |= (v == version);
  if (!supported) Fail("reply version not supported:", version);

  absl::StatusOr<Command> command = ParseCommand(env);
  if (!command.ok()) {
    CheckRefusal(command.status(), config);
    return 0;
  }
  if (*command == Command::kVersion) return 0;  // reads nothing but cniVersion (above)
  absl::StatusOr<Request> request = ParseRequest(*command, env, config);
  if (request.ok()) {
    if (request->invocation.command != *command) Fail("command changed while parsing");
    CheckAccepted(*request);
  } else {
    CheckRefusal(request.status(), config);
  }
  return 0;
}
