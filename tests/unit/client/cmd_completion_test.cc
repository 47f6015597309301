// SPDX-License-Identifier: Apache-2.0
// rocectl completion bash: the script bash actually runs, asked the way bash
// asks it (COMP_WORDS, COMP_CWORD, then _rocectl), and the packaged copy in
// packaging/completion/ kept equal to what rocectl prints.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/client/fake_rocenetd.h"
#include "tests/unit/client/test_support.h"

namespace rocenet::rocectl {
namespace {

using ::rocenet::rocectl::testutil::CliResult;
using ::rocenet::rocectl::testutil::FakeRocenetd;
using ::rocenet::rocectl::testutil::RunCli;
using ::rocenet::rocectl::testutil::SampleNode;
using ::rocenet::rocectl::testutil::TempDir;
using ::testing::HasSubstr;

// A word for bash, single-quoted.
std::string Quote(const std::string& word) {
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

class CompletionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const CliResult result = RunCli({"completion", "bash"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    script_ = result.out;
    script_path_ = dir_.Join("rocectl.bash");
    std::ofstream(script_path_) << script_;
  }

  // What bash completes for `words` with the cursor on the last one; the
  // first word is the rocectl to run for port names.
  std::string Complete(const std::vector<std::string>& words) {
    std::vector<std::string> quoted;
    for (const std::string& word : words) quoted.push_back(Quote(word));
    const std::string program =
        absl::StrCat("source ", Quote(script_path_), "; COMP_WORDS=(", absl::StrJoin(quoted, " "),
                     "); COMP_CWORD=", words.size() - 1, "; _rocectl; echo \"${COMPREPLY[*]}\"");
    const std::string command = absl::StrCat("bash --norc --noprofile -c ", Quote(program));
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    if (pipe == nullptr) {
      ADD_FAILURE() << "cannot run bash";
      return "";
    }
    std::string out;
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof(buffer), pipe.get())) > 0) out.append(buffer, n);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  TempDir dir_;
  std::string script_;
  std::string script_path_;
};

TEST_F(CompletionTest, Commands) {
  EXPECT_EQ(Complete({"rocectl", "po"}), "ports");
  EXPECT_EQ(Complete({"rocectl", "--socket", "/x", "t"}), "topology");
  EXPECT_EQ(Complete({"rocectl", "a"}), "addressing attachments");
  EXPECT_EQ(Complete({"rocectl", "help", "w"}), "wait");
  EXPECT_EQ(Complete({"rocectl", "completion", ""}), "bash");
}

TEST_F(CompletionTest, SubcommandsFlagsAndValues) {
  EXPECT_EQ(Complete({"rocectl", "ports", ""}), "get watch");
  EXPECT_EQ(Complete({"rocectl", "-o", "json", "ports", "w"}), "watch");
  EXPECT_EQ(Complete({"rocectl", "wait", "--r"}), "--ready");
  EXPECT_EQ(Complete({"rocectl", "ports", "--r"}), "");
  EXPECT_EQ(Complete({"rocectl", "topology", "--format", ""}), "table dot json yaml");
  EXPECT_EQ(Complete({"rocectl", "topology", "--format", "=", "d"}), "dot");
  EXPECT_EQ(Complete({"rocectl", "ports", "-o", "y"}), "yaml");
  EXPECT_EQ(Complete({"rocectl", "--so"}), "--socket");
  EXPECT_EQ(Complete({"rocectl", "topology", "--f"}), "--format");
}

TEST_F(CompletionTest, PortNamesComeFromTheDaemon) {
  const std::string socket = dir_.Join("rocenetd.sock");
  const auto daemon = FakeRocenetd::Start(socket, SampleNode(absl::Now()));
  ASSERT_NE(daemon, nullptr);
  EXPECT_EQ(Complete({ROCECTL_BINARY, "--socket", socket, "ports", "get", ""}), "so1 so2");
  EXPECT_EQ(Complete({ROCECTL_BINARY, "--socket", socket, "health", "so"}), "so1 so2");
  EXPECT_EQ(Complete({ROCECTL_BINARY, "--socket", socket, "neighbors", "so2"}), "so2");
  EXPECT_EQ(Complete({ROCECTL_BINARY, "--socket", "=", socket, "addressing", ""}), "so1 so2");
  // One port only.
  EXPECT_EQ(Complete({ROCECTL_BINARY, "--socket", socket, "health", "so1", ""}), "");
}

TEST_F(CompletionTest, NoDaemonCompletesNothingQuietly) {
  EXPECT_EQ(Complete({ROCECTL_BINARY, "--socket", dir_.Join("none.sock"), "health", ""}), "");
}

TEST_F(CompletionTest, PackagedScriptIsWhatRocectlPrints) {
  std::ifstream packaged(ROCENET_SOURCE_DIR "/packaging/completion/rocectl.bash");
  ASSERT_TRUE(packaged.good()) << "packaging/completion/rocectl.bash is missing";
  std::stringstream content;
  content << packaged.rdbuf();
  EXPECT_EQ(content.str(), script_)
      << "regenerate it: rocectl completion bash > packaging/completion/rocectl.bash";
}

TEST(CompletionUsageTest, OnlyBash) {
  CliResult result = RunCli({"completion"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("completion needs a shell"));
  result = RunCli({"completion", "fish"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("unsupported shell \"fish\""));
}

}  // namespace
}  // namespace rocenet::rocectl
