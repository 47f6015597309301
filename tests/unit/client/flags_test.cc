// SPDX-License-Identifier: Apache-2.0
#include "client/flags.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::rocectl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<CommandLine> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "rocectl");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  return ParseCommandLine(static_cast<int>(argv.size()), argv.data());
}

TEST(ParseCommandLineTest, Defaults) {
  auto parsed = Parse({"ports"});
  ASSERT_OK(parsed);
  EXPECT_EQ(parsed->options.socket_path, "/run/rocenet/rocenetd.sock");
  EXPECT_EQ(parsed->options.timeout, absl::Seconds(5));
  EXPECT_EQ(parsed->options.output, OutputFormat::kTable);
  EXPECT_THAT(parsed->args, ElementsAre("ports"));
  EXPECT_FALSE(parsed->help);
}

TEST(ParseCommandLineTest, FlagsBeforeAndAfterTheCommand) {
  auto parsed =
      Parse({"--socket", "/tmp/s.sock", "ports", "get", "so1", "-o", "yaml", "--timeout=250ms"});
  ASSERT_OK(parsed);
  EXPECT_EQ(parsed->options.socket_path, "/tmp/s.sock");
  EXPECT_EQ(parsed->options.timeout, absl::Milliseconds(250));
  EXPECT_EQ(parsed->options.output, OutputFormat::kYaml);
  EXPECT_THAT(parsed->args, ElementsAre("ports", "get", "so1"));
}

TEST(ParseCommandLineTest, ShortAndLongOutputForms) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"-o", "wide"}, {"-o=wide"}, {"--output", "wide"}, {"--output=wide"}}) {
    auto parsed = Parse(args);
    ASSERT_OK(parsed);
    EXPECT_EQ(parsed->options.output, OutputFormat::kWide) << args[0];
  }
}

TEST(ParseCommandLineTest, EveryRunStartsFromTheDefaults) {
  ASSERT_OK(Parse({"-o", "json", "--socket", "/tmp/a"}));
  auto parsed = Parse({"health"});
  ASSERT_OK(parsed);
  EXPECT_EQ(parsed->options.output, OutputFormat::kTable);
  EXPECT_EQ(parsed->options.socket_path, "/run/rocenet/rocenetd.sock");
}

TEST(ParseCommandLineTest, ArgumentsAfterDoubleDashAreNotFlags) {
  auto parsed = Parse({"ports", "get", "--", "-o"});
  ASSERT_OK(parsed);
  EXPECT_THAT(parsed->args, ElementsAre("ports", "get", "-o"));
}

TEST(ParseCommandLineTest, HelpAndVersion) {
  auto parsed = Parse({"health", "--help"});
  ASSERT_OK(parsed);
  EXPECT_TRUE(parsed->help);
  EXPECT_THAT(parsed->args, ElementsAre("health"));
  parsed = Parse({"--version"});
  ASSERT_OK(parsed);
  EXPECT_TRUE(parsed->version);
}

TEST(ParseCommandLineTest, UsageErrorsNameTheFlag) {
  auto parsed = Parse({"ports", "--colour"});
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(parsed.status().message(), HasSubstr("--colour"));

  parsed = Parse({"-o", "xml"});
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message(),
            "flag --output (-o): unknown output format \"xml\"; want table, wide, json or yaml");

  parsed = Parse({"--timeout", "0s"});
  EXPECT_THAT(parsed.status().message(), HasSubstr("--timeout must be positive"));
  parsed = Parse({"--timeout", "soon"});
  EXPECT_THAT(parsed.status().message(), HasSubstr("--timeout"));
  parsed = Parse({"--socket"});
  EXPECT_THAT(parsed.status().message(), HasSubstr("--socket needs a value"));
}

}  // namespace
}  // namespace rocenet::rocectl
