// SPDX-License-Identifier: Apache-2.0
// ListedMarker on a real temporary directory: the file exists while any
// ListAndWatch stream has listed, goes with the last, and an unwritable
// path is an error naming it.
#include "plugins/device/listed_marker.h"

#include <stdlib.h>

#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::device {
namespace {

using ::testing::HasSubstr;

std::string MakeDir() {
  std::string pattern = ::testing::TempDir() + "listed_marker_XXXXXX";
  return mkdtemp(pattern.data()) != nullptr ? pattern : "";
}

TEST(ListedMarkerTest, ExistsWhileAnyStreamHasListed) {
  const std::string path = MakeDir() + "/listed";
  ListedMarker marker(path);
  EXPECT_FALSE(std::filesystem::exists(path));
  ASSERT_OK(marker.StreamListed());
  EXPECT_TRUE(std::filesystem::exists(path));
  // kubelet registers the plugin again before the old stream has ended.
  ASSERT_OK(marker.StreamListed());
  ASSERT_OK(marker.StreamEnded());
  EXPECT_TRUE(std::filesystem::exists(path)) << "one stream still lists";
  ASSERT_OK(marker.StreamEnded());
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(ListedMarkerTest, ClearRemovesTheFileWhateverStreamsRemain) {
  const std::string path = MakeDir() + "/listed";
  ListedMarker marker(path);
  ASSERT_OK(marker.StreamListed());
  ASSERT_OK(marker.Clear());
  EXPECT_FALSE(std::filesystem::exists(path));
  // A stream ending after the clear leaves no count below zero behind.
  ASSERT_OK(marker.StreamEnded());
  ASSERT_OK(marker.StreamListed());
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST(ListedMarkerTest, NoPathNoFile) {
  ListedMarker marker("");
  EXPECT_OK(marker.StreamListed());
  EXPECT_OK(marker.StreamEnded());
  EXPECT_OK(marker.Clear());
}

TEST(ListedMarkerTest, AnUncreatableFileIsAnErrorNamingIt) {
  const std::string path = MakeDir() + "/missing/listed";
  ListedMarker marker(path);
  absl::Status s = marker.StreamListed();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(path));
}

}  // namespace
}  // namespace rocenet::device
