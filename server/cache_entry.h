// The bytes of one cached answer: a header that lets a reader tell a good entry from a damaged or outdated
// one, then the serialized PlaceResponse.
//
//   offset 0   4 bytes   magic "PLCA"
//   offset 4   4 bytes   format version, little-endian (kCacheFormatVersion)
//   offset 8   8 bytes   the first 8 bytes of SHA-256(payload)
//   offset 16  payload   placement.v1.PlaceResponse, serialized
//
// A reader treats anything else (short, wrong magic, another version, a checksum or parse failure) as a miss:
// the cache may lose answers but never serves a wrong one. Bump the version whenever the meaning of a stored
// response changes; entries of other versions then read as misses and age out.
#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "graph/canonical.h"
#include "placement/v1/placement.pb.h"

namespace placement::server {

// 2: answers of the memory model that keeps what autograd saves, with each device's memory by kind; a version 1
// answer of the same request holds other memory figures, so it misses. 3: plans with DistributedDataParallel's
// bucketed all-reduce, their memory by kind per replica and their micro-batch size. 4: a training step on several
// accelerators left to the service is answered with the fastest plan at its global batch, and the fused kernels of
// spelled-out patterns are priced once. 5: answers carry PlaceResponse.transformer, a config.json's training plan
// (PlaceRequest.hf_config).
inline constexpr uint32_t kCacheFormatVersion = 5;

std::string EncodeCacheEntry(const placement::v1::PlaceResponse& response);

enum class EntryState { kValid, kCorrupt, kOtherVersion };

// Fills *response only for kValid.
EntryState DecodeCacheEntry(absl::string_view bytes, placement::v1::PlaceResponse* response);

// The cache key and the checksum use it.
using ::placement::Sha256Hex;

}  // namespace placement::server
