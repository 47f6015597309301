// Conversion of domain values to their rocenet.v1 messages. Pure functions.
#pragma once

#include "daemon/api/node_state.h"
#include "rocenet/v1/health.pb.h"
#include "rocenet/v1/ports.pb.h"

namespace rocenet::api {

void ToProto(const inventory::Port& port, v1::Port* out);
void ToProto(const health::PortHealth& health, v1::PortHealth* out);
void ToProto(const health::NodeHealth& health, uint64_t generation, v1::NodeHealth* out);
void ToProto(const NodeSnapshot& snapshot, v1::PortSnapshot* out);

}  // namespace rocenet::api
