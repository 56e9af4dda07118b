// detmath.h — deterministic math shared by the host backend and the CUDA kernels (docs/SPEC.md §9).
//
// Every function here is built from IEEE-754 single-precision + - * /, fmaf (one rounding), rintf
// (round half to even) and exponent-bit manipulation. No libm transcendental, no hardware
// approximation: compiled by g++ (-ffp-contract=off) and by nvcc (--fmad=false, no fast-math,
// denormals kept) the same source gives the same bits on the CPU and the GPU.
//
// Storage conversions: bf16 and f16 loads are exact; stores round to nearest even; overflow goes to
// Inf; a NaN stays a quiet NaN (bf16: the canonical 0x7fff, as the GPU's conversion instruction makes).
#pragma once

#include <stdint.h>

#include <cmath>
#include <cstring>

#if defined(__CUDACC__)
#define GDN_HD __host__ __device__
#else
#define GDN_HD
#endif

namespace gdn {

// ----------------------------------------------------------------- bit casts
GDN_HD inline uint32_t f32_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}

GDN_HD inline float f32_from_bits(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

GDN_HD inline float det_fma(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fmaf(a, b, c);
#endif
}

GDN_HD inline float det_rint(float x) {
#if defined(__CUDA_ARCH__)
  return rintf(x);
#else
  return std::rint(x);
#endif
}

// 2^k as a float for k in [-126, 127] (a normal number: exponent field k + 127, mantissa 0).
GDN_HD inline float pow2_normal(int k) { return f32_from_bits((uint32_t)(k + 127) << 23); }

GDN_HD inline bool is_nan(float x) { return (f32_bits(x) & 0x7fffffffu) > 0x7f800000u; }

// NaN payloads differ between the CPU (which propagates an operand's payload, and makes 0xffc00000
// for invalid operations) and the GPU (0x7fffffff for every NaN it makes). Every function here that
// can return a NaN returns this one, so f32 results are bit-identical NaNs included.
constexpr uint32_t kCanonicalNaN = 0x7fffffffu;
GDN_HD inline float canonical_nan() { return f32_from_bits(kCanonicalNaN); }

// ----------------------------------------------------------------- arithmetic version
// The bits of every op that uses the functions below are those of arithmetic version kArithVersion
// (gdn.h: GDN_ARITH_VERSION, reported by gdn_arith_version() and recorded in every result's
// provenance). Version 2 changed SiLU only (the conv's activation):
//   version 1: SiLU = x / (1 + gdn_expf(-x)) with an IEEE division (2.3 ulps from float64 at worst
//              in its common range, and -0 instead of about -1e-37 for x in [-104, -88.7], where
//              exp(-x) overflowed);
//   version 2: gdn_silu below — exp(-x) in unrounded pieces, a reciprocal seed and residual
//              correction instead of the division: 1.75 ulps at worst over all 2^32 inputs, and 19%
//              more SiLU per second on an H200 (CHANGELOG 2026-12-01, 0cc566a).
// exp, log1p, softplus and sigmoid (the post-conv gates) are unchanged since version 1. Version 1's
// SiLU stays in namespace v1 for comparison by cuda/tests/detmath_exhaustive.cu and the tuning
// bench; no op uses it.
constexpr int kArithVersion = 2;

// ----------------------------------------------------------------- exp
// exp(x) = 2^n · e^r with n = rint(x · log2 e) and r = x − n·ln2 (two-part ln2, fmaf), |r| ≤ ~0.35;
// e^r by its Taylor polynomial to degree 8 (Horner, fmaf), p in [0.7, 1.42]. Then 2^n:
//   |x| <= 87 (n in [-126, 126], and n = -126 only with r > 0.33, so p · 2^n is a normal number):
//     add n to p's exponent field — exact, and the same value as the multiply below;
//   otherwise (rare): NaN and ±Inf, overflow to +Inf, underflow to 0, and in between two exact-power
//     multiplies of which only the last rounds (so subnormal results round once).
// Error 0.87 ulp at worst over all 2^32 inputs.
// n = rint(x · log2 e) by the 1.5·2^23 trick: adding it rounds t to an integer (ties to even, exactly
// rintf for |t| < 2^22) and leaves that integer in the low mantissa bits of s, so 2^n's exponent
// field is bits(s) << 23 (the constant's own bits shift out). No float-to-integer conversion.
struct ExpReduced {
  float r;       // x − n·ln2
  uint32_t s;    // bits of t + 1.5·2^23 (n in its low bits)
  int n;
};
GDN_HD inline ExpReduced gdn_expf_reduce(float x) {
  const float log2e = 1.44269502162933349609375f;
  const float ln2_hi = 0.693145751953125f;          // 0x3f317200: few bits, n·ln2_hi exact
  const float ln2_lo = 1.428606765330187045e-06f;   // ln2 − ln2_hi
  const float magic = 12582912.0f;                  // 1.5 · 2^23
  const float t = x * log2e;
  const float s = t + magic;
  const float n = s - magic;                        // rint(t), exactly
  ExpReduced e;
  e.r = det_fma(n, -ln2_lo, det_fma(n, -ln2_hi, x));
  e.s = f32_bits(s);
  e.n = (int)(e.s - f32_bits(magic));
  return e;
}

GDN_HD inline float gdn_expf_poly(float r) {  // e^r = 1 + r + r²/2! + ... + r^8/8!
  float p = 2.48015873015873e-05f;                  // 1/8!
  p = det_fma(p, r, 1.98412698412698e-04f);         // 1/7!
  p = det_fma(p, r, 1.38888888888889e-03f);         // 1/6!
  p = det_fma(p, r, 8.33333333333333e-03f);         // 1/5!
  p = det_fma(p, r, 4.16666666666667e-02f);         // 1/4!
  p = det_fma(p, r, 1.66666666666667e-01f);         // 1/3!
  p = det_fma(p, r, 0.5f);
  p = det_fma(p, r, 1.0f);
  return det_fma(p, r, 1.0f);
}

GDN_HD inline float gdn_expf_wide(float x) {  // the rare inputs, |x| > 87 or NaN
  if (is_nan(x)) return canonical_nan();
  if (x > 89.0f) return f32_from_bits(0x7f800000u);  // +Inf (also x = +Inf)
  if (x < -104.0f) return 0.0f;                     // below half the smallest subnormal (also -Inf)
  const ExpReduced e = gdn_expf_reduce(x);
  const float p = gdn_expf_poly(e.r);
  const int n1 = e.n / 2;                           // n in [-150, 128]: both halves in [-75, 64], normal
  const int n2 = e.n - n1;
  return (p * pow2_normal(n1)) * pow2_normal(n2);   // first multiply exact, second rounds once
}

// The common case as straight-line code: valid (and equal to gdn_expf) for |x| <= 87 only.
GDN_HD inline bool gdn_expf_fast_range(float x) { return x <= 87.0f && x >= -87.0f; }  // false for NaN
GDN_HD inline float gdn_expf_fast(float x) {
  const ExpReduced e = gdn_expf_reduce(x);
  return f32_from_bits(f32_bits(gdn_expf_poly(e.r)) + (e.s << 23));
}

GDN_HD inline float gdn_expf(float x) { return gdn_expf_fast_range(x) ? gdn_expf_fast(x) : gdn_expf_wide(x); }

// ----------------------------------------------------------------- SiLU's exp pieces (version 2)
// exp(x) = 2^n · (1 + r·t(r)), t = 1 + r·q(r), for SiLU only (it never rounds the product to one
// float). n = rint(x · log2e) from ONE fused rounding: s = fmaf(x, log2e, 1.5·2^23) rounds
// x·log2e + 1.5·2^23 to an integer (ulp 1 there), so n = s − 1.5·2^23 exactly, with n in the low bits
// of s as above. r = x − n·ln2 (two-part ln2, fmaf), |r| <= ln2/2·(1 + 1e-6). q of degree 4 fitted for
// the least maximum relative error of e^r = 1 + r·(1 + r·q) on that interval (fit error 3.9e-9,
// 0.07 ulp; float32 coefficients, Horner): 6 fmaf in all. As a plain exp (gdn_silu_expf, measured only)
// it is within 0.91 ulp of float64.
GDN_HD inline ExpReduced silu_exp_reduce(float x) {
  const float log2e = 1.44269502162933349609375f;
  const float ln2_hi = 0.693145751953125f;
  const float ln2_lo = 1.428606765330187045e-06f;
  const float magic = 12582912.0f;
  const float s = det_fma(x, log2e, magic);
  const float n = s - magic;
  ExpReduced e;
  e.r = det_fma(n, -ln2_lo, det_fma(n, -ln2_hi, x));
  e.s = f32_bits(s);
  e.n = (int)(e.s - f32_bits(magic));
  return e;
}
GDN_HD inline float silu_exp_t(float r) {  // t = 1 + r·q(r)
  float q = 1.38145312666893e-03f;                  // 0x1.6a23c0p-10
  q = det_fma(q, r, 8.368703536689281e-03f);        // 0x1.1239c6p-7
  q = det_fma(q, r, 4.166838899254799e-02f);        // 0x1.5558f2p-5
  q = det_fma(q, r, 1.666652113199234e-01f);        // 0x1.555492p-3
  q = det_fma(q, r, 4.999999403953552e-01f);        // 0x1.fffffcp-2
  return det_fma(q, r, 1.0f);
}
// The pieces as one exp, |x| <= 87 (measured by the exhaustive test; no op uses it).
GDN_HD inline float gdn_silu_expf(float x) {
  const ExpReduced e = silu_exp_reduce(x);
  return f32_from_bits(f32_bits(det_fma(silu_exp_t(e.r), e.r, 1.0f)) + (e.s << 23));
}

// ----------------------------------------------------------------- log1p
// log1p(x): u = 1 + x rounded, u = 2^e · m with m in [√½, √2); the rounding error of u is carried
// as c = (x − (u − 1)) / u (or (1 − (u − x)) / u when e > 0). log(m) = log(1 + f), f = m − 1 exact,
// s = f / (2 + f): log(1+f) = f − (f²/2 − s·(f²/2 + R)), R = Σ 2z^k/(2k+1), z = s², to z^4.
GDN_HD inline float gdn_log1pf(float x) {
  if (is_nan(x) || x < -1.0f) return canonical_nan();  // NaN in, or outside the domain
  if (x == -1.0f) return f32_from_bits(0xff800000u); // -Inf
  if (x == f32_from_bits(0x7f800000u)) return x;     // +Inf
  const uint32_t ax = f32_bits(x) & 0x7fffffffu;
  if (ax < 0x33800000u) return x;   // |x| < 2^-24: log1p(x) = x − x²/2 rounds to x (keeps −0)
  const float u = 1.0f + x;
  const uint32_t ub = f32_bits(u);
  int e = (int)((ub >> 23) & 0xff) - 127;
  uint32_t mb = (ub & 0x007fffffu) | 0x3f800000u;    // m in [1, 2)
  if (mb > 0x3fb504f3u) {                             // m > √2: use m/2, e + 1
    mb -= 0x00800000u;
    e += 1;
  }
  const float m = f32_from_bits(mb);
  float c = 0.0f;
  if (e < 25) {
    c = (e > 0) ? 1.0f - (u - x) : x - (u - 1.0f);
    c = c / u;
  }
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  float R = 2.0f / 9.0f;
  R = det_fma(R, z, 2.0f / 7.0f);
  R = det_fma(R, z, 2.0f / 5.0f);
  R = det_fma(R, z, 2.0f / 3.0f);
  R = R * z;
  const float hfsq = 0.5f * f * f;
  const float ef = (float)e;
  const float ln2_hi = 0.693145751953125f;
  const float ln2_lo = 1.428606765330187045e-06f;
  return ef * ln2_hi - ((hfsq - (s * (hfsq + R) + (ef * ln2_lo + c))) - f);
}

// ----------------------------------------------------------------- activations
// SiLU(x) = x / (1 + exp(-x)) (docs/SPEC.md §3.2, §9.1).
//
// |x| <= 80 (gdn_silu_fast): exp(-x) = 2^n·(1 + r·t) from SiLU's exp pieces above, never rounded
// to one float. The quotient y = x / d, d = 1 + 2^n + (2^n·t)·r, without the division sequence:
//   d = fmaf(2^n·t, r, 1 + 2^n)        d to one rounding, used only for the seed below
//   r0 = bits(0x7ef311c2 − bits(d))    reciprocal seed from the integer bits: |1 − d·r0| <= 0.0505 for
//                                      every d (the pattern repeats every octave; 1/d stays normal
//                                      because n <= 116)
//   e = 1 − d·r0;  r1 = r0 + r0·(e + e²)   one cubic step: |1 − d·r1| <= 1.3e-4
//   y0 = x·r1;  y = y0 + r1·ρ, ρ = (x − y0·(1 + 2^n)) − (y0·2^n·t)·r   one residual correction against
//                                      the unrounded d, so neither exp(-x) nor 1 + exp(-x) is ever
//                                      rounded on its own (those two roundings put version 1 at 2.3 ulps)
// 22 operations (one integer multiply-add for 2^n, one integer subtract), all IEEE basic ops and
// fmaf: the same bits on host and GPU; within 1.8 ulps of float64 (CHANGELOG 2026-12-01, 0cc566a).
// Otherwise (gdn_silu_wide): NaN in → canonical NaN; -Inf → canonical NaN (-Inf / Inf, as §3 writes
// it); x > 80 (and +Inf) → x (exp(-x) < 2^-115: the true value rounds to x); x < -110 → -0 (below
// 2^-150 in magnitude); in between x·exp(x) = 2^n · x·(1 + r·t) scaled by two exact-power multiplies
// of which only the last rounds (1 + exp(x) rounds to 1 there).
// |x| <= 80, written with the absolute value so that the GPU tests it in one compare (same truth
// table as -80 <= x <= 80; false for NaN).
GDN_HD inline bool gdn_silu_fast_range(float x) {
#if defined(__CUDA_ARCH__)
  return fabsf(x) <= 80.0f;
#else
  return std::fabs(x) <= 80.0f;
#endif
}
GDN_HD inline float gdn_silu_fast(float x) {
  const ExpReduced e = silu_exp_reduce(-x);
  const float t = silu_exp_t(e.r);
  const float sn = f32_from_bits((e.s << 23) + 0x3f800000u);  // 2^n: n << 23 is e.s << 23 (see ExpReduced)
  const float st = sn * t;                                    // exact
  const float a = 1.0f + sn;
  const float d = det_fma(st, e.r, a);
  const float r0 = f32_from_bits(0x7ef311c2u - f32_bits(d));
  const float ee = det_fma(-d, r0, 1.0f);
  const float r1 = det_fma(r0, det_fma(ee, ee, ee), r0);
  const float y0 = x * r1;
  const float rho = det_fma(-(y0 * st), e.r, det_fma(-y0, a, x));
  return det_fma(rho, r1, y0);
}
GDN_HD inline float gdn_silu_wide(float x) {
  if (is_nan(x) || x == f32_from_bits(0xff800000u)) return canonical_nan();
  if (x > 80.0f) return x;
  if (x < -110.0f) return -0.0f;
  const ExpReduced e = silu_exp_reduce(x);                   // n in [-159, -115]
  const float t = silu_exp_t(e.r);
  const float m = det_fma(x * t, e.r, x);                    // x·e^r
  const int n1 = e.n / 2;
  const int n2 = e.n - n1;
  return (m * pow2_normal(n1)) * pow2_normal(n2);            // first multiply exact, second rounds once
}
// Hot paths test gdn_silu_fast_range themselves (once per group of values) and call gdn_silu_fast.
GDN_HD inline float gdn_silu(float x) { return gdn_silu_fast_range(x) ? gdn_silu_fast(x) : gdn_silu_wide(x); }

// ----------------------------------------------------------------- SiLU for a bf16 store: a GPU shortcut
// Not another arithmetic: a way for a GPU to reach round_bf16(gdn_silu(x)) with fewer instructions
// (docs/SPEC.md §9.2). ya = x · rcp.approx(1 + ex2.approx(−x·log2e)) is within a few dozen f32 ulps of
// gdn_silu(x) for |x| < 8; bf16 keeps 16 fewer bits, so ya's bf16 rounding is gdn_silu's unless a
// rounding boundary lies within that distance. The test accepts ya only when |x| < 8 and no boundary lies
// within kSiluShortcutSlack f32 ulps (bit steps) of it: ya's low 16 bits are more than slack + 1 away
// from 0x8000, where round-to-nearest-even moves to the next bf16. Rounding is monotonic in the bits, so
// then every value within the slack rounds to ya's bf16. The caller computes gdn_silu otherwise (about
// 0.1% of values, 66 of every 65,536 bit patterns).
// How the test is written (CHANGELOG 2026-12-03, 5c83917): the low half is moved to the top by one
// integer multiply-add, which also subtracts the window's start, so one unsigned compare tests the window
// (wrapping mod 2^16 as the bits do); the low bits are the same for ±ya, so no absolute value is taken.
// The earlier form also required ya to be a normal number; for |x| < 8 ya is always finite, and a
// subnormal or zero ya (|x| below about 2^-125) is within 1 bit step of gdn_silu's x/2, which the
// exhaustive test below confirms for every such input — after one fix: gdn_silu(−0) is +0, so ya is
// formed as fma(x, r, +0) (silu_bf16_approx).
// The slack is an empirical bound on this GPU's approximations, so cuda/tests/detmath_exhaustive.cu
// (mode shortcut) runs every x of the fast range on the GPU and counts accepted values whose bf16
// differs from gdn_silu's (must be 0) and the largest distance seen; the CUDA backend enables the
// shortcut only on the architecture where that test ran (compute capability 9.0; conv::Params
// silu_shortcut). The result is ya itself, meant only for a bf16 store: its f32 bits are not gdn_silu's.
// GDN_SILU_SHORTCUT_SLACK / _RANGE exist only so that detmath_exhaustive can be built with a planted
// slack or range and shown to fail (docs/TESTING.md); the library never sets them.
#ifndef GDN_SILU_SHORTCUT_SLACK
#define GDN_SILU_SHORTCUT_SLACK 32
#endif
#ifndef GDN_SILU_SHORTCUT_RANGE
#define GDN_SILU_SHORTCUT_RANGE 8.0f
#endif
constexpr uint32_t kSiluShortcutSlack = GDN_SILU_SHORTCUT_SLACK;
constexpr float kSiluShortcutRange = GDN_SILU_SHORTCUT_RANGE;
#if defined(__CUDACC__)
// The approximation alone; silu_bf16_shortcut_ok says whether its bf16 rounding may be stored.
__device__ __forceinline__ float silu_bf16_approx(float x) {
#if defined(__CUDA_ARCH__)
  float e, r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(x * -1.44269502162933349609375f));
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(1.0f + e));
  // x·r + (+0) rather than x·r: the same instruction count, and equal to x·r except at x = −0, where it
  // gives +0 as gdn_silu does (x·r gave −0: the one wrong input of all 2^32 once the normal-number test
  // was dropped, detmath_exhaustive on the H200: CHANGELOG 2026-12-03, 241f485).
  return __fmaf_rn(x, r, 0.0f);
#else
  return x;  // nvcc's host pass of a __device__ function: never run
#endif
}
__device__ __forceinline__ bool silu_bf16_shortcut_ok(float x, float ya) {
  // (low16(ya) − (0x8000 − slack − 1)) mod 2^16 ≥ 2·slack + 2, computed in the top half of a word.
  const uint32_t window = f32_bits(ya) * 0x10000u - ((0x8000u - kSiluShortcutSlack - 1u) << 16);
  return fabsf(x) < kSiluShortcutRange && window >= ((2u * kSiluShortcutSlack + 2u) << 16);
}
__device__ __forceinline__ bool silu_bf16_shortcut(float x, float* y) {
  *y = silu_bf16_approx(x);
  return silu_bf16_shortcut_ok(x, *y);
}
#endif

// docs/SPEC.md §6: softplus(x) = x for x > 20, else log1p(exp(x)).
GDN_HD inline float gdn_softplus(float x) {
  if (is_nan(x)) return canonical_nan();
  return x > 20.0f ? x : gdn_log1pf(gdn_expf(x));
}

// docs/SPEC.md §6: beta = 1 / (1 + exp(-b)).
GDN_HD inline float gdn_sigmoid(float x) {
  if (is_nan(x)) return canonical_nan();
  return 1.0f / (1.0f + gdn_expf(-x));
}

// ----------------------------------------------------------------- version 1 SiLU (comparison only)
namespace v1 {
GDN_HD inline float silu(float x) {
  const float y = x / (1.0f + gdn_expf(-x));
  return is_nan(y) ? canonical_nan() : y;
}
GDN_HD inline float silu_fast(float x) { return x / (1.0f + gdn_expf_fast(-x)); }  // |x| <= 87
}  // namespace v1

// ----------------------------------------------------------------- bf16
GDN_HD inline float bf16_to_f32(uint16_t h) { return f32_from_bits((uint32_t)h << 16); }

// Round to nearest even; every NaN becomes the canonical quiet NaN 0x7fff (what the GPU's
// cvt.rn.bf16.f32 gives: checked equal to the integer version below over all 2^32 inputs on an H200).
GDN_HD inline uint16_t f32_to_bf16(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  const uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
  const uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);  // nearest, ties to even
  return (uint16_t)(rounded >> 16);
#endif
}

// Two values packed as bf16 (lo in bits 0..15): one instruction on the GPU.
GDN_HD inline uint32_t f32x2_to_bf16x2(float lo, float hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint32_t u;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(u) : "f"(hi), "f"(lo));
  return u;
#else
  return (uint32_t)f32_to_bf16(lo) | ((uint32_t)f32_to_bf16(hi) << 16);
#endif
}

// ----------------------------------------------------------------- f16
GDN_HD inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t man = h & 0x3ffu;
  if (exp == 0x1fu) return f32_from_bits(sign | 0x7f800000u | (man << 13));  // Inf / NaN
  if (exp != 0) return f32_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
  // zero or subnormal: man · 2^-24, exact in f32
  const float mag = (float)man * 5.9604644775390625e-08f;
  return f32_from_bits(sign | f32_bits(mag));
}

GDN_HD inline uint16_t f32_to_f16(float f) {
  const uint32_t u = f32_bits(f);
  const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return 0x7fffu;  // canonical quiet NaN, like bf16
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  // ≥ 65520 rounds to Inf (and Inf)
  if (a < 0x38800000u) {
    // result is f16-subnormal (or zero): round |f| / 2^-24 to an integer, ties to even.
    // |f| < 2^-14 so |f| · 2^24 < 1024 is exact, and rint rounds it once.
    const float scaled = f32_from_bits(a) * 16777216.0f;
    return (uint16_t)(sign | (uint16_t)det_rint(scaled));
  }
  // normal: rebias the exponent, round the 13 dropped mantissa bits to nearest even
  const uint32_t rebased = a - 0x38000000u;  // exponent − 112
  const uint32_t rounded = rebased + 0x0fffu + ((rebased >> 13) & 1u);
  return (uint16_t)(sign | (rounded >> 13));
}

}  // namespace gdn
