// Which flags each placectl command takes. A flag that does not apply to the command it is given with is a usage
// error that names the command's flags, rather than a setting silently ignored (`place --chart`, `import
// --devices`).
#pragma once

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

// INVALID_ARGUMENT naming the flag when --batch, --seq or --micro_batch is given a count that is not positive.
absl::Status CheckCountsGiven(int argc, char** argv);

// INVALID_ARGUMENT naming the flag when --precision or --devices is given a value that does not parse (an unknown
// precision, a device preset that does not exist), before any file is read: a usage error, not a bad input.
absl::Status CheckValuesParse(int argc, char** argv);

}  // namespace placement::cli
