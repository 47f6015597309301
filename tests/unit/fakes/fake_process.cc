// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/fakes/fake_process.h"

#include <signal.h>

#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace rocenet::testing {

class FakeProcess final : public os::Process {
 public:
  FakeProcess(FakeProcessRunner& runner, FakeProgram program, absl::Time started)
      : runner_(runner), program_(std::move(program)), ends_at_(started + program_.run_time) {}

  os::ProcessResult Wait(absl::Time deadline) override {
    if (result_) return *result_;
    if (ends_at_ <= deadline) {
      result_ = os::ProcessResult{program_.exit_code, false, program_.ready_line + program_.out,
                                  program_.err};
    } else {
      Terminate(/*timed_out=*/true);
    }
    return *result_;
  }

  void Stop() override {
    if (!result_) Terminate(/*timed_out=*/false);
  }

  bool WaitForOutput(absl::string_view text, absl::Time deadline) override {
    if (result_)
      return absl::StrContains(result_->out, text) || absl::StrContains(result_->err, text);
    if (!program_.ready_line.empty() && absl::StrContains(program_.ready_line, text)) return true;
    // Otherwise the text shows only in what it prints when it ends.
    return ends_at_ <= deadline &&
           (absl::StrContains(program_.out, text) || absl::StrContains(program_.err, text));
  }

 private:
  void Terminate(bool timed_out) {
    ++runner_.stopped_;
    result_ = os::ProcessResult{128 + SIGTERM, timed_out, program_.ready_line, ""};
  }

  FakeProcessRunner& runner_;
  const FakeProgram program_;
  const absl::Time ends_at_;
  std::optional<os::ProcessResult> result_;
};

void FakeProcessRunner::Install(const std::string& name, const std::string& dir) {
  installed_[name] = absl::StrCat(dir, "/", name);
}

absl::StatusOr<std::string> FakeProcessRunner::Find(absl::string_view program) {
  auto it = installed_.find(std::string(program));
  if (it == installed_.end()) {
    return absl::NotFoundError(absl::StrCat("program ", program, " not found in /usr/bin"));
  }
  return it->second;
}

absl::StatusOr<std::unique_ptr<os::Process>> FakeProcessRunner::Start(
    const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/') {
    return absl::InvalidArgumentError("start: argv[0] must be an absolute path");
  }
  if (!start_failure_.ok()) return std::exchange(start_failure_, absl::OkStatus());
  started_.push_back(argv);
  std::string name = argv[0].substr(argv[0].rfind('/') + 1);
  auto it = scripts_.find(name);
  FakeProgram program = it == scripts_.end() ? FakeProgram{} : it->second;
  return std::make_unique<FakeProcess>(*this, std::move(program), clock_.Now());
}

}  // namespace rocenet::testing
