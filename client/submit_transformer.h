// placectl submit of a Hugging Face config.json: what the request needs besides the file (--training, --plan only
// with a config), and the server's answer (PlaceResponse.transformer) shown as `placectl place` shows the same
// search run locally (transformer_report.h): the table, or JSON placement.transformer_plan/v1.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/remote_commands.h"
#include "client/rpc_request.h"
#include "placement/v1/placement.pb.h"

namespace placement::cli {

// Usage errors: --plan for a file that is no config.json; a config.json without --training (the server plans a
// training step; `placectl place` places the forward graph) or --batch, or with --chart (the answer has no stage
// times; place draws the chart locally).
absl::Status CheckTransformerSubmit(const GraphPayload& payload, const SubmitOptions& options);

// The answer in placectl place's words. `config_text` is the config.json sent, read again here for the model's
// description; `output` "table" or "json".
absl::StatusOr<std::string> TransformerAnswerText(const placement::v1::PlaceResponse& answer,
                                                  const std::string& config_text, const std::string& config_path,
                                                  const std::string& output);

}  // namespace placement::cli
