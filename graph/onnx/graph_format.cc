#include "graph/onnx/graph_format.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/graph_json.h"
#include "graph/onnx/onnx_import.h"
#include "graph/pipedream.h"
#include "graph/tarnawski.h"

namespace placement {

GraphFormat DetectGraphFormat(absl::string_view bytes) {
  if (LooksLikeOnnx(bytes)) return GraphFormat::kOnnx;
  if (LooksLikeGraphJson(bytes)) return GraphFormat::kGraphJson;
  if (LooksLikePipeDreamProfile(bytes)) return GraphFormat::kPipeDream;
  if (LooksLikeTarnawskiGraph(bytes)) return GraphFormat::kTarnawski;
  return GraphFormat::kUnknown;
}

std::string UnknownGraphFormatMessage(absl::string_view bytes) {
  if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(bytes), "{")) {
    return "JSON, but neither a placement.graph/v1 graph (a \"format\" key) nor a Tarnawski graph (\"nodes\", "
           "\"edges\" and \"maxFPGAs\")";
  }
  std::string start;
  for (size_t i = 0; i < std::min<size_t>(bytes.size(), 8); ++i) {
    absl::StrAppendFormat(&start, " %02x", static_cast<unsigned char>(bytes[i]));
  }
  return absl::StrCat("not ONNX, JSON or a Tarnawski graph (nor a PipeDream profile): ", bytes.size(), " bytes",
                      bytes.empty() ? "" : absl::StrCat(", starting", start));
}

}  // namespace placement
