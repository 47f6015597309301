#include "daemon/server/config_yaml.h"

#include "absl/strings/str_cat.h"

namespace rocenet::server {

absl::Status KeyError(const std::string& origin, absl::string_view key, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(origin, ": key \"", key, "\": ", why));
}

absl::StatusOr<std::string> Scalar(const YAML::Node& node, const std::string& origin,
                                   absl::string_view key) {
  if (!node.IsScalar()) return KeyError(origin, key, "must be a string");
  return node.Scalar();
}

}  // namespace rocenet::server
