// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/rdma_link.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "daemon/diag/rdma_bench.h"

namespace rocenet::diag {
namespace {

RdmaBenchSpec SpecFor(const LocalPort& port, const RdmaParams& params) {
  RdmaBenchSpec spec;
  // Habana's NICs are driven through the hbl verbs provider.
  spec.tool =
      absl::StartsWith(port.rdma_device, "hbl") ? RdmaTool::kHblPerfTest : RdmaTool::kPerftest;
  spec.test = params.test == "write_lat" ? RdmaTest::kWriteLatency : RdmaTest::kWriteBandwidth;
  spec.device = port.rdma_device;
  spec.ib_port = port.rdma_port > 0 ? port.rdma_port : 1;
  spec.gid_index = port.gid_index;
  spec.tcp_port = params.tool_port;
  spec.bind = port.address.address();
  spec.message_bytes = params.message_bytes;
  spec.duration_seconds = static_cast<int>((params.duration_ms + 999) / 1000);
  spec.iterations = params.iterations;
  return spec;
}

// The tool's last words, for an error: its stderr, else its stdout's tail.
std::string Tail(const os::ProcessResult& result) {
  const std::string& text = result.err.empty() ? result.out : result.err;
  const size_t keep = 300;
  return text.size() <= keep ? text : text.substr(text.size() - keep);
}

}  // namespace

std::string RdmaLinks::SkipReason(const LocalPort& port) const {
  if (port.rdma_device.empty()) return absl::StrCat("no RDMA device on ", port.name);
  if (port.gid_index < 0) {
    return absl::StrCat(port.name, " (", port.rdma_device,
                        ") has no RoCE v2 GID for its address yet");
  }
  if (runner_ == nullptr) return "this rocenet-diagd cannot start programs";
  return "";
}

absl::StatusOr<RdmaLinks::Served> RdmaLinks::Serve(const LocalPort& port,
                                                   const RdmaParams& params) {
  Served served;
  peer::RdmaServeReady& ready = served.ready;
  ready.node = node_name_;
  ready.port = port.name;
  ready.device = port.rdma_device;
  ready.gid_index = port.gid_index;
  ready.address = port.address.address().ToString();
  if (std::string skip = SkipReason(port); !skip.empty()) {
    ready.skipped = absl::StrCat(node_name_, ": ", skip);
    return served;
  }
  RdmaBenchSpec spec = SpecFor(port, params);
  const std::string program = RdmaProgram(spec);
  ready.tool = program;
  absl::StatusOr<std::string> path = runner_->Find(program);
  if (!path.ok()) {
    ready.skipped = absl::StrCat(node_name_, ": ", path.status().message());
    return served;
  }
  absl::StatusOr<std::vector<std::string>> argv = RdmaBenchArgv(*path, spec);
  if (!argv.ok()) return argv.status();
  absl::StatusOr<std::unique_ptr<os::Process>> server = runner_->Start(*argv);
  if (!server.ok()) return server.status();
  if (!(*server)->WaitForOutput(RdmaServerReadyText(spec.tool),
                                clock_->Now() + kRdmaStartTimeout)) {
    (*server)->Stop();
    const os::ProcessResult result = (*server)->Wait(clock_->Now() + absl::Seconds(2));
    return absl::UnavailableError(absl::StrCat(node_name_, ": ", program, " on ", port.name,
                                               " did not start listening: ", Tail(result)));
  }
  served.server = std::move(*server);
  return served;
}

RdmaLink RdmaLinks::Measure(const LocalPort& port, const NodeAddress& peer,
                            const RdmaParams& params, CallGroup* stop) {
  RdmaLink link;
  link.rail = port.rail;
  link.from_node = node_name_;
  link.from_port = port.name;
  link.from_device = port.rdma_device;
  link.from_gid_index = port.gid_index;
  link.message_bytes = params.message_bytes;
  link.link_bits_per_second = static_cast<double>(port.speed_mbps) * 1e6;
  link.to_node = peer.ToString();
  if (std::string skip = SkipReason(port); !skip.empty()) {
    link.skipped = absl::StrCat(node_name_, ": ", skip);
    return link;
  }
  RdmaBenchSpec spec = SpecFor(port, params);
  const std::string program = RdmaProgram(spec);
  link.tool = program;
  absl::StatusOr<std::string> path = runner_->Find(program);
  if (!path.ok()) {
    link.skipped = absl::StrCat(node_name_, ": ", path.status().message());
    return link;
  }
  // The far end first: it must listen before the client connects.
  peer::PeerRequest request;
  peer::RdmaServe* serve = &request.kind.emplace<peer::RdmaServe>();
  serve->client_address = port.address.address().ToString();
  serve->rail = port.rail;
  serve->test = params.test;
  serve->message_bytes = params.message_bytes;
  serve->duration_ms = params.duration_ms;
  serve->iterations = params.iterations;
  serve->tool_port = params.tool_port;
  absl::StatusOr<peer::PeerReply> reply =
      peers_->Call(peer, request, clock_->Now() + kRdmaStartTimeout + absl::Seconds(3), stop);
  if (!reply.ok()) {
    link.error = std::string(reply.status().message());
    return link;
  }
  const peer::RdmaServeReady& ready = reply->rdma_ready;
  if (!ready.node.empty()) link.to_node = ready.node;
  link.to_port = ready.port;
  link.to_device = ready.device;
  link.to_gid_index = ready.gid_index;
  if (!ready.skipped.empty()) {
    link.skipped = ready.skipped;
    return link;
  }
  absl::StatusOr<Ipv4Address> server = Ipv4Address::Parse(ready.address);
  if (!server.ok()) {
    link.error = absl::StrCat(link.to_node, ": answered a server address that is not IPv4");
    return link;
  }
  spec.server = *server;
  absl::StatusOr<std::vector<std::string>> argv = RdmaBenchArgv(*path, spec);
  if (!argv.ok()) {
    link.error = std::string(argv.status().message());
    return link;
  }
  // perftest's server says it waits a moment before it listens, and its
  // client does not retry: a refused connection is tried again, briefly.
  os::ProcessResult result;
  absl::StatusOr<RdmaMeasure> measure = absl::UnavailableError("not run");
  for (int attempt = 0; attempt < kRdmaConnectAttempts && absl::IsUnavailable(measure.status());
       ++attempt) {
    if (attempt > 0) absl::SleepFor(absl::Milliseconds(300));
    if (stop != nullptr && stop->abandoned()) {
      link.error = "stopped on request";
      return link;
    }
    absl::StatusOr<std::unique_ptr<os::Process>> client = runner_->Start(*argv);
    if (!client.ok()) {
      link.error = std::string(client.status().message());
      return link;
    }
    // Stopped, the client goes at once: it is what sends the traffic.
    os::Process* running = client->get();
    const int member = stop != nullptr ? stop->Join([running] { running->Stop(); }) : -1;
    result = (*client)->Wait(clock_->Now() + absl::Milliseconds(params.duration_ms) + kRdmaSlack);
    if (stop != nullptr) stop->Leave(member);
    if (stop != nullptr && stop->abandoned()) {
      link.error = "stopped on request";
      return link;
    }
    if (result.timed_out) {
      link.error =
          absl::StrCat(program, " did not finish within ",
                       absl::FormatDuration(absl::Milliseconds(params.duration_ms) + kRdmaSlack));
      return link;
    }
    measure = ParseRdmaBenchOutput(spec.tool, spec.test, result.out, result.err);
  }
  if (!measure.ok()) {
    link.error =
        absl::StrCat(program, " (exit ", result.exit_code, "): ", measure.status().message());
    return link;
  }
  link.bits_per_second = measure->bits_per_second;
  link.latency_p50_seconds = measure->latency_p50_us / 1e6;
  link.latency_p99_seconds = measure->latency_p99_us / 1e6;
  if (link.link_bits_per_second > 0 && link.bits_per_second > 0) {
    link.fraction_of_link = link.bits_per_second / link.link_bits_per_second;
  }
  return link;
}

}  // namespace rocenet::diag
