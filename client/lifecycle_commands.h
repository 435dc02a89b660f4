// The placectl commands of the learned policy's life cycle: train (on the user's graphs, in placectl-torch),
// curve (draw a learning curve's TSV as SVG) and reload (swap a server's weights: the ReloadPolicy RPC). Their
// flags are defined beside them; main hands them the command line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "client/graph_loader.h"

namespace placement::cli {

// The exit code when `command` is one of them, nullopt otherwise. `operands`: the arguments after the command;
// `load`: the graph-reading flags; `argv`: the whole command line (handed to placectl-torch).
std::optional<int> RunLifecycleCommand(const std::string& command, const std::vector<std::string>& operands,
                                       const GraphLoadOptions& load, char** argv);

}  // namespace placement::cli
