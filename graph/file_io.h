// Reading and writing a whole file, with the error a caller can pass on or reword: the one place the project does it.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace placement {

// The file's bytes. NOT_FOUND naming the path and the system's reason when it cannot be opened; DATA_LOSS when
// reading fails part way.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

// Replaces the file's contents. INVALID_ARGUMENT naming the path and the system's reason when it cannot be
// written (a missing folder, no permission, a full disk).
absl::Status WriteWholeFile(const std::string& path, const std::string& text);

}  // namespace placement
