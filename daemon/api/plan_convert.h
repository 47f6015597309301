// SPDX-License-Identifier: Apache-2.0
// Conversion of addressing plans and their applied state to rocenet.v1
// messages, for the Addressing service; names of plan states and modes for
// the metrics. Pure functions, thread-safe.
//
// The Port Description a plan quotes came off the wire; like every string
// from LLDP it is made valid UTF-8 (utf8.h) so the response always parses.
#pragma once

#include "absl/strings/string_view.h"
#include "daemon/node/snapshot.h"
#include "rocenet/v1/addressing.pb.h"

namespace rocenet::api {

// "L3" or "L2".
absl::string_view ModeName(addressing::Mode mode);

v1::PlanState ToProto(addressing::PlanState state);
void ToProto(const addressing::PortAddressing& port, v1::PortPlan* out);

// The mode and every port's plan, in the order of `snapshot.addressing`.
void ToProto(const node::NodeSnapshot& snapshot, v1::ListPlansResponse* out);

// The addressing of the port with that id or interface name; null if there
// is none.
const addressing::PortAddressing* FindAddressing(const node::NodeSnapshot& snapshot,
                                                 const std::string& id_or_name);

}  // namespace rocenet::api
