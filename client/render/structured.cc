// SPDX-License-Identifier: Apache-2.0
#include "client/render/structured.h"

#include <cctype>
#include <exception>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "daemon/common/status_macros.h"
#include "google/protobuf/util/json_util.h"
#include "yaml-cpp/yaml.h"

namespace rocenet::rocectl {
namespace {

// yaml-cpp marks a scalar that was quoted in the source with the tag "!".
bool WasQuoted(const YAML::Node& node) { return node.Tag() == "!"; }

// Whether a plain scalar with this text could be read as something other
// than a string by a YAML 1.1 or 1.2 reader. Anything starting like a number
// counts: YAML 1.1 reads "12:30" as a base-60 integer and "2024-05-01..." as
// a timestamp, and MAC and PCI addresses start with digits.
bool NeedsQuotes(const std::string& text) {
  if (text.empty()) return true;
  const char first = text[0];
  if (std::isdigit(static_cast<unsigned char>(first)) || first == '-' || first == '+' ||
      first == '.') {
    return true;
  }
  static constexpr absl::string_view kSpecial[] = {"~",  "null", "true", "false", "yes",
                                                   "no", "on",   "off",  "y",     "n"};
  const std::string lower = absl::AsciiStrToLower(text);
  for (absl::string_view word : kSpecial) {
    if (lower == word) return true;
  }
  return false;
}

void Emit(const YAML::Node& node, YAML::Emitter* out) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      if (node.size() == 0) *out << YAML::Flow;
      *out << YAML::BeginMap;
      for (const auto& entry : node) {
        *out << YAML::Key << entry.first.Scalar() << YAML::Value;
        Emit(entry.second, out);
      }
      *out << YAML::EndMap;
      return;
    case YAML::NodeType::Sequence:
      // "[]" reads better than a block sequence with nothing in it.
      if (node.size() == 0) *out << YAML::Flow;
      *out << YAML::BeginSeq;
      for (const auto& item : node) Emit(item, out);
      *out << YAML::EndSeq;
      return;
    case YAML::NodeType::Scalar:
      if (WasQuoted(node) && NeedsQuotes(node.Scalar())) *out << YAML::DoubleQuoted;
      *out << node.Scalar();
      return;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      *out << YAML::Null;
      return;
  }
}

std::string WithOneNewline(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  text += '\n';
  return text;
}

}  // namespace

namespace {

absl::StatusOr<std::string> PrintJson(const google::protobuf::Message& message, bool indent) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = indent;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string json;
  const auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("cannot print ", message.GetTypeName(),
                                            " as JSON: ", std::string(status.message())));
  }
  return WithOneNewline(std::move(json));
}

}  // namespace

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message) {
  return PrintJson(message, /*indent=*/true);
}

absl::StatusOr<std::string> ToJsonLine(const google::protobuf::Message& message) {
  return PrintJson(message, /*indent=*/false);
}

absl::StatusOr<std::string> JsonToYaml(absl::string_view json) {
  try {
    const YAML::Node document = YAML::Load(std::string(json));
    YAML::Emitter out;
    out << YAML::Block;
    Emit(document, &out);
    if (!out.good()) return absl::InternalError(absl::StrCat("YAML output: ", out.GetLastError()));
    return WithOneNewline(out.c_str());
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("cannot convert JSON to YAML: ", e.what()));
  }
}

absl::StatusOr<std::string> ToYaml(const google::protobuf::Message& message) {
  ASSIGN_OR_RETURN(const std::string json, ToJson(message));
  return JsonToYaml(json);
}

}  // namespace rocenet::rocectl
