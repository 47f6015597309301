// SPDX-License-Identifier: Apache-2.0
#include "client/render/addressing_render.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/render/table.h"

namespace rocenet::rocectl {
namespace {

std::vector<std::string> AddressingHeaders(bool wide) {
  std::vector<std::string> headers = {"PORT",   "STATE",       "LOCAL", "PEER",
                                      "ROUTES", "PROVISIONED", "REASON"};
  if (wide) {
    for (const char* header : {"MTU", "GATEWAY MAC", "APPLIED", "DESCRIPTION", "MESSAGE"}) {
      headers.emplace_back(header);
    }
  }
  return headers;
}

// What rocenet has on the port: address and MTU, "-" for nothing.
std::string AppliedText(const v1::PortPlan& plan) {
  if (!plan.has_applied()) return "-";
  const v1::AppliedConfig& applied = plan.applied();
  std::vector<std::string> parts;
  if (!applied.local().empty()) parts.push_back(applied.local());
  if (applied.mtu() != 0) parts.push_back(absl::StrCat("mtu ", applied.mtu()));
  return parts.empty() ? "link up" : absl::StrJoin(parts, " ");
}

// The message, then the apply error: both name the port.
std::string Messages(const v1::PortPlan& plan) {
  std::vector<std::string> parts;
  if (!plan.message().empty()) parts.push_back(plan.message());
  if (!plan.apply_error().empty()) parts.push_back(plan.apply_error());
  return parts.empty() ? "-" : absl::StrJoin(parts, "; ");
}

// The plan's address; without one (neighbor gone, plan refused) rocenetd
// keeps what it applied before so running jobs keep their network, and the
// table says so rather than suggest the port has no address.
std::string LocalText(const v1::PortPlan& plan) {
  if (!plan.local().empty()) return plan.local();
  if (plan.has_applied() && !plan.applied().local().empty()) {
    return absl::StrCat(plan.applied().local(), " (kept)");
  }
  return "-";
}

std::vector<std::string> Row(const v1::PortPlan& plan, bool wide) {
  std::vector<std::string> row = {
      !plan.name().empty() ? plan.name() : OrDash(plan.port_id()),
      PlanStateText(plan.state()),
      LocalText(plan),
      OrDash(plan.peer()),
      RoutesText(plan.routes(), plan.peer()),
      plan.provisioned() ? "yes" : "no",
      OrDash(plan.reason()),
  };
  if (wide) {
    const std::vector<std::string> more = {
        plan.mtu() != 0 ? absl::StrCat(plan.mtu()) : "-",
        OrDash(plan.gateway_mac()),
        AppliedText(plan),
        plan.description().empty() ? "-" : absl::StrCat("\"", plan.description(), "\""),
        Messages(plan),
    };
    row.insert(row.end(), more.begin(), more.end());
  }
  return row;
}

// A one-line form of text from the wire for the problems section.
std::string Quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  return out + "\"";
}

// Refusals and failed applies, each in full, so an admin sees the cause
// without -o wide.
std::string Problems(const std::vector<const v1::PortPlan*>& plans) {
  std::string out;
  for (const v1::PortPlan* plan : plans) {
    if (plan->state() == v1::PLAN_STATE_REFUSED) {
      absl::StrAppend(&out, "  refused: ", OrDash(plan->message()));
      if (!plan->reason().empty()) absl::StrAppend(&out, " (", plan->reason(), ")");
      absl::StrAppend(&out, "\n");
      if (!plan->description().empty()) {
        absl::StrAppend(&out, "    the switch sent Port Description ", Quote(plan->description()),
                        "\n");
      }
    }
    if (!plan->apply_error().empty()) {
      // Most apply errors already say "port so1: <step>: ..."; not all do.
      const std::string prefix = absl::StrCat("port ", plan->name(), ": ");
      absl::StrAppend(
          &out, "  not applied: ", absl::StartsWith(plan->apply_error(), prefix) ? "" : prefix,
          plan->apply_error(), "\n");
    }
  }
  return out.empty() ? "" : absl::StrCat("\nProblems:\n", out);
}

}  // namespace

std::string PlanStateText(v1::PlanState state) {
  switch (state) {
    case v1::PLAN_STATE_PENDING:
      return "pending";
    case v1::PLAN_STATE_READY:
      return "ready";
    case v1::PLAN_STATE_REFUSED:
      return "refused";
    case v1::PLAN_STATE_L2:
      return "L2";
    default:
      return "-";
  }
}

std::string RoutesText(const google::protobuf::RepeatedPtrField<v1::Route>& routes,
                       const std::string& peer) {
  std::vector<std::string> parts;
  for (const v1::Route& route : routes) {
    if (route.gateway().empty()) {
      parts.push_back(absl::StrCat(route.destination(), " (link)"));
    } else if (route.gateway() == peer) {
      parts.push_back(route.destination());
    } else {
      parts.push_back(absl::StrCat(route.destination(), " via ", route.gateway()));
    }
  }
  return parts.empty() ? "-" : absl::StrJoin(parts, ", ");
}

std::string RenderPlans(const v1::ListPlansResponse& plans, bool wide) {
  int provisioned = 0;
  TextTable table(AddressingHeaders(wide));
  std::vector<const v1::PortPlan*> all;
  for (const v1::PortPlan& plan : plans.plans()) {
    provisioned += plan.provisioned() ? 1 : 0;
    table.AddRow(Row(plan, wide));
    all.push_back(&plan);
  }
  std::string out = absl::StrFormat("mode: %s, %d/%d ports provisioned\n", OrDash(plans.mode()),
                                    provisioned, plans.plans_size());
  absl::StrAppend(&out, table.Render());
  if (!wide) absl::StrAppend(&out, Problems(all));
  return out;
}

std::string RenderPlan(const v1::PortPlan& plan, bool wide) {
  TextTable table(AddressingHeaders(wide));
  table.AddRow(Row(plan, wide));
  std::string out = table.Render();
  if (!wide) absl::StrAppend(&out, Problems({&plan}));
  return out;
}

}  // namespace rocenet::rocectl
