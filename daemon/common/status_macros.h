// SPDX-License-Identifier: Apache-2.0
// Early-return helpers for absl::Status and absl::StatusOr.
//
// Abseil 20220623 ships neither RETURN_IF_ERROR nor ASSIGN_OR_RETURN; these are
// the project's only definitions. Header-only, no state, usable from any
// thread.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define ROCENET_CONCAT_INNER(a, b) a##b
#define ROCENET_CONCAT(a, b) ROCENET_CONCAT_INNER(a, b)

// Returns the status of `expr` from the calling function when it is not OK.
#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    ::absl::Status rocenet_status_ = (expr);           \
    if (!rocenet_status_.ok()) return rocenet_status_; \
  } while (false)

// `ASSIGN_OR_RETURN(auto x, F())` declares x from the value of F(), or returns
// F()'s status from the calling function.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ROCENET_ASSIGN_OR_RETURN_IMPL(ROCENET_CONCAT(rocenet_or_, __LINE__), lhs, expr)

#define ROCENET_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return std::move(tmp).status();      \
  lhs = std::move(tmp).value()
