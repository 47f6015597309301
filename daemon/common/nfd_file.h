// SPDX-License-Identifier: Apache-2.0
// The Node Feature Discovery feature file format, shared by rocenetd's
// scale-out-ready label and rocenet-diagd's validation label.
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace rocenet {

// The NFD feature file: `labels` ("name=value" lines, comments allowed)
// after NFD's expiry directive, `# +expiry-time=<RFC 3339, UTC, seconds>`,
// on the first line so that it covers every label.
std::string RenderNfdFile(absl::string_view labels, absl::Time expiry);

}  // namespace rocenet
