// SPDX-License-Identifier: Apache-2.0
#include "client/cmd_collective.h"

#include <cctype>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/cmd_diag.h"
#include "client/collective/hccl_log.h"
#include "client/collective/plan.h"
#include "client/collective/report.h"
#include "client/exit_code.h"
#include "client/render/structured.h"
#include "daemon/common/status_macros.h"

namespace rocenet::rocectl {
namespace {

using collective::PlanOptions;
using collective::ReportOptions;

absl::Status Bad(absl::string_view flag, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat("flag --", flag, ": ", reason));
}

absl::Status Only(const CommandContext& context, const std::vector<std::string>& allowed,
                  absl::string_view verb) {
  for (const auto& [name, value] : context.flags) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("flag --", name, " does not apply to diag collective ", verb));
    }
  }
  return absl::OkStatus();
}

const std::string* Flag(const CommandContext& context, const std::string& name) {
  auto it = context.flags.find(name);
  return it == context.flags.end() ? nullptr : &it->second;
}

absl::Status Int(const CommandContext& context, const std::string& name, int* value) {
  const std::string* text = Flag(context, name);
  if (text == nullptr) return absl::OkStatus();
  if (!absl::SimpleAtoi(*text, value))
    return Bad(name, absl::StrCat("\"", *text, "\" is not a number"));
  return absl::OkStatus();
}

absl::Status Real(const CommandContext& context, const std::string& name, double* value) {
  const std::string* text = Flag(context, name);
  if (text == nullptr) return absl::OkStatus();
  if (!absl::SimpleAtod(*text, value) || !(*value > 0)) {
    return Bad(name, absl::StrCat("\"", *text, "\" is not a positive number"));
  }
  return absl::OkStatus();
}

// "4096", "64K", "1M", "2G" (binary units, as hccl_demo reads them).
absl::Status Bytes(const CommandContext& context, const std::string& name, uint64_t* value) {
  const std::string* flag = Flag(context, name);
  if (flag == nullptr) return absl::OkStatus();
  std::string text = *flag;
  uint64_t unit = 1;
  if (!text.empty()) {
    switch (absl::ascii_toupper(static_cast<unsigned char>(text.back()))) {
      case 'K':
        unit = uint64_t{1} << 10;
        break;
      case 'M':
        unit = uint64_t{1} << 20;
        break;
      case 'G':
        unit = uint64_t{1} << 30;
        break;
      default:
        break;
    }
  }
  if (unit != 1) text.pop_back();
  uint64_t number = 0;
  if (!absl::SimpleAtoi(text, &number)) {
    return Bad(name, absl::StrCat("\"", *flag, "\" is not a size (e.g. 4096, 64K, 1M, 2G)"));
  }
  *value = number * unit;
  return absl::OkStatus();
}

absl::StatusOr<PlanOptions> PlanFlags(const CommandContext& context) {
  PlanOptions o;
  if (const std::string* nodes = Flag(context, "nodes")) {
    o.nodes = absl::StrSplit(*nodes, ',', absl::SkipWhitespace());
  }
  if (const std::string* image = Flag(context, "image")) o.image = *image;
  if (const std::string* engine = Flag(context, "engine")) {
    if (*engine == "mpijob") {
      o.engine = collective::Engine::kMpiJob;
    } else if (*engine == "jobset") {
      o.engine = collective::Engine::kJobSet;
    } else {
      return Bad("engine", absl::StrCat("\"", *engine, "\" is not mpijob or jobset"));
    }
  }
  if (const std::string* test = Flag(context, "test")) {
    if (*test == "both") {
      o.tests = {collective::kAllReduce, collective::kAllToAll};
    } else if (*test == collective::kAllReduce || *test == collective::kAllToAll) {
      o.tests = {*test};
    } else {
      return Bad("test", absl::StrCat("\"", *test, "\" is not all_reduce, all2all or both"));
    }
  }
  RETURN_IF_ERROR(Int(context, "gaudis-per-node", &o.gaudis_per_node));
  RETURN_IF_ERROR(Int(context, "ports-per-node", &o.ports_per_node));
  if (const std::string* v = Flag(context, "network")) o.network = *v;
  if (const std::string* v = Flag(context, "namespace")) o.name_space = *v;
  if (const std::string* v = Flag(context, "name")) o.name = *v;
  RETURN_IF_ERROR(Int(context, "split", &o.split));
  RETURN_IF_ERROR(Bytes(context, "min-bytes", &o.min_bytes));
  RETURN_IF_ERROR(Bytes(context, "max-bytes", &o.max_bytes));
  return o;
}

absl::Status Plan(const CommandContext& context, const std::vector<std::string>& args) {
  RETURN_IF_ERROR(Only(context,
                       {"nodes", "image", "engine", "test", "gaudis-per-node", "ports-per-node",
                        "network", "namespace", "name", "min-bytes", "max-bytes", "split"},
                       "plan"));
  if (!args.empty()) return absl::InvalidArgumentError("diag collective plan takes no arguments");
  ASSIGN_OR_RETURN(const PlanOptions options, PlanFlags(context));
  ASSIGN_OR_RETURN(const std::string yaml, collective::RenderPlan(options));
  context.out << yaml;
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadInput(const CommandContext& context, const std::string& path) {
  if (path == "-") {
    if (context.in == nullptr) return absl::InvalidArgumentError("no standard input to read");
    return std::string(std::istreambuf_iterator<char>(*context.in), {});
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read \"", path, "\""));
  }
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

absl::Status Report(const CommandContext& context, const std::vector<std::string>& args) {
  RETURN_IF_ERROR(
      Only(context, {"platform", "expected-busbw", "min-fraction", "gaudis-per-node"}, "report"));
  if (args.size() > 1) {
    return absl::InvalidArgumentError("diag collective report takes one log: FILE or - (stdin)");
  }
  ReportOptions options;
  if (const std::string* platform = Flag(context, "platform")) {
    if (*platform != "gaudi2" && *platform != "gaudi3") {
      return Bad("platform", absl::StrCat("\"", *platform, "\" is not gaudi2 or gaudi3"));
    }
    options.platform = *platform;
  }
  RETURN_IF_ERROR(Real(context, "expected-busbw", &options.expected_busbw_gbs));
  RETURN_IF_ERROR(Real(context, "min-fraction", &options.min_fraction));
  if (options.min_fraction > 1) return Bad("min-fraction", "above 1");
  RETURN_IF_ERROR(Int(context, "gaudis-per-node", &options.gaudis_per_node));
  if (options.gaudis_per_node < 1) return Bad("gaudis-per-node", "below 1");
  ASSIGN_OR_RETURN(const std::string text, ReadInput(context, args.empty() ? "-" : args[0]));
  ASSIGN_OR_RETURN(collective::HcclDemoLog log, collective::ParseHcclDemoLog(text));
  const collective::CollectiveReport report = collective::Evaluate(std::move(log), options);
  switch (context.options.output) {
    case OutputFormat::kJson:
      context.out << collective::ReportJson(report).dump(2) << "\n";
      break;
    case OutputFormat::kYaml: {
      ASSIGN_OR_RETURN(const std::string yaml, JsonToYaml(collective::ReportJson(report).dump()));
      context.out << yaml;
      break;
    }
    case OutputFormat::kTable:
    case OutputFormat::kWide:
      context.out << collective::RenderReport(report);
      break;
  }
  if (!report.ok()) {
    return WithExitCode(absl::InternalError("hccl_demo's run found a failure (see above)"),
                        static_cast<ExitCode>(kExitDiagFailed));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunCollective(const CommandContext& context, const std::vector<std::string>& args) {
  if (args.empty()) {
    return absl::InvalidArgumentError("diag collective takes plan or report");
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "plan") return Plan(context, rest);
  if (args[0] == "report") return Report(context, rest);
  return absl::InvalidArgumentError(
      absl::StrCat("diag collective: unknown step \"", args[0], "\"; use plan or report"));
}

}  // namespace rocenet::rocectl
