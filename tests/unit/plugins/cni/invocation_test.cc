// SPDX-License-Identifier: Apache-2.0
// The CNI_* rules on their own: interface names, container ids, CNI_ARGS,
// and what each verb requires.
#include "plugins/cni/invocation.h"

#include "gtest/gtest.h"
#include "plugins/cni/errors.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::cni {
namespace {

TEST(InterfaceNameTest, AcceptsWhatLinuxAccepts) {
  for (const char* name : {"net1", "eth0.100", "so_0-a", "abcdefghijklmno", "é1"}) {
    EXPECT_OK(ValidateInterfaceName("CNI_IFNAME", name)) << name;
  }
}

TEST(InterfaceNameTest, RejectsWhatLinuxRejects) {
  for (const char* name : {"", ".", "..", "abcdefghijklmnop", "a/b", "a:b", "a b", "a\nb", "a\vb",
                           "a\xa0"
                           "b"}) {
    const absl::Status status = ValidateInterfaceName("CNI_IFNAME", name);
    EXPECT_EQ(CniCodeOf(status), CniCode::kInvalidEnvironment) << name;
  }
}

TEST(ContainerIdTest, SpecCharset) {
  EXPECT_OK(ValidateContainerId("CNI_CONTAINERID", "3f6940ab_5.b-c"));
  EXPECT_OK(ValidateContainerId("CNI_CONTAINERID", std::string(4096, 'a')));
  for (const char* id : {"", "_a", ".a", "a b", "a/b", "a;b", "a\xc3\xa9"}) {
    EXPECT_EQ(CniCodeOf(ValidateContainerId("CNI_CONTAINERID", id)), CniCode::kInvalidEnvironment)
        << id;
  }
}

TEST(CniArgsTest, KubernetesKeys) {
  const absl::StatusOr<PodIdentity> pod = ParseCniArgs(
      "IgnoreUnknown=1;K8S_POD_NAMESPACE=ai;K8S_POD_NAME=trainer-0;"
      "K8S_POD_INFRA_CONTAINER_ID=3f69;K8S_POD_UID=7c0e6f1e;");
  ASSERT_OK(pod);
  EXPECT_EQ(pod->namespace_name, "ai");
  EXPECT_EQ(pod->name, "trainer-0");
  EXPECT_EQ(pod->uid, "7c0e6f1e");
}

TEST(CniArgsTest, EmptyIsNoPod) {
  const absl::StatusOr<PodIdentity> pod = ParseCniArgs("");
  ASSERT_OK(pod);
  EXPECT_EQ(pod->name, "");
}

TEST(CniArgsTest, UnknownKeysNeedIgnoreUnknown) {
  EXPECT_FALSE(ParseCniArgs("FOO=1;BAR=2").ok());
  EXPECT_OK(ParseCniArgs("FOO=1;IgnoreUnknown=true"));
  EXPECT_FALSE(ParseCniArgs("FOO=1;IgnoreUnknown=false").ok());
}

TEST(CniArgsTest, ValuesMayContainEquals) {
  const absl::StatusOr<PodIdentity> pod = ParseCniArgs("K8S_POD_NAME=a=b");
  ASSERT_OK(pod);
  EXPECT_EQ(pod->name, "a=b");
}

TEST(InvocationTest, DelWithoutNetnsIsFine) {
  const absl::StatusOr<Invocation> invocation = ParseInvocation(
      Command::kDel, {{"CNI_COMMAND", "DEL"}, {"CNI_CONTAINERID", "c1"}, {"CNI_IFNAME", "net1"}});
  ASSERT_OK(invocation);
  EXPECT_EQ(invocation->netns, "");
}

TEST(InvocationTest, GcAndStatusNeedNoAttachmentVariables) {
  EXPECT_OK(ParseInvocation(Command::kGc, {{"CNI_COMMAND", "GC"}}));
  EXPECT_OK(ParseInvocation(Command::kStatus, {{"CNI_COMMAND", "STATUS"}}));
}

TEST(InvocationTest, CniArgsAreReadForAddOnly) {
  // DEL has no use for the pod identity and must not fail over it.
  EXPECT_TRUE(
      ParseInvocation(Command::kDel,
                      {{"CNI_CONTAINERID", "c1"}, {"CNI_IFNAME", "net1"}, {"CNI_ARGS", "garbage"}})
          .ok());
}

TEST(EnvironmentTest, FromEnvp) {
  const char* const envp[] = {
      "CNI_COMMAND=ADD", "CNI_ARGS=A=1;B=2", "EMPTY=", "NOEQUALS", "CNI_COMMAND=DEL", nullptr};
  const Environment env = EnvironmentFrom(envp);
  EXPECT_EQ(env.at("CNI_COMMAND"), "ADD");
  EXPECT_EQ(env.at("CNI_ARGS"), "A=1;B=2");
  EXPECT_EQ(env.at("EMPTY"), "");
  EXPECT_EQ(env.count("NOEQUALS"), 0u);
}

TEST(CommandTest, AllSixVerbs) {
  for (const Command command : {Command::kAdd, Command::kDel, Command::kCheck, Command::kVersion,
                                Command::kGc, Command::kStatus}) {
    const absl::StatusOr<Command> parsed =
        ParseCommand({{"CNI_COMMAND", std::string(CommandName(command))}});
    ASSERT_OK(parsed);
    EXPECT_EQ(*parsed, command);
  }
}

}  // namespace
}  // namespace rocenet::cni
