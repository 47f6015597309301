// SPDX-License-Identifier: Apache-2.0
// "host:port" listen addresses, as rocenetd's and rocenet-diagd's
// metrics_address and rocenetd's tls.address are written.
#pragma once

#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rocenet {

// Splits "host:port"; ":port" means every IPv4 address. InvalidArgument
// quoting the text when it is not host:port with a port in 0..65535.
absl::StatusOr<std::pair<std::string, int>> ParseListenAddress(absl::string_view text);

}  // namespace rocenet
