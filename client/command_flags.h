// Which flags each placectl command takes. A flag that does not apply to the command it is given with is a usage
// error that names the command's flags, rather than a setting silently ignored (`place --chart`, `import
// --devices`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace placement::cli {

// The flags `command` takes, sorted; empty for an unknown command.
std::vector<std::string> FlagsOf(absl::string_view command);

// INVALID_ARGUMENT naming the first flag on the command line (argv, as main received it) that `command` does not
// take, with the flags it does take. absl's own flags (--help, --flagfile, ...) apply to every command.
absl::Status CheckFlagsApply(absl::string_view command, int argc, char** argv);

// INVALID_ARGUMENT naming the first flag on the command line (argv, before absl parses it) that no command takes,
// with the nearest spelling among the flags of the command given (all of placectl's when none is recognised):
// "unknown flag --device; did you mean --devices?".
absl::Status CheckFlagsKnown(int argc, char** argv);

// A flag on the command line: its registered name ("--noX" is X), and its value as written ("--name=value", or the
// next argument for a flag that is not a boolean); none for a boolean without "=" or a flag last on the line.
struct FlagGiven {
  std::string name;
  std::optional<std::string> value;
};

// The flags of the command line (argv, as main received it), in order; what is not a registered flag is left out.
std::vector<FlagGiven> FlagsGiven(int argc, char** argv);

}  // namespace placement::cli
