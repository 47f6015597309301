// SPDX-License-Identifier: Apache-2.0
// Work inside another network namespace, on real namespaces: a thread of the
// test unshares one, and NetnsLinux works in it through /proc. Needs
// CAP_SYS_ADMIN; skipped otherwise.
#include "daemon/os/linux/netns_linux.h"

#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::os {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The inode of the calling thread's network namespace.
ino_t ThreadNetns() {
  struct stat st {};
  EXPECT_EQ(stat("/proc/thread-self/ns/net", &st), 0) << strerror(errno);
  return st.st_ino;
}

// A thread that lives in a network namespace of its own until destroyed;
// path() reaches the namespace through /proc.
class PrivateNetns {
 public:
  PrivateNetns() {
    thread_ = std::thread([this] {
      ok_ = unshare(CLONE_NEWNET) == 0;
      error_ = errno;
      tid_ = static_cast<pid_t>(syscall(SYS_gettid));
      ready_.Notify();
      done_.WaitForNotification();
    });
    ready_.WaitForNotification();
  }
  ~PrivateNetns() {
    done_.Notify();
    thread_.join();
  }
  bool ok() const { return ok_; }
  const char* error() const { return strerror(error_); }
  std::string path() const { return absl::StrCat("/proc/", getpid(), "/task/", tid_, "/ns/net"); }

 private:
  std::thread thread_;
  absl::Notification ready_;
  absl::Notification done_;
  bool ok_ = false;
  int error_ = 0;
  pid_t tid_ = 0;
};

std::vector<std::string> LinkNames(Netlink& netlink) {
  std::vector<std::string> names;
  absl::StatusOr<std::vector<LinkInfo>> links = netlink.ListLinks();
  EXPECT_OK(links);
  if (links.ok()) {
    for (const LinkInfo& link : *links) names.push_back(link.name);
  }
  return names;
}

class NetnsLinuxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!pod_.ok()) GTEST_SKIP() << "cannot create a network namespace: " << pod_.error();
    absl::StatusOr<std::unique_ptr<NetnsLinux>> netns = NetnsLinux::Create();
    ASSERT_OK(netns);
    netns_ = *std::move(netns);
  }

  PrivateNetns pod_;
  std::unique_ptr<NetnsLinux> netns_;
};

TEST_F(NetnsLinuxTest, ANetlinkOpenedThereSeesThatNamespaceAndTheCallerStaysHome) {
  const ino_t home = ThreadNetns();
  absl::StatusOr<std::unique_ptr<NetnsHandle>> ns = netns_->Open(pod_.path());
  ASSERT_OK(ns);
  absl::StatusOr<std::unique_ptr<Netlink>> netlink = netns_->OpenNetlink(**ns);
  ASSERT_OK(netlink);
  // A fresh namespace has its loopback and nothing else.
  EXPECT_THAT(LinkNames(**netlink), ElementsAre("lo"));
  EXPECT_EQ(ThreadNetns(), home);
  EXPECT_FALSE(netns_->IsHost(**ns));
}

TEST_F(NetnsLinuxTest, ManyCallsFromSeveralThreadsEachLandInTheRightNamespace) {
  PrivateNetns other;
  ASSERT_OK(other);
  absl::StatusOr<std::unique_ptr<NetnsHandle>> a = netns_->Open(pod_.path());
  absl::StatusOr<std::unique_ptr<NetnsHandle>> host = netns_->Open("/proc/self/ns/net");
  ASSERT_TRUE(a.ok() && host.ok());
  // The test's own namespace has more than a loopback wherever this runs
  // with a network; a namespace of its own has only that.
  absl::StatusOr<std::unique_ptr<Netlink>> host_netlink = netns_->OpenNetlink(**host);
  ASSERT_OK(host_netlink);
  const std::vector<std::string> host_links = LinkNames(**host_netlink);

  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const ino_t home = ThreadNetns();
      for (int i = 0; i < 50; ++i) {
        const bool to_pod = (i + t) % 2 == 0;
        absl::StatusOr<std::unique_ptr<Netlink>> netlink =
            netns_->OpenNetlink(to_pod ? **a : **host);
        if (!netlink.ok() ||
            LinkNames(**netlink) != (to_pod ? std::vector<std::string>{"lo"} : host_links)) {
          ++wrong[t];
        }
        if (ThreadNetns() != home) ++wrong[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(wrong, ElementsAre(0, 0, 0, 0));
}

TEST_F(NetnsLinuxTest, TheHostIsRecognisedByAnyPath) {
  absl::StatusOr<std::unique_ptr<NetnsHandle>> self = netns_->Open("/proc/self/ns/net");
  ASSERT_OK(self);
  EXPECT_TRUE(netns_->IsHost(**self));
}

TEST_F(NetnsLinuxTest, PathsThatAreNotNamespacesAreRefused) {
  absl::StatusOr<std::unique_ptr<NetnsHandle>> file = netns_->Open("/proc/self/status");
  EXPECT_EQ(file.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(file.status().message()), HasSubstr("is not a network namespace"));
  absl::StatusOr<std::unique_ptr<NetnsHandle>> gone = netns_->Open("/run/netns/no-such-pod-ns");
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
}

TEST_F(NetnsLinuxTest, AnOpenHandleKeepsANamespaceWhoseLastThreadEnded) {
  std::unique_ptr<NetnsHandle> handle;
  {
    PrivateNetns brief;
    ASSERT_OK(brief);
    absl::StatusOr<std::unique_ptr<NetnsHandle>> opened = netns_->Open(brief.path());
    ASSERT_OK(opened);
    handle = *std::move(opened);
  }
  // The open handle keeps the namespace alive: work in it still succeeds.
  EXPECT_OK(netns_->OpenNetlink(*handle));
  absl::StatusOr<std::unique_ptr<NetnsHandle>> a = netns_->Open(pod_.path());
  ASSERT_OK(a);
  absl::StatusOr<std::unique_ptr<Netlink>> netlink = netns_->OpenNetlink(**a);
  ASSERT_OK(netlink);
  EXPECT_THAT(LinkNames(**netlink), ElementsAre("lo"));
}

}  // namespace
}  // namespace rocenet::os
