// Renders a server's answers (PlaceResponse, SimulateResponse) the way the offline commands render theirs
// (client/report.h): the same JSON keys, so scripts read `placectl place --local` and `placectl submit` alike,
// plus what only a server knows (cache_hit, request_id, policy_version, compute_seconds).
#pragma once

#include <string>

#include "placement/v1/placement.pb.h"

namespace placement::cli {

std::string PlaceAnswerJson(const placement::v1::PlaceResponse& answer);
std::string PlaceAnswerTable(const placement::v1::PlaceResponse& answer);

std::string SimulateAnswerJson(const placement::v1::SimulateResponse& answer);
std::string SimulateAnswerTable(const placement::v1::SimulateResponse& answer);

}  // namespace placement::cli
