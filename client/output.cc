// SPDX-License-Identifier: Apache-2.0
#include "client/output.h"

#include "client/render/structured.h"
#include "daemon/common/status_macros.h"

namespace rocenet::rocectl {

absl::Status PrintResult(const CommandContext& context, const google::protobuf::Message& message,
                         const std::string& table) {
  switch (context.options.output) {
    case OutputFormat::kJson: {
      ASSIGN_OR_RETURN(const std::string json, ToJson(message));
      context.out << json;
      return absl::OkStatus();
    }
    case OutputFormat::kYaml: {
      ASSIGN_OR_RETURN(const std::string yaml, ToYaml(message));
      context.out << yaml;
      return absl::OkStatus();
    }
    case OutputFormat::kTable:
    case OutputFormat::kWide:
      break;
  }
  context.out << table;
  return absl::OkStatus();
}

absl::Status PrintStreamItem(const CommandContext& context,
                             const google::protobuf::Message& message, absl::string_view header,
                             const std::string& table) {
  switch (context.options.output) {
    case OutputFormat::kJson: {
      ASSIGN_OR_RETURN(const std::string line, ToJsonLine(message));
      context.out << line;
      break;
    }
    case OutputFormat::kYaml: {
      ASSIGN_OR_RETURN(const std::string yaml, ToYaml(message));
      context.out << "---\n" << yaml;
      break;
    }
    case OutputFormat::kTable:
    case OutputFormat::kWide:
      context.out << header << "\n" << table << "\n";
      break;
  }
  context.out.flush();
  return absl::OkStatus();
}

}  // namespace rocenet::rocectl
