#include "graph/spelling.h"

#include <gtest/gtest.h>

namespace placement {
namespace {

TEST(Spelling, EditDistanceCountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(EditDistance("device", "devices"), 1u);
  EXPECT_EQ(EditDistance("shardng", "sharding"), 1u);
  EXPECT_EQ(EditDistance("heft", "hefty"), 1u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
}

TEST(Spelling, TheNearestIsSuggestedOnlyWhenItIsClose) {
  const std::vector<std::string> flags = {"devices", "deadline", "sharding", "seed"};
  EXPECT_EQ(NearestSpelling("device", flags), "devices");
  EXPECT_EQ(NearestSpelling("dedline", flags), "deadline");
  EXPECT_EQ(NearestSpelling("zzzqqq", flags), "");
  EXPECT_EQ(NearestSpelling("x", {}), "");
}

TEST(Spelling, AWordWithATailAddedOrCutOffSuggestsTheWord) {
  const std::vector<std::string> flags = {"batch", "global_batch", "seq", "devices", "deadline"};
  EXPECT_EQ(NearestSpelling("batchsize", flags), "batch");
  EXPECT_EQ(NearestSpelling("seq_len", flags), "seq");
  EXPECT_EQ(NearestSpelling("devi", flags), "devices");
  EXPECT_EQ(NearestSpelling("ilp", {"ilp_latency", "ilp_throughput"}), "");  // either
}

}  // namespace
}  // namespace placement
