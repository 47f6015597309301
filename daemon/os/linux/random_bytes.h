// SPDX-License-Identifier: Apache-2.0
// Bytes from the kernel's random source (getrandom), for nonces.
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace rocenet::os {

absl::StatusOr<std::string> RandomBytes(size_t count);

}  // namespace rocenet::os
