// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/plan_convert.h"

#include <string>

#include "daemon/api/utf8.h"

namespace rocenet::api {
namespace {

void ToProto(const addressing::Route& route, v1::Route* out) {
  out->set_destination(route.destination.ToString());
  if (route.gateway.has_value()) out->set_gateway(route.gateway->ToString());
}

void ToProto(const addressing::AppliedConfig& applied, v1::AppliedConfig* out) {
  if (applied.local.has_value()) out->set_local(applied.local->ToString());
  if (applied.peer.has_value()) out->set_peer(applied.peer->ToString());
  for (const addressing::Route& route : applied.routes) ToProto(route, out->add_routes());
  out->set_mtu(applied.mtu);
  if (!applied.gateway_mac.IsZero()) out->set_gateway_mac(applied.gateway_mac.ToString());
}

}  // namespace

absl::string_view ModeName(addressing::Mode mode) {
  return mode == addressing::Mode::kL2 ? "L2" : "L3";
}

v1::PlanState ToProto(addressing::PlanState state) {
  switch (state) {
    case addressing::PlanState::kPending:
      return v1::PLAN_STATE_PENDING;
    case addressing::PlanState::kReady:
      return v1::PLAN_STATE_READY;
    case addressing::PlanState::kRefused:
      return v1::PLAN_STATE_REFUSED;
    case addressing::PlanState::kL2:
      return v1::PLAN_STATE_L2;
  }
  return v1::PLAN_STATE_UNSPECIFIED;
}

void ToProto(const addressing::PortAddressing& port, v1::PortPlan* out) {
  const addressing::AddressPlan& plan = port.plan;
  out->set_port_id(port.port_id);
  out->set_name(port.name);
  out->set_state(ToProto(plan.state));
  out->set_reason(ValidUtf8(plan.reason));
  out->set_message(ValidUtf8(plan.message));
  out->set_description(ValidUtf8(plan.description));
  if (plan.local.has_value()) out->set_local(plan.local->ToString());
  if (plan.peer.has_value()) out->set_peer(plan.peer->ToString());
  for (const addressing::Route& route : plan.routes) ToProto(route, out->add_routes());
  out->set_mtu(plan.mtu);
  if (!plan.gateway_mac.IsZero()) out->set_gateway_mac(plan.gateway_mac.ToString());
  out->set_provisioned(port.provisioned);
  // Apply errors may quote kernel messages or the description.
  out->set_apply_error(ValidUtf8(port.apply_error));
  if (port.applied.has_value()) ToProto(*port.applied, out->mutable_applied());
}

void ToProto(const node::NodeSnapshot& snapshot, v1::ListPlansResponse* out) {
  out->set_mode(std::string(ModeName(snapshot.mode)));
  for (const addressing::PortAddressing& port : snapshot.addressing)
    ToProto(port, out->add_plans());
}

const addressing::PortAddressing* FindAddressing(const node::NodeSnapshot& snapshot,
                                                 const std::string& id_or_name) {
  for (const addressing::PortAddressing& port : snapshot.addressing) {
    if (port.port_id == id_or_name || port.name == id_or_name) return &port;
  }
  return nullptr;
}

}  // namespace rocenet::api
