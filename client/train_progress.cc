#include "client/train_progress.h"

#include <algorithm>
#include <cmath>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace placement::cli {
namespace {

// How often the bar is redrawn on a terminal, and a line written elsewhere.
constexpr absl::Duration kRedraw = absl::Milliseconds(200);
constexpr absl::Duration kLogLine = absl::Seconds(30);

std::string Clock(double seconds) {
  const int64_t s = static_cast<int64_t>(std::max(0.0, std::round(seconds)));
  if (s >= 3600) return absl::StrFormat("%dh%02dm", s / 3600, s / 60 % 60);
  return absl::StrFormat("%dm%02ds", s / 60, s % 60);
}

}  // namespace

std::string ProgressBar::Render(const learned::TrainerProgress& p, int width) {
  const double done = std::clamp(p.fraction, 0.0, 1.0);
  const int filled = static_cast<int>(done * width);
  std::string bar(static_cast<size_t>(filled), '=');
  if (filled < width) bar += '>';
  bar.resize(static_cast<size_t>(width), ' ');
  const std::string eta = done > 0 ? Clock(p.seconds * (1 - done) / done) : "?";
  return absl::StrFormat("[%s] %3.0f%%  iteration %d  validation %.4f (start %.4f, best %.4f)  %s elapsed, ETA %s", bar,
                         100 * done, p.iteration, p.last_validation, p.start_validation, p.best_validation,
                         Clock(p.seconds), eta);
}

void ProgressBar::Update(const learned::TrainerProgress& p) {
  const absl::Time now = absl::Now();
  if (now - last_ < (overwrite_ ? kRedraw : kLogLine)) return;
  last_ = now;
  std::cerr << (overwrite_ ? "\r\033[K" : "") << Render(p) << (overwrite_ ? "" : "\n") << std::flush;
  drawn_ = overwrite_;
}

void ProgressBar::Note(const std::string& line) {
  std::cerr << (drawn_ ? "\r\033[K" : "") << line << "\n" << std::flush;
  drawn_ = false;
}

void ProgressBar::Finish() {
  if (drawn_) std::cerr << "\n" << std::flush;
  drawn_ = false;
}

}  // namespace placement::cli
