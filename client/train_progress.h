// The progress of `placectl train` on stderr: on a terminal a bar redrawn in place, else a line every half
// minute, both with the share done, the iteration, the current and best validation ratio, and the time left.
#pragma once

#include <string>

#include "absl/time/time.h"
#include "policy/learned/trainer.h"

namespace placement::cli {

class ProgressBar {
 public:
  explicit ProgressBar(bool overwrite) : overwrite_(overwrite) {}

  void Update(const learned::TrainerProgress& p);
  // A line of its own (a skipped input), above the bar.
  void Note(const std::string& line);
  // Ends the bar's line.
  void Finish();

  // The text of the bar for `p` (width: the bar's cells).
  static std::string Render(const learned::TrainerProgress& p, int width = 30);

 private:
  bool overwrite_;
  bool drawn_ = false;
  absl::Time last_ = absl::InfinitePast();
};

}  // namespace placement::cli
