// SPDX-License-Identifier: Apache-2.0
// absl::Status -> grpc::Status at the gRPC boundary; both use the same
// numeric codes.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace rocenet::api {

inline grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

}  // namespace rocenet::api
