// SPDX-License-Identifier: Apache-2.0
// The network configuration on stdin, parsed and validated, and the whole
// Request (environment + configuration) the dispatcher acts on.
//
// Keys rocenet reads (everything else is ignored, as CNI allows):
//
//   cniVersion   required; "0.4.0", "1.0.0" or "1.1.0" (GC and STATUS need
//                1.1.0)
//   name         required; the spec's charset: [A-Za-z0-9][A-Za-z0-9_.-]*
//   type         required; any non-empty string (normally "rocenet")
//   socket       rocenetd's unix socket, absolute; default
//                /run/rocenet/rocenetd.sock
//   timeout      deadline of the daemon call, a duration string ("10s",
//                "1500ms"); default 10s, at most 10m
//   mode         "L3" or "L2"; default: the node's mode
//   mtu          integer 68..65535; default: the port's MTU
//   deviceID     the port id Multus passes from the device plugin;
//                runtimeConfig.deviceID wins when both are set
//   anyFreePort  true: without a deviceID or a reservation, any free healthy
//                port (runtimes without kubelet); default false: refused
//   prevResult   the previous plugin's result (ADD) or the ADD result (CHECK)
//   cni.dev/valid-attachments (GC) the attachments to keep; the draft name
//                cni.dev/attachments is accepted too, as libcni sends both
//   routes       rejected with code 2: rocenetd takes the routes from the
//                port's LLDP plan and its Attach API has no routes field
//
// mode, mtu, deviceID, anyFreePort and routes are checked for ADD and CHECK only. DEL,
// GC and STATUS use none of them, so a configuration edited after ADD can
// never keep a pod from being deleted.
//
// Pure; errors carry their CNI code (errors.h) and name the key:
// 6 when stdin is not a JSON object, 1 for an unsupported cniVersion, 2 for
// routes, 7 for everything else.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "plugins/cni/invocation.h"

namespace rocenet::cni {

inline constexpr std::array<absl::string_view, 3> kSupportedVersions = {"0.4.0", "1.0.0", "1.1.0"};
inline constexpr absl::string_view kLatestVersion = "1.1.0";
inline constexpr absl::string_view kDefaultSocket = "/run/rocenet/rocenetd.sock";
inline constexpr absl::Duration kDefaultTimeout = absl::Seconds(10);
inline constexpr absl::Duration kMaxTimeout = absl::Minutes(10);

// One entry of cni.dev/valid-attachments.
struct GcAttachment {
  std::string container_id;
  std::string ifname;
};

struct NetConf {
  std::string cni_version;
  std::string name;
  std::string type;
  std::string socket = std::string(kDefaultSocket);
  absl::Duration timeout = kDefaultTimeout;
  std::string mode;       // empty: the node's mode
  uint32_t mtu = 0;       // 0: the port's MTU
  std::string device_id;  // empty: the pod's reserved port, else see any_free_port
  bool any_free_port = false;
  // Present when the configuration has prevResult; an object whose
  // interfaces, ips and routes (when present) are arrays of objects.
  std::optional<nlohmann::ordered_json> prev_result;
  // GC only.
  std::vector<GcAttachment> valid_attachments;
};

struct Request {
  Invocation invocation;
  NetConf conf;
};

// The version to answer in: the configuration's cniVersion when rocenet
// supports it, else the latest. Used for VERSION and for error objects, so
// it never fails.
std::string ReplyVersion(absl::string_view config);

// Parses the configuration for `command`.
absl::StatusOr<NetConf> ParseNetConf(Command command, absl::string_view config);

// The environment and the configuration for `command`, in that order (as
// libcni: a missing variable is reported before stdin is looked at).
absl::StatusOr<Request> ParseRequest(Command command, const Environment& env,
                                     absl::string_view config);

}  // namespace rocenet::cni
