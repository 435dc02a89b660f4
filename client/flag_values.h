// What each placectl flag's value may be: a value of the flag's type, a count or fraction in its range, one of the
// words an enumerated flag takes, a duration, a cluster. Checked before any file is read, so that a bad value is a
// usage error (exit 2) naming the flag, and the nearest word where one is meant, rather than a bad input, a value
// silently replaced by the default, or absl's own report (exit 1, no suggestion).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace placement::cli {

// Before absl parses the command line (argv, as main received it): each flag given has a value, and the value parses
// as the flag's type ("--seed abc", "--batch" last on the line, "--local=maybe").
absl::Status CheckValuesTyped(int argc, char** argv);

// After absl parsed it, for the flags given (on the line, in its order, then in a --flagfile): each value is one
// `command` takes.
absl::Status CheckValuesValid(absl::string_view command, int argc, char** argv);

// --`flag`'s `text` as a duration above zero ("500ms", "2s", "1m"), or a usage error naming the flag.
absl::StatusOr<absl::Duration> ParsePositiveDuration(const std::string& flag, const std::string& text);

}  // namespace placement::cli
