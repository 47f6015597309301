// SPDX-License-Identifier: Apache-2.0
#include "client/collective/yaml_text.h"

#include <cctype>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace rocenet::rocectl::collective {
namespace {

constexpr char kQuotedTag[] = "!";

// Whether a plain scalar would read as something other than a string.
bool LooksTyped(const std::string& text) {
  if (text.empty()) return true;
  const char first = text[0];
  if (std::isdigit(static_cast<unsigned char>(first)) || first == '-' || first == '+' ||
      first == '.') {
    return true;
  }
  static constexpr const char* kWords[] = {"~",  "null", "true", "false", "yes",
                                           "no", "on",   "off",  "y",     "n"};
  const std::string lower = absl::AsciiStrToLower(text);
  for (const char* word : kWords) {
    if (lower == word) return true;
  }
  return false;
}

void Emit(const YAML::Node& node, YAML::Emitter* out) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      *out << YAML::BeginMap;
      for (const auto& entry : node) {
        *out << YAML::Key << entry.first.Scalar() << YAML::Value;
        Emit(entry.second, out);
      }
      *out << YAML::EndMap;
      return;
    case YAML::NodeType::Sequence:
      *out << YAML::BeginSeq;
      for (const auto& item : node) Emit(item, out);
      *out << YAML::EndSeq;
      return;
    case YAML::NodeType::Scalar:
      if (absl::StrContains(node.Scalar(), '\n')) {
        *out << YAML::Literal;
      } else if (node.Tag() == kQuotedTag && LooksTyped(node.Scalar())) {
        *out << YAML::DoubleQuoted;
      }
      *out << node.Scalar();
      return;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      *out << YAML::Null;
      return;
  }
}

}  // namespace

YAML::Node Quoted(const std::string& text) {
  YAML::Node node(text);
  node.SetTag(kQuotedTag);
  return node;
}

std::string ToYamlDocument(const YAML::Node& document) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  out.SetMapFormat(YAML::Block);
  Emit(document, &out);
  std::string text = std::string("---\n") + out.c_str();
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text + "\n";
}

}  // namespace rocenet::rocectl::collective
