// SPDX-License-Identifier: Apache-2.0
// rocectl's command line without a daemon: usage errors and their exit
// codes, --help on every command and subcommand, --version.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/dispatch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/client/test_support.h"

namespace rocenet::rocectl {
namespace {

using Result = ::rocenet::rocectl::testutil::CliResult;
using ::rocenet::rocectl::testutil::Rocectl;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

TEST(DispatchUsageTest, UnknownFlagIsExitTwoAndNamesTheFlag) {
  const Result result = Rocectl({"ports", "--colour=always"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err, "rocectl: unknown flag --colour\nRun 'rocectl --help' for usage.\n");
}

TEST(DispatchUsageTest, UnknownCommandAndBadArguments) {
  Result result = Rocectl({"frobnicate"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, StartsWith("rocectl: unknown command \"frobnicate\"\n"));

  result = Rocectl({"ports", "so1", "so2"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("rocectl ports get so1"));
  EXPECT_THAT(result.err, HasSubstr("Run 'rocectl ports --help' for usage."));

  result = Rocectl({"ports", "get"});
  EXPECT_EQ(result.exit_code, 2);
  result = Rocectl({"health", "so1", "so2"});
  EXPECT_EQ(result.exit_code, 2);
}

TEST(DispatchUsageTest, ANearMissSaysWhatWasMeant) {
  for (const auto& [typed, meant] :
       std::vector<std::pair<std::string, std::string>>{{"port", "ports"},
                                                        {"neighbours", "neighbors"},
                                                        {"helth", "health"},
                                                        {"topo", "topology"},
                                                        {"attachment", "attachments"}}) {
    const Result result = Rocectl({typed});
    EXPECT_EQ(result.exit_code, 2) << typed;
    EXPECT_THAT(result.err, StartsWith(absl::StrCat("rocectl: unknown command \"", typed,
                                                    "\"; did you mean \"", meant, "\"?\n")));
  }
  Result result = Rocectl({"frobnicate"});
  EXPECT_THAT(result.err, Not(HasSubstr("did you mean")));
  result = Rocectl({"ports", "gte", "so1"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("unknown ports subcommand \"gte\"; did you mean \"get\"?"));
  result = Rocectl({"diag", "bandwith"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err,
              HasSubstr("diag: unknown test \"bandwith\"; did you mean \"bandwidth\"?"));
  result = Rocectl({"--timout=5s", "ports"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("unknown flag --timout; did you mean \"--timeout\"?"));
  result = Rocectl({"topology", "--fromat=dot"});
  EXPECT_THAT(result.err, HasSubstr("did you mean \"--format\"?"));
}

TEST(DispatchUsageTest, ADurationWithoutAUnitSaysHowToWriteOne) {
  const Result result = Rocectl({"--timeout", "5", "ports"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("invalid value \"5\" for flag --timeout: not a duration; "
                                    "write a number with a unit, e.g. 5s, 500ms or 2m"));
  EXPECT_THAT(result.err, Not(HasSubstr("Illegal value")));
}

TEST(DispatchUsageTest, BadOutputFormat) {
  const Result result = Rocectl({"ports", "-o", "xml"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("unknown output format \"xml\""));
}

TEST(DispatchUsageTest, NoCommandPrintsUsageToStderr) {
  const Result result = Rocectl({});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.out, IsEmpty());
  EXPECT_THAT(result.err, HasSubstr("Usage:"));
}

TEST(DispatchUsageTest, HelpEverywhere) {
  Result result = Rocectl({"--help"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_THAT(result.out, HasSubstr("rocectl ports get NAME"));
  EXPECT_THAT(result.out, HasSubstr("rocectl neighbors [PORT]"));
  EXPECT_THAT(result.out, HasSubstr("rocectl addressing [PORT]"));
  EXPECT_THAT(result.out, HasSubstr("rocectl reconcile"));
  EXPECT_THAT(result.out, HasSubstr("Exit codes:"));
  EXPECT_THAT(result.out, HasSubstr("  3  rocenetd unreachable"));
  EXPECT_THAT(result.err, IsEmpty());

  for (const char* command : {"ports", "neighbors", "addressing", "health", "reconcile"}) {
    result = Rocectl({command, "--help"});
    EXPECT_EQ(result.exit_code, 0) << command;
    EXPECT_THAT(result.out, HasSubstr(std::string("rocectl ") + command + " [-o")) << command;
    EXPECT_THAT(result.out, HasSubstr("--socket PATH"));
    result = Rocectl({"help", command});
    EXPECT_EQ(result.exit_code, 0) << command;
    EXPECT_THAT(result.out, HasSubstr(std::string("rocectl ") + command + " [-o")) << command;
  }
  // Help wins over a broken command line further on.
  result = Rocectl({"ports", "get", "-h"});
  EXPECT_EQ(result.exit_code, 0);
}

// Every command and subcommand has --help (and `rocectl help ...`) with its
// usage, the flags and the exit codes, on stdout with exit code 0.

TEST(DispatchUsageTest, HelpOnEveryCommandAndSubcommand) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"ports"}, "rocectl ports [-o"},
      {{"ports", "get"}, "rocectl ports get NAME [-o"},
      {{"ports", "watch"}, "rocectl ports watch [-o"},
      {{"neighbors"}, "rocectl neighbors PORT [-o"},
      {{"addressing"}, "rocectl addressing PORT [-o"},
      {{"health"}, "rocectl health PORT [-o"},
      {{"attachments"}, "rocectl attachments [-o"},
      {{"reconcile"}, "rocectl reconcile [-o"},
      {{"wait"}, "rocectl wait --ready [--timeout DURATION]"},
      {{"topology"}, "rocectl topology [--format table|dot|json|yaml]"},
      {{"completion"}, "rocectl completion bash"},
      {{"completion", "bash"}, "rocectl completion bash"},
  };
  for (const auto& [words, usage] : cases) {
    const std::string name = absl::StrJoin(words, " ");
    std::vector<std::string> args = words;
    args.push_back("--help");
    Result result = Rocectl(args);
    EXPECT_EQ(result.exit_code, 0) << name;
    EXPECT_THAT(result.out, HasSubstr("Usage:\n")) << name;
    EXPECT_THAT(result.out, HasSubstr(usage)) << name;
    EXPECT_THAT(result.out, HasSubstr("--socket PATH")) << name;
    EXPECT_THAT(result.out, HasSubstr("Exit codes:")) << name;
    EXPECT_THAT(result.err, IsEmpty()) << name;
    args = words;
    args.insert(args.begin(), "help");
    result = Rocectl(args);
    EXPECT_EQ(result.exit_code, 0) << name;
    EXPECT_THAT(result.out, HasSubstr(usage)) << name;
  }
  // A subcommand's help is its own, not its parent's.
  const Result get = Rocectl({"ports", "get", "--help"});
  EXPECT_THAT(get.out, ::testing::Not(HasSubstr("rocectl ports watch")));
  const Result top = Rocectl({"--help"});
  for (const char* command : {"attachments", "wait --ready", "topology", "completion bash"}) {
    EXPECT_THAT(top.out, HasSubstr(std::string("rocectl ") + command)) << command;
  }
}

// A loaded YAML (or JSON) document with every scalar as a string, to compare
// documents whatever their style.

TEST(DispatchUsageTest, ExtraArgumentsAreUsageErrors) {
  for (const std::vector<std::string>& words :
       std::vector<std::vector<std::string>>{{"ports", "watch", "so1"},
                                             {"ports", "get", "so1", "so2"},
                                             {"neighbors", "so1", "so2"},
                                             {"addressing", "so1", "so2"},
                                             {"attachments", "x"},
                                             {"reconcile", "x"},
                                             {"topology", "x"},
                                             {"wait", "--ready", "x"},
                                             {"completion", "bash", "x"}}) {
    const Result result = Rocectl(words);
    EXPECT_EQ(result.exit_code, 2) << absl::StrJoin(words, " ");
    EXPECT_THAT(result.err, HasSubstr("for usage.")) << absl::StrJoin(words, " ");
  }
  Result result = Rocectl({"topology", "--ready"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("unknown flag --ready for command \"topology\""));
  result = Rocectl({"topology", "--format"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("flag --format needs a value"));
}

TEST(DispatchUsageTest, Version) {
  const Result result = Rocectl({"--version"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_THAT(result.out, StartsWith("rocectl "));
}

}  // namespace
}  // namespace rocenet::rocectl
