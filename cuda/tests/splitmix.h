// splitmix64: the seeded generator of the native test programs (same seed, same inputs everywhere).
#pragma once

#include <cmath>
#include <cstdint>

struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed) {}
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /** Uniform on [lo, hi) with 24 random bits (an f32 mantissa's worth). */
  float uniform(float lo, float hi) { return lo + (hi - lo) * (float)((next() >> 40) * (1.0 / 16777216.0)); }
  /** Uniform on [0, 1) with 53 random bits. */
  double uniform() { return (double)(next() >> 11) * (1.0 / 9007199254740992.0); }
  /** Standard normal (Box-Muller, one value per call). */
  double normal() {
    const double u1 = uniform() + 1e-300, u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};
