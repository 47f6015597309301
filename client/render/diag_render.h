// SPDX-License-Identifier: Apache-2.0
// Tables for the diagnostics results. Pure: message in, text out;
// thread-safe.
#pragma once

#include <string>

#include "rocenet/v1/diagnostics.pb.h"

namespace rocenet::rocectl {

// Per port and target: loss, RTT percentiles, ARP; in mesh mode also the
// reachability matrix per rail; then the unreachable pairs and suspects.
std::string RenderReach(const v1::ReachResult& result);
// Whether a reach fell short of `ok` only for the nodes it could not test
// (their rocenet-diagd did not answer): what was tested passed.
bool ReachIncomplete(const v1::ReachResult& result);
std::string RenderBandwidth(const v1::BandwidthResult& result);
// Per rail: the size sweep (nccl-tests columns) and the ring's links.
std::string RenderAllreduce(const v1::AllreduceResult& result);
std::string RenderIncast(const v1::IncastResult& result);
// Per link: devices and GID indexes, the tool, Gb/s or latency, and what
// was skipped and why.
std::string RenderRdma(const v1::RdmaResult& result);

// "812us", "1.20ms", "-" for 0.
std::string FormatSeconds(double seconds);
// "9.41 Gb/s".
std::string FormatBits(double bits_per_second);
// "1K", "4M", "512".
std::string FormatBytes(uint64_t bytes);

}  // namespace rocenet::rocectl
