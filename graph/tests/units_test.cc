#include "graph/units.h"

#include <cmath>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace placement {
namespace {

using ::testing::HasSubstr;

struct Good {
  const char* text;
  double value;
};
struct Bad {
  const char* text;
  const char* message;
};

void ExpectParses(absl::StatusOr<double> (*parse)(absl::string_view), const std::vector<Good>& cases) {
  for (const Good& c : cases) {
    absl::StatusOr<double> v = parse(c.text);
    ASSERT_TRUE(v.ok()) << c.text << ": " << v.status();
    EXPECT_NEAR(*v, c.value, std::abs(c.value) * 1e-12) << c.text;
  }
}

void ExpectRejects(absl::StatusOr<double> (*parse)(absl::string_view), const std::vector<Bad>& cases) {
  for (const Bad& c : cases) {
    absl::StatusOr<double> v = parse(c.text);
    ASSERT_FALSE(v.ok()) << "'" << c.text << "' parsed as " << *v;
    EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(v.status().message(), HasSubstr(c.message)) << c.text;
    EXPECT_THAT(v.status().message(), HasSubstr(absl::StrCat("'", c.text, "'"))) << "the error quotes the text";
  }
}

TEST(UnitsTest, BytesTakeSiAndBinaryPrefixes) {
  ExpectParses(ParseBytes, {{"80GiB", 80.0 * (1 << 30)},
                            {"16 GB", 16e9},
                            {"512MiB", 512.0 * (1 << 20)},
                            {"1024", 1024},
                            {"1.5 kB", 1500},
                            {"1.5 KB", 1500},
                            {"2KiB", 2048},
                            {"1e3", 1000},
                            {"  7 bytes ", 7},
                            {"0", 0},
                            {"2 TiB", 2.0 * 1099511627776.0},
                            {"3 TB", 3e12}});
}

TEST(UnitsTest, BytesRejectBitsNegativesNonFiniteAndUnknownUnits) {
  ExpectRejects(ParseBytes, {{"-1GB", "negative"},
                             {"nan", "not a finite number"},
                             {"inf GB", "not a finite number"},
                             {"5 Gb", "bits"},
                             {"5 XB", "unknown unit 'XB'"},
                             {"", "empty"},
                             {"GB", "does not start with a number"},
                             {"1e999", "out of range"},
                             {"1e300 PiB", "out of range"},
                             {"0x10", "unknown unit"},
                             {"1,024 GB", "unknown unit"}});
}

TEST(UnitsTest, BandwidthReadsBytesBitsAndTimeDenominators) {
  ExpectParses(ParseBandwidth, {{"900GB/s", 900e9},
                                {"400Gb/s", 50e9},
                                {"400 Gbps", 50e9},
                                {"25 Gbit/s", 3.125e9},
                                {"7600 B/us", 7.6e9},
                                {"7600 B/\xC2\xB5s", 7.6e9},
                                {"12 GiB/s", 12.0 * (1 << 30)},
                                {"100 MB/ms", 1e11},
                                {"1e9", 1e9},
                                {"450 GB / s", 450e9},
                                {"10 MBps", 1e7}});
}

TEST(UnitsTest, BandwidthRejectsMissingTimeUnknownUnitsAndNegatives) {
  ExpectRejects(ParseBandwidth, {{"900GB", "unknown unit 'GB'"},
                                 {"5 GB/h", "unknown unit"},
                                 {"-1GB/s", "negative"},
                                 {"nan GB/s", "not a finite number"},
                                 {"fast", "does not start with a number"}});
}

TEST(UnitsTest, SecondsReadCommonTimeUnits) {
  ExpectParses(ParseSeconds, {{"5us", 5e-6},
                              {"5\xC2\xB5s", 5e-6},
                              {"5\xCE\xBCs", 5e-6},
                              {"2.5 ms", 2.5e-3},
                              {"1e-6", 1e-6},
                              {"10ns", 1e-8},
                              {"1.5s", 1.5},
                              {"3 sec", 3}});
}

TEST(UnitsTest, SecondsRejectUnknownUnitsNegativesAndNan) {
  ExpectRejects(ParseSeconds, {{"5 min", "unknown unit 'min'"},
                               {"-1s", "negative"},
                               {"nan", "not a finite number"},
                               {"-inf", "not a finite number"}});
}

TEST(UnitsTest, FlopsReadPrefixesInAnyCase) {
  ExpectParses(ParseFlops, {{"989TFLOPS", 989e12},
                            {"312 TFLOP/s", 312e12},
                            {"19.5 tflops", 19.5e12},
                            {"5e12", 5e12},
                            {"2 PFLOPS", 2e15},
                            {"100 GFLOP/s", 1e11},
                            {"7 FLOPS", 7}});
}

TEST(UnitsTest, FlopsRejectOtherUnits) {
  ExpectRejects(ParseFlops, {{"5 TFLO", "unknown unit"}, {"1 TB", "unknown unit 'TB'"}, {"-3 TFLOPS", "negative"}});
}

TEST(UnitsTest, DecimalUnitsGiveExactlyTheDoubleOfTheWrittenFigure) {
  // "5us" and 5e-6 must be the same double, or figures typed with units and without would differ.
  EXPECT_EQ(*ParseSeconds("5us"), 5e-6);
  EXPECT_EQ(*ParseSeconds("10us"), 1e-5);
  EXPECT_EQ(*ParseSeconds("2.5e3 ns"), 2.5e-6);
  EXPECT_EQ(*ParseBandwidth("3.35TB/s"), 3.35e12);
  EXPECT_EQ(*ParseBandwidth("7600 B/us"), 7.6e9);
  EXPECT_EQ(*ParseBandwidth("1.6e1GB/s"), 1.6e10);
  EXPECT_EQ(*ParseFlops("19.5 TFLOPS"), 19.5e12);
  EXPECT_EQ(*ParseBytes("0.1 GB"), 1e8);
}

TEST(UnitsTest, FormattersPrintThreeFiguresWithAUnit) {
  EXPECT_EQ(FormatBytes(80e9), "74.5 GiB");
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatSeconds(0.0123), "12.3 ms");
  EXPECT_EQ(FormatSeconds(2e-6), "2 us");
  EXPECT_EQ(FormatSeconds(1.5), "1.5 s");
  EXPECT_EQ(FormatSeconds(0), "0 s");
  EXPECT_EQ(FormatSeconds(0.0009999), "1 ms");
  EXPECT_EQ(FormatSeconds(-0.002), "-2 ms");
  EXPECT_EQ(FormatBandwidth(450e9), "450 GB/s");
  EXPECT_EQ(FormatBandwidth(999.9e9), "1 TB/s");
  EXPECT_EQ(FormatFlops(989e12), "989 TFLOP/s");
  EXPECT_EQ(FormatFlops(5.0176e12), "5.02 TFLOP/s");
}

TEST(UnitsTest, FormattedFiguresParseBack) {
  for (double v : {1.0, 999.0, 80e9, 3.35e12, 123456789.0}) {
    absl::StatusOr<double> bytes = ParseBytes(FormatBytes(v));
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_NEAR(*bytes, v, v * 5e-3);
    absl::StatusOr<double> bandwidth = ParseBandwidth(FormatBandwidth(v));
    ASSERT_TRUE(bandwidth.ok()) << bandwidth.status();
    EXPECT_NEAR(*bandwidth, v, v * 5e-3);
    absl::StatusOr<double> flops = ParseFlops(FormatFlops(v));
    ASSERT_TRUE(flops.ok()) << flops.status();
    EXPECT_NEAR(*flops, v, v * 5e-3);
  }
  for (double v : {1.5, 0.0123, 2e-6, 7e-9}) {
    absl::StatusOr<double> seconds = ParseSeconds(FormatSeconds(v));
    ASSERT_TRUE(seconds.ok()) << seconds.status();
    EXPECT_NEAR(*seconds, v, v * 5e-3);
  }
}

}  // namespace
}  // namespace placement
