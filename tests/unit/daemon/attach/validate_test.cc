// SPDX-License-Identifier: Apache-2.0
// What the CNI runtime may hand over, and what is refused before anything is
// touched.
#include "daemon/attach/validate.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::attach {
namespace {

using ::testing::HasSubstr;

struct Case {
  std::string input;
  bool ok;
  const char* why;  // part of the message when refused
};

void ExpectCases(absl::Status (*validate)(absl::string_view), const char* field,
                 const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::CHexEscape(c.input));
    const absl::Status status = validate(c.input);
    if (c.ok) {
      EXPECT_OK(status);
      continue;
    }
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(field));
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.why));
  }
}

TEST(ValidateTest, InterfaceNamesFollowTheKernelsRules) {
  ExpectCases(&ValidateIfname, "ifname",
              {
                  {"net1", true, ""},
                  {"rdma-rail_7.0", true, ""},
                  {"abcdefghijklmno", true, ""},  // 15 bytes, IFNAMSIZ - 1
                  {"a", true, ""},
                  {"", false, "is empty"},
                  {"abcdefghijklmnop", false, "longer than 15 bytes"},
                  {".", false, "not a valid name"},
                  {"..", false, "not a valid name"},
                  {"net/1", false, "character"},
                  {"net:1", false, "character"},
                  {"net 1", false, "character"},
                  {"net\t1", false, "character"},
                  {"net\n", false, "character"},
                  {std::string("ne\0t", 4), false, "character"},
                  {"net\x7f", false, "character"},
              });
}

TEST(ValidateTest, NetnsPathsAreOnlyTheRuntimesOwnPlaces) {
  ExpectCases(&ValidateNetnsPath, "netns",
              {
                  {"/var/run/netns/x", true, ""},
                  {"/var/run/netns/cni-4f6a2c1e-0b3d-9e7a-1c2d-5e6f7a8b9c0d", true, ""},
                  {"/run/netns/x", true, ""},
                  {"/proc/123/ns/net", true, ""},
                  {"/proc/1/ns/net", true, ""},
                  {"", false, "must be"},
                  {"/tmp/x", false, "must be"},
                  {"/run/netns/", false, "must be"},
                  {"/run/netns/..", false, "must be"},
                  {"/run/netns/.", false, "must be"},
                  {"/run/netns/../etc", false, "must be"},
                  {"/var/run/netns/../../etc/passwd", false, "must be"},
                  {"/var/run/netns/a/b", false, "must be"},
                  {std::string("/run/netns/a\0b", 14), false, "must be"},
                  {"run/netns/x", false, "must be"},
                  {"/proc/self/ns/net", false, "must be"},
                  {"/proc/thread-self/ns/net", false, "must be"},
                  {"/proc/12a/ns/net", false, "must be"},
                  {"/proc//ns/net", false, "must be"},
                  {"/proc/123/ns/mnt", false, "must be"},
                  {"/proc/123/ns/net/", false, "must be"},
                  {"/proc/1/2/ns/net", false, "must be"},
              });
}

TEST(ValidateTest, ContainerIdsAreNamesARuntimeWouldGive) {
  ExpectCases(&ValidateContainerId, "container id",
              {
                  {"3f4e5d6c7b8a", true, ""},
                  {"Pod_1.sandbox-2", true, ""},
                  {"a", true, ""},
                  {std::string(256, 'a'), true, ""},
                  {"", false, "is empty"},
                  {std::string(257, 'a'), false, "longer than 256"},
                  {"-abc", false, "must start with a letter or digit"},
                  {".abc", false, "must start with a letter or digit"},
                  {"_abc", false, "must start with a letter or digit"},
                  {"abc/def", false, "may only hold"},
                  {"abc def", false, "may only hold"},
                  {"abc;rm", false, "may only hold"},
                  {"caf\xc3\xa9", false, "may only hold"},
              });
}

TEST(ValidateTest, RefusalsQuoteTheValueEscaped) {
  const absl::Status status = ValidateIfname("net\n\x01");
  EXPECT_THAT(std::string(status.message()), HasSubstr("ifname \"net\\n\\001\""));
}

}  // namespace
}  // namespace rocenet::attach
