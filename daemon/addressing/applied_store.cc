// SPDX-License-Identifier: Apache-2.0
#include "daemon/addressing/applied_store.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "daemon/common/status_macros.h"
#include "nlohmann/json.hpp"

namespace rocenet::addressing {
namespace {

using nlohmann::json;

constexpr int kFormatVersion = 1;

// JSON text is UTF-8 only; nlohmann's strict dump() refuses anything else.
bool IsUtf8(const std::string& text) {
  try {
    (void)json(text).dump();
    return true;
  } catch (const json::type_error&) {
    return false;
  }
}

json RouteToJson(const Route& route) {
  json out = {{"destination", route.destination.ToString()}};
  if (route.gateway.has_value()) out["gateway"] = route.gateway->ToString();
  return out;
}

absl::StatusOr<Route> RouteFromJson(const json& in) {
  Route route;
  ASSIGN_OR_RETURN(route.destination, Ipv4Prefix::Parse(in.at("destination").get<std::string>()));
  if (in.contains("gateway")) {
    ASSIGN_OR_RETURN(route.gateway, Ipv4Address::Parse(in.at("gateway").get<std::string>()));
  }
  return route;
}

absl::StatusOr<AppliedConfig> ConfigFromJson(const json& in) {
  AppliedConfig config;
  config.port_id = in.at("port_id").get<std::string>();
  config.ifname = in.at("ifname").get<std::string>();
  if (in.contains("local")) {
    ASSIGN_OR_RETURN(config.local, Ipv4Prefix::Parse(in.at("local").get<std::string>()));
  }
  if (in.contains("peer")) {
    ASSIGN_OR_RETURN(config.peer, Ipv4Address::Parse(in.at("peer").get<std::string>()));
  }
  for (const json& route : in.value("routes", json::array())) {
    ASSIGN_OR_RETURN(Route r, RouteFromJson(route));
    config.routes.push_back(r);
  }
  config.mtu = in.value("mtu", 0u);
  if (in.contains("gateway_mac")) {
    ASSIGN_OR_RETURN(config.gateway_mac,
                     MacAddress::Parse(in.at("gateway_mac").get<std::string>()));
  }
  config.description = in.value("description", "");
  if (in.contains("description_hex")) {
    const std::string hex = in.at("description_hex").get<std::string>();
    if (hex.size() % 2 != 0 || !std::all_of(hex.begin(), hex.end(), [](char c) {
          return absl::ascii_isxdigit(static_cast<unsigned char>(c));
        })) {
      return absl::InvalidArgumentError(
          absl::StrCat("port ", config.port_id, ": description_hex is not hex"));
    }
    config.description = absl::HexStringToBytes(hex);
  }
  return config;
}

}  // namespace

std::string SerializeApplied(const std::map<std::string, AppliedConfig>& configs) {
  json ports = json::array();
  for (const auto& [id, config] : configs) {
    json entry = {{"port_id", config.port_id}, {"ifname", config.ifname}, {"mtu", config.mtu}};
    if (config.local.has_value()) entry["local"] = config.local->ToString();
    if (config.peer.has_value()) entry["peer"] = config.peer->ToString();
    json routes = json::array();
    for (const Route& route : config.routes) routes.push_back(RouteToJson(route));
    entry["routes"] = routes;
    if (!config.gateway_mac.IsZero()) entry["gateway_mac"] = config.gateway_mac.ToString();
    entry["description"] = config.description;
    // Descriptions come from the wire and may hold bytes that are not UTF-8.
    // Such bytes become U+FFFD in "description", for people; the exact bytes
    // go in "description_hex", so a restarted daemon reads back what it
    // wrote and does not take an unchanged port for a changed one.
    if (!IsUtf8(config.description)) {
      entry["description_hex"] = absl::BytesToHexString(config.description);
    }
    ports.push_back(entry);
  }
  return json{{"version", kFormatVersion}, {"ports", ports}}.dump(2, ' ', false,
                                                                  json::error_handler_t::replace) +
         "\n";
}

absl::StatusOr<std::map<std::string, AppliedConfig>> ParseApplied(absl::string_view text) {
  std::map<std::string, AppliedConfig> out;
  try {
    const json root = json::parse(text.begin(), text.end());
    if (root.value("version", 0) != kFormatVersion) {
      return absl::InvalidArgumentError(
          absl::StrCat("unsupported format version ", root.value("version", 0)));
    }
    for (const json& entry : root.at("ports")) {
      absl::StatusOr<AppliedConfig> config = ConfigFromJson(entry);
      if (!config.ok()) return config.status();
      out[config->port_id] = *std::move(config);
    }
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("not valid: ", e.what()));
  }
  return out;
}

absl::Status AppliedStore::Load() {
  absl::StatusOr<std::string> text = fs_->ReadFile(path_);
  if (absl::IsNotFound(text.status())) return absl::OkStatus();
  if (!text.ok()) return text.status();
  absl::StatusOr<std::map<std::string, AppliedConfig>> configs = ParseApplied(*text);
  if (!configs.ok()) {
    return absl::DataLossError(absl::StrCat(path_, ": ", configs.status().message()));
  }
  configs_ = *std::move(configs);
  return absl::OkStatus();
}

std::optional<AppliedConfig> AppliedStore::Get(const std::string& port_id) const {
  auto it = configs_.find(port_id);
  if (it == configs_.end()) return std::nullopt;
  return it->second;
}

void AppliedStore::Put(const AppliedConfig& config) {
  auto it = configs_.find(config.port_id);
  if (it != configs_.end() && it->second == config) return;
  configs_[config.port_id] = config;
  dirty_ = true;
}

void AppliedStore::Erase(const std::string& port_id) {
  if (configs_.erase(port_id) > 0) dirty_ = true;
}

absl::Status AppliedStore::Flush() {
  if (!dirty_) return absl::OkStatus();
  absl::Status status = fs_->WriteFileAtomic(path_, SerializeApplied(configs_), 0600);
  if (status.ok()) dirty_ = false;
  return status;
}

}  // namespace rocenet::addressing
