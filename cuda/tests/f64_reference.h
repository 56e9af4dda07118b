// f64_reference.h — the native smoke's independent reference (docs/TESTING.md): the causal conv of
// docs/SPEC.md in double precision with the C library's exp, and rounding to bf16 by exact double
// arithmetic. It includes nothing of libgdn's (no detmath.h): it is what gdn_silu, f32_to_bf16 and
// the stores are checked against, so a change to them cannot move this reference along with them.
//
// The kernels compute in f32, so an f32 output may differ from the double result by a few f32
// ulps (tol = atol + rtol·|ref|); a bf16 output must be one of the bf16 values that rounding to
// nearest even gives anywhere in [ref − tol, ref + tol] — a single value for nearly every element,
// so truncation or rounding up fails on about half of them.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace f64ref {

inline double silu(double v) { return v / (1.0 + std::exp(-v)); }

// x rounded to nearest even with 8 significant bits (bf16), exponent range of f32 (subnormals from
// 2^-133), overflow to ±inf. Exact: scaling by powers of two and std::nearbyint in the default
// rounding mode (to nearest, ties to even).
inline double round_bf16(double x) {
  if (!std::isfinite(x) || x == 0.0) return x;
  int e;
  std::frexp(std::fabs(x), &e);  // |x| = m·2^e, m in [0.5, 1)
  const int quantum = std::max(e - 1, -126) - 7;
  const double r = std::nearbyint(std::ldexp(x, -quantum));
  const double y = std::ldexp(r, quantum);
  const double max_finite = std::ldexp(255.0, 120);  // (2 - 2^-7)·2^127
  if (std::fabs(y) > max_finite) return x < 0 ? -INFINITY : INFINITY;
  return y;
}

inline double from_bits(uint32_t bits, bool bf16) {
  float f;
  const uint32_t u = bf16 ? bits << 16 : bits;
  std::memcpy(&f, &u, 4);
  return f;
}

struct StoreCheck {
  int64_t violations = 0;  // outside the window
  int64_t exact = 0;       // bf16: equal to rne(ref); f32: within tol
  int64_t checked = 0;
  int64_t first = -1;      // index of the first violation
};

// stored: raw bits (bf16 in the low 16); ref: doubles; only finite references are checked.
inline StoreCheck check_store(const std::vector<uint32_t>& stored, const std::vector<double>& ref, bool bf16, double rtol,
                              double atol) {
  StoreCheck c;
  for (size_t i = 0; i < ref.size() && i < stored.size(); ++i) {
    const double r = ref[i];
    if (!std::isfinite(r)) continue;
    ++c.checked;
    const double s = from_bits(stored[i], bf16);
    const double tol = atol + rtol * std::fabs(r);
    bool ok;
    if (bf16) {
      ok = s >= round_bf16(r - tol) && s <= round_bf16(r + tol);
      if (s == round_bf16(r)) ++c.exact;
    } else {
      ok = std::fabs(s - r) <= tol;
      if (ok) ++c.exact;
    }
    if (!ok) {
      if (c.first < 0) c.first = (int64_t)i;
      ++c.violations;
    }
  }
  return c;
}

// The conv of one varlen batch in double: out[t][c] = silu(bias[c] + Σ_j w[c][j]·x[t-(K-1)+j][c]),
// positions before a sequence's start read its initial state (or zero).
inline std::vector<double> conv_out(int64_t C, int64_t K, int64_t stride, const std::vector<int32_t>& qsl,
                                    const std::vector<float>& x, const std::vector<float>& w, const float* bias,
                                    const std::vector<float>& state0, const std::vector<int>& has_state) {
  const int64_t N = (int64_t)qsl.size() - 1, T = qsl.back();
  std::vector<double> out((size_t)(T * C), 0.0);
  for (int64_t s = 0; s < N; ++s) {
    const int64_t start = qsl[(size_t)s], len = qsl[(size_t)s + 1] - start;
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t t = 0; t < len; ++t) {
        double acc = bias ? (double)bias[c] : 0.0;
        for (int64_t j = 0; j < K; ++j) {
          const int64_t p = t - (K - 1) + j;
          double v = 0.0;
          if (p >= 0) v = x[(size_t)((start + p) * stride + c)];
          else if (has_state[(size_t)s]) v = state0[(size_t)((s * C + c) * (K - 1) + (K - 1) + p)];
          acc += (double)w[(size_t)(c * K + j)] * v;
        }
        out[(size_t)((start + t) * C + c)] = silu(acc);
      }
    }
  }
  return out;
}

}  // namespace f64ref
