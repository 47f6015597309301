// SPDX-License-Identifier: Apache-2.0
// Reconciler: makes one port's kernel state match a plan, idempotently.
//
// Link up, MTU, the IPv4 address and rocenet's routes (protocol
// kRouteProtocol) through the Netlink seam, in whatever network namespace
// that Netlink instance was opened in. It adds what is missing and removes
// only what rocenet added before (`previous`) and no longer wants; addresses
// and routes of anyone else are never touched. Each call reads nothing: the
// caller passes the current addresses and routes, so a pass over many ports
// costs two dumps. Used on the event loop thread only. Errors name the port
// and the step; what was done before the failing step stays, and the next
// pass finishes the job.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/addressing/applied.h"
#include "daemon/os/netlink.h"

namespace rocenet::addressing {

struct LinkTarget {
  int ifindex = 0;
  std::string ifname;
  bool admin_up = false;
  uint32_t mtu = 0;
};

struct KernelState {
  std::vector<os::AddressInfo> addresses;
  std::vector<os::RouteInfo> routes;  // main table
};

struct ReconcileResult {
  AppliedConfig applied;
  int changes = 0;  // netlink requests that changed something
};

class Reconciler {
 public:
  explicit Reconciler(os::Netlink* netlink) : netlink_(netlink) {}

  // Applies `wanted` (from FromPlan) to `link`, removing what `previous`
  // holds and `wanted` does not.
  absl::StatusOr<ReconcileResult> Apply(const LinkTarget& link, const AppliedConfig& wanted,
                                        const std::optional<AppliedConfig>& previous,
                                        const KernelState& kernel);

  // Removes everything `previous` holds from `link` (L2 mode, a port that
  // stops being managed). The MTU and link state stay.
  absl::StatusOr<int> Remove(const LinkTarget& link, const AppliedConfig& previous,
                             const KernelState& kernel);

  // Whether the kernel holds everything `applied` asks for on `link`.
  static bool InPlace(const LinkTarget& link, const AppliedConfig& applied,
                      const KernelState& kernel);

 private:
  os::Netlink* netlink_;
};

}  // namespace rocenet::addressing
