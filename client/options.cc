// SPDX-License-Identifier: Apache-2.0
#include "client/options.h"

#include "absl/strings/str_cat.h"

namespace rocenet::rocectl {

absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view text) {
  if (text == "table") return OutputFormat::kTable;
  if (text == "wide") return OutputFormat::kWide;
  if (text == "json") return OutputFormat::kJson;
  if (text == "yaml") return OutputFormat::kYaml;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown output format \"", text, "\"; want table, wide, json or yaml"));
}

std::string OutputFormatName(OutputFormat format) {
  switch (format) {
    case OutputFormat::kTable:
      return "table";
    case OutputFormat::kWide:
      return "wide";
    case OutputFormat::kJson:
      return "json";
    case OutputFormat::kYaml:
      return "yaml";
  }
  return "table";
}

}  // namespace rocenet::rocectl
