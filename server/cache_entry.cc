#include "server/cache_entry.h"

#include <openssl/evp.h>

#include <array>
#include <cstring>

namespace placement::server {
namespace {

constexpr char kMagic[4] = {'P', 'L', 'C', 'A'};
constexpr size_t kChecksumBytes = 8;
constexpr size_t kHeaderBytes = sizeof(kMagic) + 4 + kChecksumBytes;

using Digest = std::array<unsigned char, 32>;

Digest Sha256(absl::string_view bytes) {
  Digest out{};
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), out.data(), &length, EVP_sha256(), nullptr);
  return out;
}

void PutU32(uint32_t v, char* out) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

uint32_t GetU32(const char* in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

}  // namespace

std::string EncodeCacheEntry(const placement::v1::PlaceResponse& response) {
  std::string payload;
  response.SerializeToString(&payload);
  std::string out(kHeaderBytes, '\0');
  std::memcpy(out.data(), kMagic, sizeof(kMagic));
  PutU32(kCacheFormatVersion, out.data() + sizeof(kMagic));
  const Digest d = Sha256(payload);
  std::memcpy(out.data() + sizeof(kMagic) + 4, d.data(), kChecksumBytes);
  out += payload;
  return out;
}

EntryState DecodeCacheEntry(absl::string_view bytes, placement::v1::PlaceResponse* response) {
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    return EntryState::kCorrupt;
  if (GetU32(bytes.data() + sizeof(kMagic)) != kCacheFormatVersion) return EntryState::kOtherVersion;
  const absl::string_view payload = bytes.substr(kHeaderBytes);
  const Digest d = Sha256(payload);
  if (std::memcmp(bytes.data() + sizeof(kMagic) + 4, d.data(), kChecksumBytes) != 0) return EntryState::kCorrupt;
  placement::v1::PlaceResponse parsed;
  if (!parsed.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) return EntryState::kCorrupt;
  *response = std::move(parsed);
  return EntryState::kValid;
}

}  // namespace placement::server
