// SPDX-License-Identifier: Apache-2.0
// The diagnostics' proto edge: their own types (messages.h,
// peer_messages.h) to and from the generated messages, for rocenet-diagd's
// gRPC service (rocenet.v1) and the data port's frames (rocenet.peer.v1).
// Every field is carried both ways; a unit test fills every field of every
// message and checks the round trip. Pure.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/diag/messages.h"
#include "daemon/diag/peer_messages.h"
#include "rocenet/peer/v1/peer.pb.h"
#include "rocenet/v1/diagnostics.pb.h"

namespace rocenet::diag::wire {

namespace api_pb = ::rocenet::v1;
namespace peer_pb = ::rocenet::peer::v1;

api_pb::StagePath ToProto(const StagePath& d);
StagePath FromProto(const api_pb::StagePath& p);
api_pb::CounterChange ToProto(const CounterChange& d);
CounterChange FromProto(const api_pb::CounterChange& p);
api_pb::RunCounters ToProto(const RunCounters& d);
RunCounters FromProto(const api_pb::RunCounters& p);
api_pb::ReachRequest ToProto(const ReachRequest& d);
ReachRequest FromProto(const api_pb::ReachRequest& p);
api_pb::ReachTarget ToProto(const ReachTarget& d);
ReachTarget FromProto(const api_pb::ReachTarget& p);
api_pb::PortReach ToProto(const PortReach& d);
PortReach FromProto(const api_pb::PortReach& p);
api_pb::UnreachablePair ToProto(const UnreachablePair& d);
UnreachablePair FromProto(const api_pb::UnreachablePair& p);
api_pb::RailPlan ToProto(const RailPlan& d);
RailPlan FromProto(const api_pb::RailPlan& p);
api_pb::ReachPlan ToProto(const ReachPlan& d);
ReachPlan FromProto(const api_pb::ReachPlan& p);
api_pb::Suspect ToProto(const Suspect& d);
Suspect FromProto(const api_pb::Suspect& p);
api_pb::NodeNotTested ToProto(const NodeNotTested& d);
NodeNotTested FromProto(const api_pb::NodeNotTested& p);
api_pb::Labels ToProto(const Labels& d);
Labels FromProto(const api_pb::Labels& p);
api_pb::UnmeasuredNode ToProto(const UnmeasuredNode& d);
UnmeasuredNode FromProto(const api_pb::UnmeasuredNode& p);
api_pb::ReachResult ToProto(const ReachResult& d);
ReachResult FromProto(const api_pb::ReachResult& p);
api_pb::BandwidthRequest ToProto(const BandwidthRequest& d);
BandwidthRequest FromProto(const api_pb::BandwidthRequest& p);
api_pb::StreamResult ToProto(const StreamResult& d);
StreamResult FromProto(const api_pb::StreamResult& p);
api_pb::DirectionResult ToProto(const DirectionResult& d);
DirectionResult FromProto(const api_pb::DirectionResult& p);
api_pb::BandwidthPair ToProto(const BandwidthPair& d);
BandwidthPair FromProto(const api_pb::BandwidthPair& p);
api_pb::BandwidthResult ToProto(const BandwidthResult& d);
BandwidthResult FromProto(const api_pb::BandwidthResult& p);
api_pb::AllreduceRequest ToProto(const AllreduceRequest& d);
AllreduceRequest FromProto(const api_pb::AllreduceRequest& p);
api_pb::AllreduceSize ToProto(const AllreduceSize& d);
AllreduceSize FromProto(const api_pb::AllreduceSize& p);
api_pb::RingLink ToProto(const RingLink& d);
RingLink FromProto(const api_pb::RingLink& p);
api_pb::RailResult ToProto(const RailResult& d);
RailResult FromProto(const api_pb::RailResult& p);
api_pb::BisectionStep ToProto(const BisectionStep& d);
BisectionStep FromProto(const api_pb::BisectionStep& p);
api_pb::AllreduceResult ToProto(const AllreduceResult& d);
AllreduceResult FromProto(const api_pb::AllreduceResult& p);
api_pb::IncastRequest ToProto(const IncastRequest& d);
IncastRequest FromProto(const api_pb::IncastRequest& p);
api_pb::IncastSender ToProto(const IncastSender& d);
IncastSender FromProto(const api_pb::IncastSender& p);
api_pb::IncastResult ToProto(const IncastResult& d);
IncastResult FromProto(const api_pb::IncastResult& p);
api_pb::RdmaRequest ToProto(const RdmaRequest& d);
RdmaRequest FromProto(const api_pb::RdmaRequest& p);
api_pb::RdmaLink ToProto(const RdmaLink& d);
RdmaLink FromProto(const api_pb::RdmaLink& p);
api_pb::RdmaResult ToProto(const RdmaResult& d);
RdmaResult FromProto(const api_pb::RdmaResult& p);

peer_pb::PeerEnvelope ToProto(const peer::PeerEnvelope& d);
peer::PeerEnvelope FromProto(const peer_pb::PeerEnvelope& p);
peer_pb::PeerAuth ToProto(const peer::PeerAuth& d);
peer::PeerAuth FromProto(const peer_pb::PeerAuth& p);
peer_pb::PeerRequest ToProto(const peer::PeerRequest& d);
peer::PeerRequest FromProto(const peer_pb::PeerRequest& p);
peer_pb::PeerReply ToProto(const peer::PeerReply& d);
peer::PeerReply FromProto(const peer_pb::PeerReply& p);
peer_pb::PeerInfoRequest ToProto(const peer::PeerInfoRequest& d);
peer::PeerInfoRequest FromProto(const peer_pb::PeerInfoRequest& p);
peer_pb::PeerPort ToProto(const peer::PeerPort& d);
peer::PeerPort FromProto(const peer_pb::PeerPort& p);
peer_pb::PeerInfo ToProto(const peer::PeerInfo& d);
peer::PeerInfo FromProto(const peer_pb::PeerInfo& p);
peer_pb::RingJoin ToProto(const peer::RingJoin& d);
peer::RingJoin FromProto(const peer_pb::RingJoin& p);
peer_pb::RingHello ToProto(const peer::RingHello& d);
peer::RingHello FromProto(const peer_pb::RingHello& p);
peer_pb::RingReport ToProto(const peer::RingReport& d);
peer::RingReport FromProto(const peer_pb::RingReport& p);
peer_pb::SinkRequest ToProto(const peer::SinkRequest& d);
peer::SinkRequest FromProto(const peer_pb::SinkRequest& p);
peer_pb::SinkReport ToProto(const peer::SinkReport& d);
peer::SinkReport FromProto(const peer_pb::SinkReport& p);
peer_pb::SourceRequest ToProto(const peer::SourceRequest& d);
peer::SourceRequest FromProto(const peer_pb::SourceRequest& p);
peer_pb::SendRequest ToProto(const peer::SendRequest& d);
peer::SendRequest FromProto(const peer_pb::SendRequest& p);
peer_pb::SendReport ToProto(const peer::SendReport& d);
peer::SendReport FromProto(const peer_pb::SendReport& p);
peer_pb::RdmaServe ToProto(const peer::RdmaServe& d);
peer::RdmaServe FromProto(const peer_pb::RdmaServe& p);
peer_pb::RdmaServeReady ToProto(const peer::RdmaServeReady& d);
peer::RdmaServeReady FromProto(const peer_pb::RdmaServeReady& p);
peer_pb::RdmaRun ToProto(const peer::RdmaRun& d);
peer::RdmaRun FromProto(const peer_pb::RdmaRun& p);
peer_pb::ValidationNotice ToProto(const peer::ValidationNotice& d);
peer::ValidationNotice FromProto(const peer_pb::ValidationNotice& p);
peer_pb::CountersRequest ToProto(const peer::CountersRequest& d);
peer::CountersRequest FromProto(const peer_pb::CountersRequest& p);
peer_pb::PortCounterValues ToProto(const peer::PortCounterValues& d);
peer::PortCounterValues FromProto(const peer_pb::PortCounterValues& p);
peer_pb::CountersReport ToProto(const peer::CountersReport& d);
peer::CountersReport FromProto(const peer_pb::CountersReport& p);

// The peer protocol's messages as the bytes a data port frame carries, and
// back. Parsing fails with InvalidArgument: "malformed frame" (an envelope
// or a reply), "request does not parse" (the signed request inside).
std::string SerializeEnvelope(const peer::PeerEnvelope& envelope);
absl::StatusOr<peer::PeerEnvelope> ParseEnvelope(absl::string_view bytes);
std::string SerializeRequest(const peer::PeerRequest& request);
absl::StatusOr<peer::PeerRequest> ParseRequest(absl::string_view bytes);
std::string SerializeReply(const peer::PeerReply& reply);
absl::StatusOr<peer::PeerReply> ParseReply(absl::string_view bytes);

}  // namespace rocenet::diag::wire
