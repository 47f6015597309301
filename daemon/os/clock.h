// SPDX-License-Identifier: Apache-2.0
// Clock: the time source of the domain modules, so tests control time.
// Thread-safe.
#pragma once

#include "absl/time/time.h"

namespace rocenet::os {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

}  // namespace rocenet::os
