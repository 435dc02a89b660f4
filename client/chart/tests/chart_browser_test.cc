// The chart as a browser draws it: headless Chromium loads the page from a file, takes a screenshot and dumps
// the DOM it parsed. The screenshot must show a drawing (not a blank or an error page) and the DOM must hold
// every bar the HTML has, with names still escaped. Without Chromium the tests skip, except under CI (which
// installs it with scripts/deps.sh), where they fail. PLACEMENT_CHART_OUTPUT_DIR, when set, receives the
// page and its screenshot for people to look at.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/chart/schedule_chart.h"
#include "client/chart/tests/chart_test_support.h"
#include "gmock/gmock.h"
#include "graph/graph_families.h"
#include "graph/topology_json.h"
#include "graph/training.h"
#include "gtest/gtest.h"

#ifdef PLACEMENT_HAVE_PNG
#include <png.h>
#endif

namespace placement::chart {
namespace {

namespace fs = std::filesystem;
using ::placement::chart::testing::LargeScenario;
using ::placement::chart::testing::Scenario;
using ::placement::chart::testing::Simulated;
using ::placement::chart::testing::ThreeDeviceChain;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kWidth = 1400;
constexpr int kHeight = 900;

// PLACEMENT_CHROMIUM, else the first of the usual names on PATH; empty when there is none.
std::string FindChromium() {
  if (const char* given = getenv("PLACEMENT_CHROMIUM"); given != nullptr && *given != '\0') return given;
  const char* path = getenv("PATH");
  if (path == nullptr) return "";
  for (const char* name : {"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}) {
    for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
      const fs::path candidate = fs::path(std::string(dir)) / name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return "";
}

std::string Quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int64_t Occurrences(const std::string& text, const std::string& what) {
  int64_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

class ChartInBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = FindChromium();
    if (chromium_.empty()) {
      if (getenv("CI") != nullptr) FAIL() << "Chromium is not installed; scripts/deps.sh installs it";
      GTEST_SKIP() << "Chromium not found (install the Debian package chromium, or set PLACEMENT_CHROMIUM); "
                      "skipping the browser checks of the schedule chart";
    }
    std::string pattern = (fs::temp_directory_path() / "placement-chart-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }

  void TearDown() override {
    if (!dir_.empty()) {
      std::error_code ignored;
      fs::remove_all(dir_, ignored);
    }
  }

  // Runs Chromium headless on the page with a fresh profile, no network features and a time limit (killed
  // 5 s after it if it ignores the polite signal); `mode` is its --screenshot or --dump-dom argument.
  // Returns its exit status; stdout goes to `stdout_file`.
  int RunChromium(const fs::path& page, const std::string& mode, const fs::path& stdout_file) {
    const fs::path profile = dir_ / absl::StrCat("profile", runs_++);
    const std::string command = absl::StrCat(
        "timeout -k 5 60 ", Quoted(chromium_),
        " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking"
        " --disable-component-update --disable-sync --disable-extensions --hide-scrollbars",
        " --user-data-dir=", Quoted(profile.string()), " ", mode, " --window-size=", kWidth, ",", kHeight, " ",
        Quoted("file://" + page.string()), " >", Quoted(stdout_file.string()), " 2>>",
        Quoted((dir_ / "chromium.log").string()));
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  fs::path WritePage(const std::string& name, const std::string& html) {
    const fs::path page = dir_ / name;
    std::ofstream(page, std::ios::binary) << html;
    return page;
  }

  void KeepForPeople(const fs::path& file) {
    const char* out = getenv("PLACEMENT_CHART_OUTPUT_DIR");
    if (out == nullptr || *out == '\0') return;
    std::error_code error;
    fs::create_directories(out, error);
    fs::copy_file(file, fs::path(out) / file.filename(), fs::copy_options::overwrite_existing, error);
    EXPECT_FALSE(error) << "cannot copy " << file << " to " << out << ": " << error.message();
  }

  std::string Log() { return ReadAll(dir_ / "chromium.log"); }

  std::string chromium_;
  fs::path dir_;
  int runs_ = 0;
};

// One training step of four Transformer blocks, pipelined over four A100s: each forward operator on the
// device of its quarter of the forward pass, its backward and optimizer operators with it.
std::unique_ptr<Scenario> PipelinedTransformer() {
  FamilyOptions family;
  family.approx_ops = 60;
  family.seed = 5;
  absl::StatusOr<Graph> forward = GenerateFamily("blocks", family);
  EXPECT_TRUE(forward.ok()) << forward.status();
  absl::StatusOr<Graph> step = BuildTrainingGraph(*forward);
  EXPECT_TRUE(step.ok()) << step.status();
  absl::StatusOr<Topology> topology = ParseTopologyShorthand("4xA100");
  EXPECT_TRUE(topology.ok()) << topology.status();
  if (!forward.ok() || !step.ok() || !topology.ok()) return nullptr;
  const int32_t n = forward->num_ops();
  std::vector<DeviceId> device(step->num_ops(), 0);
  for (OpId v : forward->topo_order()) device[v] = static_cast<DeviceId>(forward->topo_rank(v) * 4 / n);
  std::map<int32_t, DeviceId> group_device;
  for (OpId v = 0; v < step->num_ops(); ++v) {
    const int32_t group = step->colocation_group(v);
    if (group == kNone) continue;
    if (v < n) {
      group_device.emplace(group, device[v]);
    } else if (auto it = group_device.find(group); it != group_device.end()) {
      device[v] = it->second;
    }
  }
  return Simulated(*std::move(step), *std::move(topology), std::move(device));
}

#ifdef PLACEMENT_HAVE_PNG
struct Pixels {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgba;
};

bool DecodePng(const fs::path& file, Pixels& out) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, file.c_str())) return false;
  image.format = PNG_FORMAT_RGBA;
  out.width = static_cast<int>(image.width);
  out.height = static_cast<int>(image.height);
  out.rgba.resize(PNG_IMAGE_SIZE(image));
  const bool ok = png_image_finish_read(&image, nullptr, out.rgba.data(), 0, nullptr) != 0;
  png_image_free(&image);
  return ok;
}
#endif

TEST_F(ChartInBrowser, DrawsTheTimeline) {
  const auto s = PipelinedTransformer();
  ASSERT_NE(s, nullptr);
  ChartOptions options;
  options.title = "Transformer training step, pipelined over 4xA100";
  absl::StatusOr<std::string> html = RenderScheduleHtml(*s->costs, s->placement, s->sim, options);
  ASSERT_TRUE(html.ok()) << html.status();
  const fs::path page = WritePage("schedule_chart.html", *html);
  KeepForPeople(page);

  const fs::path png = dir_ / "schedule_chart.png";
  ASSERT_EQ(RunChromium(page, "--screenshot=" + Quoted(png.string()), dir_ / "screenshot.out"), 0) << Log();
  ASSERT_TRUE(fs::exists(png)) << Log();
  KeepForPeople(png);
#ifdef PLACEMENT_HAVE_PNG
  Pixels pixels;
  ASSERT_TRUE(DecodePng(png, pixels)) << "the screenshot is not a PNG";
  EXPECT_EQ(pixels.width, kWidth);
  EXPECT_EQ(pixels.height, kHeight);
  // Something was drawn: a good share of the window is not white, in many colours (op types, bands,
  // text), and the critical path's red outline is among them.
  int64_t inked = 0, red = 0;
  std::set<std::tuple<int, int, int>> colours;
  for (size_t i = 0; i + 3 < pixels.rgba.size(); i += 4) {
    const int r = pixels.rgba[i], g = pixels.rgba[i + 1], b = pixels.rgba[i + 2];
    inked += r < 235 || g < 235 || b < 235;
    red += r > 180 && g < 90 && b < 90;
    colours.emplace(r / 16, g / 16, b / 16);
  }
  EXPECT_GT(inked, int64_t{kWidth} * kHeight / 20) << "the screenshot is mostly blank";
  EXPECT_GT(colours.size(), 40u);
  EXPECT_GT(red, 50) << "no critical path outline in the screenshot";
#endif

  // The DOM the browser built from the page still has every bar and row: nothing was dropped as malformed.
  const fs::path dom_file = dir_ / "dom.html";
  ASSERT_EQ(RunChromium(page, "--dump-dom", dom_file), 0) << Log();
  const std::string dom = ReadAll(dom_file);
  for (const char* element : {"<rect class=\"op", "<rect class=\"xfer", "<g class=\"device\">",
                              "<path class=\"memline\"", "class=\"op t", "crit\"", "<title>"}) {
    EXPECT_EQ(Occurrences(dom, element), Occurrences(*html, element)) << element;
    EXPECT_GT(Occurrences(dom, element), 0) << element;
  }
  EXPECT_EQ(Occurrences(dom, "<g class=\"device\">"), 4);
}

TEST_F(ChartInBrowser, DrawsALargeGraphWithMergedBars) {
  const auto s = LargeScenario(20000);
  ASSERT_NE(s, nullptr);
  ChartOptions options;
  options.title = "20,000 operators on eight devices";
  absl::StatusOr<std::string> html = RenderScheduleHtml(*s->costs, s->placement, s->sim, options);
  ASSERT_TRUE(html.ok()) << html.status();
  ASSERT_THAT(*html, HasSubstr("Merged bars"));
  const fs::path page = WritePage("large_chart.html", *html);
  KeepForPeople(page);
  const fs::path png = dir_ / "large_chart.png";
  ASSERT_EQ(RunChromium(page, "--screenshot=" + Quoted(png.string()), dir_ / "large.out"), 0) << Log();
  ASSERT_TRUE(fs::exists(png)) << Log();
  KeepForPeople(png);
#ifdef PLACEMENT_HAVE_PNG
  Pixels pixels;
  ASSERT_TRUE(DecodePng(png, pixels)) << "the screenshot is not a PNG";
  int64_t inked = 0;
  for (size_t i = 0; i + 3 < pixels.rgba.size(); i += 4) {
    inked += pixels.rgba[i] < 235 || pixels.rgba[i + 1] < 235 || pixels.rgba[i + 2] < 235;
  }
  EXPECT_GT(inked, int64_t{kWidth} * kHeight / 20) << "the screenshot is mostly blank";
#endif
}

TEST_F(ChartInBrowser, KeepsHostileNamesAsText) {
  const auto s = ThreeDeviceChain("<script>alert(1)</script><img src=x onerror=alert(2)>");
  ASSERT_NE(s, nullptr);
  absl::StatusOr<std::string> html = RenderScheduleHtml(*s->costs, s->placement, s->sim, {});
  ASSERT_TRUE(html.ok()) << html.status();
  const fs::path page = WritePage("hostile.html", *html);
  KeepForPeople(page);
  const fs::path dom_file = dir_ / "hostile_dom.html";
  ASSERT_EQ(RunChromium(page, "--dump-dom", dom_file), 0) << Log();
  const std::string dom = ReadAll(dom_file);
  EXPECT_THAT(dom, Not(HasSubstr("<script")));
  EXPECT_THAT(dom, Not(HasSubstr("<img")));
  EXPECT_THAT(dom, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;"));
  EXPECT_EQ(Occurrences(dom, "<rect class=\"op"), 5);
}

}  // namespace
}  // namespace placement::chart
