// SPDX-License-Identifier: Apache-2.0
// Addressing plans as text: `rocectl addressing [PORT]` and
// `rocectl reconcile`.
//
// Pure functions from rocenet.v1 messages to strings; no I/O, thread-safe.
// A refused plan or a failed apply is what an admin runs this command for,
// so the narrow table is followed by a "Problems:" section with rocenetd's
// message in full (it names the port and the cause) and the Port
// Description the switch sent; -o wide has the same in its MESSAGE column.
#pragma once

#include <string>

#include "rocenet/v1/addressing.pb.h"

namespace rocenet::rocectl {

// "pending", "ready", "refused", "L2", or "-".
std::string PlanStateText(v1::PlanState state);

// "10.200.0.0/16" for a route via the plan's peer, "10.201.0.0/16 via
// 10.200.1.6" for another gateway, "10.200.1.0/30 (link)" for a connected
// route; comma separated, "-" for none.
std::string RoutesText(const google::protobuf::RepeatedPtrField<v1::Route>& routes,
                       const std::string& peer);

// The line "mode: L3, 1/3 ports provisioned", then the table
// PORT STATE LOCAL PEER ROUTES PROVISIONED REASON (`wide` adds MTU,
// GATEWAY MAC, APPLIED, DESCRIPTION and MESSAGE), then the problems when not
// wide. A plan without an address whose port still has rocenet's shows it in
// LOCAL as "10.200.1.1/30 (kept)".
std::string RenderPlans(const v1::ListPlansResponse& plans, bool wide);

// The same for one port, without the mode line.
std::string RenderPlan(const v1::PortPlan& plan, bool wide);

}  // namespace rocenet::rocectl
