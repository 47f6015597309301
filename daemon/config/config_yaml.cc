// SPDX-License-Identifier: Apache-2.0
#include "daemon/config/config_yaml.h"

#include "absl/strings/str_cat.h"

namespace rocenet::config {

absl::Status KeyError(const std::string& origin, absl::string_view key, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(origin, ": key \"", key, "\": ", why));
}

bool IsQuoted(const YAML::Node& node) { return node.IsScalar() && node.Tag() == "!"; }

absl::StatusOr<bool> Bool(const YAML::Node& node, const std::string& origin,
                          absl::string_view key) {
  if (node.IsScalar() && !IsQuoted(node)) {
    const std::string& v = node.Scalar();
    if (v == "true") return true;
    if (v == "false") return false;
  }
  return KeyError(origin, key, "must be true or false");
}

absl::StatusOr<std::string> Scalar(const YAML::Node& node, const std::string& origin,
                                   absl::string_view key) {
  if (!node.IsScalar()) return KeyError(origin, key, "must be a string");
  return node.Scalar();
}

}  // namespace rocenet::config
