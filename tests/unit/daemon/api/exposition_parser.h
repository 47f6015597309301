// SPDX-License-Identifier: Apache-2.0
// A strict parser of the Prometheus text exposition format (0.0.4), for
// tests: every deviation is reported as a gtest failure naming the line.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rocenet::api::testing {

using Labels = std::map<std::string, std::string>;

struct Sample {
  std::string name;
  Labels labels;
  double value = 0;
};

struct ParsedFamily {
  std::string help;
  std::string type;
  std::vector<Sample> samples;
};

// A sample value or bucket bound: a number, +Inf, -Inf or NaN; nullopt
// otherwise.
std::optional<double> ParseValue(const std::string& text);

// The families of `text` by name, each with its HELP, TYPE and samples.
std::map<std::string, ParsedFamily> ParseExposition(const std::string& text);

}  // namespace rocenet::api::testing
