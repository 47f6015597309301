// SPDX-License-Identifier: Apache-2.0
#include "client/render/ports_render.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "client/render/table.h"

namespace rocenet::rocectl {
namespace {

std::vector<std::string> PortHeaders(bool wide) {
  std::vector<std::string> headers = {"NAME", "ID",  "STATE",  "MTU", "SPEED",
                                      "MAC",  "PCI", "MODULE", "NUMA"};
  if (wide) {
    for (const char* header :
         {"IFINDEX", "PERM MAC", "DRIVER", "DISCOVERY", "PCIE ROOT", "PORT INDEX", "RAIL", "RDMA",
          "UVERBS", "GID INDEX", "PFC", "SWITCH PFC", "RX BYTES", "TX BYTES", "RX ERRORS",
          "TX ERRORS", "FIRMWARE", "RDMA STATE", "DOWN REASON"}) {
      headers.emplace_back(header);
    }
  }
  return headers;
}

// "ACTIVE/LinkUp": the RDMA port's state and physical state; "-" when
// unknown or there is no RDMA device.
std::string RdmaStateText(const v1::Port& port) {
  if (!port.has_rdma() || port.rdma().state().empty()) return "-";
  std::string physical = port.rdma().physical_state();
  absl::StrReplaceAll({{" ", "_"}}, &physical);  // "Phy Test": one table field
  return physical.empty() ? port.rdma().state() : absl::StrCat(port.rdma().state(), "/", physical);
}

// "LINK_TRAINING_FAILURE/KR_FRAME_LOCK_NOT_ACQUIRED": why the driver says
// the link is down; "-" while it says nothing.
std::string DownReasonText(const v1::Port& port) {
  if (port.link_down_reason().empty()) return "-";
  return port.link_down_detail().empty()
             ? port.link_down_reason()
             : absl::StrCat(port.link_down_reason(), "/", port.link_down_detail());
}

std::vector<std::string> Row(const v1::Port& port, bool wide) {
  // A missing port has no live values; zeros from the wire would mislead.
  const bool present = port.present();
  std::vector<std::string> row = {
      OrDash(port.name()),
      OrDash(port.id()),
      PortState(port),
      present && port.mtu() > 0 ? absl::StrCat(port.mtu()) : "-",
      present ? FormatSpeed(port.speed_mbps()) : "-",
      OrDash(port.mac()),
      OrDash(port.pci_address()),
      IndexOrDash(port.module_id()),
      IndexOrDash(port.numa_node()),
  };
  if (wide) {
    const v1::PortCounters& counters = port.counters();
    const std::vector<std::string> more = {
        present && port.ifindex() > 0 ? absl::StrCat(port.ifindex()) : "-",
        OrDash(port.permanent_mac()),
        OrDash(port.driver()),
        DiscoveryName(port.discovery()),
        OrDash(port.pcie_root()),
        IndexOrDash(port.port_index()),
        IndexOrDash(port.rail()),
        port.has_rdma() ? absl::StrCat(port.rdma().device(), "/", port.rdma().port()) : "-",
        port.has_rdma() ? OrDash(port.rdma().uverbs()) : "-",
        port.has_rdma() ? IndexOrDash(port.rdma().gid_index()) : "-",
        PortPfcText(port.pfc(), port.has_pfc()),
        SwitchPfcText(port.pfc(), port.has_pfc()),
        present ? absl::StrCat(counters.receive_bytes()) : "-",
        present ? absl::StrCat(counters.transmit_bytes()) : "-",
        present ? absl::StrCat(counters.receive_errors()) : "-",
        present ? absl::StrCat(counters.transmit_errors()) : "-",
        OrDash(port.firmware_version()),
        RdmaStateText(port),
        DownReasonText(port),
    };
    row.insert(row.end(), more.begin(), more.end());
  }
  return row;
}

// Priorities as ranges: {0,1,2,3} -> "0-3", {} -> "none".
std::string Priorities(const google::protobuf::RepeatedField<uint32_t>& priorities) {
  if (priorities.empty()) return "none";
  std::vector<std::string> runs;
  for (int i = 0; i < priorities.size();) {
    int end = i;
    while (end + 1 < priorities.size() && priorities[end + 1] == priorities[end] + 1) ++end;
    runs.push_back(end == i ? absl::StrCat(priorities[i])
                            : absl::StrCat(priorities[i], "-", priorities[end]));
    i = end + 1;
  }
  return absl::StrJoin(runs, ",");
}

}  // namespace

std::string PortPfcText(const v1::PortPfc& pfc, bool known) {
  if (!known) return "-";
  if (!pfc.supported()) return "no-dcb";
  return Priorities(pfc.enabled_priorities());
}

std::string SwitchPfcText(const v1::PortPfc& pfc, bool known) {
  if (!known || !pfc.switch_advertised()) return "-";
  return Priorities(pfc.switch_priorities());
}

std::string PortState(const v1::Port& port) {
  if (!port.attached_to().empty()) return "attached";
  if (!port.present()) return "missing";
  if (!port.admin_up() || !port.carrier()) return "down";
  return "up";
}

std::string FormatSpeed(uint64_t speed_mbps) {
  if (speed_mbps == 0) return "-";
  if (speed_mbps < 1000) return absl::StrCat(speed_mbps, "M");
  std::string text = absl::StrCat(speed_mbps / 1000);
  if (const uint64_t rest = speed_mbps % 1000; rest != 0) {
    // Three decimal digits, trailing zeros dropped: 2500 -> "2.5".
    std::string fraction = absl::StrCat(rest + 1000).substr(1);
    fraction.erase(fraction.find_last_not_of('0') + 1);
    absl::StrAppend(&text, ".", fraction);
  }
  return absl::StrCat(text, "G");
}

std::string DiscoveryName(v1::Discovery discovery) {
  switch (discovery) {
    case v1::DISCOVERY_GAUDI_SYSFS:
      return "gaudi-sysfs";
    case v1::DISCOVERY_INTERFACE_NAME:
      return "interface-name";
    case v1::DISCOVERY_DRIVER:
      return "driver";
    default:
      return "-";
  }
}

std::string RenderPortTable(const google::protobuf::RepeatedPtrField<v1::Port>& ports, bool wide) {
  TextTable table(PortHeaders(wide));
  for (const v1::Port& port : ports) table.AddRow(Row(port, wide));
  return table.Render();
}

std::string RenderPortTable(const v1::Port& port, bool wide) {
  TextTable table(PortHeaders(wide));
  table.AddRow(Row(port, wide));
  return table.Render();
}

}  // namespace rocenet::rocectl
