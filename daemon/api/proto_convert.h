// SPDX-License-Identifier: Apache-2.0
// Conversion of domain values to their rocenet.v1 messages. Pure functions.
#pragma once

#include <optional>

#include "absl/time/time.h"
#include "daemon/node/snapshot.h"
#include "google/protobuf/timestamp.pb.h"
#include "rocenet/v1/health.pb.h"
#include "rocenet/v1/ports.pb.h"

namespace rocenet::api {

// `time` as a Timestamp, to the nanosecond.
void SetTime(absl::Time time, google::protobuf::Timestamp* out);

void ToProto(const inventory::Port& port, v1::Port* out);
// What `snapshot` knows of the port's PFC and its switch's; nullopt when
// nothing (never read, no counters).
std::optional<v1::PortPfc> PfcOf(const node::NodeSnapshot& snapshot, const inventory::Port& port);
// `port` with what `snapshot` knows of it beyond the inventory (its PFC).
void ToProto(const node::NodeSnapshot& snapshot, const inventory::Port& port, v1::Port* out);
void ToProto(const health::PortHealth& health, v1::PortHealth* out);
void ToProto(const health::NodeHealth& health, uint64_t generation, v1::NodeHealth* out);
void ToProto(const node::NodeSnapshot& snapshot, v1::PortSnapshot* out);

}  // namespace rocenet::api
