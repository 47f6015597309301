// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/listen_address.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace rocenet {

absl::StatusOr<std::pair<std::string, int>> ParseListenAddress(absl::string_view text) {
  const size_t colon = text.rfind(':');
  int port = -1;
  if (colon == absl::string_view::npos || !absl::SimpleAtoi(text.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("address \"", text, "\" is not host:port with a port in 0..65535"));
  }
  std::string host(text.substr(0, colon));
  if (host.empty()) host = "0.0.0.0";
  return std::make_pair(host, port);
}

}  // namespace rocenet
