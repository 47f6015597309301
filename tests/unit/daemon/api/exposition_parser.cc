// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/daemon/api/exposition_parser.h"

#include <cmath>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "gtest/gtest.h"

namespace rocenet::api::testing {
namespace {

// Parses `{a="x",b="y"}` at `pos`; escapes \\, \" and \n only.
bool ParseLabels(const std::string& line, size_t& pos, Labels& out, std::string& error) {
  static const std::regex kLabelName("[a-zA-Z_][a-zA-Z0-9_]*");
  ++pos;  // '{'
  while (pos < line.size() && line[pos] != '}') {
    const size_t eq = line.find('=', pos);
    if (eq == std::string::npos) return (error = "label without '='"), false;
    const std::string name = line.substr(pos, eq - pos);
    if (!std::regex_match(name, kLabelName)) return (error = "bad label name " + name), false;
    pos = eq + 1;
    if (pos >= line.size() || line[pos] != '"') return (error = "unquoted label value"), false;
    ++pos;
    std::string value;
    for (;;) {
      if (pos >= line.size()) return (error = "unterminated label value"), false;
      const char c = line[pos++];
      if (c == '"') break;
      if (c == '\\') {
        if (pos >= line.size()) return (error = "dangling escape"), false;
        const char e = line[pos++];
        if (e == 'n') {
          value += '\n';
        } else if (e == '\\' || e == '"') {
          value += e;
        } else {
          return (error = std::string("bad escape \\") + e), false;
        }
      } else {
        value += c;
      }
    }
    if (out.count(name) != 0) return (error = "label repeated: " + name), false;
    out[name] = value;
    if (pos < line.size() && line[pos] == ',') ++pos;
  }
  if (pos >= line.size()) return (error = "unterminated label set"), false;
  ++pos;  // '}'
  return true;
}

}  // namespace

std::optional<double> ParseValue(const std::string& text) {
  if (text == "+Inf") return INFINITY;
  if (text == "-Inf") return -INFINITY;
  if (text == "NaN") return NAN;
  static const std::regex kNumber(R"([-+]?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?)");
  if (!std::regex_match(text, kNumber)) return std::nullopt;
  return std::stod(text);
}

// Fails the test on anything a strict scraper would reject: samples before
// their family's TYPE, HELP/TYPE given twice, a family split in two,
// unparsable lines or values.
std::map<std::string, ParsedFamily> ParseExposition(const std::string& text) {
  std::map<std::string, ParsedFamily> families;
  std::string current;
  std::set<std::string> closed;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  auto family_of = [&](const std::string& sample) -> std::string {
    if (families.count(sample) != 0) return sample;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string s(suffix);
      if (sample.size() > s.size() && sample.compare(sample.size() - s.size(), s.size(), s) == 0) {
        const std::string base = sample.substr(0, sample.size() - s.size());
        if (families.count(base) != 0 && families[base].type == "histogram") return base;
      }
    }
    return "";
  };
  while (std::getline(in, line)) {
    ++number;
    const std::string where = "line " + std::to_string(number) + ": " + line;
    if (line.empty()) continue;
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
      const bool help = line[2] == 'H';
      const size_t space = line.find(' ', 7);
      const std::string name = line.substr(7, space == std::string::npos ? space : space - 7);
      const std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
      if (name != current) {
        EXPECT_EQ(closed.count(name), 0u) << "family split: " << where;
        if (!current.empty()) closed.insert(current);
        current = name;
      }
      ParsedFamily& family = families[name];
      if (help) {
        EXPECT_TRUE(family.help.empty()) << "HELP twice: " << where;
        EXPECT_TRUE(family.type.empty()) << "HELP after TYPE: " << where;
        family.help = rest;
      } else {
        EXPECT_TRUE(family.type.empty()) << "TYPE twice: " << where;
        EXPECT_TRUE(rest == "counter" || rest == "gauge" || rest == "histogram")
            << "type: " << where;
        family.type = rest;
      }
      continue;
    }
    EXPECT_NE(line[0], '#') << "unknown comment: " << where;
    if (line[0] == '#') continue;
    Sample sample;
    size_t pos = line.find_first_of("{ ");
    if (pos == std::string::npos) {
      ADD_FAILURE() << "no value: " << where;
      continue;
    }
    sample.name = line.substr(0, pos);
    std::string error;
    if (line[pos] == '{' && !ParseLabels(line, pos, sample.labels, error)) {
      ADD_FAILURE() << error << ": " << where;
      continue;
    }
    if (pos >= line.size() || line[pos] != ' ') {
      ADD_FAILURE() << "no space before the value: " << where;
      continue;
    }
    const std::optional<double> value = ParseValue(line.substr(pos + 1));
    if (!value.has_value()) {
      ADD_FAILURE() << "bad value: " << where;
      continue;
    }
    sample.value = *value;
    const std::string family = family_of(sample.name);
    if (family.empty() || family != current || families[family].type.empty()) {
      ADD_FAILURE() << "sample outside its family's HELP/TYPE block: " << where;
      continue;
    }
    families[family].samples.push_back(std::move(sample));
  }
  return families;
}

}  // namespace rocenet::api::testing
