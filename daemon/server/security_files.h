// SPDX-License-Identifier: Apache-2.0
// CheckSecurityFiles: the host side of the security options, checked before
// they take effect (at start and on reload): the files they name can be
// read and the read group exists.
#pragma once

#include "absl/status/status.h"
#include "daemon/config/security_options.h"

namespace rocenet::server {

// InvalidArgument naming the key and the file or group when one cannot be
// used.
absl::Status CheckSecurityFiles(const config::SecurityOptions& options);

}  // namespace rocenet::server
