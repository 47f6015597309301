// SPDX-License-Identifier: Apache-2.0
#include "client/render/completion_render.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::rocectl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

absl::Status Nothing(const CommandContext&, const std::vector<std::string>&) {
  return absl::OkStatus();
}

TEST(CompletionRenderTest, ChoicesAreOfferedPlaceholdersAreNot) {
  const Command probe{
      "probe",
      "",
      "",
      &Nothing,
      /*flags=*/{{"mode", "fast slow", true}, {"count", "N", true}, {"quiet", "", false}},
      /*subcommands=*/{{"run", "", true}}};
  const std::string script = BashCompletionScript({&probe});
  EXPECT_THAT(script, HasSubstr("--mode) COMPREPLY=($(compgen -W \"fast slow\" -- \"$cur\"))"));
  EXPECT_THAT(script, HasSubstr("--count) return 0 ;;"));
  EXPECT_THAT(script, Not(HasSubstr("compgen -W \"N\"")));
  // Flags with a value skip it when finding the command's words.
  EXPECT_THAT(
      script,
      HasSubstr("-o|--output|--timeout|--server|--tls-ca|--tls-cert|--tls-key|--mode|--count)"));
  EXPECT_THAT(script, HasSubstr("probe) flags+=\" --mode --count --quiet\" ;;"));
  EXPECT_THAT(script, HasSubstr("[[ \"${rest[0]}\" == run ]]"));
  EXPECT_THAT(script, HasSubstr("complete -F _rocectl rocectl\n"));
}

}  // namespace
}  // namespace rocenet::rocectl
