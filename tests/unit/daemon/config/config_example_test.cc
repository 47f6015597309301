// SPDX-License-Identifier: Apache-2.0
// packaging/config/rocenetd.yaml, the documented example configuration,
// never drifts from the loader: it loads and validates, holds every key the
// loader accepts set to its default, and marks each key [live] or [restart]
// as the reload rules say.
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "daemon/config/config_files.h"
#include "daemon/config/config_reload.h"
#include "daemon/config/options.h"
#include "daemon/os/linux/filesystem_linux.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::config {
namespace {

using ::testing::IsEmpty;

const char kExample[] = ROCENET_SOURCE_DIR "/packaging/config/rocenetd.yaml";

std::string ReadExample() {
  std::ifstream in(kExample);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

// Each key of the example ("gaudi.enabled") with the comment lines just
// above it; a key right below another without a comment of its own (a pair
// documented together) shares the one above.
std::map<std::string, std::string> KeysWithComments(const std::string& text) {
  std::map<std::string, std::string> out;
  std::string section;
  std::string comment;
  std::string previous;  // the comment of the key on the line before
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    absl::string_view view = line;
    const bool nested = absl::StartsWith(view, "  ");
    absl::string_view stripped = absl::StripLeadingAsciiWhitespace(view);
    if (stripped.empty()) {
      comment.clear();
      previous.clear();
      continue;
    }
    if (absl::StartsWith(stripped, "#")) {
      absl::StrAppend(&comment, stripped, "\n");
      continue;
    }
    const size_t colon = stripped.find(':');
    if (colon == absl::string_view::npos) continue;
    const std::string key(stripped.substr(0, colon));
    const bool opens_section = absl::StripAsciiWhitespace(stripped.substr(colon + 1)).empty();
    if (!nested && opens_section) {
      section = key;
      previous.clear();
    } else {
      if (comment.empty()) comment = previous;
      out[nested ? absl::StrCat(section, ".", key) : key] = comment;
      previous = comment;
    }
    comment.clear();
  }
  return out;
}

TEST(ConfigExampleTest, LoadsAndValidates) {
  DaemonOptions options;
  absl::Status loaded = ApplyConfigPath(os::FileSystemLinux(), kExample, options);
  ASSERT_OK(loaded);
  absl::Status valid = ValidateOptions(options);
  EXPECT_OK(valid);
}

TEST(ConfigExampleTest, ValuesAreTheDefaults) {
  DaemonOptions options;
  ASSERT_OK(ApplyConfigPath(os::FileSystemLinux(), kExample, options));
  ReloadPlan differences = PlanReload(DaemonOptions(), options);
  EXPECT_THAT(differences.applied, IsEmpty());
  EXPECT_THAT(differences.needs_restart, IsEmpty());
}

TEST(ConfigExampleTest, HasEveryKeyTheLoaderAccepts) {
  const std::map<std::string, std::string> keys = KeysWithComments(ReadExample());
  for (const std::string& key : ConfigKeys()) {
    EXPECT_TRUE(keys.contains(key)) << "key " << key << " is missing from " << kExample;
  }
  EXPECT_EQ(keys.size(), ConfigKeys().size());
}

TEST(ConfigExampleTest, EveryKeyIsDocumentedAndMarkedLiveOrRestart) {
  const std::map<std::string, std::string> keys = KeysWithComments(ReadExample());
  std::map<std::string, bool> live;
  for (const ReloadRule& rule : ReloadRules()) live[rule.key] = rule.live;
  for (const auto& [key, doc] : keys) {
    ASSERT_TRUE(live.contains(key)) << key;
    EXPECT_FALSE(doc.empty()) << key << " has no comment";
    EXPECT_TRUE(absl::StrContains(doc, live[key] ? "[live]" : "[restart]"))
        << key << " must be marked " << (live[key] ? "[live]" : "[restart]") << "; comment:\n"
        << doc;
  }
}

}  // namespace
}  // namespace rocenet::config
