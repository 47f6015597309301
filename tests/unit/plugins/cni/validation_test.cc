// SPDX-License-Identifier: Apache-2.0
// Bad invocations, one per row: each must be refused before rocenetd is
// asked, with the CNI error object, the spec's code and a message naming the
// variable or key and the reason.
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/cni/invocation.h"
#include "tests/unit/plugins/cni/test_support.h"

namespace rocenet::cni {
namespace {

using ::rocenet::cni::testutil::NoDaemon;
using ::rocenet::cni::testutil::RunPlugin;
using ::testing::HasSubstr;

constexpr char kBase[] = R"("cniVersion": "1.0.0", "name": "gaudi-net", "type": "rocenet")";

// The base configuration plus `members` (JSON object members, may be empty).
std::string Conf(const std::string& members = "") {
  return "{" + std::string(kBase) + (members.empty() ? "" : ", " + members) + "}";
}

struct EnvChange {
  std::string name;
  std::optional<std::string> value;  // nullopt: unset
};

struct BadCase {
  std::string name;
  std::vector<EnvChange> env;
  std::string config;
  int code;
  std::string fragment;
};

Environment AddEnvironment() {
  return {{"CNI_COMMAND", "ADD"},
          {"CNI_CONTAINERID", "3f6940ab5ab43bc5"},
          {"CNI_NETNS", "/var/run/netns/pod1"},
          {"CNI_IFNAME", "net1"},
          {"CNI_PATH", "/opt/cni/bin"},
          {"CNI_ARGS",
           "IgnoreUnknown=1;K8S_POD_NAMESPACE=ai;K8S_POD_NAME=trainer-0;"
           "K8S_POD_UID=7c0e6f1e"}};
}

EnvChange Set(std::string name, std::string value) { return {std::move(name), std::move(value)}; }
EnvChange Unset(std::string name) { return {std::move(name), std::nullopt}; }
EnvChange Verb(std::string verb) { return Set("CNI_COMMAND", std::move(verb)); }

const std::string kGcConf = R"({"cniVersion": "1.1.0", "name": "gaudi-net", "type": "rocenet")";

std::vector<BadCase> Cases() {
  return {
      // CNI_COMMAND
      {"CommandMissing", {Unset("CNI_COMMAND")}, Conf(), 4, "CNI_COMMAND: missing"},
      {"CommandEmpty", {Set("CNI_COMMAND", "")}, Conf(), 4, "CNI_COMMAND: missing"},
      {"CommandUnknown", {Verb("FOO")}, Conf(), 4, "unknown command \"FOO\""},
      {"CommandLowercase", {Verb("add")}, Conf(), 4, "unknown command \"add\""},
      // Required variables per verb
      {"AddWithoutContainerId",
       {Unset("CNI_CONTAINERID")},
       Conf(),
       4,
       "CNI_CONTAINERID missing for ADD"},
      {"AddWithoutNetns", {Unset("CNI_NETNS")}, Conf(), 4, "CNI_NETNS missing for ADD"},
      {"AddWithoutIfname", {Unset("CNI_IFNAME")}, Conf(), 4, "CNI_IFNAME missing for ADD"},
      {"AddWithoutAnyOfThem",
       {Unset("CNI_CONTAINERID"), Unset("CNI_NETNS"), Unset("CNI_IFNAME")},
       Conf(),
       4,
       "variables CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME missing"},
      {"CheckWithoutNetns",
       {Verb("CHECK"), Unset("CNI_NETNS")},
       Conf(),
       4,
       "CNI_NETNS missing for CHECK"},
      {"DelWithoutIfname",
       {Verb("DEL"), Unset("CNI_IFNAME")},
       Conf(),
       4,
       "CNI_IFNAME missing for DEL"},
      {"DelWithoutContainerId",
       {Verb("DEL"), Unset("CNI_CONTAINERID")},
       Conf(),
       4,
       "CNI_CONTAINERID missing for DEL"},
      // CNI_IFNAME: the kernel's rules
      {"IfnameSixteenBytes",
       {Set("CNI_IFNAME", "abcdefghijklmnop")},
       Conf(),
       4,
       "CNI_IFNAME: \"abcdefghijklmnop\" is 16 bytes long, Linux allows at most 15"},
      {"IfnameDot", {Set("CNI_IFNAME", ".")}, Conf(), 4, "CNI_IFNAME: \".\" is not a valid"},
      {"IfnameDotDot", {Set("CNI_IFNAME", "..")}, Conf(), 4, "CNI_IFNAME: \"..\" is not a valid"},
      {"IfnameSlash", {Set("CNI_IFNAME", "net/1")}, Conf(), 4, "contains '/'"},
      {"IfnameColon", {Set("CNI_IFNAME", "net:1")}, Conf(), 4, "contains ':'"},
      {"IfnameSpace", {Set("CNI_IFNAME", "net 1")}, Conf(), 4, "contains ' '"},
      {"IfnameTab", {Set("CNI_IFNAME", "net\t1")}, Conf(), 4, "contains '\\t'"},
      {"IfnameTemplate", {Set("CNI_IFNAME", "net%d")}, Conf(), 4, "name template"},
      // CNI_CONTAINERID: the spec's charset
      {"ContainerIdLeadingDash",
       {Set("CNI_CONTAINERID", "-3f69")},
       Conf(),
       4,
       "CNI_CONTAINERID: \"-3f69\" must start with a letter or a digit"},
      {"ContainerIdSlash",
       {Set("CNI_CONTAINERID", "3f69/x")},
       Conf(),
       4,
       "CNI_CONTAINERID: \"3f69/x\" contains '/'"},
      {"ContainerIdSpace", {Set("CNI_CONTAINERID", "3f69 x")}, Conf(), 4, "contains ' '"},
      // Bytes that are not UTF-8 are quoted, not a crash.
      {"ContainerIdNotUtf8", {Set("CNI_CONTAINERID", "3f\xff")}, Conf(), 4, "contains '\\xff'"},
      {"CommandNotUtf8", {Verb("ADD\xc3")}, Conf(), 4, "CNI_COMMAND: unknown command"},
      // CNI_NETNS
      {"NetnsRelative",
       {Set("CNI_NETNS", "var/run/netns/pod1")},
       Conf(),
       4,
       "CNI_NETNS: \"var/run/netns/pod1\" is not an absolute path"},
      // CNI_ARGS
      {"ArgsNotKeyValue",
       {Set("CNI_ARGS", "K8S_POD_NAME")},
       Conf(),
       4,
       "CNI_ARGS: \"K8S_POD_NAME\" is not KEY=VALUE"},
      {"ArgsEmptyKey", {Set("CNI_ARGS", "=x")}, Conf(), 4, "CNI_ARGS: \"=x\" is not KEY=VALUE"},
      {"ArgsUnknownKey",
       {Set("CNI_ARGS", "K8S_POD_NAME=p;FOO=bar")},
       Conf(),
       4,
       "CNI_ARGS: unknown key FOO"},
      {"ArgsBadIgnoreUnknown",
       {Set("CNI_ARGS", "IgnoreUnknown=maybe")},
       Conf(),
       4,
       "CNI_ARGS: IgnoreUnknown=maybe is not a boolean"},
      // stdin that is not a JSON object
      {"StdinEmpty", {}, "", 6, "stdin is empty"},
      {"StdinNotJson", {}, "{\"cniVersion\": ", 6, "network configuration: invalid JSON"},
      {"StdinTrailingGarbage", {}, Conf() + " x", 6, "invalid JSON"},
      {"StdinArray", {}, "[]", 6, "want a JSON object, got array"},
      // cniVersion
      {"VersionMissing",
       {},
       R"({"name": "gaudi-net", "type": "rocenet"})",
       7,
       "cniVersion: missing (rocenet supports 0.4.0, 1.0.0, 1.1.0)"},
      {"VersionNotString",
       {},
       R"({"cniVersion": 1, "name": "n", "type": "rocenet"})",
       7,
       "cniVersion: must be a string, got 1"},
      {"VersionTooOld",
       {},
       R"({"cniVersion": "0.3.1", "name": "n", "type": "rocenet"})",
       1,
       "cniVersion: \"0.3.1\" is not supported"},
      {"VersionFromTheFuture",
       {},
       R"({"cniVersion": "2.0.0", "name": "n", "type": "rocenet"})",
       1,
       "\"2.0.0\" is not supported"},
      {"GcNeeds110",
       {Verb("GC")},
       Conf(R"("cni.dev/valid-attachments": [])"),
       1,
       "cniVersion: GC needs 1.1.0, the configuration says 1.0.0"},
      {"StatusNeeds110",
       {Verb("STATUS")},
       R"({"cniVersion": "0.4.0", "name": "n", "type": "rocenet"})",
       1,
       "cniVersion: STATUS needs 1.1.0, the configuration says 0.4.0"},
      // name and type
      {"NameMissing", {}, R"({"cniVersion": "1.0.0", "type": "rocenet"})", 7, "name: missing"},
      {"NameEmpty",
       {},
       R"({"cniVersion": "1.0.0", "name": "", "type": "rocenet"})",
       7,
       "name: missing"},
      {"NameNotString",
       {},
       R"({"cniVersion": "1.0.0", "name": 5, "type": "rocenet"})",
       7,
       "name: must be a string, got 5"},
      {"NameBadCharset",
       {},
       R"({"cniVersion": "1.0.0", "name": "-net", "type": "rocenet"})",
       7,
       "name: \"-net\" must be a letter or digit"},
      {"TypeMissing", {}, R"({"cniVersion": "1.0.0", "name": "gaudi-net"})", 7, "type: missing"},
      // mtu
      {"MtuString", {}, Conf(R"("mtu": "9000")"), 7, "mtu: must be an integer, got \"9000\""},
      {"MtuFloat", {}, Conf(R"("mtu": 9000.5)"), 7, "mtu: must be an integer, got 9000.5"},
      {"MtuZero", {}, Conf(R"("mtu": 0)"), 7, "mtu: 0 is out of range 68..65535"},
      {"MtuNegative", {}, Conf(R"("mtu": -1)"), 7, "mtu: -1 is out of range"},
      {"MtuTooLarge", {}, Conf(R"("mtu": 70000)"), 7, "mtu: 70000 is out of range"},
      {"AnyFreePortString",
       {},
       Conf(R"("anyFreePort": "yes")"),
       7,
       "anyFreePort: must be true or false, got \"yes\""},
      // mode
      {"ModeLowercase", {}, Conf(R"("mode": "l3")"), 7, "mode: \"l3\" is not L3 or L2"},
      {"ModeNotString", {}, Conf(R"("mode": 3)"), 7, "mode: must be a string, got 3"},
      // timeout
      {"TimeoutNumber",
       {},
       Conf(R"("timeout": 10)"),
       7,
       "timeout: must be a duration such as \"10s\""},
      {"TimeoutWithoutUnit", {}, Conf(R"("timeout": "10")"), 7, "timeout: must be a duration"},
      {"TimeoutZero", {}, Conf(R"("timeout": "0s")"), 7, "timeout: \"0s\" is out of range"},
      {"TimeoutNegative", {}, Conf(R"("timeout": "-1s")"), 7, "timeout: \"-1s\" is out of range"},
      {"TimeoutAnHour", {}, Conf(R"("timeout": "1h")"), 7, "timeout: \"1h\" is out of range"},
      {"TimeoutInfinite", {}, Conf(R"("timeout": "inf")"), 7, "is out of range"},
      // socket
      {"SocketRelative",
       {},
       Conf(R"("socket": "rocenetd.sock")"),
       7,
       "socket: \"rocenetd.sock\" is not an absolute path"},
      {"SocketNotString", {}, Conf(R"("socket": 42)"), 7, "socket: must be a string, got 42"},
      {"SocketTooLong",
       {},
       Conf("\"socket\": \"/" + std::string(120, 's') + "\""),
       7,
       "socket: path is 121 bytes long, a unix socket path allows at most 107"},
      // deviceID and runtimeConfig
      {"DeviceIdNotString", {}, Conf(R"("deviceID": 8)"), 7, "deviceID: must be a string, got 8"},
      {"RuntimeConfigNotObject",
       {},
       Conf(R"("runtimeConfig": "x")"),
       7,
       "runtimeConfig: must be an object"},
      {"RuntimeDeviceIdNotString",
       {},
       Conf(R"("runtimeConfig": {"deviceID": []})"),
       7,
       "runtimeConfig.deviceID: must be a string"},
      // routes: known, not supported
      {"Routes",
       {},
       Conf(R"("routes": [{"dst": "10.0.0.0/8"}])"),
       2,
       "routes: [{\"dst\":\"10.0.0.0/8\"}] is not supported"},
      // prevResult
      {"PrevResultNotObject",
       {},
       Conf(R"("prevResult": "x")"),
       7,
       "prevResult: must be an object, got \"x\""},
      {"PrevResultInterfacesNotArray",
       {},
       Conf(R"("prevResult": {"interfaces": {}})"),
       7,
       "prevResult.interfaces: must be an array"},
      {"PrevResultIpNotObject",
       {},
       Conf(R"("prevResult": {"ips": [1]})"),
       7,
       "prevResult.ips[0]: must be an object, got 1"},
      {"CheckWithoutPrevResult", {Verb("CHECK")}, Conf(), 7, "prevResult: missing"},
      // GC's list of attachments to keep
      {"GcWithoutAttachments",
       {Verb("GC")},
       kGcConf + "}",
       7,
       "cni.dev/valid-attachments: missing"},
      {"GcAttachmentsNotArray",
       {Verb("GC")},
       kGcConf + R"(, "cni.dev/valid-attachments": {}})",
       7,
       "cni.dev/valid-attachments: must be an array"},
      {"GcEntryNotObject",
       {Verb("GC")},
       kGcConf + R"(, "cni.dev/valid-attachments": ["c1"]})",
       7,
       "cni.dev/valid-attachments[0]: must be an object"},
      {"GcEntryWithoutContainerId",
       {Verb("GC")},
       kGcConf + R"(, "cni.dev/valid-attachments": [{"ifname": "net1"}]})",
       7,
       "cni.dev/valid-attachments[0].containerID: missing"},
  };
}

class BadInvocationTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInvocationTest, IsRefusedWithCodeAndMessage) {
  const BadCase& bad = GetParam();
  Environment env = AddEnvironment();
  for (const EnvChange& change : bad.env) {
    if (change.value.has_value()) {
      env[change.name] = *change.value;
    } else {
      env.erase(change.name);
    }
  }
  const testutil::PluginRun run = RunPlugin(env, bad.config, NoDaemon());
  EXPECT_EQ(run.exit_code, 1);
  const nlohmann::ordered_json error = run.Json();
  ASSERT_TRUE(error.is_object()) << run.out;
  EXPECT_EQ(error.value("code", 0), bad.code) << run.out;
  EXPECT_THAT(error.value("msg", ""), HasSubstr(bad.fragment));
  EXPECT_TRUE(error.contains("cniVersion") && error.contains("details")) << run.out;
}

INSTANTIATE_TEST_SUITE_P(Table, BadInvocationTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<BadCase>& info) {
                           return info.param.name;
                         });

TEST(BadInvocationTableTest, HasAtLeastThirtyRows) { EXPECT_GE(Cases().size(), 30u); }

TEST(ErrorVersionTest, ErrorEchoesASupportedRequestVersion) {
  Environment env = AddEnvironment();
  env["CNI_IFNAME"] = "..";
  const nlohmann::ordered_json error =
      RunPlugin(env, R"({"cniVersion": "0.4.0", "name": "n", "type": "rocenet"})", NoDaemon())
          .Json();
  EXPECT_EQ(error["cniVersion"], "0.4.0");
}

TEST(ErrorVersionTest, ErrorOfAnUnsupportedVersionIsInTheLatest) {
  const nlohmann::ordered_json error =
      RunPlugin(AddEnvironment(), R"({"cniVersion": "0.3.1", "name": "n", "type": "rocenet"})",
                NoDaemon())
          .Json();
  EXPECT_EQ(error["cniVersion"], "1.1.0");
  EXPECT_EQ(error["code"], 1);
}

}  // namespace
}  // namespace rocenet::cni
