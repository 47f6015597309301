// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/process_linux.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "daemon/common/errno_status.h"

namespace rocenet::os {
namespace {

constexpr absl::Duration kKillGrace = absl::Seconds(1);
// After the child exited, how long its output may still take to arrive
// (a grandchild that kept the descriptors open is not waited for longer).
constexpr absl::Duration kDrainAfterExit = absl::Milliseconds(200);
// Without a pidfd (kernels before 5.3) the reader polls waitpid this often.
constexpr int kReapPollMs = 20;

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

void AppendBounded(std::string& to, const char* data, size_t n) {
  if (to.size() < kMaxProcessOutput) to.append(data, std::min(n, kMaxProcessOutput - to.size()));
}

int PollTimeoutMs(std::optional<absl::Time> until) {
  if (!until || *until == absl::InfiniteFuture()) return -1;
  absl::Duration left = *until - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))));
}

class ProcessLinux final : public Process {
 public:
  ProcessLinux(pid_t pid, int out_fd, int err_fd, int pidfd, int wake_read, int wake_write)
      : pid_(pid),
        out_fd_(out_fd),
        err_fd_(err_fd),
        pidfd_(pidfd),
        wake_read_(wake_read),
        wake_write_(wake_write) {
    thread_ = std::thread([this] { Run(); });
  }

  ~ProcessLinux() override {
    {
      absl::MutexLock lock(&mu_);
      if (!exited_) {
        kill(-pid_, SIGKILL);
        Wake();
      }
      mu_.Await(absl::Condition(&finished_));
    }
    thread_.join();
    CloseFd(wake_read_);
    CloseFd(wake_write_);
  }

  ProcessResult Wait(absl::Time deadline) override {
    absl::MutexLock lock(&mu_);
    if (!mu_.AwaitWithDeadline(absl::Condition(&finished_), deadline)) {
      timed_out_ = true;
      TerminateLocked();
      mu_.Await(absl::Condition(&finished_));
    }
    ProcessResult result;
    result.exit_code = exit_code_;
    result.timed_out = timed_out_;
    result.out = out_;
    result.err = err_;
    return result;
  }

  void Stop() override {
    absl::MutexLock lock(&mu_);
    TerminateLocked();
  }

  bool WaitForOutput(absl::string_view text, absl::Time deadline) override {
    struct Seen {
      ProcessLinux* self;
      absl::string_view text;
      static bool Check(Seen* s) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return s->self->finished_ || s->self->HasTextLocked(s->text);
      }
    } seen{this, text};
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithDeadline(absl::Condition(&Seen::Check, &seen), deadline);
    return HasTextLocked(text);
  }

 private:
  bool HasTextLocked(absl::string_view text) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return absl::string_view(out_).find(text) != absl::string_view::npos ||
           absl::string_view(err_).find(text) != absl::string_view::npos;
  }

  // SIGTERM to the group now; the reader sends SIGKILL kKillGrace later.
  void TerminateLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (exited_ || kill_at_) return;
    kill(-pid_, SIGTERM);
    kill_at_ = absl::Now() + kKillGrace;
    Wake();
  }

  void Wake() {
    char byte = 1;
    // A full wake pipe already wakes the reader: nothing to do on EAGAIN.
    [[maybe_unused]] ssize_t n = write(wake_write_, &byte, 1);
  }

  // Reads what `fd` has; closes it at end of file. On a pseudo-terminal the
  // end is EIO (the child closed its side), not a read of 0.
  void ReadFrom(int& fd, bool is_out) {
    char buf[16384];
    for (;;) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) {
        absl::MutexLock lock(&mu_);
        AppendBounded(is_out ? out_ : err_, buf, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      CloseFd(fd);
      return;
    }
  }

  void Reap() {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR)) return;
    absl::MutexLock lock(&mu_);
    if (r < 0) {
      exit_code_ = -1;  // reaped elsewhere (SIGCHLD ignored): status unknown
    } else if (WIFEXITED(status)) {
      exit_code_ = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      exit_code_ = 128 + WTERMSIG(status);
    }
    exited_ = true;
    drain_until_ = absl::Now() + kDrainAfterExit;
  }

  void Run() {
    for (;;) {
      std::optional<absl::Time> until;
      {
        absl::MutexLock lock(&mu_);
        if (exited_ && ((out_fd_ < 0 && err_fd_ < 0) || absl::Now() >= drain_until_)) break;
        if (exited_) {
          until = drain_until_;
        } else if (kill_at_) {
          until = kill_at_;
        }
      }
      int timeout = PollTimeoutMs(until);
      if (pidfd_ < 0 && (timeout < 0 || timeout > kReapPollMs)) timeout = kReapPollMs;
      pollfd fds[4] = {
          {out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}, {pidfd_, POLLIN, 0}, {wake_read_, POLLIN, 0}};
      if (poll(fds, 4, timeout) < 0 && errno != EINTR) break;
      if (fds[0].revents) ReadFrom(out_fd_, true);
      if (fds[1].revents) ReadFrom(err_fd_, false);
      if (fds[3].revents) {
        char drain[64];
        while (read(wake_read_, drain, sizeof drain) > 0) {
        }
      }
      bool exited;
      {
        absl::MutexLock lock(&mu_);
        exited = exited_;
      }
      if (!exited) Reap();
      absl::MutexLock lock(&mu_);
      if (!exited_ && kill_at_ && absl::Now() >= *kill_at_) {
        kill(-pid_, SIGKILL);
        kill_at_ = absl::InfiniteFuture();
      }
    }
    // Whatever is still buffered when the grace ended (non-blocking reads).
    if (out_fd_ >= 0) ReadFrom(out_fd_, true);
    if (err_fd_ >= 0) ReadFrom(err_fd_, false);
    CloseFd(out_fd_);
    CloseFd(err_fd_);
    CloseFd(pidfd_);
    absl::MutexLock lock(&mu_);
    finished_ = true;
  }

  const pid_t pid_;
  // Owned by the reader thread until it finishes.
  int out_fd_;
  int err_fd_;
  int pidfd_;
  int wake_read_;
  int wake_write_;
  std::thread thread_;

  absl::Mutex mu_;
  bool exited_ ABSL_GUARDED_BY(mu_) = false;    // reaped
  bool finished_ ABSL_GUARDED_BY(mu_) = false;  // reaped and output read
  bool timed_out_ ABSL_GUARDED_BY(mu_) = false;
  int exit_code_ ABSL_GUARDED_BY(mu_) = -1;
  std::optional<absl::Time> kill_at_ ABSL_GUARDED_BY(mu_);
  absl::Time drain_until_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  std::string out_ ABSL_GUARDED_BY(mu_);
  std::string err_ ABSL_GUARDED_BY(mu_);
};

// The child's stdout: a raw pseudo-terminal. Returns {master, slave}.
absl::Status OpenRawPty(int& master, int& slave) {
  master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0) return ErrnoToStatus(errno, "open a pseudo-terminal");
  char name[64];
  if (grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, name, sizeof name) != 0) {
    int err = errno;
    CloseFd(master);
    return ErrnoToStatus(err, "unlock a pseudo-terminal");
  }
  slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0) {
    int err = errno;
    CloseFd(master);
    return ErrnoToStatus(err, absl::StrCat("open ", name));
  }
  termios t;
  if (tcgetattr(slave, &t) == 0) {
    cfmakeraw(&t);
    tcsetattr(slave, TCSANOW, &t);
  }
  fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
  return absl::OkStatus();
}

}  // namespace

ProcessRunnerLinux::ProcessRunnerLinux(std::string search_path)
    : search_path_(std::move(search_path)) {}

absl::StatusOr<std::string> ProcessRunnerLinux::Find(absl::string_view program) {
  if (program.empty() || program.find('/') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("program \"", program, "\": give a bare name to search for"));
  }
  for (absl::string_view dir : absl::StrSplit(search_path_, ':', absl::SkipEmpty())) {
    std::string path = absl::StrCat(dir, "/", program);
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0) {
      return path;
    }
  }
  return absl::NotFoundError(absl::StrCat("program ", program, " not found in ", search_path_));
}

absl::StatusOr<std::unique_ptr<Process>> ProcessRunnerLinux::Start(
    const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat("start \"", argv.empty() ? "" : argv[0],
                                                   "\": argv[0] must be an absolute path"));
  }
  const std::string& program = argv[0];
  int out_master = -1, out_slave = -1;
  absl::Status pty = OpenRawPty(out_master, out_slave);
  if (!pty.ok())
    return absl::Status(pty.code(), absl::StrCat("start ", program, ": ", pty.message()));
  int err_pipe[2], wake_pipe[2];
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    int err = errno;
    CloseFd(out_master);
    CloseFd(out_slave);
    return ErrnoToStatus(err, absl::StrCat("start ", program, ": pipe"));
  }
  if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    int err = errno;
    for (int* fd : {&out_master, &out_slave, &err_pipe[0], &err_pipe[1]}) CloseFd(*fd);
    return ErrnoToStatus(err, absl::StrCat("start ", program, ": pipe"));
  }
  fcntl(err_pipe[0], F_SETFL, fcntl(err_pipe[0], F_GETFL) | O_NONBLOCK);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_slave, 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::string path_env = absl::StrCat("PATH=", search_path_);
  char* envp[] = {path_env.data(), nullptr};
  pid_t pid = -1;
  int rc = posix_spawn(&pid, program.c_str(), &actions, &attr, args.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  CloseFd(out_slave);
  CloseFd(err_pipe[1]);
  if (rc != 0) {
    for (int* fd : {&out_master, &err_pipe[0], &wake_pipe[0], &wake_pipe[1]}) CloseFd(*fd);
    return ErrnoToStatus(rc, absl::StrCat("start ", program));
  }
  // -1 on kernels before 5.3: the reader polls waitpid instead.
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  return std::make_unique<ProcessLinux>(pid, out_master, err_pipe[0], pidfd, wake_pipe[0],
                                        wake_pipe[1]);
}

}  // namespace rocenet::os
