// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/nfd_file.h"

#include "absl/strings/str_cat.h"

namespace rocenet {

std::string RenderNfdFile(absl::string_view labels, absl::Time expiry) {
  return absl::StrCat(
      "# +expiry-time=", absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", expiry, absl::UTCTimeZone()), "\n",
      labels);
}

}  // namespace rocenet
