// SPDX-License-Identifier: Apache-2.0
// CheckSecurityFiles: the files and the group the security options name.
#include "daemon/server/security_files.h"

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"
#include "tests/unit/support/temp_dir.h"

namespace rocenet::server {
namespace {

using ::testing::HasSubstr;

TEST(SecurityFilesTest, FilesAndGroupMustExist) {
  config::SecurityOptions options;
  options.read_group = "no-such-group-rocenet";
  absl::Status s = CheckSecurityFiles(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("no-such-group-rocenet"));
  options.read_group = "0";
  EXPECT_OK(CheckSecurityFiles(options));

  const ::rocenet::testing::TempDir dir;
  const std::string cert = dir.Join("sc_cert.pem");
  std::ofstream(cert) << "-----BEGIN CERTIFICATE-----\n";
  options.tls.address = "127.0.0.1:0";
  options.tls.cert = cert;
  options.tls.key = dir.Join("sc_missing_key.pem");
  s = CheckSecurityFiles(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("tls.key"));
  EXPECT_THAT(s.message(), HasSubstr("sc_missing_key.pem"));
}

}  // namespace
}  // namespace rocenet::server
