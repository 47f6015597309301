// SPDX-License-Identifier: Apache-2.0
// The diagnostics' proto edge carries every field both ways: each message
// is filled field by field through protobuf's reflection (so a field added
// to a .proto is filled too), converted to the domain type and back, and
// must come back equal. A field the converters forget fails here.
#include <string>

#include "absl/strings/str_cat.h"
#include "daemon/diag/wire/convert.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::diag::wire {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// Sets every field of `message` to a value unlike its default (two entries
// for a repeated one), nested messages too. Of a oneof, only `oneof_case`
// (its field number; 0: the first) is set.
void Fill(Message* message, int oneof_case = 0, int depth = 0) {
  const google::protobuf::Descriptor* d = message->GetDescriptor();
  const google::protobuf::Reflection* r = message->GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->real_containing_oneof() != nullptr) {
      const FieldDescriptor* first = f->real_containing_oneof()->field(0);
      if (oneof_case == 0 ? f != first : f->number() != oneof_case) continue;
    }
    const int n = f->number() + depth * 100;
    const int count = f->is_repeated() ? 2 : 1;
    for (int k = 0; k < count; ++k) {
      const int v = n + k;
      switch (f->cpp_type()) {
        case FieldDescriptor::CPPTYPE_STRING: {
          const std::string s = absl::StrCat(f->name(), "-", v);
          f->is_repeated() ? r->AddString(message, f, s) : r->SetString(message, f, s);
          break;
        }
        case FieldDescriptor::CPPTYPE_BOOL:
          f->is_repeated() ? r->AddBool(message, f, true) : r->SetBool(message, f, true);
          break;
        case FieldDescriptor::CPPTYPE_UINT32:
          f->is_repeated() ? r->AddUInt32(message, f, v) : r->SetUInt32(message, f, v);
          break;
        case FieldDescriptor::CPPTYPE_UINT64:
          f->is_repeated() ? r->AddUInt64(message, f, v) : r->SetUInt64(message, f, v);
          break;
        case FieldDescriptor::CPPTYPE_INT32:
          f->is_repeated() ? r->AddInt32(message, f, -v) : r->SetInt32(message, f, -v);
          break;
        case FieldDescriptor::CPPTYPE_INT64:
          f->is_repeated() ? r->AddInt64(message, f, -v) : r->SetInt64(message, f, -v);
          break;
        case FieldDescriptor::CPPTYPE_DOUBLE:
          f->is_repeated() ? r->AddDouble(message, f, v + 0.5) : r->SetDouble(message, f, v + 0.5);
          break;
        case FieldDescriptor::CPPTYPE_MESSAGE:
          if (depth < 3) {
            Message* m =
                f->is_repeated() ? r->AddMessage(message, f) : r->MutableMessage(message, f);
            Fill(m, 0, depth + 1);
            // A map's two entries need two keys, or they are one entry.
            if (f->is_map()) {
              const FieldDescriptor* key = f->message_type()->map_key();
              ASSERT_EQ(key->cpp_type(), FieldDescriptor::CPPTYPE_STRING) << f->full_name();
              m->GetReflection()->SetString(m, key, absl::StrCat("key-", v));
            }
          }
          break;
        default:
          ADD_FAILURE() << "a field type the converters' test does not fill: " << f->full_name();
      }
    }
  }
}

template <typename Proto>
void ExpectRoundTrip(int oneof_case = 0) {
  Proto original;
  Fill(&original, oneof_case);
  const Proto back = ToProto(FromProto(original));
  std::string differences;
  google::protobuf::util::MessageDifferencer differ;
  differ.ReportDifferencesToString(&differences);
  EXPECT_TRUE(differ.Compare(original, back))
      << Proto::descriptor()->full_name() << " (case " << oneof_case << "): " << differences;
}

TEST(WireTest, EveryApiMessageCarriesEveryField) {
  ExpectRoundTrip<api_pb::ReachRequest>();
  ExpectRoundTrip<api_pb::ReachResult>();
  ExpectRoundTrip<api_pb::BandwidthRequest>();
  ExpectRoundTrip<api_pb::BandwidthResult>();
  ExpectRoundTrip<api_pb::AllreduceRequest>();
  ExpectRoundTrip<api_pb::AllreduceResult>();
  ExpectRoundTrip<api_pb::IncastRequest>();
  ExpectRoundTrip<api_pb::IncastResult>();
  ExpectRoundTrip<api_pb::RdmaRequest>();
  ExpectRoundTrip<api_pb::RdmaResult>();
}

TEST(WireTest, AnRdmaRequestWithoutMinFractionStaysWithout) {
  api_pb::RdmaRequest request;
  request.set_port("so0");
  const RdmaRequest domain = FromProto(request);
  EXPECT_FALSE(domain.min_fraction.has_value());
  EXPECT_FALSE(ToProto(domain).has_min_fraction());
  request.set_min_fraction(0);
  EXPECT_EQ(FromProto(request).min_fraction, 0.0);
  EXPECT_TRUE(ToProto(FromProto(request)).has_min_fraction());
}

TEST(WireTest, EveryPeerMessageAndEveryKindOfRequestCarriesEveryField) {
  ExpectRoundTrip<peer_pb::PeerEnvelope>();
  ExpectRoundTrip<peer_pb::PeerReply>();
  const google::protobuf::OneofDescriptor* kind =
      peer_pb::PeerRequest::descriptor()->FindOneofByName("kind");
  ASSERT_NE(kind, nullptr);
  for (int i = 0; i < kind->field_count(); ++i) {
    ExpectRoundTrip<peer_pb::PeerRequest>(kind->field(i)->number());
  }
}

TEST(WireTest, TheDataPortsBytesComeBackAsTheyWent) {
  peer_pb::PeerReply reply;
  Fill(&reply);
  ASSERT_OK_AND_ASSIGN(peer::PeerReply parsed, ParseReply(reply.SerializeAsString()));
  // The same message back: compared as messages, since a map's entries
  // may be serialized in any order.
  peer_pb::PeerReply back;
  ASSERT_TRUE(back.ParseFromString(SerializeReply(parsed)));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back, reply));
  EXPECT_EQ(parsed, FromProto(reply));
  peer_pb::PeerRequest request;
  Fill(&request, peer_pb::PeerRequest::kSend);
  ASSERT_OK_AND_ASSIGN(peer::PeerRequest parsed_request, ParseRequest(request.SerializeAsString()));
  ASSERT_NE(parsed_request.as<peer::SendRequest>(), nullptr);
  EXPECT_EQ(parsed_request.as<peer::SendRequest>()->streams, request.send().streams());
}

TEST(WireTest, BytesThatAreNoMessageAreRefusedByName) {
  EXPECT_THAT(ParseRequest("\xff\xff\xff"),
              ::rocenet::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                           ::testing::HasSubstr("request does not parse")));
  EXPECT_THAT(ParseReply("\x0a\x05"
                         "ab"),
              ::rocenet::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                           ::testing::HasSubstr("malformed frame")));
}

}  // namespace
}  // namespace rocenet::diag::wire
