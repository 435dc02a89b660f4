// The chart's pieces on their own: escaping and text, lane packing, bar merging.
#include <set>
#include <string>
#include <vector>

#include "client/chart/bars.h"
#include "client/chart/html_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::chart {
namespace {

TEST(HtmlText, EscapesMarkupAndQuotes) {
  EXPECT_EQ(EscapeHtml("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(EscapeHtml("plain name/with:punct"), "plain name/with:punct");
}

TEST(HtmlText, KeepsUtf8AndReplacesWhatXmlCannotHold) {
  EXPECT_EQ(EscapeHtml("\xC2\xB5s \xE2\x86\x92 \xF0\x9F\x98\x80"), "\xC2\xB5s \xE2\x86\x92 \xF0\x9F\x98\x80");
  EXPECT_EQ(EscapeHtml("a\xFF"
                       "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(EscapeHtml("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong '/'
  EXPECT_EQ(EscapeHtml("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(EscapeHtml("\xE2\x86"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // cut short
  EXPECT_EQ(EscapeHtml(std::string("x\0y\x1B", 4)), "x\xEF\xBF\xBDy\xEF\xBF\xBD");
  EXPECT_EQ(EscapeHtml("tab\tnew\nline"), "tab\tnew\nline");
}

TEST(HtmlText, EllipsizesByCodePoints) {
  EXPECT_EQ(Ellipsize("abcdef", 6), "abcdef");
  EXPECT_EQ(Ellipsize("abcdefg", 6), "abcde\xE2\x80\xA6");
  EXPECT_EQ(Ellipsize("\xC2\xB5\xC2\xB5\xC2\xB5", 2), "\xC2\xB5\xE2\x80\xA6");
  EXPECT_EQ(Ellipsize("abc", 0), "");
}

TEST(HtmlText, FormatsPixelsShortly) {
  EXPECT_EQ(Px(12), "12");
  EXPECT_EQ(Px(12.34), "12.3");
  EXPECT_EQ(Px(-0.01), "0");
  EXPECT_EQ(Px(0.96), "1");
}

TEST(HtmlText, ColoursAreStableAndTellTypesApart) {
  const std::vector<std::string> colours = TypeColours({"MatMul", "Conv", "Relu", "Add"});
  EXPECT_EQ(TypeColours({"MatMul", "Conv", "Relu", "Add"}), colours);
  EXPECT_EQ(std::set<std::string>(colours.begin(), colours.end()).size(), 4u);
  for (const std::string& c : colours) EXPECT_THAT(c, ::testing::MatchesRegex(R"(hsl\([0-9]+,62%,[0-9]+%\))"));
  // The order given does not change a type's colour.
  const std::vector<std::string> reversed = TypeColours({"Add", "Relu", "Conv", "MatMul"});
  EXPECT_EQ(reversed[0], colours[3]);
  EXPECT_EQ(reversed[3], colours[0]);
  EXPECT_EQ(TimeText(0.0123, "s"), "12.3 ms");
  EXPECT_EQ(TimeText(12.5, "input"), "12.5");
}

TEST(Bars, PacksOverlappingTransfersIntoLanes) {
  const Row bars = {SingleBar(0, 0, 2, false), SingleBar(1, 1, 3, false), SingleBar(2, 2, 4, false),
                    SingleBar(3, 2.5, 5, false), SingleBar(4, 2.6, 6, false)};
  const std::vector<Row> lanes = PackLanes(bars, 3);
  ASSERT_EQ(lanes.size(), 3u);
  // 0 and 2 share the first lane (2 starts as 0 ends); 1 opens the second, 3 the third; 4 finds none free
  // and joins the lane that frees first, the second (at 3).
  EXPECT_EQ(lanes[0].size(), 2u);
  EXPECT_EQ(lanes[1].size(), 2u);
  EXPECT_EQ(lanes[1][1].first, 4);
  EXPECT_EQ(lanes[2].size(), 1u);
}

TEST(Bars, MergesOnlyWhenOverBudgetAndKeepsLongBarsAlone) {
  // 100 bars of 0.01 s back to back, then one of 5 s. At 0.01 s per pixel each short bar is 1 px.
  Row row;
  for (int i = 0; i < 100; ++i) row.push_back(SingleBar(i, i * 0.01, (i + 1) * 0.01, false));
  row.push_back(SingleBar(100, 1.0, 6.0, true));
  Row copy = row;
  std::vector<Row*> rows = {&copy};
  EXPECT_EQ(MergeShortBars(rows, 0.01, 600, 200), 0);
  EXPECT_EQ(copy.size(), 101u);

  const double px = MergeShortBars(rows, 0.01, 600, 20);
  EXPECT_GT(px, 1);
  EXPECT_LE(copy.size(), 20u);
  int total = 0;
  double busy = 0;
  for (const Bar& b : copy) {
    total += b.count;
    busy += b.busy;
  }
  EXPECT_EQ(total, 101);
  EXPECT_NEAR(busy, 6.0, 1e-9);
  EXPECT_EQ(copy.back().count, 1) << "the long bar stays its own";
  EXPECT_TRUE(copy.back().critical);
}

TEST(Bars, KeepsCriticalBarsApartFromOthersWhileItCan) {
  Row row;
  for (int i = 0; i < 10; ++i) row.push_back(SingleBar(i, i, i + 1, i == 5));
  std::vector<Row*> rows = {&row};
  MergeShortBars(rows, 1.0, 600, 3);
  ASSERT_EQ(row.size(), 3u);
  EXPECT_EQ(row[1].first, 5);
  EXPECT_EQ(row[1].count, 1);
  EXPECT_TRUE(row[1].critical);
}

}  // namespace
}  // namespace placement::chart
