// SPDX-License-Identifier: Apache-2.0
// How HCL reads the files rocenet writes for it, as its parsers do
// (docs/pods.md#kubelet-device-plugin, "What HCL finds in the pod"): every
// key required in every entry, addresses through inet_pton and MACs through
// ether_aton, and an empty or zero address or mask refuses the whole file.
// The tests hold rocenet's files to these rules rather than to a copy of its
// own output.
#pragma once

#include <arpa/inet.h>
#include <netinet/ether.h>

#include <string>

#include "nlohmann/json.hpp"

namespace rocenet::device::testing {

// Empty when HCL accepts `text` as a gaudinet.json; else why it refuses it.
inline std::string HclRefusesGaudinet(const std::string& text) {
  nlohmann::json root = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) return "not a JSON object";
  if (!root.contains("NIC_NET_CONFIG") || !root["NIC_NET_CONFIG"].is_array()) {
    return "no NIC_NET_CONFIG array";
  }
  for (const nlohmann::json& entry : root["NIC_NET_CONFIG"]) {
    for (const char* key : {"NIC_MAC", "NIC_IP", "SUBNET_MASK", "GATEWAY_MAC"}) {
      if (!entry.contains(key) || !entry[key].is_string()) return std::string("no ") + key;
    }
    for (const char* key : {"NIC_MAC", "GATEWAY_MAC"}) {
      if (ether_aton(entry[key].get<std::string>().c_str()) == nullptr) {
        return std::string(key) + " is not a MAC";
      }
    }
    for (const char* key : {"NIC_IP", "SUBNET_MASK"}) {
      in_addr address{};
      if (inet_pton(AF_INET, entry[key].get<std::string>().c_str(), &address) != 1) {
        return std::string(key) + " is not an IPv4 address";
      }
      if (address.s_addr == 0) return std::string(key) + " is zero";
    }
  }
  return "";
}

// Empty when HCL accepts `text` as a macAddrInfo.json; else why not.
inline std::string HclRefusesMacInfo(const std::string& text) {
  nlohmann::json root = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) return "not a JSON object";
  if (!root.contains("MAC_ADDR_INFO") || !root["MAC_ADDR_INFO"].is_array()) {
    return "no MAC_ADDR_INFO array";
  }
  for (const nlohmann::json& entry : root["MAC_ADDR_INFO"]) {
    if (!entry.contains("PCI_ID") || !entry["PCI_ID"].is_string()) return "no PCI_ID";
    unsigned domain, bus, device, function;
    char end;
    if (sscanf(entry["PCI_ID"].get<std::string>().c_str(), "%4x:%2x:%2x.%1x%c", &domain, &bus,
               &device, &function, &end) != 4) {
      return "PCI_ID is not dddd:bb:dd.f";
    }
    if (!entry.contains("MAC_ADDR_LIST") || !entry["MAC_ADDR_LIST"].is_array()) {
      return "no MAC_ADDR_LIST";
    }
    if (entry["MAC_ADDR_LIST"].size() != 24) return "MAC_ADDR_LIST does not have 24 MACs";
    for (const nlohmann::json& mac : entry["MAC_ADDR_LIST"]) {
      if (!mac.is_string() || ether_aton(mac.get<std::string>().c_str()) == nullptr) {
        return "a MAC_ADDR_LIST entry is not a MAC";
      }
    }
  }
  return "";
}

}  // namespace rocenet::device::testing
