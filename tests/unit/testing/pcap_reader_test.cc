// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/testing/pcap_reader.h"

#include <cstdint>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::testutil {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

// Builds a capture file field by field, in either byte order.
class PcapBuilder {
 public:
  explicit PcapBuilder(bool big_endian, uint32_t magic = 0xa1b2c3d4) : big_endian_(big_endian) {
    U32(magic);
    U16(2);
    U16(4);
    U32(0);
    U32(0);
    U32(65535);
    U32(kLinkTypeEthernet);
  }

  PcapBuilder& Record(uint32_t seconds, uint32_t fraction, const std::string& data,
                      uint32_t original_length = 0) {
    U32(seconds);
    U32(fraction);
    U32(static_cast<uint32_t>(data.size()));
    U32(original_length != 0 ? original_length : static_cast<uint32_t>(data.size()));
    bytes_ += data;
    return *this;
  }

  std::string bytes() const { return bytes_; }

 private:
  void U16(uint16_t v) {
    const char hi = static_cast<char>(v >> 8), lo = static_cast<char>(v & 0xff);
    bytes_ += big_endian_ ? std::string{hi, lo} : std::string{lo, hi};
  }
  void U32(uint32_t v) {
    if (big_endian_) {
      U16(static_cast<uint16_t>(v >> 16));
      U16(static_cast<uint16_t>(v & 0xffff));
    } else {
      U16(static_cast<uint16_t>(v & 0xffff));
      U16(static_cast<uint16_t>(v >> 16));
    }
  }

  bool big_endian_;
  std::string bytes_;
};

TEST(PcapReaderTest, ParsesLittleEndianRecords) {
  const std::string bytes = PcapBuilder(false).Record(1, 2, "abc").Record(3, 4, "de").bytes();
  absl::StatusOr<PcapFile> file = ParsePcap(bytes);
  ASSERT_OK(file);
  EXPECT_EQ(file->link_type, kLinkTypeEthernet);
  EXPECT_EQ(file->snap_length, 65535u);
  ASSERT_THAT(file->records, SizeIs(2));
  EXPECT_EQ(file->records[0].data, "abc");
  EXPECT_EQ(file->records[0].timestamp_ns, 1'000'002'000);
  EXPECT_EQ(file->records[1].data, "de");
}

TEST(PcapReaderTest, ParsesBigEndianNanosecondRecords) {
  const std::string bytes = PcapBuilder(true, 0xa1b23c4d).Record(1, 2, "xyz").bytes();
  absl::StatusOr<PcapFile> file = ParsePcap(bytes);
  ASSERT_OK(file);
  ASSERT_THAT(file->records, SizeIs(1));
  EXPECT_EQ(file->records[0].data, "xyz");
  EXPECT_EQ(file->records[0].timestamp_ns, 1'000'000'002);
}

TEST(PcapReaderTest, RefusesPcapngAndGarbage) {
  EXPECT_EQ(ParsePcap(std::string("\x0a\x0d\x0d\x0a") + std::string(20, '\0')).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(ParsePcap(std::string(24, 'x')).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePcap("short").status().code(), absl::StatusCode::kDataLoss);
}

TEST(PcapReaderTest, RefusesRecordsThatRunPastTheEnd) {
  std::string bytes = PcapBuilder(false).Record(1, 2, "abcdef").bytes();
  bytes.pop_back();
  EXPECT_EQ(ParsePcap(bytes).status().code(), absl::StatusCode::kDataLoss);
  bytes = PcapBuilder(false).Record(1, 2, "abc").bytes();
  bytes += "0123";  // a record header cut short
  EXPECT_EQ(ParsePcap(bytes).status().code(), absl::StatusCode::kDataLoss);
}

TEST(PcapReaderTest, ReadsFixtureFrames) {
  absl::StatusOr<std::vector<std::string>> frames =
      ReadEthernetFrames(ROCENET_FIXTURE_DIR "/lldp/lldpd-exit.pcap");
  ASSERT_OK(frames);
  ASSERT_THAT(*frames, SizeIs(2));
  // The first frame goes to the nearest-bridge group address with EtherType LLDP.
  EXPECT_EQ((*frames)[0].substr(0, 6), std::string("\x01\x80\xc2\x00\x00\x0e", 6));
  EXPECT_EQ((*frames)[0].substr(12, 2), "\x88\xcc");
}

TEST(PcapReaderTest, ReportsMissingFileWithItsPath) {
  absl::StatusOr<PcapFile> file = ReadPcapFile("/nonexistent/x.pcap");
  EXPECT_EQ(file.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(file.status().message()), HasSubstr("/nonexistent/x.pcap"));
}

TEST(PcapReaderTest, KeepsTheOriginalLengthOfCutFrames) {
  const std::string bytes = PcapBuilder(false).Record(1, 2, "abc", 100).bytes();
  absl::StatusOr<PcapFile> file = ParsePcap(bytes);
  ASSERT_OK(file);
  EXPECT_THAT(file->records, ElementsAre(::testing::Field(&PcapRecord::original_length, 100u)));
}

}  // namespace
}  // namespace rocenet::testutil
