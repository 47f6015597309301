// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/flag_parser.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "daemon/common/suggest.h"

namespace rocenet {
namespace {

// The flags of this program, spelled as on the command line; not the
// flag library's own.
std::vector<std::string> OurFlags() {
  std::vector<std::string> out;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (absl::StrContains(flag->Filename(), "absl/") || flag->IsRetired()) continue;
    out.push_back(absl::StrReplaceAll(name, {{"_", "-"}}));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// What a value of `flag` looks like, for a message about a bad one.
std::string Wanted(const absl::CommandLineFlag& flag) {
  if (flag.IsOfType<absl::Duration>()) {
    return "not a duration; write a number with a unit, e.g. 5s, 500ms or 2m";
  }
  if (flag.IsOfType<bool>()) return "want true or false";
  if (flag.IsOfType<int32_t>() || flag.IsOfType<int64_t>() || flag.IsOfType<uint32_t>() ||
      flag.IsOfType<uint64_t>()) {
    return "want a whole number";
  }
  if (flag.IsOfType<double>()) return "want a number";
  return "not a valid value";
}

}  // namespace

absl::StatusOr<ParsedCommandLine> ParseFlags(int argc, char** argv,
                                             const std::vector<std::string>& other_flags) {
  ParsedCommandLine out;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") {
      for (++i; i < argc; ++i) out.positional.emplace_back(argv[i]);
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      out.positional.emplace_back(arg);
      continue;
    }
    arg.remove_prefix(arg[1] == '-' ? 2 : 1);
    if (arg == "help" || arg == "h") {
      out.help = true;
      continue;
    }
    if (arg == "version") {
      out.version = true;
      continue;
    }
    absl::string_view raw_name = arg;
    absl::string_view value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); eq != absl::string_view::npos) {
      raw_name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    // Flags are spelled with dashes on the command line (--sysfs-root) and
    // with underscores in code; accept both.
    const std::string name = absl::StrReplaceAll(raw_name, {{"-", "_"}});
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr && !has_value && absl::StartsWith(name, "no")) {
      absl::CommandLineFlag* negated = absl::FindCommandLineFlag(absl::string_view(name).substr(2));
      if (negated != nullptr && negated->IsOfType<bool>()) {
        flag = negated;
        value = "false";
        has_value = true;
      }
    }
    if (flag == nullptr || flag->IsRetired()) {
      std::vector<std::string> known = OurFlags();
      known.insert(known.end(), other_flags.begin(), other_flags.end());
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", raw_name, DidYouMean(raw_name, known, "--")));
    }
    if (!has_value) {
      if (flag->IsOfType<bool>()) {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat("flag --", raw_name, " needs a value"));
      }
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid value \"", value, "\" for flag --", raw_name, ": ", Wanted(*flag)));
    }
    out.specified.insert(std::string(flag->Name()));
  }
  return out;
}

std::string FlagUsage(absl::string_view file_substring) {
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (absl::StrContains(flag->Filename(), file_substring)) flags.push_back(flag);
  }
  std::sort(flags.begin(), flags.end(), [](auto* a, auto* b) { return a->Name() < b->Name(); });
  std::string out;
  for (const absl::CommandLineFlag* flag : flags) {
    const std::string name = absl::StrReplaceAll(flag->Name(), {{"_", "-"}});
    absl::StrAppendFormat(&out, "  --%-18s %s (default: \"%s\")\n", name, flag->Help(),
                          flag->DefaultValue());
  }
  return out;
}

}  // namespace rocenet
