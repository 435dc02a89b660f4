#include "server/request_log.h"

#include <unistd.h>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace placement::server {
namespace {

constexpr size_t kMaxClientIdBytes = 64;

bool UsableClientId(absl::string_view id) {
  if (id.empty() || id.size() > kMaxClientIdBytes) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == ':' || c == '-';
    if (!ok) return false;  // ids go into log lines: nothing that could forge or break a line
  }
  return true;
}

}  // namespace

std::string RequestIdFrom(absl::string_view client_id) {
  if (UsableClientId(client_id)) return std::string(client_id);
  thread_local absl::BitGen gen;
  return absl::StrFormat("%016x", absl::Uniform<uint64_t>(gen));
}

void LogLine(absl::string_view request_id, absl::string_view text) {
  std::string line = absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()), " [",
                                  request_id.empty() ? "server" : request_id, "] ");
  // Messages quote what clients sent (operator names, JSON); a control character must not start a fake line.
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      absl::StrAppend(&line, "\\x", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
    } else {
      line.push_back(c);
    }
  }
  line.push_back('\n');
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(STDERR_FILENO, line.data() + written, line.size() - written);
    if (n <= 0) return;  // nowhere to report a failing stderr
    written += static_cast<size_t>(n);
  }
}

}  // namespace placement::server
