// SPDX-License-Identifier: Apache-2.0
// Port and node health as text: `rocectl health` and `rocectl health PORT`.
//
// Pure functions from rocenet.v1 messages to strings; no I/O, thread-safe.
// Ages are computed against the `now` the caller passes, so output is
// reproducible in tests.
#pragma once

#include <string>

#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"
#include "rocenet/v1/health.pb.h"

namespace rocenet::rocectl {

// kubectl-style age in its largest whole unit: "5s", "3m", "2h", "4d".
// Negative ages (clocks that disagree) show as "0s".
std::string FormatAge(absl::Duration age);

// Age of `since` at `now`; "-" when the timestamp is unset.
std::string FormatSince(const google::protobuf::Timestamp& since, absl::Time now);

// "LinkDown/CarrierLost, NoLldpNeighbor" (type/reason, comma separated), or
// "-" when the port has no conditions.
std::string FormatConditions(const v1::PortHealth& port);

// The line "node ready: yes (2/3 ports healthy)", then the table
// PORT HEALTHY CONDITIONS SINCE; `wide` adds ID and MESSAGE (the condition
// messages, "; " separated).
std::string RenderNodeHealth(const v1::NodeHealth& node, absl::Time now, bool wide);

// The same table for one port, without the node line.
std::string RenderPortHealth(const v1::PortHealth& port, absl::Time now, bool wide);

}  // namespace rocenet::rocectl
