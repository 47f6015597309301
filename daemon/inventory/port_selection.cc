// SPDX-License-Identifier: Apache-2.0
#include "daemon/inventory/port_selection.h"

#include <fnmatch.h>

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace rocenet::inventory {
namespace {

// Linux interface names: at most IFNAMSIZ - 1 bytes.
constexpr size_t kMaxInterfaceName = 15;

}  // namespace

bool IsGlob(absl::string_view pattern) {
  return pattern.find_first_of("*?[") != absl::string_view::npos;
}

bool MatchesPattern(absl::string_view pattern, absl::string_view name) {
  return fnmatch(std::string(pattern).c_str(), std::string(name).c_str(), 0) == 0;
}

absl::Status ValidateInterfacePattern(absl::string_view pattern) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("interface pattern \"", pattern, "\": ", why));
  };
  if (pattern.empty()) return bad("is empty");
  int depth = 0;
  for (char c : pattern) {
    if (c == '/' || c == ':' || absl::ascii_isspace(static_cast<unsigned char>(c)) ||
        !absl::ascii_isprint(static_cast<unsigned char>(c))) {
      return bad("contains a character an interface name cannot have");
    }
    if (c == '[') ++depth;
    if (c == ']' && --depth < 0) return bad("has ']' without '['");
  }
  if (depth != 0) return bad("has '[' without ']'");
  if (!IsGlob(pattern) && pattern.size() > kMaxInterfaceName) {
    return bad("is longer than 15 bytes, the kernel's limit for interface names");
  }
  if (pattern == "." || pattern == "..") return bad("is not an interface name");
  return absl::OkStatus();
}

absl::Status ValidateSelection(const PortSelection& selection) {
  for (const std::string& pattern : selection.interfaces) {
    if (absl::Status s = ValidateInterfacePattern(pattern); !s.ok()) return s;
  }
  for (const std::string& driver : selection.drivers) {
    if (driver.empty() || driver.find('/') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("driver name \"", driver, "\" is not valid"));
    }
  }
  for (int index : selection.gaudi_scale_out_ports) {
    if (index < 0 || index > 255) {
      return absl::InvalidArgumentError(
          absl::StrCat("Gaudi scale-out port index ", index, " is outside 0..255"));
    }
  }
  if (selection.interfaces.empty() && selection.drivers.empty() && !selection.gaudi) {
    return absl::InvalidArgumentError(
        "no ports selected: set interfaces or drivers, or enable Gaudi discovery");
  }
  return absl::OkStatus();
}

}  // namespace rocenet::inventory
