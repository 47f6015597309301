// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/logging.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_sinks.h"

namespace rocenet {
namespace {

// %v with JSON string escaping, so any message yields a valid JSON line.
class JsonEscapedMessage final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string escaped = nlohmann::json(std::string(msg.payload.data(), msg.payload.size()))
                                    .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(escaped.data(), escaped.data() + escaped.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonEscapedMessage>();
  }
};

}  // namespace

absl::StatusOr<LogFormat> ParseLogFormat(absl::string_view text) {
  if (text == "text") return LogFormat::kText;
  if (text == "json") return LogFormat::kJson;
  return absl::InvalidArgumentError(
      absl::StrCat("log format \"", text, "\" is not one of: text, json"));
}

absl::StatusOr<spdlog::level::level_enum> ParseLogLevel(absl::string_view text) {
  if (text == "debug") return spdlog::level::debug;
  if (text == "info") return spdlog::level::info;
  if (text == "warning") return spdlog::level::warn;
  if (text == "error") return spdlog::level::err;
  return absl::InvalidArgumentError(
      absl::StrCat("log level \"", text, "\" is not one of: debug, info, warning, error"));
}

void InitLogging(LogFormat format, spdlog::level::level_enum level) {
  auto logger = std::make_shared<spdlog::logger>("rocenet",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  if (format == LogFormat::kJson) {
    formatter->add_flag<JsonEscapedMessage>('*').set_pattern(
        R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","thread":%t,"source":"%s:%#","msg":%*})");
  } else {
    formatter->set_pattern("%L%m%d %H:%M:%S.%f %7t %s:%#] %v");
  }
  logger->set_formatter(std::move(formatter));
  logger->set_level(level);
  logger->flush_on(spdlog::level::debug);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace rocenet
