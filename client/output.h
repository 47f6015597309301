// SPDX-License-Identifier: Apache-2.0
// Writes a command's result in the format -o asked for.
//
// Shared by the commands so that every one of them honours -o the same way:
// json and yaml print the API message itself, table and wide print the text
// the command rendered. Writes only on success. Runs on the caller's thread.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "client/command.h"
#include "google/protobuf/message.h"

namespace rocenet::rocectl {

absl::Status PrintResult(const CommandContext& context, const google::protobuf::Message& message,
                         const std::string& table);

// One item of a watch stream: a JSON line, a YAML document, or the table
// under a header line; flushed at once so pipes see it.
absl::Status PrintStreamItem(const CommandContext& context,
                             const google::protobuf::Message& message, absl::string_view header,
                             const std::string& table);

inline bool WantsWide(const CommandContext& context) {
  return context.options.output == OutputFormat::kWide;
}

}  // namespace rocenet::rocectl
