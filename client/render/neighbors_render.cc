// SPDX-License-Identifier: Apache-2.0
#include "client/render/neighbors_render.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/render/health_render.h"
#include "client/render/ports_render.h"
#include "client/render/table.h"

namespace rocenet::rocectl {
namespace {

// The first of a TLV the neighbor may repeat; the API has them all.
std::string First(const google::protobuf::RepeatedPtrField<std::string>& values) {
  return values.empty() ? "-" : OrDash(values[0]);
}

std::vector<std::string> NeighborHeaders(bool wide) {
  std::vector<std::string> headers = {"PORT",        "CHASSIS", "PORT ID", "SYSTEM NAME",
                                      "DESCRIPTION", "TTL",     "AGE"};
  if (wide) {
    for (const char* header :
         {"MGMT ADDRESS", "CAPABILITIES", "FRAMES", "EXPIRES IN", "SWITCH PFC", "PORT PFC"}) {
      headers.emplace_back(header);
    }
  }
  return headers;
}

absl::Time TimeOf(const google::protobuf::Timestamp& stamp) {
  return absl::FromUnixSeconds(stamp.seconds()) + absl::Nanoseconds(stamp.nanos());
}

// TTLs are set in seconds, so expiry is shown in seconds too.
std::string ExpiresIn(const google::protobuf::Timestamp& expires, absl::Time now) {
  if (!expires.seconds() && !expires.nanos()) return "-";
  absl::Duration left = TimeOf(expires) - now;
  if (left < absl::ZeroDuration()) left = absl::ZeroDuration();
  return absl::StrCat(absl::ToInt64Seconds(left), "s");
}

std::string ManagementAddresses(const v1::Neighbor& neighbor) {
  std::vector<std::string> addresses;
  for (const v1::LldpManagementAddress& address : neighbor.management_addresses()) {
    addresses.push_back(address.address());
  }
  return addresses.empty() ? "-" : absl::StrJoin(addresses, ",");
}

std::string Capabilities(const v1::Neighbor& neighbor) {
  if (!neighbor.has_capabilities() || neighbor.capabilities().enabled().empty()) return "-";
  return absl::StrJoin(neighbor.capabilities().enabled(), ",");
}

// This neighbor's own PFC TLV (each neighbor row shows its own).
std::string SwitchPfc(const v1::Neighbor& neighbor) {
  if (!neighbor.has_pfc()) return "-";
  v1::PortPfc as_port;
  as_port.set_switch_advertised(true);
  for (uint32_t p : neighbor.pfc().enabled_priorities()) as_port.add_switch_priorities(p);
  return SwitchPfcText(as_port, true);
}

std::string PortName(const v1::PortNeighbors& port) {
  return !port.name().empty() ? port.name() : OrDash(port.port_id());
}

std::vector<std::string> NeighborRow(const v1::PortNeighbors& port, const v1::Neighbor& neighbor,
                                     absl::Time now, bool wide) {
  std::vector<std::string> row = {PortName(port),
                                  OrDash(neighbor.chassis_id().value()),
                                  OrDash(neighbor.port_id().value()),
                                  First(neighbor.system_names()),
                                  First(neighbor.port_descriptions()),
                                  absl::StrCat(neighbor.ttl_seconds(), "s"),
                                  FormatSince(neighbor.first_seen(), now)};
  if (wide) {
    const std::vector<std::string> more = {ManagementAddresses(neighbor),
                                           Capabilities(neighbor),
                                           absl::StrCat(neighbor.frames()),
                                           ExpiresIn(neighbor.expires(), now),
                                           SwitchPfc(neighbor),
                                           PortPfcText(port.pfc(), port.has_pfc())};
    row.insert(row.end(), more.begin(), more.end());
  }
  return row;
}

std::vector<std::string> EmptyRow(const v1::PortNeighbors& port, absl::Time now, bool wide) {
  std::vector<std::string> row(NeighborHeaders(wide).size(), "-");
  row[0] = PortName(port);
  row[1] = NoNeighborText(port, now);
  return row;
}

}  // namespace

std::string NoNeighborText(const v1::PortNeighbors& port, absl::Time now) {
  if (port.lost() == "AgedOut") {
    return absl::StrCat("(aged out ", FormatSince(port.lost_at(), now), " ago)");
  }
  if (port.lost() == "Shutdown") {
    return absl::StrCat("(shut down ", FormatSince(port.lost_at(), now), " ago)");
  }
  if (!port.lost().empty()) return absl::StrCat("(", port.lost(), ")");
  return port.ever_seen() ? "(none)" : "(none heard yet)";
}

std::string RenderNeighbors(const v1::ListNeighborsResponse& response, absl::Time now, bool wide) {
  TextTable table(NeighborHeaders(wide));
  for (const v1::PortNeighbors& port : response.ports()) {
    if (port.neighbors().empty()) {
      table.AddRow(EmptyRow(port, now, wide));
      continue;
    }
    for (const v1::Neighbor& neighbor : port.neighbors()) {
      table.AddRow(NeighborRow(port, neighbor, now, wide));
    }
  }
  return table.Render();
}

}  // namespace rocenet::rocectl
