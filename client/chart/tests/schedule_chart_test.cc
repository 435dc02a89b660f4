// The chart's structure, read back from the HTML: rows, bars, critical path, escaping, self-containment,
// determinism, and the merging that bounds the size of a large graph's chart.
#include "client/chart/schedule_chart.h"

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "client/chart/tests/chart_test_support.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::chart {
namespace {

using ::placement::chart::testing::Gpu;
using ::placement::chart::testing::LargeScenario;
using ::placement::chart::testing::Matrix;
using ::placement::chart::testing::Op;
using ::placement::chart::testing::Scenario;
using ::placement::chart::testing::Simulated;
using ::placement::chart::testing::ThreeDeviceChain;
using ::testing::HasSubstr;
using ::testing::Not;

struct DrawnBar {
  std::string cls;
  std::string title;
};

std::vector<DrawnBar> Bars(const std::string& html) {
  static const std::regex kBar(R"re(<rect class="((?:op|xfer)[^"]*)"[^>]*><title>([^<]*)</title></rect>)re");
  std::vector<DrawnBar> out;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), kBar); it != std::sregex_iterator(); ++it) {
    out.push_back(DrawnBar{(*it)[1].str(), (*it)[2].str()});
  }
  return out;
}

int64_t Occurrences(const std::string& text, const std::string& what) {
  int64_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

std::string Render(const Scenario& s, ChartOptions options = {}) {
  absl::StatusOr<std::string> html = RenderScheduleHtml(*s.costs, s.placement, s.sim, options);
  EXPECT_TRUE(html.ok()) << html.status();
  return html.ok() ? *html : "";
}

const DrawnBar* FindOpBar(const std::vector<DrawnBar>& bars, const std::string& name) {
  for (const DrawnBar& b : bars) {
    if (absl::StartsWith(b.cls, "op") && absl::StartsWith(b.title, name + "\n")) return &b;
  }
  ADD_FAILURE() << "no bar for operator " << name;
  return nullptr;
}

TEST(ScheduleChart, DrawsARowPerDeviceABarPerOperatorAndEveryTransfer) {
  const auto s = ThreeDeviceChain();
  ASSERT_NE(s, nullptr);
  const std::string html = Render(*s);
  EXPECT_EQ(Occurrences(html, "<g class=\"device\">"), 3);
  EXPECT_EQ(Occurrences(html, "<g class=\"row ops\">"), 3);
  EXPECT_EQ(Occurrences(html, "<path class=\"memline\""), 3);
  const std::vector<DrawnBar> bars = Bars(html);
  int ops = 0, transfers = 0;
  for (const DrawnBar& b : bars) (absl::StartsWith(b.cls, "op") ? ops : transfers) += 1;
  EXPECT_EQ(ops, 5);
  EXPECT_EQ(transfers, 2);
  EXPECT_EQ(s->sim.transfers, 2);
  // The tooltip names the operator, its type, device, start, end and duration.
  const DrawnBar* matmul = FindOpBar(bars, "matmul");
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->title, "matmul\nMatMul on d1\n2 s \xE2\x86\x92 4 s (2 s)\non the critical path");
  // Transfers name sender and receiver.
  EXPECT_THAT(html, HasSubstr("<title>load \xE2\x86\x92 d1\nd0 to d1, 1000 B\n1 s \xE2\x86\x92 2 s (1 s)"));
  // The summary: objective, bound and ratio, per-device busy time and peak memory.
  EXPECT_THAT(html, HasSubstr("step_time <b>6 s</b>"));
  EXPECT_THAT(html, HasSubstr("lower bound <b>"));
  EXPECT_THAT(html, HasSubstr("ratio <b>"));
  EXPECT_THAT(html, HasSubstr("<td>d1</td><td>gpu</td><td>1</td><td>2 s</td><td>33.3%</td>"));
}

TEST(ScheduleChart, OutlinesTheCriticalPath) {
  const auto s = ThreeDeviceChain();
  ASSERT_NE(s, nullptr);
  const std::vector<DrawnBar> bars = Bars(Render(*s));
  for (const char* name : {"load", "matmul", "relu"}) {
    const DrawnBar* b = FindOpBar(bars, name);
    ASSERT_NE(b, nullptr);
    EXPECT_THAT(b->cls, HasSubstr("crit")) << name;
  }
  for (const char* name : {"aux", "small"}) {
    const DrawnBar* b = FindOpBar(bars, name);
    ASSERT_NE(b, nullptr);
    EXPECT_THAT(b->cls, Not(HasSubstr("crit"))) << name;
  }
  int critical_transfers = 0;
  for (const DrawnBar& b : bars) critical_transfers += b.cls == "xfer crit";
  EXPECT_EQ(critical_transfers, 2);
}

TEST(ScheduleChart, FollowsTheDeviceWhenAnOperatorWaitedForIt) {
  // One device: a (1 s) and b (2 s) are both ready at 0; c reads a. a runs 0..1, b 1..3, c 3..4: c's input
  // was there at 1, it waited for b, which waited for a.
  GraphBuilder builder;
  const OpId a = builder.AddOp(Op("a", "X", 1.0));
  builder.AddOp(Op("b", "X", 2.0));
  const OpId c = builder.AddOp(Op("c", "X", 1.0));
  builder.AddEdge(a, 0, c);
  absl::StatusOr<Graph> g = std::move(builder).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  const auto s = Simulated(*std::move(g), Matrix({Gpu("only")}, 1000), {0, 0, 0});
  ASSERT_NE(s, nullptr);
  const std::vector<DrawnBar> bars = Bars(Render(*s));
  for (const char* name : {"a", "b", "c"}) {
    const DrawnBar* bar = FindOpBar(bars, name);
    ASSERT_NE(bar, nullptr);
    EXPECT_THAT(bar->cls, HasSubstr("crit")) << name;
  }
}

TEST(ScheduleChart, EscapesNamesFromTheInput) {
  GraphBuilder builder;
  const OpId evil = builder.AddOp(Op("<script>alert(1)</script>", "Type\"&'<>", 1.0));
  const OpId next =
      builder.AddOp(Op("bad\xFF"
                       "byte\x01",
                       "X", 1.0));
  builder.AddEdge(evil, 0, next);
  absl::StatusOr<Graph> g = std::move(builder).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  const auto s = Simulated(*std::move(g), Matrix({Gpu("<b>gpu&0</b>"), Gpu("gpu\"1")}, 1000), {0, 1});
  ASSERT_NE(s, nullptr);
  ChartOptions options;
  options.title = "</title><script>x()</script>";
  const std::string html = Render(*s, options);
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<b>gpu")));
  EXPECT_THAT(html, Not(HasSubstr("\xFF")));
  EXPECT_THAT(html, Not(HasSubstr("\x01")));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(html, HasSubstr("Type&quot;&amp;&#39;&lt;&gt;"));
  EXPECT_THAT(html, HasSubstr("&lt;b&gt;gpu&amp;0&lt;/b&gt;"));
  EXPECT_THAT(html, HasSubstr("bad\xEF\xBF\xBD"
                              "byte\xEF\xBF\xBD"));
  EXPECT_THAT(html, HasSubstr("<title>&lt;/title&gt;&lt;script&gt;x()&lt;/script&gt;</title>"));
}

TEST(ScheduleChart, ReferencesNothingOutsideTheFile) {
  const auto s = ThreeDeviceChain();
  ASSERT_NE(s, nullptr);
  const std::string html = Render(*s);
  for (const char* reference : {"<script", "<link", "<img", "<iframe", "<object", "<embed", "src=", "href=", "url(",
                                "@import", "http:", "https:", "//"}) {
    EXPECT_THAT(html, Not(HasSubstr(reference)));
  }
  EXPECT_THAT(html, HasSubstr("default-src 'none'"));
}

TEST(ScheduleChart, IsDeterministic) {
  const auto first = ThreeDeviceChain();
  const auto second = ThreeDeviceChain();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(Render(*first), Render(*second));
}

TEST(ScheduleChart, WritesInputTimeUnitsAsPlainNumbers) {
  const auto s = ThreeDeviceChain();
  ASSERT_NE(s, nullptr);
  ChartOptions options;
  options.time_unit = "input";
  const std::string html = Render(*s, options);
  EXPECT_THAT(html, HasSubstr("step_time <b>6</b>"));
  EXPECT_THAT(html, HasSubstr("input's own unit (input)"));
  EXPECT_THAT(html, Not(HasSubstr(" ms<")));
}

TEST(ScheduleChart, RejectsASimulationWithoutItsTimelineAndBadOptions) {
  const auto s = ThreeDeviceChain();
  ASSERT_NE(s, nullptr);
  SimulationResult bare = s->sim;
  bare.timeline.clear();
  absl::StatusOr<std::string> html = RenderScheduleHtml(*s->costs, s->placement, bare, {});
  EXPECT_EQ(html.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(html.status().message(), HasSubstr("record_timeline"));

  ChartOptions options;
  options.max_bars = 0;
  EXPECT_EQ(RenderScheduleHtml(*s->costs, s->placement, s->sim, options).status().code(),
            absl::StatusCode::kInvalidArgument);

  Placement other = s->placement;
  other.device[0] = 2;
  html = RenderScheduleHtml(*s->costs, other, s->sim, {});
  EXPECT_EQ(html.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(html.status().message(), HasSubstr("'load'"));
}

TEST(ScheduleChart, MergesShortBarsToStayWithinTheBudget) {
  const auto s = LargeScenario(3000);
  ASSERT_NE(s, nullptr);
  ChartOptions options;
  options.max_bars = 800;
  const std::string html = Render(*s, options);
  const std::vector<DrawnBar> bars = Bars(html);
  EXPECT_LE(bars.size(), 800u);
  EXPECT_GT(bars.size(), 100u);
  EXPECT_THAT(html, HasSubstr("Merged bars: 3,000 operators"));
  // Every operator is still accounted for: merged bars say how many they stand for.
  int64_t ops = 0;
  static const std::regex kCount(R"(^(\d+) operators merged)");
  for (const DrawnBar& b : bars) {
    if (!absl::StartsWith(b.cls, "op")) continue;
    std::smatch m;
    ops += std::regex_search(b.title, m, kCount) ? std::stoll(m[1].str()) : 1;
  }
  EXPECT_EQ(ops, 3000);
  EXPECT_THAT(html, HasSubstr("crit"));
}

TEST(ScheduleChart, AHundredThousandOperatorsGiveAFileOfAFewMegabytes) {
  const auto s = LargeScenario(100000);
  ASSERT_NE(s, nullptr);
  const std::string html = Render(*s);
  EXPECT_LT(html.size(), 8u << 20);
  EXPECT_LE(Occurrences(html, "<rect class=\"op") + Occurrences(html, "<rect class=\"xfer"), 20000);
  EXPECT_THAT(html, HasSubstr("Merged bars: 100,000 operators"));
  EXPECT_EQ(Occurrences(html, "<g class=\"device\">"), 8);
}

}  // namespace
}  // namespace placement::chart
