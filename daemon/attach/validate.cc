// SPDX-License-Identifier: Apache-2.0
#include "daemon/attach/validate.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace rocenet::attach {
namespace {

absl::Status Bad(absl::string_view field, absl::string_view value, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, " \"", absl::CEscape(value.substr(0, 64)), "\": ", why));
}

bool IsNameComponent(absl::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    if (c == '/' || c == '\0') return false;
  }
  return true;
}

}  // namespace

absl::Status ValidateIfname(absl::string_view ifname) {
  if (ifname.empty()) return Bad("ifname", ifname, "is empty");
  if (ifname.size() > 15) return Bad("ifname", ifname, "is longer than 15 bytes");
  if (ifname == "." || ifname == "..") return Bad("ifname", ifname, "is not a valid name");
  for (char c : ifname) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '/' || c == ':' || absl::ascii_isspace(u) || !absl::ascii_isprint(u)) {
      return Bad("ifname", ifname, "contains a character interface names cannot have");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateNetnsPath(absl::string_view path) {
  absl::string_view rest = path;
  if (absl::ConsumePrefix(&rest, "/var/run/netns/") || absl::ConsumePrefix(&rest, "/run/netns/")) {
    if (IsNameComponent(rest)) return absl::OkStatus();
  } else if (absl::ConsumePrefix(&rest, "/proc/") && absl::ConsumeSuffix(&rest, "/ns/net")) {
    if (!rest.empty() && std::all_of(rest.begin(), rest.end(), absl::ascii_isdigit)) {
      return absl::OkStatus();
    }
  }
  return Bad("netns", path, "must be /var/run/netns/NAME, /run/netns/NAME or /proc/PID/ns/net");
}

absl::Status ValidateContainerId(absl::string_view id) {
  if (id.empty()) return Bad("container id", id, "is empty");
  if (id.size() > 256) return Bad("container id", id, "is longer than 256 characters");
  if (!absl::ascii_isalnum(static_cast<unsigned char>(id[0]))) {
    return Bad("container id", id, "must start with a letter or digit");
  }
  for (char c : id) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') {
      return Bad("container id", id, "may only hold letters, digits, '_', '.' and '-'");
    }
  }
  return absl::OkStatus();
}

}  // namespace rocenet::attach
