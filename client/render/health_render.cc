// SPDX-License-Identifier: Apache-2.0
#include "client/render/health_render.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/render/table.h"

namespace rocenet::rocectl {
namespace {

std::vector<std::string> HealthHeaders(bool wide) {
  if (wide) return {"PORT", "ID", "HEALTHY", "CONDITIONS", "SINCE", "MESSAGE"};
  return {"PORT", "HEALTHY", "CONDITIONS", "SINCE"};
}

std::string Messages(const v1::PortHealth& port) {
  std::string out;
  for (const v1::Condition& condition : port.conditions()) {
    if (condition.message().empty()) continue;
    absl::StrAppend(&out, out.empty() ? "" : "; ", condition.message());
  }
  return out.empty() ? "-" : out;
}

std::vector<std::string> Row(const v1::PortHealth& port, absl::Time now, bool wide) {
  const std::string name = !port.name().empty()      ? port.name()
                           : !port.port_id().empty() ? port.port_id()
                                                     : "-";
  const std::string healthy = port.healthy() ? "yes" : "no";
  if (wide) {
    return {name,
            port.port_id().empty() ? "-" : port.port_id(),
            healthy,
            FormatConditions(port),
            FormatSince(port.since(), now),
            Messages(port)};
  }
  return {name, healthy, FormatConditions(port), FormatSince(port.since(), now)};
}

}  // namespace

std::string FormatAge(absl::Duration age) {
  if (age < absl::ZeroDuration()) age = absl::ZeroDuration();
  if (age < absl::Minutes(1)) return absl::StrCat(absl::ToInt64Seconds(age), "s");
  if (age < absl::Hours(1)) return absl::StrCat(absl::ToInt64Minutes(age), "m");
  if (age < absl::Hours(24)) return absl::StrCat(absl::ToInt64Hours(age), "h");
  return absl::StrCat(absl::ToInt64Hours(age) / 24, "d");
}

std::string FormatSince(const google::protobuf::Timestamp& since, absl::Time now) {
  if (since.seconds() == 0 && since.nanos() == 0) return "-";
  const absl::Time then = absl::FromUnixSeconds(since.seconds()) + absl::Nanoseconds(since.nanos());
  return FormatAge(now - then);
}

std::string FormatConditions(const v1::PortHealth& port) {
  std::string out;
  for (const v1::Condition& condition : port.conditions()) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", condition.type());
    if (!condition.reason().empty()) absl::StrAppend(&out, "/", condition.reason());
    // Reported, but not why the port is unhealthy.
    if (condition.advisory()) absl::StrAppend(&out, "(advisory)");
  }
  return out.empty() ? "-" : out;
}

std::string RenderNodeHealth(const v1::NodeHealth& node, absl::Time now, bool wide) {
  if (node.ports().empty()) {
    // Not a failure of anything rocenet manages: a CPU or control-plane
    // node, or a Gaudi node whose driver is not loaded.
    return "node ready: no (no scale-out ports on this node: no habanalabs device, and no "
           "interface or driver of the configuration matches)\n";
  }
  std::string out =
      absl::StrFormat("node ready: %s (%d/%d ports healthy)\n", node.ready() ? "yes" : "no",
                      node.ports_healthy(), node.ports_total());
  if (!node.gaudinet_missing().empty()) {
    absl::StrAppend(&out, "gaudinet.json lacks ", absl::StrJoin(node.gaudinet_missing(), ", "),
                    " (no address yet; the file is not written while such a port is up)\n");
  }
  TextTable table(HealthHeaders(wide));
  for (const v1::PortHealth& port : node.ports()) table.AddRow(Row(port, now, wide));
  return out + table.Render();
}

std::string RenderPortHealth(const v1::PortHealth& port, absl::Time now, bool wide) {
  TextTable table(HealthHeaders(wide));
  table.AddRow(Row(port, now, wide));
  return table.Render();
}

}  // namespace rocenet::rocectl
