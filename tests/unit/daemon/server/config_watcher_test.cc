// SPDX-License-Identifier: Apache-2.0
// ConfigWatcher on a real event loop and real inotify, in a temporary
// directory: every way a config file changes in practice (written in place,
// replaced by rename, a Kubernetes ConfigMap volume's ..data swap, removed,
// edited behind a symlink) is one reload; rewriting the same bytes is none.
#include "daemon/server/config_watcher.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "daemon/config/config_files.h"
#include "daemon/os/linux/filesystem_linux.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::server {
namespace {

constexpr absl::Duration kSettle = absl::Milliseconds(20);
// Long enough for a change that should not be reported to have been.
constexpr absl::Duration kQuiet = absl::Milliseconds(300);

void Write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

// What kubelet's atomic writer does to a ConfigMap volume: the keys are
// symlinks into ..data, itself a symlink to a timestamped directory that an
// update replaces with one rename.
class ConfigMapVolume {
 public:
  explicit ConfigMapVolume(std::string dir) : dir_(std::move(dir)) {}
  void Publish(const std::map<std::string, std::string>& files) {
    const std::string version = "..2026_12_01_00_00_0" + std::to_string(++generation_);
    std::filesystem::create_directory(dir_ + "/" + version);
    for (const auto& [name, text] : files) Write(dir_ + "/" + version + "/" + name, text);
    std::filesystem::create_directory_symlink(version, dir_ + "/..data_tmp");
    std::filesystem::rename(dir_ + "/..data_tmp", dir_ + "/..data");
    for (const auto& [name, unused] : files) {
      std::error_code ignored;
      std::filesystem::create_symlink("..data/" + name, dir_ + "/" + name, ignored);
    }
    if (!previous_.empty()) std::filesystem::remove_all(dir_ + "/" + previous_);
    previous_ = version;
  }

 private:
  const std::string dir_;
  int generation_ = 0;
  std::string previous_;
};

class ConfigWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "config_watcher_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    auto loop = os::EventLoop::Create();
    ASSERT_OK(loop);
    loop_ = *std::move(loop);
  }

  void TearDown() override {
    if (thread_.joinable()) {
      loop_->Stop();
      thread_.join();
    }
    watcher_.reset();
    std::filesystem::remove_all(dir_);
  }

  // What `path` holds now, as the watcher compares it.
  std::string Loaded(const std::string& path) {
    auto documents = config::ReadConfigDocuments(fs_, path);
    EXPECT_OK(documents);
    return documents.ok() ? config::ConfigFingerprint(*documents) : "";
  }

  // Starts watching `path` as loaded now (or as `loaded`), and serves the
  // loop.
  void Watch(const std::string& path, absl::Duration settle = kSettle,
             std::optional<std::string> loaded = std::nullopt) {
    auto watcher = ConfigWatcher::Start(
        loop_.get(), &fs_,
        {.path = path, .loaded = loaded ? *loaded : Loaded(path), .settle = settle}, [this] {
          absl::MutexLock lock(&mu_);
          ++changes_;
        });
    ASSERT_OK(watcher);
    watcher_ = *std::move(watcher);
    thread_ = std::thread([this] { EXPECT_OK(loop_->Run()); });
  }

  // The changes reported once `expected` have been or `kQuiet` has passed.
  int Changes(int expected) {
    absl::MutexLock lock(&mu_);
    auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return changes_ >= expected; };
    mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(5));
    mu_.AwaitWithTimeout(absl::Condition(
                             +[](int*) { return false; }, &changes_),
                         kQuiet);
    return changes_;
  }

  std::string dir_;
  os::FileSystemLinux fs_;
  std::unique_ptr<os::EventLoop> loop_;
  std::unique_ptr<ConfigWatcher> watcher_;
  std::thread thread_;
  absl::Mutex mu_;
  int changes_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST_F(ConfigWatcherTest, NothingChangedIsNoChange) {
  Write(dir_ + "/config.yaml", "log_level: info\n");
  Watch(dir_ + "/config.yaml");
  EXPECT_EQ(Changes(0), 0);
  Write(dir_ + "/config.yaml", "log_level: info\n");  // the same bytes again
  Write(dir_ + "/unrelated.txt", "x");
  EXPECT_EQ(Changes(0), 0);
}

TEST_F(ConfigWatcherTest, AFileWrittenInPlaceIsOneChange) {
  Write(dir_ + "/config.yaml", "log_level: info\n");
  Watch(dir_ + "/config.yaml");
  Write(dir_ + "/config.yaml", "log_level: debug\n");
  EXPECT_EQ(Changes(1), 1);
}

TEST_F(ConfigWatcherTest, AFileReplacedByRenameIsOneChange) {
  Write(dir_ + "/config.yaml", "log_level: info\n");
  Watch(dir_ + "/config.yaml");
  Write(dir_ + "/.config.yaml.new", "log_level: debug\n");
  std::filesystem::rename(dir_ + "/.config.yaml.new", dir_ + "/config.yaml");
  EXPECT_EQ(Changes(1), 1);
  Write(dir_ + "/.config.yaml.new", "log_level: warning\n");
  std::filesystem::rename(dir_ + "/.config.yaml.new", dir_ + "/config.yaml");
  EXPECT_EQ(Changes(2), 2);
}

TEST_F(ConfigWatcherTest, AConfigMapUpdateIsOneChangeOfItsFile) {
  ConfigMapVolume volume(dir_);
  volume.Publish({{"config.yaml", "log_level: info\n"}});
  Watch(dir_ + "/config.yaml");
  volume.Publish({{"config.yaml", "log_level: debug\n"}});
  EXPECT_EQ(Changes(1), 1);
  // The next update is seen through the new ..data.
  volume.Publish({{"config.yaml", "log_level: warning\n"}});
  EXPECT_EQ(Changes(2), 2);
}

TEST_F(ConfigWatcherTest, AConfigMapUpdateIsOneChangeOfTheDirectory) {
  ConfigMapVolume volume(dir_);
  volume.Publish({{"config.yaml", "log_level: info\n"}});
  Watch(dir_);
  volume.Publish({{"config.yaml", "log_level: debug\n"}});
  EXPECT_EQ(Changes(1), 1);
  volume.Publish({{"config.yaml", "log_level: warning\n"}});
  EXPECT_EQ(Changes(2), 2);
}

TEST_F(ConfigWatcherTest, AnOverrideAddedToTheDirectoryIsAChange) {
  ConfigMapVolume volume(dir_);
  volume.Publish({{"config.yaml", "log_level: info\n"}});
  Watch(dir_);
  volume.Publish(
      {{"config.yaml", "log_level: info\n"}, {"local.yaml", "addressing: {mtu: 9000}\n"}});
  EXPECT_EQ(Changes(1), 1);
}

TEST_F(ConfigWatcherTest, RemovedIsAChangeAndBackAgainIsAnother) {
  Write(dir_ + "/config.yaml", "log_level: info\n");
  Watch(dir_ + "/config.yaml");
  std::filesystem::remove(dir_ + "/config.yaml");
  EXPECT_EQ(Changes(1), 1);
  Write(dir_ + "/config.yaml", "log_level: info\n");
  EXPECT_EQ(Changes(2), 2);
}

TEST_F(ConfigWatcherTest, AnEditBehindASymlinkIsAChange) {
  std::filesystem::create_directory(dir_ + "/real");
  std::filesystem::create_directory(dir_ + "/etc");
  Write(dir_ + "/real/rocenetd.yaml", "log_level: info\n");
  std::filesystem::create_symlink(dir_ + "/real/rocenetd.yaml", dir_ + "/etc/config.yaml");
  Watch(dir_ + "/etc/config.yaml");
  Write(dir_ + "/real/rocenetd.yaml", "log_level: debug\n");
  EXPECT_EQ(Changes(1), 1);
}

TEST_F(ConfigWatcherTest, ABurstOfWritesIsOneChange) {
  Write(dir_ + "/config.yaml", "log_level: info\n");
  // A settle time longer than the burst, so that the burst is one change.
  Watch(dir_ + "/config.yaml", absl::Milliseconds(150));
  ASSERT_EQ(Changes(0), 0);  // the check at start is behind us
  for (int i = 0; i < 10; ++i) {
    Write(dir_ + "/config.yaml", "log_level: debug\n# " + std::to_string(i));
  }
  EXPECT_EQ(Changes(1), 1);
}

TEST_F(ConfigWatcherTest, AChangeBeforeTheWatchStartedIsAChange) {
  Write(dir_ + "/config.yaml", "log_level: info\n");
  const std::string loaded = Loaded(dir_ + "/config.yaml");
  Write(dir_ + "/config.yaml", "log_level: debug\n");
  Watch(dir_ + "/config.yaml", kSettle, loaded);
  EXPECT_EQ(Changes(1), 1);
}

}  // namespace
}  // namespace rocenet::server
