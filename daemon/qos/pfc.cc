// SPDX-License-Identifier: Apache-2.0
#include "daemon/qos/pfc.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace rocenet::qos {
namespace {

constexpr int kPriorities = 8;
// hbl_en: PFC on all four of its priorities or on none.
constexpr uint8_t kGaudiAll = 0x0f;

int Count(uint8_t mask) {
  int n = 0;
  for (; mask != 0; mask &= mask - 1) ++n;
  return n;
}

absl::Status BadRequest(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("PFC \"", text, "\": ", why,
                   "; use keep, none, all, or priorities 0..7 such as \"0-3\" or \"3\""));
}

}  // namespace

absl::StatusOr<PfcRequest> ParsePfcRequest(absl::string_view text) {
  const absl::string_view trimmed = absl::StripAsciiWhitespace(text);
  if (trimmed == "keep") return PfcRequest{};
  if (trimmed == "none") return PfcRequest{.kind = PfcRequest::Kind::kNone};
  if (trimmed == "all") return PfcRequest{.kind = PfcRequest::Kind::kAll};
  if (trimmed.empty()) return BadRequest(text, "empty");
  uint8_t mask = 0;
  for (absl::string_view item : absl::StrSplit(trimmed, ',')) {
    item = absl::StripAsciiWhitespace(item);
    std::vector<absl::string_view> ends = absl::StrSplit(item, absl::MaxSplits('-', 1));
    int low = 0;
    int high = 0;
    if (!absl::SimpleAtoi(ends[0], &low) ||
        !absl::SimpleAtoi(ends.size() == 2 ? ends[1] : ends[0], &high)) {
      return BadRequest(text, absl::StrCat("\"", item, "\" is not a priority"));
    }
    if (low < 0 || high >= kPriorities || low > high) {
      return BadRequest(text, absl::StrCat("\"", item, "\" is not within priorities 0..7"));
    }
    for (int p = low; p <= high; ++p) mask |= static_cast<uint8_t>(1u << p);
  }
  return PfcRequest{.kind = PfcRequest::Kind::kPriorities, .priorities = mask};
}

std::string FormatPfcRequest(const PfcRequest& request) {
  switch (request.kind) {
    case PfcRequest::Kind::kKeep:
      return "keep";
    case PfcRequest::Kind::kNone:
      return "none";
    case PfcRequest::Kind::kAll:
      return "all";
    case PfcRequest::Kind::kPriorities:
      break;
  }
  return FormatPriorities(request.priorities);
}

std::string FormatPriorities(uint8_t priorities) {
  if (priorities == 0) return "none";
  std::vector<std::string> runs;
  for (int p = 0; p < kPriorities;) {
    if ((priorities & (1u << p)) == 0) {
      ++p;
      continue;
    }
    int end = p;
    while (end + 1 < kPriorities && (priorities & (1u << (end + 1))) != 0) ++end;
    runs.push_back(end == p ? absl::StrCat(p) : absl::StrCat(p, "-", end));
    p = end + 1;
  }
  return absl::StrJoin(runs, ",");
}

absl::StatusOr<std::optional<uint8_t>> ResolvePfc(const PfcRequest& request, absl::string_view port,
                                                  const PfcPortRule& rule) {
  uint8_t mask = 0;
  switch (request.kind) {
    case PfcRequest::Kind::kKeep:
      return std::nullopt;
    case PfcRequest::Kind::kNone:
      return uint8_t{0};
    case PfcRequest::Kind::kAll:
      if (rule.gaudi) return kGaudiAll;
      if (rule.capability >= kPriorities) return uint8_t{0xff};
      return absl::InvalidArgumentError(absl::StrCat(
          "port ", port, ": PFC \"all\" needs 8 priorities but the port takes at most ",
          rule.capability, " at once (pfc_cap); list the priorities instead"));
    case PfcRequest::Kind::kPriorities:
      mask = request.priorities;
      break;
  }
  if (rule.gaudi) {
    if (mask == 0 || mask == kGaudiAll) return mask;
    return absl::InvalidArgumentError(
        absl::StrCat("port ", port,
                     ": a Gaudi port (hbl_en) takes PFC on all of priorities 0-3 or on none, "
                     "not on ",
                     FormatPriorities(mask)));
  }
  if (Count(mask) > rule.capability) {
    return absl::InvalidArgumentError(absl::StrCat(
        "port ", port, ": PFC on ", Count(mask), " priorities (", FormatPriorities(mask),
        ") but the port takes at most ", rule.capability, " at once (pfc_cap)"));
  }
  return mask;
}

}  // namespace rocenet::qos
