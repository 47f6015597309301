// SPDX-License-Identifier: Apache-2.0
// The progress of `rocectl wait --ready` as one line of text.
//
// Pure functions, no I/O, thread-safe. The line names how many ports are
// ready and, for the first few that are not, why: their first condition, so
// whoever watches an init container's log sees what the node waits for.
#pragma once

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "rocenet/v1/health.pb.h"

namespace rocenet::rocectl {

// How many ports not ready are named before "and N more".
inline constexpr int kWaitPortsNamed = 4;

// "2/3 ports ready; not ready: so2 (LinkDown/CarrierLost: port so2: no
// carrier)"; "node ready: 3/3 ports ready" when it is; "no scale-out ports
// found yet" when rocenetd knows none.
std::string FormatWaitProgress(const v1::NodeHealth& node);

// `line` cut to `width` code points (the last one becoming "…") so that a
// line rewritten in place on a terminal never wraps. UTF-8 aware; width 0
// leaves the line as it is.
std::string FitToWidth(absl::string_view line, size_t width);

}  // namespace rocenet::rocectl
