// The default registry holds every family: each family's placers are found there under their names.
#include <gtest/gtest.h>

#include "policy/placer_families.h"

namespace placement {
namespace {

TEST(IlpLimits, BothPlacersAreInTheDefaultRegistry) {
  for (const char* name : {"ilp_throughput", "ilp_latency"}) {
    absl::StatusOr<const Placer*> p = DefaultPlacerRegistry().Find(name);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_FALSE((*p)->description().empty());
  }
}

TEST(LocalSearch, IsRegisteredForEveryObjective) {
  absl::StatusOr<const Placer*> p = DefaultPlacerRegistry().Find("local_search");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ((*p)->objectives().size(), 3u);
}

}  // namespace
}  // namespace placement
