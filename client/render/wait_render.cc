// SPDX-License-Identifier: Apache-2.0
#include "client/render/wait_render.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rocenet::rocectl {
namespace {

std::string PortLabel(const v1::PortHealth& port) {
  if (!port.name().empty()) return port.name();
  if (!port.port_id().empty()) return port.port_id();
  return "-";
}

// "so2 (LinkDown/CarrierLost: port so2: no carrier)".
std::string WhyNotReady(const v1::PortHealth& port) {
  if (port.conditions().empty()) return absl::StrCat(PortLabel(port), " (unhealthy)");
  const v1::Condition& first = port.conditions(0);
  std::string why = first.type();
  if (!first.reason().empty()) absl::StrAppend(&why, "/", first.reason());
  if (!first.message().empty()) absl::StrAppend(&why, ": ", first.message());
  return absl::StrCat(PortLabel(port), " (", why, ")");
}

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

std::string FormatWaitProgress(const v1::NodeHealth& node) {
  if (node.ports_total() == 0) return "no scale-out ports found yet";
  std::string line = absl::StrFormat("%d/%d ports ready", node.ports_healthy(), node.ports_total());
  if (node.ready()) return absl::StrCat("node ready: ", line);
  int named = 0;
  int more = 0;
  for (const v1::PortHealth& port : node.ports()) {
    if (port.healthy()) continue;
    if (named == kWaitPortsNamed) {
      ++more;
      continue;
    }
    absl::StrAppend(&line, named == 0 ? "; not ready: " : ", ", WhyNotReady(port));
    ++named;
  }
  if (more > 0) absl::StrAppend(&line, ", and ", more, " more");
  return line;
}

std::string FitToWidth(absl::string_view line, size_t width) {
  if (width == 0) return std::string(line);
  size_t points = 0;
  for (char c : line) points += IsContinuationByte(c) ? 0 : 1;
  if (points <= width) return std::string(line);
  // Keep width - 1 code points, then the ellipsis.
  size_t kept = 0;
  size_t end = 0;
  for (; end < line.size(); ++end) {
    if (IsContinuationByte(line[end])) continue;
    if (kept == width - 1) break;
    ++kept;
  }
  return absl::StrCat(line.substr(0, end), "…");
}

}  // namespace rocenet::rocectl
