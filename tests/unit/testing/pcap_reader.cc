// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/testing/pcap_reader.h"

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"
#include "daemon/common/status_macros.h"

namespace rocenet::testutil {
namespace {

constexpr size_t kFileHeaderSize = 24;
constexpr size_t kRecordHeaderSize = 16;
constexpr uint32_t kMagicMicroseconds = 0xa1b2c3d4;
constexpr uint32_t kMagicNanoseconds = 0xa1b23c4d;
constexpr uint32_t kMagicPcapng = 0x0a0d0d0a;

uint32_t Swap32(uint32_t v) {
  return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

// Reads a 32-bit field written in the capturing host's byte order, which the
// magic number tells.
class FieldReader {
 public:
  FieldReader(absl::string_view bytes, bool swapped) : bytes_(bytes), swapped_(swapped) {}

  uint32_t U32(size_t pos) const {
    uint32_t little = 0;
    for (size_t i = 0; i < 4; ++i) {
      little |= static_cast<uint32_t>(static_cast<uint8_t>(bytes_[pos + i])) << (8 * i);
    }
    return swapped_ ? Swap32(little) : little;
  }

 private:
  absl::string_view bytes_;
  bool swapped_;
};

}  // namespace

absl::StatusOr<PcapFile> ParsePcap(absl::string_view bytes) {
  if (bytes.size() < kFileHeaderSize) {
    return absl::DataLossError(absl::StrCat("pcap: ", bytes.size(), " bytes is too short"));
  }
  // Written little-endian by x86 hosts; a big-endian writer shows up swapped.
  const uint32_t magic = FieldReader(bytes, false).U32(0);
  bool swapped = false;
  bool nanoseconds = false;
  if (magic == kMagicMicroseconds || magic == kMagicNanoseconds) {
    nanoseconds = magic == kMagicNanoseconds;
  } else if (Swap32(magic) == kMagicMicroseconds || Swap32(magic) == kMagicNanoseconds) {
    swapped = true;
    nanoseconds = Swap32(magic) == kMagicNanoseconds;
  } else if (magic == kMagicPcapng) {
    return absl::UnimplementedError("pcap: pcapng files are not supported");
  } else {
    return absl::InvalidArgumentError(absl::StrCat("pcap: bad magic 0x", absl::Hex(magic)));
  }
  const FieldReader field(bytes, swapped);
  PcapFile file;
  file.snap_length = field.U32(16);
  file.link_type = field.U32(20) & 0xffff;  // the upper bits carry FCS flags

  size_t pos = kFileHeaderSize;
  while (pos < bytes.size()) {
    if (bytes.size() - pos < kRecordHeaderSize) {
      return absl::DataLossError(absl::StrCat("pcap: record header at ", pos, " is cut short"));
    }
    const uint32_t seconds = field.U32(pos);
    const uint32_t fraction = field.U32(pos + 4);
    const uint32_t included = field.U32(pos + 8);
    PcapRecord& record = file.records.emplace_back();
    record.original_length = field.U32(pos + 12);
    record.timestamp_ns = static_cast<int64_t>(seconds) * 1'000'000'000 +
                          static_cast<int64_t>(fraction) * (nanoseconds ? 1 : 1000);
    pos += kRecordHeaderSize;
    if (included > bytes.size() - pos) {
      return absl::DataLossError(absl::StrCat("pcap: record ", file.records.size(), " of ",
                                              included, " bytes runs past the end of the file"));
    }
    record.data = std::string(bytes.substr(pos, included));
    pos += included;
  }
  return file;
}

absl::StatusOr<PcapFile> ReadPcapFile(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (f == nullptr) return ErrnoToStatus(errno, absl::StrCat("open ", path));
  std::string bytes;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), f.get())) > 0) bytes.append(buffer, n);
  if (std::ferror(f.get())) return ErrnoToStatus(errno, absl::StrCat("read ", path));
  absl::StatusOr<PcapFile> file = ParsePcap(bytes);
  if (!file.ok()) {
    return absl::Status(file.status().code(), absl::StrCat(path, ": ", file.status().message()));
  }
  return file;
}

absl::StatusOr<std::vector<std::string>> ReadEthernetFrames(const std::string& path) {
  ASSIGN_OR_RETURN(PcapFile file, ReadPcapFile(path));
  if (file.link_type != kLinkTypeEthernet) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": link type ", file.link_type, " is not Ethernet"));
  }
  std::vector<std::string> frames;
  frames.reserve(file.records.size());
  for (PcapRecord& record : file.records) {
    if (record.data.size() != record.original_length) {
      return absl::DataLossError(
          absl::StrCat(path, ": frame ", frames.size() + 1, " was cut short by the snap length"));
    }
    frames.push_back(std::move(record.data));
  }
  return frames;
}

}  // namespace rocenet::testutil
