// Reading rocenetd's config file: the error every key check returns, and the
// scalar read shared by options.cc and security_options.cc. Pure functions.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "yaml-cpp/yaml.h"

namespace rocenet::server {

// InvalidArgument "<origin>: key \"<key>\": <why>".
absl::Status KeyError(const std::string& origin, absl::string_view key, absl::string_view why);

// The value of a scalar node; anything else is a KeyError.
absl::StatusOr<std::string> Scalar(const YAML::Node& node, const std::string& origin,
                                   absl::string_view key);

}  // namespace rocenet::server
