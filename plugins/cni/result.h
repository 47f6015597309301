// SPDX-License-Identifier: Apache-2.0
// From the daemon's Attachment to what CNI expects on stdout: the ADD result
// in each supported version, the comparison CHECK makes with prevResult, and
// the VERSION answer.
//
// ADD result (key order as printed; absent fields are left out):
//
//   {"cniVersion": <the request's>,
//    "interfaces": [{"name", "mac", "mtu" (1.1.0), "sandbox",
//                    "pciID" (1.1.0, when the daemon knows the PCI address)}],
//    "ips": [{"version": "4" (0.4.0 only), "address": "10.200.1.1/30",
//             "gateway": "10.200.1.2", "interface": <index of our interface>}],
//    "routes": [{"dst": "10.200.0.0/16", "gw": "10.200.1.2"}]}
//
// With a prevResult (chaining), its interfaces, ips and routes come first
// and ours are appended, so our "interface" indexes count its interfaces;
// its other keys (dns, ...) are kept. Empty ips/routes (L2 mode) are left
// out.
//
// Pure functions; thread-safe. prevResult must have passed ParseNetConf().
#pragma once

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "rocenet/v1/attach.pb.h"

namespace rocenet::cni {

// The ADD result for `attachment`, attached as `ifname` in the sandbox
// `netns` (the runtime's CNI_IFNAME and CNI_NETNS).
nlohmann::ordered_json RenderAddResult(absl::string_view cni_version,
                                       const v1::Attachment& attachment, absl::string_view ifname,
                                       absl::string_view netns,
                                       const std::optional<nlohmann::ordered_json>& prev_result);

// CHECK: OK when prevResult lists our interface (by name, in `netns`) with
// the attachment's MAC and MTU, exactly the attachment's addresses on it,
// and the attachment's routes. Otherwise a code-999 error naming the first
// difference. Other plugins' entries are not looked at.
absl::Status CheckPrevResult(const v1::Attachment& attachment, absl::string_view ifname,
                             absl::string_view netns, const nlohmann::ordered_json& prev_result);

// {"cniVersion": <cni_version>, "supportedVersions": ["0.4.0", "1.0.0", "1.1.0"]}
nlohmann::ordered_json VersionResult(absl::string_view cni_version);

}  // namespace rocenet::cni
