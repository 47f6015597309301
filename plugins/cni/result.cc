// SPDX-License-Identifier: Apache-2.0
#include "plugins/cni/result.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "plugins/cni/errors.h"
#include "plugins/cni/netconf.h"

namespace rocenet::cni {
namespace {

using Json = nlohmann::ordered_json;

// prev[key] when it is an array, else an empty array; prev may be null.
Json ArrayOf(const Json* prev, const char* key) {
  if (prev == nullptr) return Json::array();
  const auto it = prev->find(key);
  return it != prev->end() && it->is_array() ? *it : Json::array();
}

// The string member `key` of `object`, or "" when absent or not a string.
std::string StringOf(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Json InterfaceJson(absl::string_view version, const v1::Attachment& attachment,
                   absl::string_view ifname, absl::string_view netns) {
  const bool v110 = version == "1.1.0";
  Json interface;
  interface["name"] = std::string(ifname);
  if (!attachment.mac().empty()) interface["mac"] = attachment.mac();
  if (v110 && attachment.mtu() > 0) interface["mtu"] = attachment.mtu();
  interface["sandbox"] = std::string(netns);
  if (v110 && !attachment.pci_address().empty()) interface["pciID"] = attachment.pci_address();
  return interface;
}

Json IpJson(absl::string_view version, const v1::IpConfig& ip, size_t interface_index) {
  Json entry;
  // 0.4.0 results carry the IP version; 1.0.0 dropped it.
  if (version == "0.4.0") entry["version"] = absl::StrContains(ip.address(), ':') ? "6" : "4";
  entry["address"] = ip.address();
  if (!ip.gateway().empty()) entry["gateway"] = ip.gateway();
  entry["interface"] = interface_index;
  return entry;
}

Json RouteJson(const v1::RouteConfig& route) {
  Json entry;
  entry["dst"] = route.destination();
  if (!route.gateway().empty()) entry["gw"] = route.gateway();
  return entry;
}

absl::Status Mismatch(absl::string_view msg) {
  return CniError(CniCode::kInternal, msg,
                  "CHECK: rocenetd's record of the attachment and prevResult differ");
}

}  // namespace

Json RenderAddResult(absl::string_view cni_version, const v1::Attachment& attachment,
                     absl::string_view ifname, absl::string_view netns,
                     const std::optional<Json>& prev_result) {
  const Json* prev = prev_result.has_value() ? &*prev_result : nullptr;
  Json interfaces = ArrayOf(prev, "interfaces");
  Json ips = ArrayOf(prev, "ips");
  Json routes = ArrayOf(prev, "routes");
  const size_t index = interfaces.size();
  interfaces.push_back(InterfaceJson(cni_version, attachment, ifname, netns));
  for (const v1::IpConfig& ip : attachment.ips()) ips.push_back(IpJson(cni_version, ip, index));
  for (const v1::RouteConfig& route : attachment.routes()) routes.push_back(RouteJson(route));

  Json result;
  result["cniVersion"] = std::string(cni_version);
  result["interfaces"] = std::move(interfaces);
  if (!ips.empty()) result["ips"] = std::move(ips);
  if (!routes.empty()) result["routes"] = std::move(routes);
  if (prev_result.has_value()) {
    for (const auto& [key, value] : prev_result->items()) {
      if (key != "cniVersion" && key != "interfaces" && key != "ips" && key != "routes") {
        result[key] = value;
      }
    }
  }
  return result;
}

absl::Status CheckPrevResult(const v1::Attachment& attachment, absl::string_view ifname,
                             absl::string_view netns, const Json& prev_result) {
  const Json interfaces = ArrayOf(&prev_result, "interfaces");
  size_t index = interfaces.size();
  for (size_t i = 0; i < interfaces.size(); ++i) {
    const std::string sandbox = StringOf(interfaces[i], "sandbox");
    if (StringOf(interfaces[i], "name") == ifname && (sandbox.empty() || sandbox == netns)) {
      index = i;
      break;
    }
  }
  if (index == interfaces.size()) {
    return Mismatch(absl::StrCat("prevResult: no interface ", ifname, " in sandbox ", netns));
  }
  const Json& ours = interfaces[index];
  const std::string mac = StringOf(ours, "mac");
  if (!mac.empty() && !attachment.mac().empty() && !absl::EqualsIgnoreCase(mac, attachment.mac())) {
    return Mismatch(absl::StrCat("interface ", ifname, ": MAC is ", attachment.mac(),
                                 ", prevResult says ", mac));
  }
  if (const auto mtu = ours.find("mtu");
      mtu != ours.end() && mtu->is_number_integer() && attachment.mtu() > 0 &&
      mtu->get<int64_t>() != static_cast<int64_t>(attachment.mtu())) {
    return Mismatch(absl::StrCat("interface ", ifname, ": MTU is ", attachment.mtu(),
                                 ", prevResult says ", mtu->dump()));
  }

  const Json ips = ArrayOf(&prev_result, "ips");
  auto listed = [&](const v1::IpConfig& ip) {
    for (const Json& entry : ips) {
      const auto at = entry.find("interface");
      if (at != entry.end() && at->is_number_integer() &&
          at->get<int64_t>() == static_cast<int64_t>(index) &&
          StringOf(entry, "address") == ip.address()) {
        return true;
      }
    }
    return false;
  };
  for (const v1::IpConfig& ip : attachment.ips()) {
    if (!listed(ip)) {
      return Mismatch(absl::StrCat("interface ", ifname, ": address ", ip.address(),
                                   " is missing from prevResult"));
    }
  }
  for (const Json& entry : ips) {
    const auto at = entry.find("interface");
    if (at == entry.end() || !at->is_number_integer() ||
        at->get<int64_t>() != static_cast<int64_t>(index)) {
      continue;
    }
    const std::string address = StringOf(entry, "address");
    bool known = false;
    for (const v1::IpConfig& ip : attachment.ips()) known = known || ip.address() == address;
    if (!known) {
      return Mismatch(absl::StrCat("interface ", ifname, ": prevResult lists address ", address,
                                   ", rocenetd has not configured it"));
    }
  }

  const Json routes = ArrayOf(&prev_result, "routes");
  for (const v1::RouteConfig& route : attachment.routes()) {
    bool found = false;
    for (const Json& entry : routes) {
      const std::string gw = StringOf(entry, "gw");
      found = found || (StringOf(entry, "dst") == route.destination() &&
                        (gw.empty() || route.gateway().empty() || gw == route.gateway()));
    }
    if (!found) {
      return Mismatch(absl::StrCat("interface ", ifname, ": route ", route.destination(),
                                   route.gateway().empty() ? "" : " via ", route.gateway(),
                                   " is missing from prevResult"));
    }
  }
  return absl::OkStatus();
}

Json VersionResult(absl::string_view cni_version) {
  Json result;
  result["cniVersion"] = std::string(cni_version);
  Json versions = Json::array();
  for (const absl::string_view version : kSupportedVersions)
    versions.push_back(std::string(version));
  result["supportedVersions"] = std::move(versions);
  return result;
}

}  // namespace rocenet::cni
