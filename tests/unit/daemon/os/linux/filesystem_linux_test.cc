// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/filesystem_linux.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::os {
namespace {

using ::rocenet::testing::IsOkAndHolds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

class FileSystemLinuxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = std::filesystem::temp_directory_path() / "rocenet-fs-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    // A umask as strict as a hardened host's, to show it does not leak into
    // the modes the caller asked for.
    old_umask_ = umask(077);
  }
  void TearDown() override {
    umask(old_umask_);
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  mode_t ModeOf(const std::string& path) const {
    struct stat st {};
    EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  }

  std::vector<std::string> Entries() const {
    absl::StatusOr<std::vector<std::string>> names = fs_.ListDirectory(dir_);
    EXPECT_OK(names);
    return names.ok() ? *names : std::vector<std::string>{};
  }

  FileSystemLinux fs_;
  std::string dir_;
  mode_t old_umask_ = 0;
};

TEST_F(FileSystemLinuxTest, WriteThenReadWithTheRequestedMode) {
  ASSERT_OK(fs_.WriteFileAtomic(Path("gaudinet.json"), "{}\n", 0644));

  absl::StatusOr<std::string> content = fs_.ReadFile(Path("gaudinet.json"));
  ASSERT_OK(content);
  EXPECT_EQ(*content, "{}\n");
  EXPECT_EQ(ModeOf(Path("gaudinet.json")), 0644u);
}

TEST_F(FileSystemLinuxTest, ReplacesAtomicallyWithANewInodeAndNoLeftovers) {
  const std::string path = Path("gaudinet.json");
  ASSERT_OK(fs_.WriteFileAtomic(path, "old\n", 0600));
  struct stat before {};
  ASSERT_EQ(stat(path.c_str(), &before), 0);

  ASSERT_OK(fs_.WriteFileAtomic(path, "new content\n", 0644));

  // A new inode means the old file was replaced by rename, not rewritten in
  // place: a reader holding it open keeps seeing whole old content.
  struct stat after {};
  ASSERT_EQ(stat(path.c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino);
  EXPECT_EQ(*fs_.ReadFile(path), "new content\n");
  EXPECT_EQ(ModeOf(path), 0644u);
  EXPECT_THAT(Entries(), ElementsAre("gaudinet.json"));
}

TEST_F(FileSystemLinuxTest, EmptyContentAndLargeContent) {
  ASSERT_OK(fs_.WriteFileAtomic(Path("empty"), "", 0644));
  EXPECT_EQ(*fs_.ReadFile(Path("empty")), "");

  const std::string big(1 << 20, 'x');
  ASSERT_OK(fs_.WriteFileAtomic(Path("big"), big, 0644));
  EXPECT_EQ(*fs_.ReadFile(Path("big")), big);
}

TEST_F(FileSystemLinuxTest, MissingDirectoryIsNotFoundAndCreatesNothing) {
  const std::string path = Path("missing/gaudinet.json");

  const absl::Status status = fs_.WriteFileAtomic(path, "{}\n", 0644);

  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "write " + path + ": No such file or directory");
  EXPECT_THAT(Entries(), ElementsAre());
}

TEST_F(FileSystemLinuxTest, WriteFailingMidwayKeepsTheOldFileAndRemovesTheTemporary) {
  const std::string path = Path("gaudinet.json");
  ASSERT_OK(fs_.WriteFileAtomic(path, "old\n", 0644));

  // A file size limit makes write() fail part way, as a full disk would; it
  // binds root too. SIGXFSZ would kill the test, so ignore it meanwhile.
  struct rlimit old_limit {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  const struct rlimit small = {16, old_limit.rlim_max};
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const absl::Status status = fs_.WriteFileAtomic(path, std::string(4096, 'x'), 0644);
  setrlimit(RLIMIT_FSIZE, &old_limit);
  signal(SIGXFSZ, old_handler);

  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), StartsWith("write " + Path(".gaudinet.json.tmp")));
  EXPECT_THAT(std::string(status.message()), HasSubstr("File too large"));
  EXPECT_EQ(*fs_.ReadFile(path), "old\n");
  EXPECT_THAT(Entries(), ElementsAre("gaudinet.json"));
}

TEST_F(FileSystemLinuxTest, FailedRenameRemovesTheTemporaryAndLeavesTheTarget) {
  // A directory where the file should go: everything succeeds up to rename.
  ASSERT_EQ(mkdir(Path("gaudinet.json").c_str(), 0755), 0);

  const absl::Status status = fs_.WriteFileAtomic(Path("gaudinet.json"), "{}\n", 0644);

  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("rename "));
  EXPECT_THAT(std::string(status.message()), HasSubstr(" to " + Path("gaudinet.json")));
  EXPECT_THAT(Entries(), ElementsAre("gaudinet.json"));
  EXPECT_TRUE(std::filesystem::is_directory(Path("gaudinet.json")));
}

TEST_F(FileSystemLinuxTest, WriteRejectsAPathWithoutAFileName) {
  EXPECT_EQ(fs_.WriteFileAtomic(dir_ + "/", "x", 0644).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fs_.WriteFileAtomic(Path(".."), "x", 0644).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(FileSystemLinuxTest, ReadMissingIsNotFoundNamingThePath) {
  const absl::StatusOr<std::string> content = fs_.ReadFile(Path("nope"));
  EXPECT_EQ(content.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(content.status().message()), HasSubstr(Path("nope")));
}

TEST_F(FileSystemLinuxTest, RemoveFileAndRemoveMissingIsOk) {
  ASSERT_OK(fs_.WriteFileAtomic(Path("rocenet"), "x=true\n", 0644));

  EXPECT_OK(fs_.RemoveFile(Path("rocenet")));
  EXPECT_THAT(Entries(), ElementsAre());
  EXPECT_OK(fs_.RemoveFile(Path("rocenet")));
  EXPECT_OK(fs_.RemoveFile(Path("missing/rocenet")));
}

TEST_F(FileSystemLinuxTest, RemoveOfADirectoryIsAnError) {
  ASSERT_EQ(mkdir(Path("sub").c_str(), 0755), 0);
  const absl::Status status = fs_.RemoveFile(Path("sub"));
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("remove " + Path("sub")));
}

TEST_F(FileSystemLinuxTest, MakeDirectoriesCreatesParentsWithTheModeAndIsIdempotent) {
  const std::string nested = Path("a/b/c/");

  ASSERT_OK(fs_.MakeDirectories(nested, 0755));
  ASSERT_OK(fs_.MakeDirectories(nested, 0700));

  EXPECT_TRUE(std::filesystem::is_directory(Path("a/b/c")));
  EXPECT_EQ(ModeOf(Path("a")), 0755u);
  EXPECT_EQ(ModeOf(Path("a/b/c")), 0755u);  // existing ones are left alone
  EXPECT_OK(fs_.MakeDirectories(dir_, 0755));
  EXPECT_OK(fs_.MakeDirectories("/", 0755));
}

TEST_F(FileSystemLinuxTest, MakeDirectoriesThroughAFileFails) {
  ASSERT_OK(fs_.WriteFileAtomic(Path("file"), "x", 0644));
  const absl::Status status = fs_.MakeDirectories(Path("file/sub"), 0755);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "mkdir " + Path("file") + ": Not a directory");
}

TEST_F(FileSystemLinuxTest, ListDirectoryIsSortedAndMissingIsNotFound) {
  ASSERT_OK(fs_.WriteFileAtomic(Path("b"), "", 0644));
  ASSERT_OK(fs_.WriteFileAtomic(Path("a"), "", 0644));
  ASSERT_OK(fs_.MakeDirectories(Path("c"), 0755));

  EXPECT_THAT(Entries(), ElementsAre("a", "b", "c"));
  EXPECT_EQ(fs_.ListDirectory(Path("missing")).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(FileSystemLinuxTest, RemoveDirectoryTakesAnEmptyOneAndAGoneOneIsSuccess) {
  ASSERT_OK(fs_.MakeDirectories(Path("d"), 0755));
  ASSERT_OK(fs_.WriteFileAtomic(Path("d/f"), "x", 0644));
  const absl::Status full = fs_.RemoveDirectory(Path("d"));
  EXPECT_EQ(full.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(full.message(), "remove directory " + Path("d") + ": Directory not empty");

  ASSERT_OK(fs_.RemoveFile(Path("d/f")));
  EXPECT_OK(fs_.RemoveDirectory(Path("d")));
  EXPECT_THAT(Entries(), IsEmpty());
  EXPECT_OK(fs_.RemoveDirectory(Path("d")));
}

TEST_F(FileSystemLinuxTest, ExistsSeesFilesDirectoriesAndDanglingLinks) {
  ASSERT_OK(fs_.WriteFileAtomic(Path("f"), "x", 0644));
  ASSERT_EQ(symlink("nowhere", Path("link").c_str()), 0);
  EXPECT_THAT(fs_.Exists(Path("f")), IsOkAndHolds(true));
  EXPECT_THAT(fs_.Exists(dir_), IsOkAndHolds(true));
  // The link, not what it names: removing it is what a clean-up does.
  EXPECT_THAT(fs_.Exists(Path("link")), IsOkAndHolds(true));
  EXPECT_THAT(fs_.Exists(Path("missing")), IsOkAndHolds(false));
  EXPECT_THAT(fs_.Exists(Path("f/under-a-file")), IsOkAndHolds(false));
}

TEST_F(FileSystemLinuxTest, NoDescriptorLeaksOnSuccessOrFailure) {
  auto open_descriptors = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                         std::filesystem::directory_iterator{});
  };
  const auto before = open_descriptors();
  ASSERT_EQ(mkdir(Path("dir").c_str(), 0755), 0);
  for (int i = 0; i < 20; ++i) {
    EXPECT_OK(fs_.WriteFileAtomic(Path("f"), std::to_string(i), 0644));
    EXPECT_OK(fs_.ReadFile(Path("f")));
    EXPECT_FALSE(fs_.WriteFileAtomic(Path("dir"), "x", 0644).ok());
    EXPECT_FALSE(fs_.ReadFile(Path("dir")).ok());
    EXPECT_OK(fs_.RemoveFile(Path("f")));
  }
  EXPECT_EQ(open_descriptors(), before);
}

}  // namespace
}  // namespace rocenet::os
