// SPDX-License-Identifier: Apache-2.0
// The fixture of the CNI plugin's end-to-end tests: Dispatch() with the real
// gRPC client against a fake rocenetd on a unix socket in a temporary
// directory.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "plugins/cni/daemon_client.h"
#include "plugins/cni/dispatch.h"
#include "tests/unit/plugins/cni/fake_attachments.h"
#include "tests/unit/plugins/cni/test_support.h"

namespace rocenet::cni::testutil {

inline constexpr char kContainer[] = "3f6940ab5ab43bc5";
inline constexpr char kNetns[] = "/var/run/netns/pod1";

class CniDispatchTest : public ::testing::Test {
 protected:
  void SetUp() override { socket_ = dir_.Join("rocenetd.sock"); }

  void StartDaemon() {
    daemon_ = FakeAttachments::Start(socket_, SamplePorts());
    ASSERT_NE(daemon_, nullptr);
  }

  // The configuration for this test's socket, in `version`, plus `members`.
  std::string Conf(absl::string_view version, absl::string_view members = "") const {
    return absl::StrCat(R"({"cniVersion": ")", version,
                        R"(", "name": "gaudi-net", "type": "rocenet", "socket": ")", socket_,
                        R"(")", members.empty() ? "" : ", ", members, "}");
  }

  static Environment Env(absl::string_view command, absl::string_view ifname = "net1",
                         absl::string_view container = kContainer) {
    return {{"CNI_COMMAND", std::string(command)},
            {"CNI_CONTAINERID", std::string(container)},
            {"CNI_NETNS", kNetns},
            {"CNI_IFNAME", std::string(ifname)},
            {"CNI_PATH", "/opt/cni/bin"},
            {"CNI_ARGS",
             "IgnoreUnknown=1;K8S_POD_NAMESPACE=ai;K8S_POD_NAME=trainer-0;"
             "K8S_POD_UID=7c0e6f1e"}};
  }

  PluginRun Run(const Environment& env, const std::string& config) {
    return testutil::RunPlugin(env, config, ConnectToDaemon);
  }

  // `config` with prevResult set to `result`.
  static std::string WithPrevResult(const std::string& config,
                                    const nlohmann::ordered_json& result) {
    nlohmann::ordered_json conf = nlohmann::ordered_json::parse(config);
    conf["prevResult"] = result;
    return conf.dump();
  }

  TempDir dir_;
  std::string socket_;
  std::unique_ptr<FakeAttachments> daemon_;
};

}  // namespace rocenet::cni::testutil
