// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/hcl_files.h"

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "daemon/common/ipv4.h"
#include "daemon/common/mac_address.h"
#include "nlohmann/json.hpp"

namespace rocenet {
namespace {

bool IsGaudiNic(const HclPort& port) {
  return port.gaudi && !port.pci_address.empty() && port.port_index >= 0 &&
         port.port_index < kGaudiNicCount;
}

// A MAC HCL can parse (ether_aton), lower case as sysfs writes it.
std::optional<std::string> UsableMac(const std::string& text) {
  absl::StatusOr<MacAddress> mac = MacAddress::Parse(text);
  if (!mac.ok()) return std::nullopt;
  return absl::AsciiStrToLower(text);
}

}  // namespace

std::optional<std::string> GaudinetJson(const std::vector<HclPort>& given) {
  std::vector<const HclPort*> sorted;
  for (const HclPort& port : given) sorted.push_back(&port);
  std::sort(sorted.begin(), sorted.end(),
            [](const HclPort* a, const HclPort* b) { return a->name < b->name; });
  // Keys in Habana's documented order, as the host's gaudinet.json has them.
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  for (const HclPort* port : sorted) {
    if (port->l2) return std::nullopt;
    absl::StatusOr<Ipv4Prefix> local = Ipv4Prefix::Parse(port->local);
    std::optional<std::string> mac = UsableMac(port->mac);
    std::optional<std::string> gateway = UsableMac(port->gateway_mac);
    if (!local.ok() || local->address().value() == 0 || local->length() == 0 || !mac || !gateway) {
      // HCL would refuse the whole file for this one entry.
      continue;
    }
    nlohmann::ordered_json entry;
    entry["NIC_MAC"] = *mac;
    entry["NIC_IP"] = local->address().ToString();
    entry["SUBNET_MASK"] = local->Netmask().ToString();
    entry["GATEWAY_MAC"] = *gateway;
    entries.push_back(std::move(entry));
  }
  if (entries.empty()) return std::nullopt;
  nlohmann::ordered_json document;
  document["NIC_NET_CONFIG"] = std::move(entries);
  return document.dump(2) + "\n";
}

std::optional<std::string> MacAddrInfoJson(const std::vector<HclPort>& given,
                                           const std::vector<HclPort>& all) {
  std::map<std::string, std::vector<std::string>> by_function;
  for (const HclPort& port : given) {
    if (IsGaudiNic(port)) {
      by_function.emplace(port.pci_address,
                          std::vector<std::string>(kGaudiNicCount, kInternalNicMac));
    }
  }
  if (by_function.empty()) return std::nullopt;
  for (const HclPort& port : all) {
    auto function = by_function.find(port.pci_address);
    if (function == by_function.end() || !IsGaudiNic(port)) continue;
    if (std::optional<std::string> mac = UsableMac(port.mac)) {
      function->second[port.port_index] = *mac;
    }
  }
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& [pci, macs] : by_function) {
    entries.push_back({{"PCI_ID", pci}, {"MAC_ADDR_LIST", macs}});
  }
  return nlohmann::json({{"MAC_ADDR_INFO", entries}}).dump(2) + "\n";
}

std::vector<HclFile> HclFiles(const std::vector<HclPort>& given, const std::vector<HclPort>& all) {
  std::vector<HclFile> files;
  if (std::optional<std::string> macs = MacAddrInfoJson(given, all)) {
    files.push_back({kMacInfoFile, *std::move(macs)});
  }
  if (std::optional<std::string> gaudinet = GaudinetJson(given)) {
    files.push_back({kGaudinetFile, *std::move(gaudinet)});
  }
  return files;
}

}  // namespace rocenet
