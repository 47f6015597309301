// SPDX-License-Identifier: Apache-2.0
// What the diagnostics' renderers share (diag_render.cc,
// diag_render_reach.cc): a port's name, the stage line, and the notes,
// counters, problems and labels under a table. Internal to the renderers; pure.
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "rocenet/v1/diagnostics.pb.h"

namespace rocenet::rocectl::diag_render {

// "node/port", or the port alone when the node is unknown.
std::string Endpoint(const std::string& node, const std::string& port);
// What the figures are: "stage ethernet: TCP through the netdev so0 (...)".
std::string StageLine(const v1::StagePath& stage);
void AppendNotes(const v1::StagePath& stage, std::string* out);
void AppendProblems(const google::protobuf::RepeatedPtrField<std::string>& problems,
                    std::string* out);
// What the ports' counters did during the run: those that moved (at most
// kCounterRows; -o json has them all), the nodes read and those not read
// (at most kUnreadRows).
inline constexpr int kCounterRows = 40;
inline constexpr int kUnreadRows = 10;
void AppendCounters(const v1::RunCounters& counters, std::string* out);
// What the run did to the validation labels of `stage`.
void AppendLabels(const v1::Labels& labels, absl::string_view stage, std::string* out);

}  // namespace rocenet::rocectl::diag_render
