// Draws for the synthetic graph generators, defined here rather than through the standard distributions
// (whose algorithms each standard library picks), so a seed gives the same graph everywhere.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace placement::seeded {

// Uniform in [0, 1) from the top 53 bits: the same double for the same engine state everywhere.
inline double Uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// Uniform integer in [0, n) by rejection, so no value is favoured when 2^64 is not a multiple of n.
inline uint64_t UniformBelow(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do {
    x = rng();
  } while (x >= limit);
  return x % n;
}

inline bool Chance(std::mt19937_64& rng, double p) { return Uniform01(rng) < p; }

// Log-uniform in [lo, hi]: every decade is equally likely, the spread of real operator costs.
inline double LogUniform(std::mt19937_64& rng, double lo, double hi) {
  return std::exp(std::log(lo) + Uniform01(rng) * (std::log(hi) - std::log(lo)));
}

}  // namespace placement::seeded
