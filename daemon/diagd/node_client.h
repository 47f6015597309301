// SPDX-License-Identifier: Apache-2.0
// NodeClient: rocenet-diagd's one view of rocenetd, its WatchPorts stream.
// Every snapshot on it is the whole node at one generation (ports and
// addressing plans), so diagd learns the ports it tests from the daemon that
// configures them and never reads or changes that configuration itself.
//
// The interface lets NodeWatch's reconnect and backoff be tested with a fake;
// MakeGrpcNodeClient() is the real one, over rocenetd's unix socket.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "rocenet/v1/ports.pb.h"

namespace rocenet::diagd {

class NodeStream {
 public:
  virtual ~NodeStream() = default;
  // Blocks for the next snapshot; false once the stream has ended.
  virtual bool Read(v1::PortSnapshot* snapshot) = 0;
  // Any thread: makes a blocked or later Read return false.
  virtual void Cancel() = 0;
  // After Read returned false: why the stream ended.
  virtual absl::Status Finish() = 0;
};

class NodeClient {
 public:
  virtual ~NodeClient() = default;
  // Opens a new stream; connection errors show as a stream that ends at
  // once with the reason in Finish().
  virtual std::unique_ptr<NodeStream> Watch() = 0;
};

std::unique_ptr<NodeClient> MakeGrpcNodeClient(const std::string& socket);

}  // namespace rocenet::diagd
