// SPDX-License-Identifier: Apache-2.0
#include "daemon/inventory/port.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace rocenet::inventory {

bool Port::SameState(const Port& other) const {
  os::LinkInfo a = link;
  os::LinkInfo b = other.link;
  a.stats = {};
  b.stats = {};
  // `mac` holds counters only.
  return id == other.id && name == other.name && present == other.present && a == b &&
         pci == other.pci && discovery == other.discovery && attached_to == other.attached_to &&
         rdma == other.rdma && link_down_reason == other.link_down_reason &&
         link_down_detail == other.link_down_detail;
}

std::string MakePortId(const PciInfo& pci, const os::LinkInfo& link, const std::string& name) {
  if (!pci.address.empty() && pci.port_index >= 0) {
    return absl::StrCat(pci.address, "-p", pci.port_index);
  }
  if (!link.permanent_mac.IsZero()) {
    return absl::StrCat("mac-", absl::StrReplaceAll(link.permanent_mac.ToString(), {{":", ""}}));
  }
  return absl::StrCat("if-", name);
}

absl::string_view DiscoveryName(Discovery discovery) {
  switch (discovery) {
    case Discovery::kGaudiSysfs:
      return "gaudi-sysfs";
    case Discovery::kInterfaceName:
      return "interface-name";
    case Discovery::kDriver:
      return "driver";
  }
  return "unknown";
}

}  // namespace rocenet::inventory
