// SPDX-License-Identifier: Apache-2.0
#include "client/cmd_diag.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "client/cmd_collective.h"
#include "client/connection.h"
#include "client/diag_args.h"
#include "client/exit_code.h"
#include "client/output.h"
#include "client/render/diag_render.h"
#include "daemon/common/status_macros.h"
#include "daemon/common/suggest.h"
#include "grpcpp/client_context.h"
#include "rocenet/v1/diagnostics.grpc.pb.h"

namespace rocenet::rocectl {
namespace {

using diag::Args;
using diag::Only;
using diag::SetDeadline;
using diag::Stream;

constexpr absl::string_view kDiagSummary =
    "  rocectl diag reach|bandwidth|allreduce|incast   triage tests over the scale-out ports\n"
    "  rocectl diag rdma                                the RDMA stage: perftest per link and "
    "rail\n"
    "  rocectl diag collective plan|report             hccl_demo as a Kubernetes job, and its "
    "log\n";

constexpr absl::string_view kDiagHelp =
    "Run a triage test over the scale-out ports, daemon to daemon. The local\n"
    "rocenet-diagd coordinates (its socket: --diag-socket, default diagd.sock\n"
    "beside rocenetd's); other nodes are named by their daemon's address: any of\n"
    "their scale-out port addresses (optionally ADDRESS:PORT when their data\n"
    "port is not 50153).\n"
    "\n"
    "Usage:\n"
    "  rocectl diag reach [--port so0,...] [--peers ADDR,...] [--count 5] [--interval 20ms]\n"
    "                     [--time-limit 5s]\n"
    "      from each port: ARP and ICMP echo to its gateway and echo to the peers in\n"
    "      its rail, small and full-size (the port's MTU, Don't Fragment); loss and\n"
    "      RTT p50/p90/p99.\n"
    "  rocectl diag reach --nodes NODE,NODE,... | --nodes-file FILE [--plan auto|mesh|rings]\n"
    "                     [--matrix] [--max-unvalidated 10%]\n"
    "      across nodes: every node probes its gateways and the peers the plan gives\n"
    "      it: mesh (every other node's port of the rail; auto up to 64 nodes) or\n"
    "      rings (two rings a rail, each port four peers, plus a mesh within each\n"
    "      leaf switch LLDP shows; auto above 64 nodes). Prints the plan, each\n"
    "      port's figures over its peers, the unreachable pairs and the suspects\n"
    "      (a port, leaf, leaf's uplink or rail every probe of which failed; the\n"
    "      same for the full-size echoes: a path with a smaller MTU; a port that\n"
    "      loses a share of its echoes), and apart, the nodes not tested (their\n"
    "      daemon did not answer: no suspect, labels kept); --matrix asks\n"
    "      for every target and prints a matrix per rail. A node is ADDR[+ADDR...]:\n"
    "      its daemon's addresses, tried in turn; --nodes-file has one a line. A\n"
    "      failed run takes the validation label from at most --max-unvalidated\n"
    "      nodes (a number, or a share; default 10%, at least 2): naming more, or\n"
    "      none, it changes no label; 0 (or 0%) changes no label at all.\n"
    "  rocectl diag bandwidth --port so0 --peer NODE [--streams 4] [--duration 2s]\n"
    "                     [--min-fraction 0.8] [--force-link-rate]\n"
    "      the ethernet stage: TCP streams through the port's netdev, to the peer\n"
    "      daemon then back; Gb/s each way and the share of the link speed (when the\n"
    "      port reports one). On Gaudi the netdev is the driver's control path, not\n"
    "      the RoCE data path: --min-fraction is applied there only with\n"
    "      --force-link-rate, and the RDMA stage (diag rdma) measures RoCE.\n"
    "  rocectl diag bandwidth --nodes NODE,NODE,... | --nodes-file FILE [--max-unvalidated 10%]\n"
    "                     [--streams 4] [--duration 2s] [--min-fraction 0.8] [--force-link-rate]\n"
    "      from each of this node's ports to the port of the same rail on every node\n"
    "      given, one pair at a time (at most 128 pairs), each both ways; one verdict\n"
    "      and one label circuit breaker for the run: a port whose every pair failed\n"
    "      is the suspect; a node whose daemon did not answer is not measured.\n"
    "  rocectl diag allreduce --nodes NODE,NODE,... [--min-bytes 1K] [--max-bytes 4M]\n"
    "                     [--step-factor 4] [--iterations 5] [--time-limit 20s]\n"
    "                     [--bisect [--min-fraction 0.9] [--expected-busbw GB/s]]\n"
    "      a ring all-reduce (float32 sum) per rail over the nodes in the order\n"
    "      given; per size the time, algbw = size/time and busbw = algbw*2(n-1)/n\n"
    "      (as nccl-tests reports them), each ring link's throughput and the\n"
    "      slowest one; a rail whose ring fails or runs out of time is BROKEN.\n"
    "      --bisect then finds the node that makes it slow: the halves of the order\n"
    "      run apart, then the slow half's halves, down to 2 or 3 nodes, each run\n"
    "      beside a good node. A group is slow when its ring breaks or its busbw is\n"
    "      below --min-fraction (0.9) of its sibling's or of --expected-busbw GB/s.\n"
    "  rocectl diag incast --port so0 --senders NODE,NODE,... [--streams 1] [--duration 2s]\n"
    "      every sender sends to this node's port at once: throughput per sender,\n"
    "      Jain's fairness index (1 fair .. 1/n one sender took all), TCP\n"
    "      retransmits of the senders and the port's receive drops.\n"
    "  rocectl diag rdma --port so0 --peer NODE | --nodes NODE,NODE,...\n"
    "                     [--test write_bw|write_lat] [--size 64K] [--duration 2s]\n"
    "                     [--min-fraction 0.8] [--iterations N] [--max-unvalidated 10%]\n"
    "      the RDMA stage: the RDMA benchmark (perftest's ib_write_bw/ib_write_lat,\n"
    "      Habana's tool on hbl devices) between the two ends of one link, or of\n"
    "      every link of a ring per rail, on each port's RDMA device and RoCE v2 GID;\n"
    "      the peer daemon starts the server end. Gb/s (or latency p50/p99) per link,\n"
    "      the slowest link of each rail, links below --min-fraction of their link\n"
    "      speed. A port without an RDMA device or a node without the tool is\n"
    "      skipped and says so, and a node none of whose links of a rail was measured\n"
    "      is not measured: it neither gains nor loses its label. A node both of whose\n"
    "      links of a rail failed is the suspect. Ports in pods take no part.\n"
    "      write_lat makes 50000 round trips per second of --duration unless\n"
    "      --iterations says how many (fewer for a slow link, e.g. soft RoCE, to end\n"
    "      within its bound).\n"
    "  rocectl diag collective plan --nodes NODE,NODE,... --image IMAGE [--engine mpijob|jobset]\n"
    "                     [--test all_reduce|all2all|both] [--gaudis-per-node 8]\n"
    "                     [--ports-per-node 24] [--network rocenet] [--namespace default]\n"
    "                     [--name hccl-demo] [--min-bytes 1M] [--max-bytes 256M] [--split 2|4|8]\n"
    "      prints the MPIJob (kubeflow.org/v2beta1) or JobSet (jobset.x-k8s.io/v1alpha2)\n"
    "      running Habana's hccl_demo, one worker per node; the image holds hccl_demo\n"
    "      (built with MPI=1 for mpijob) in its working directory. --ports-per-node\n"
    "      defaults to 24: 3 scale-out ports per Gaudi 2 or Gaudi 3 module, 8 modules.\n"
    "      --split K: K jobs over K groups of the nodes in order (NAME-K-0, ...), the\n"
    "      halves or quarters of a bisection, to run at once and report each.\n"
    "  rocectl diag collective report [FILE|-] [--platform gaudi2|gaudi3]\n"
    "                     [--expected-busbw GB/s] [--min-fraction 0.9] [--gaudis-per-node 8]\n"
    "      reads hccl_demo's log (kubectl logs ... | rocectl diag collective report -):\n"
    "      per test and size the time, algbw and busbw (hccl_demo's NW Bandwidth); the\n"
    "      largest size's busbw against Habana's published figure for the platform (or\n"
    "      --expected-busbw) times --min-fraction; ranks that failed the correctness\n"
    "      check; the slowest rank and its node when the log shows them. Exit 2 when\n"
    "      the input holds no hccl_demo output.\n"
    "\n"
    "Progress goes to stderr while the test runs. -o json and -o yaml print the\n"
    "result message (rocenet.v1.ReachResult, BandwidthResult, AllreduceResult,\n"
    "IncastResult). Every test has a size and a time bound the daemon enforces;\n"
    "a value beyond them is refused naming the field (exit 2).\n"
    "\n"
    "--max-unvalidated (bandwidth --nodes, allreduce and rdma too) bounds what a\n"
    "failed run may do to the validation labels, as for reach.\n"
    "\n"
    "SIGINT or SIGTERM (Ctrl-C, a pod's end) stops the test on every node: its\n"
    "traffic ends within a second, no label changes, and rocectl waits for every\n"
    "node to confirm (exit 9), or names those that did not (exit 1). A second\n"
    "signal stops waiting.\n"
    "\n"
    "Outcome: exit 0 everything passed; exit 6 the test ran and found a failure\n"
    "(unreachable pair, broken rail, failed stream, bandwidth below\n"
    "--min-fraction); exit 8 nothing failed but some nodes were not measured (no\n"
    "pass is claimed for them); exit 9 stopped on request, every node confirmed;\n"
    "exit 4 no such local port; exit 2 bad arguments; exit 3 rocenet-diagd\n"
    "unreachable.\n";

// The flags of `diag`, by name; the values are checked here.
const std::vector<CommandFlag>& DiagFlags() {
  static const auto* flags = new std::vector<CommandFlag>{{"nodes", "NODES", true},
                                                          {"nodes-file", "FILE", true},
                                                          {"plan", "auto mesh rings", true},
                                                          {"matrix", "", false},
                                                          {"max-unvalidated", "N|P%", true},
                                                          {"peers", "ADDRESSES", true},
                                                          {"port", "PORT", true},
                                                          {"peer", "NODE", true},
                                                          {"senders", "NODES", true},
                                                          {"count", "N", true},
                                                          {"interval", "DURATION", true},
                                                          {"time-limit", "DURATION", true},
                                                          {"streams", "N", true},
                                                          {"duration", "DURATION", true},
                                                          {"min-fraction", "FRACTION", true},
                                                          {"force-link-rate", "", false},
                                                          {"bisect", "", false},
                                                          {"size", "SIZE", true},
                                                          {"min-bytes", "SIZE", true},
                                                          {"max-bytes", "SIZE", true},
                                                          {"step-factor", "N", true},
                                                          {"iterations", "N", true},
                                                          {"image", "IMAGE", true},
                                                          {"engine", "mpijob jobset", true},
                                                          {"test", "all_reduce all2all both", true},
                                                          {"gaudis-per-node", "N", true},
                                                          {"ports-per-node", "N", true},
                                                          {"network", "NAME", true},
                                                          {"namespace", "NAMESPACE", true},
                                                          {"name", "NAME", true},
                                                          {"split", "2 4 8", true},
                                                          {"platform", "gaudi2 gaudi3", true},
                                                          {"expected-busbw", "GBPS", true}};
  return *flags;
}

// The nodes of --nodes-file: one a line, ADDR[+ADDR...] (a node's daemon
// addresses); blank lines and "#" comments ignored.
absl::StatusOr<std::vector<std::string>> NodesFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    return absl::InvalidArgumentError(
        absl::StrCat("flag --nodes-file: cannot read \"", path, "\": ", std::strerror(errno)));
  }
  std::vector<std::string> nodes;
  std::string line;
  while (std::getline(file, line)) {
    absl::string_view text = line;
    text = text.substr(0, text.find('#'));
    text = absl::StripAsciiWhitespace(text);
    if (!text.empty()) nodes.emplace_back(text);
  }
  if (file.bad()) {
    return absl::InvalidArgumentError(
        absl::StrCat("flag --nodes-file: cannot read \"", path, "\""));
  }
  return nodes;
}

absl::Status Reach(const CommandContext& context, const Args& args) {
  RETURN_IF_ERROR(Only(args,
                       {"nodes", "nodes-file", "plan", "matrix", "max-unvalidated", "peers", "port",
                        "count", "interval", "time-limit"},
                       "reach"));
  v1::ReachRequest request;
  for (const std::string& p : args.List("port")) request.add_ports(p);
  for (const std::string& p : args.List("peers")) request.add_peers(p);
  for (const std::string& n : args.List("nodes")) request.add_nodes(n);
  if (args.Has("nodes-file")) {
    ASSIGN_OR_RETURN(const std::vector<std::string> nodes, NodesFile(args.Get("nodes-file")));
    for (const std::string& n : nodes) request.add_nodes(n);
  }
  if (request.nodes().empty() &&
      (args.Has("plan") || args.Has("matrix") || args.Has("max-unvalidated"))) {
    return absl::InvalidArgumentError(
        "flags --plan, --matrix and --max-unvalidated need --nodes or --nodes-file");
  }
  request.set_plan(args.Get("plan"));
  request.set_matrix(args.Has("matrix"));
  RETURN_IF_ERROR(diag::SetMaxUnvalidated(args, &request));
  ASSIGN_OR_RETURN(const uint32_t count, args.Uint("count"));
  ASSIGN_OR_RETURN(const uint32_t interval, args.Millis("interval"));
  ASSIGN_OR_RETURN(const uint32_t limit, args.Millis("time-limit"));
  request.set_count(count);
  request.set_interval_ms(interval);
  request.set_timeout_ms(limit);
  ASSIGN_OR_RETURN(const GlobalOptions diagd, ForDiagd(context.options));
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(diagd));
  auto stub = v1::Diagnostics::NewStub(connection.channel());
  grpc::ClientContext rpc;
  SetDeadline(context, &rpc, limit == 0 ? 5000 : limit);
  auto reader = stub->Reach(&rpc, request);
  return Stream(context, connection, &rpc, reader.get(), "rocenet.v1.Diagnostics/Reach",
                &RenderReach, &v1::ReachEvent::result);
}

absl::Status Bandwidth(const CommandContext& context, const Args& args) {
  RETURN_IF_ERROR(Only(args,
                       {"port", "peer", "nodes", "nodes-file", "max-unvalidated", "streams",
                        "duration", "min-fraction", "force-link-rate"},
                       "bandwidth"));
  v1::BandwidthRequest request;
  request.set_port(args.Get("port"));
  request.set_peer(args.Get("peer"));
  for (const std::string& n : args.List("nodes")) request.add_nodes(n);
  if (args.Has("nodes-file")) {
    ASSIGN_OR_RETURN(const std::vector<std::string> nodes, NodesFile(args.Get("nodes-file")));
    for (const std::string& n : nodes) request.add_nodes(n);
  }
  if (request.nodes().empty() && args.Has("max-unvalidated")) {
    return absl::InvalidArgumentError("flag --max-unvalidated needs --nodes or --nodes-file");
  }
  RETURN_IF_ERROR(diag::SetMaxUnvalidated(args, &request));
  ASSIGN_OR_RETURN(const uint32_t streams, args.Uint("streams"));
  ASSIGN_OR_RETURN(const uint32_t duration, args.Millis("duration"));
  request.set_streams(streams);
  request.set_duration_ms(duration);
  if (args.Has("min-fraction")) {
    ASSIGN_OR_RETURN(const double fraction, args.Number("min-fraction"));
    request.set_min_fraction(fraction);
  }
  request.set_force_link_rate(args.Has("force-link-rate"));
  ASSIGN_OR_RETURN(const GlobalOptions diagd, ForDiagd(context.options));
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(diagd));
  auto stub = v1::Diagnostics::NewStub(connection.channel());
  grpc::ClientContext rpc;
  // Each pair both ways, one pair at a time: at most as many pairs as this
  // node has ports times the nodes, and kMaxBandwidthPairs.
  const uint32_t pairs = request.nodes().empty() ? 1 : 128;
  SetDeadline(context, &rpc, pairs * (2 * (duration == 0 ? 2000 : duration) + 3000));
  auto reader = stub->Bandwidth(&rpc, request);
  return Stream(context, connection, &rpc, reader.get(), "rocenet.v1.Diagnostics/Bandwidth",
                &RenderBandwidth, &v1::BandwidthEvent::result);
}

absl::Status Incast(const CommandContext& context, const Args& args) {
  RETURN_IF_ERROR(Only(args, {"port", "senders", "streams", "duration"}, "incast"));
  v1::IncastRequest request;
  request.set_port(args.Get("port"));
  for (const std::string& n : args.List("senders")) request.add_senders(n);
  ASSIGN_OR_RETURN(const uint32_t streams, args.Uint("streams"));
  ASSIGN_OR_RETURN(const uint32_t duration, args.Millis("duration"));
  request.set_streams(streams);
  request.set_duration_ms(duration);
  ASSIGN_OR_RETURN(const GlobalOptions diagd, ForDiagd(context.options));
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(diagd));
  auto stub = v1::Diagnostics::NewStub(connection.channel());
  grpc::ClientContext rpc;
  SetDeadline(context, &rpc, duration == 0 ? 2000 : duration);
  auto reader = stub->Incast(&rpc, request);
  return Stream(context, connection, &rpc, reader.get(), "rocenet.v1.Diagnostics/Incast",
                &RenderIncast, &v1::IncastEvent::result);
}

absl::Status RunDiag(const CommandContext& context, const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "collective") {
    return RunCollective(context, {args.begin() + 1, args.end()});
  }
  if (args.size() != 1) {
    return absl::InvalidArgumentError(
        "diag takes one test: reach, bandwidth, allreduce, incast, rdma or collective");
  }
  const Args flags{context.flags};
  if (args[0] == "reach") return Reach(context, flags);
  if (args[0] == "bandwidth") return Bandwidth(context, flags);
  if (args[0] == "allreduce") return diag::Allreduce(context, flags);
  if (args[0] == "incast") return Incast(context, flags);
  if (args[0] == "rdma") return diag::Rdma(context, flags);
  const std::string near =
      ClosestMatch(args[0], {"reach", "bandwidth", "allreduce", "incast", "rdma", "collective"});
  return absl::InvalidArgumentError(
      absl::StrCat("diag: unknown test \"", args[0], "\"",
                   near.empty() ? "" : absl::StrCat("; did you mean \"", near, "\"?"),
                   "; use reach, bandwidth, allreduce, incast, rdma or collective"));
}

}  // namespace

const Command& DiagCommand() {
  static const Command command{"diag", kDiagSummary, kDiagHelp, &RunDiag, DiagFlags()};
  return command;
}

}  // namespace rocenet::rocectl
