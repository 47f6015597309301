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

absl::StatusOr<GlobalOptions> ForDiagd(const GlobalOptions& options) {
  if (!options.server.empty()) {
    return absl::FailedPreconditionError(
        "diag: rocenet-diagd serves its unix socket only, not --server; run rocectl diag on a "
        "node (kubectl exec into its rocenet pod)");
  }
  GlobalOptions out = options;
  if (!options.diag_socket_path.empty()) {
    out.socket_path = options.diag_socket_path;
  } else {
    const size_t slash = options.socket_path.rfind('/');
    out.socket_path =
        slash == std::string::npos
            ? std::string(kDiagdSocketName)
            : absl::StrCat(options.socket_path.substr(0, slash + 1), kDiagdSocketName);
  }
  out.daemon = {.name = "rocenet-diagd", .socket_flag = "--diag-socket"};
  return out;
}

}  // namespace rocenet::rocectl
