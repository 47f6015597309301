// SPDX-License-Identifier: Apache-2.0
// The config path as a file or as a directory of documents (a ConfigMap
// volume): which files apply, in which order, and what one that only sets
// one key changes.
#include "daemon/config/config_files.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Paths(const std::vector<ConfigDocument>& documents) {
  std::vector<std::string> out;
  for (const ConfigDocument& d : documents) out.push_back(d.path);
  return out;
}

TEST(ConfigFilesTest, AFileIsOneDocument) {
  testing::FakeFileSystem fs;
  fs.AddFile("/etc/rocenet/config.yaml", "log_level: debug\n");
  auto documents = ReadConfigDocuments(fs, "/etc/rocenet/config.yaml");
  ASSERT_OK(documents);
  EXPECT_THAT(Paths(*documents), ElementsAre("/etc/rocenet/config.yaml"));
}

TEST(ConfigFilesTest, ADirectoryAppliesConfigYamlFirstThenTheOthersByName) {
  testing::FakeFileSystem fs;
  fs.AddFile("/etc/rocenet/config.yaml", "");
  fs.AddFile("/etc/rocenet/10-mtu.yaml", "");
  fs.AddFile("/etc/rocenet/a-local.yaml", "");
  // What a ConfigMap volume holds besides its keys, and files that are no
  // configuration.
  fs.AddDirectory("/etc/rocenet/..2026_12_01_10_00_00.123");
  fs.AddFile("/etc/rocenet/..data/config.yaml", "");
  fs.AddFile("/etc/rocenet/.config.yaml.swp", "");
  fs.AddFile("/etc/rocenet/README", "");
  fs.AddFile("/etc/rocenet/config.yaml.orig", "");
  auto documents = ReadConfigDocuments(fs, "/etc/rocenet");
  ASSERT_OK(documents);
  EXPECT_THAT(Paths(*documents), ElementsAre("/etc/rocenet/config.yaml", "/etc/rocenet/10-mtu.yaml",
                                             "/etc/rocenet/a-local.yaml"));
}

TEST(ConfigFilesTest, AnOverrideChangesItsKeysAndNothingElse) {
  testing::FakeFileSystem fs;
  fs.AddFile("/etc/rocenet/config.yaml",
             "log_level: warning\naddressing:\n  mtu: 4200\n  routed_prefix_length: 12\n"
             "interfaces: [eth1, eth2]\n");
  fs.AddFile("/etc/rocenet/local.yaml", "addressing:\n  mtu: 9000\ninterfaces: [eth3]\n");
  DaemonOptions options;
  ASSERT_OK(ApplyConfigPath(fs, "/etc/rocenet", options));
  EXPECT_EQ(options.mtu, 9000u);
  EXPECT_EQ(options.routed_prefix_length, 12);
  EXPECT_EQ(options.log_level, spdlog::level::warn);
  // A list is replaced, not merged.
  EXPECT_THAT(options.selection.interfaces, ElementsAre("eth3"));
}

TEST(ConfigFilesTest, ARefusedOverrideNamesItsFileAndChangesNothing) {
  testing::FakeFileSystem fs;
  fs.AddFile("/etc/rocenet/config.yaml", "addressing:\n  mtu: 4200\n");
  fs.AddFile("/etc/rocenet/local.yaml", "addressing:\n  mtu: \"9000\"\n");
  DaemonOptions options;
  options.mtu = 1500;
  absl::Status status = ApplyConfigPath(fs, "/etc/rocenet", options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("config /etc/rocenet/local.yaml"));
  EXPECT_THAT(status.message(), HasSubstr("addressing.mtu"));
  EXPECT_EQ(options.mtu, 1500u);
}

TEST(ConfigFilesTest, ADirectoryWithoutYamlIsAnError) {
  testing::FakeFileSystem fs;
  fs.AddDirectory("/etc/rocenet");
  fs.AddFile("/etc/rocenet/config.yml", "");
  absl::Status status = ReadConfigDocuments(fs, "/etc/rocenet").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("config /etc/rocenet: a directory without any *.yaml"));
}

TEST(ConfigFilesTest, AMissingPathIsAnErrorNamingIt) {
  testing::FakeFileSystem fs;
  absl::Status status = ReadConfigDocuments(fs, "/etc/rocenet/config.yaml").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("config /etc/rocenet/config.yaml: cannot be read"));
}

TEST(ConfigFilesTest, TheFingerprintChangesWithANameOrAByte) {
  const std::vector<ConfigDocument> base = {{"/c/config.yaml", "mtu: 1\n"}};
  const std::string print = ConfigFingerprint(base);
  EXPECT_EQ(print, ConfigFingerprint({{"/c/config.yaml", "mtu: 1\n"}}));
  EXPECT_NE(print, ConfigFingerprint({{"/c/config.yaml", "mtu: 2\n"}}));
  EXPECT_NE(print, ConfigFingerprint({{"/c/other.yaml", "mtu: 1\n"}}));
  // The same bytes split differently between two files are not the same.
  EXPECT_NE(ConfigFingerprint({{"/a", "xy"}, {"/b", "z"}}),
            ConfigFingerprint({{"/a", "x"}, {"/b", "yz"}}));
}

}  // namespace
}  // namespace rocenet::config
