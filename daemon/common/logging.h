// SPDX-License-Identifier: Apache-2.0
// Process-wide logging set-up for rocenet binaries.
//
// Everything logs through spdlog's default logger to stderr. Call
// InitLogging() once from main before any thread starts; after that the
// SPDLOG_* macros are safe from every thread.
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#ifndef SPDLOG_ACTIVE_LEVEL
#define SPDLOG_ACTIVE_LEVEL SPDLOG_LEVEL_DEBUG
#endif
#include "spdlog/spdlog.h"

// Debian's absl::string_view is its own type; let fmt print it like a
// std::string_view.
template <>
struct fmt::formatter<absl::string_view> : fmt::formatter<fmt::string_view> {
  template <typename FormatContext>
  auto format(absl::string_view text, FormatContext& ctx) const {
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(text.data(), text.size()),
                                                    ctx);
  }
};

namespace rocenet {

enum class LogFormat {
  kText,  // klog-like: "I1129 14:28:39.123456    42 file.cc:12] message"
  kJson,  // one JSON object per line, for log shippers
};

absl::StatusOr<LogFormat> ParseLogFormat(absl::string_view text);
absl::StatusOr<spdlog::level::level_enum> ParseLogLevel(absl::string_view text);

void InitLogging(LogFormat format, spdlog::level::level_enum level);

}  // namespace rocenet
