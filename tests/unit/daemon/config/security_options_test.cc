// SPDX-License-Identifier: Apache-2.0
// The read_group, tls.* and limits.* keys of the config file and their checks.
#include "daemon/config/security_options.h"

#include <string>

#include "daemon/config/options.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::config {
namespace {

using ::testing::HasSubstr;

absl::Status Load(const std::string& yaml, DaemonOptions& options) {
  absl::Status s = ApplyConfigYaml(yaml, "config test.yaml", options);
  if (!s.ok()) return s;
  return ValidateOptions(options);
}

TEST(SecurityOptionsTest, KeysAreApplied) {
  DaemonOptions options;
  ASSERT_TRUE(Load(R"(
read_group: rocenet-read
tls:
  address: 127.0.0.1:50151
  cert: /etc/rocenet/tls.crt
  key: /etc/rocenet/tls.key
  client_ca: /etc/rocenet/ca.crt
  client_cert: require
limits:
  max_request_bytes: 65536
  max_concurrent_streams: 8
  mutating_rpcs_per_second: 2.5
  mutating_rpc_burst: 5
  max_string_bytes: 512
)",
                   options)
                  .ok());
  EXPECT_EQ(options.security.read_group, "rocenet-read");
  EXPECT_EQ(options.security.tls.address, "127.0.0.1:50151");
  EXPECT_EQ(options.security.tls.client_cert, ClientCertMode::kRequire);
  EXPECT_EQ(options.security.tls.client_ca, "/etc/rocenet/ca.crt");
  EXPECT_EQ(options.security.limits.max_request_bytes, 65536);
  EXPECT_EQ(options.security.limits.max_concurrent_streams, 8);
  EXPECT_DOUBLE_EQ(options.security.limits.mutating_rpcs_per_second, 2.5);
  EXPECT_EQ(options.security.limits.mutating_rpc_burst, 5);
  EXPECT_EQ(options.security.limits.max_string_bytes, 512);
}

TEST(SecurityOptionsTest, TlsListenerNeedsCertAndKey) {
  DaemonOptions options;
  absl::Status s = Load("tls:\n  address: 127.0.0.1:0\n", options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("tls.cert"));
  EXPECT_THAT(s.message(), HasSubstr("--tls-cert"));
  options = DaemonOptions();
  s = Load("tls:\n  address: 127.0.0.1:0\n  cert: /c.pem\n", options);
  EXPECT_THAT(s.message(), HasSubstr("tls.key"));
  options = DaemonOptions();
  s = Load("tls:\n  address: 127.0.0.1:0\n  cert: /c.pem\n  key: /k.pem\n  client_cert: optional\n",
           options);
  EXPECT_THAT(s.message(), HasSubstr("tls.client_ca"));
}

TEST(SecurityOptionsTest, BadValuesNameTheKey) {
  for (const auto& [yaml, fragment] : std::vector<std::pair<std::string, std::string>>{
           {"tls:\n  client_cert: maybe\n", "tls.client_cert"},
           {"tls:\n  port: 1\n", "tls.port"},
           {"limits:\n  max_request_bytes: 0\n", "limits.max_request_bytes"},
           {"limits:\n  mutating_rpcs_per_second: -1\n", "limits.mutating_rpcs_per_second"},
           {"limits:\n  burst: 1\n", "limits.burst"},
           {"read_group: [a]\n", "read_group"},
           {"tls:\n  address: nowhere\n  cert: /c\n  key: /k\n", "tls.address"},
       }) {
    DaemonOptions options;
    absl::Status s = Load(yaml, options);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << yaml;
    EXPECT_THAT(s.message(), HasSubstr(fragment)) << yaml;
  }
}

}  // namespace
}  // namespace rocenet::config
