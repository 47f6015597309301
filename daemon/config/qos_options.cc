// SPDX-License-Identifier: Apache-2.0
#include "daemon/config/qos_options.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/common/status_macros.h"
#include "daemon/config/config_yaml.h"
#include "daemon/config/options.h"

namespace rocenet::config {

const std::set<std::string>& QosKeys() {
  static const auto* keys = new std::set<std::string>{"pfc", "pfc_unhealthy"};
  return *keys;
}

absl::Status ApplyQos(const YAML::Node& node, const std::string& origin, qos::PfcRequest& pfc,
                      bool& pfc_unhealthy) {
  if (!node.IsMap()) return KeyError(origin, "qos", "must be a mapping");
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const std::string path = absl::StrCat("qos.", key);
    if (!QosKeys().contains(key)) return UnknownKeyError(origin, path);
    if (key == "pfc_unhealthy") {
      ASSIGN_OR_RETURN(pfc_unhealthy, Bool(entry.second, origin, path));
      continue;
    }
    std::string text;
    if (entry.second.IsSequence()) {
      std::vector<std::string> items;
      for (const YAML::Node& item : entry.second) {
        if (!item.IsScalar() || IsQuoted(item)) {
          return KeyError(origin, path, "must be keep, none, all or a list of priorities 0..7");
        }
        items.push_back(item.Scalar());
      }
      if (items.empty()) return KeyError(origin, path, "an empty list; write none for no PFC");
      text = absl::StrJoin(items, ",");
    } else {
      ASSIGN_OR_RETURN(text, Scalar(entry.second, origin, path));
    }
    absl::StatusOr<qos::PfcRequest> request = qos::ParsePfcRequest(text);
    if (!request.ok()) return KeyError(origin, path, request.status().message());
    pfc = *request;
  }
  return absl::OkStatus();
}

}  // namespace rocenet::config
