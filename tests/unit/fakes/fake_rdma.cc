// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/fakes/fake_rdma.h"

#include "absl/strings/str_cat.h"
#include "daemon/common/status_macros.h"

namespace rocenet::testing {

class RdmaView final : public os::Rdma {
 public:
  RdmaView(FakeRdma* rdma, int netns_fd) : rdma_(rdma), netns_fd_(netns_fd) {}

  absl::StatusOr<os::RdmaNetnsMode> NetnsMode() override { return rdma_->mode_; }

  absl::StatusOr<bool> HasDevice(absl::string_view device) override {
    auto it = rdma_->devices_.find(std::string(device));
    if (it == rdma_->devices_.end()) return false;
    return rdma_->mode_ == os::RdmaNetnsMode::kShared || it->second == netns_fd_;
  }

  absl::StatusOr<os::RdmaPortState> PortState(absl::string_view device, int port) override {
    ASSIGN_OR_RETURN(const bool here, HasDevice(device));
    if (!here) {
      return absl::NotFoundError(absl::StrCat("rdma device ", device, ": not in this namespace"));
    }
    auto it = rdma_->states_.find(std::string(device));
    return it == rdma_->states_.end() ? os::RdmaPortState() : it->second;
  }

  absl::Status MoveDevice(absl::string_view device, int netns_fd) override {
    auto it = rdma_->devices_.find(std::string(device));
    if (it == rdma_->devices_.end() ||
        (rdma_->mode_ == os::RdmaNetnsMode::kExclusive && it->second != netns_fd_)) {
      return absl::NotFoundError(absl::StrCat("rdma device ", device, ": not in this namespace"));
    }
    if (rdma_->mode_ == os::RdmaNetnsMode::kShared) {
      return absl::FailedPreconditionError(absl::StrCat(
          "rdma device ", device, ": move to another namespace: Operation not supported"));
    }
    if (rdma_->move_failure_.has_value()) {
      absl::Status failure = *std::move(rdma_->move_failure_);
      rdma_->move_failure_.reset();
      return failure;
    }
    it->second = netns_fd;
    rdma_->moves_.push_back(absl::StrCat(device, "->", netns_fd));
    return absl::OkStatus();
  }

 private:
  FakeRdma* rdma_;
  int netns_fd_;
};

void FakeRdma::AddDevice(const std::string& name, std::optional<int> netns_fd) {
  devices_[name] = netns_fd.value_or(host_fd_);
}

int FakeRdma::Where(const std::string& name) const {
  auto it = devices_.find(name);
  return it == devices_.end() ? -1 : it->second;
}

void FakeRdma::NamespaceDied(int netns_fd) {
  for (auto& [name, fd] : devices_) {
    if (fd == netns_fd) fd = host_fd_;
  }
}

std::unique_ptr<os::Rdma> FakeRdma::ViewFrom(int netns_fd) {
  return std::make_unique<RdmaView>(this, netns_fd);
}

}  // namespace rocenet::testing
