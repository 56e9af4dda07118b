// conv arm `vec` (docs/SPEC.md §3.5), the roofline arm.
// 8 consecutive channels per thread, moved as 16-byte vectors (one for bf16, two for f32), a
// register window per channel, kVecGroup token rows loaded before any is used (loads in flight).
// Exact mapping: 64-token programs (halo of K-1 rows re-read from x); sequence mapping: one program
// per sequence. Requires C and x_row_stride multiples of 8 and 16-byte aligned x and out (else reg
// runs). Two compile-time variants: window width W = 4 (K <= 4) and W = 8 (K <= 8).
// On an H200 (bf16, K = 4, T = 8192) it runs at ~41% of the copy rate (C = 8192: 162 us vs 67 us):
// it is bound by instruction issue, not memory — each output costs ~35 instructions of deterministic
// exp (magic-number rint, degree-8 polynomial), IEEE division and conversions. Measured variants:
// cuda/tests/vec_tune.cu (G = 4 rows in flight and a 128-register cap were best).
#pragma once

#include <cstring>
#include <type_traits>

#include "common/arms/conv_common.h"

namespace gdn {
namespace conv {

template <class T>
struct Vec8;  // eight values of T as loaded from memory

template <>
struct Vec8<bf16_bits> {
#if defined(__CUDA_ARCH__)
  uint32_t u[4];
  GDN_HDI float get(int i) const { return bf16_to_f32((uint16_t)(u[i >> 1] >> ((i & 1) * 16))); }
#else
  uint16_t u[8];  // the host reads the halves directly: a vectorisable widening
  GDN_HDI float get(int i) const { return bf16_to_f32(u[i]); }
#endif
};
template <>
struct Vec8<float> {
  float f[8];
  GDN_HDI float get(int i) const { return f[i]; }
};

GDN_HDI void load8(const bf16_bits* src, Vec8<bf16_bits>& v) {
#if defined(__CUDA_ARCH__)
  const uint4 q = __ldg(reinterpret_cast<const uint4*>(src));
  v.u[0] = q.x; v.u[1] = q.y; v.u[2] = q.z; v.u[3] = q.w;
#else
  std::memcpy(v.u, src, 16);
#endif
}
GDN_HDI void load8(const float* src, Vec8<float>& v) {
#if defined(__CUDA_ARCH__)
  const float4 a = __ldg(reinterpret_cast<const float4*>(src));
  const float4 b = __ldg(reinterpret_cast<const float4*>(src) + 1);
  v.f[0] = a.x; v.f[1] = a.y; v.f[2] = a.z; v.f[3] = a.w;
  v.f[4] = b.x; v.f[5] = b.y; v.f[6] = b.z; v.f[7] = b.w;
#else
  std::memcpy(v.f, src, 32);
#endif
}

// The stores are written as PTX vector stores: NVVM split a plain uint4 assignment here into four
// 32-bit stores (seen in the SASS of the vec kernel).
GDN_HDI void store8(bf16_bits* dst, const float (&y)[8]) {
  uint32_t u[4];
  GDN_UNROLL
  for (int i = 0; i < 4; ++i) u[i] = f32x2_to_bf16x2(y[2 * i], y[2 * i + 1]);
#if defined(__CUDA_ARCH__)
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "r"(u[0]), "r"(u[1]), "r"(u[2]), "r"(u[3])
               : "memory");
#else
  std::memcpy(dst, u, 16);
#endif
}
GDN_HDI void store8(float* dst, const float (&y)[8]) {
#if defined(__CUDA_ARCH__)
  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "f"(y[0]), "f"(y[1]), "f"(y[2]), "f"(y[3])
               : "memory");
  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(dst + 4), "f"(y[4]), "f"(y[5]), "f"(y[6]), "f"(y[7])
               : "memory");
#else
  std::memcpy(dst, y, 32);
#endif
}

// W = 4 serves K <= 4, W = 8 serves K <= 8 (taps below W-K skipped). G rows are loaded before any
// is used; THREADS is the block size (the library uses kVecGroup and kThreads; the tuning bench
// cuda/tests/vec_tune.cu tries others).
template <class TX, class TO, class M, int W, int G = kVecGroup, int THREADS = kThreads>
GDN_HD inline void vec_thread(const Params& p, int64_t bx, int64_t by, int tid) {
  const int64_t c_lane = (bx * THREADS + tid) * kVecLanes;
  const bool in_range = c_lane < p.C;  // C is a multiple of 8: a group is all in or all out
  if (!in_range && !M::is(p, kNoTailGuard)) return;
  const int64_t c0 = in_range ? c_lane : p.C - kVecLanes;
  const Span s = program_span<M>(p, by);
  if (s.t0 >= s.t1) return;
  const int K = p.K;
  const TX* x = static_cast<const TX*>(p.x);
  const TX* w = static_cast<const TX*>(p.w);

  // Lane arrays are [slot][lane]: on the GPU they are registers (fully unrolled, layout-neutral); on
  // the host a tap is then one 8-wide fma over the lanes (docs/BENCHMARKS.md, "Host backend").
  float wr[W][kVecLanes], win[W][kVecLanes], b[kVecLanes];
  GDN_UNROLL
  for (int i = 0; i < kVecLanes; ++i) {
    b[i] = p.bias ? load(static_cast<const TX*>(p.bias), c0 + i) : 0.0f;
    GDN_UNROLL
    for (int jj = 0; jj < W; ++jj) {
      wr[jj][i] = jj >= W - K ? load(w, (c0 + i) * K + tap_of_slot(jj, W, K, M::is(p, kTapsReversed))) : 0.0f;
      win[jj][i] = 0.0f;
    }
  }
  const bool init = has_initial_state(p, s.seq);
#if !defined(__CUDA_ARCH__)
  // The host's flat tap loops read the weights and bias repeated for each of the G rows.
  float wrb[W][G * kVecLanes], wb[G * kVecLanes];
  for (int e = 0; e < G * kVecLanes; ++e) {
    wb[e] = b[e % kVecLanes];
    for (int jj = 0; jj < W; ++jj) wrb[jj][e] = wr[jj][e % kVecLanes];
  }
#endif

  widen_before_state_read(p, s);
  GDN_UNROLL
  for (int jj = 1; jj < W; ++jj) {
    if (jj < W - K + 1) continue;
    const int64_t row = s.t0 - (W - jj);
    if (row >= s.start) {
      Vec8<TX> v;
      load8(x + row * p.x_stride + c0, v);
      GDN_UNROLL
      for (int i = 0; i < kVecLanes; ++i) win[jj][i] = v.get(i);
    } else {
      GDN_UNROLL
      for (int i = 0; i < kVecLanes; ++i)
        win[jj][i] = init ? state_row(p, s.seq, c0 + i)[K - 1 + (row - s.start)] : 0.0f;
    }
  }

  const bool state_from_output = M::is(p, kStateFromOutput) && in_range;
  TO* out = static_cast<TO*>(p.out);
  const int64_t out_elems = p.T * p.C;
  // Row t's results: store (a NO_TAIL_GUARD spill past the last row is dropped), and the mutant.
  auto emit_state = [&](int64_t t, const float (&y)[kVecLanes]) {
    if (state_from_output && t >= s.end - (K - 1)) {
      GDN_UNROLL
      for (int i = 0; i < kVecLanes; ++i) state_row(p, s.seq, c0 + i)[t - (s.end - (K - 1))] = y[i];
    }
  };
  auto emit = [&](int64_t t, const float (&y)[kVecLanes]) {
    const int64_t o = t * p.C + c_lane;
    if (o < out_elems) store8(out + o, y);
    emit_state(t, y);
  };
  for (int64_t t = s.t0; t < s.t1c; t += G) {
    Vec8<TX> rows[G];
#if !defined(__CUDA_ARCH__)
    // The host's full groups read x directly below; only the last, partial group uses rows.
    if (t + G > s.t1c)
#endif
    GDN_UNROLL
    for (int g = 0; g < G; ++g)
      if (t + g < s.t1c) load8(x + (t + g) * p.x_stride + c0, rows[g]);
    if (t + G <= s.t1c) {
      // A full group: all G x 8 pre-activations first; when every one is in exp's common range
      // (nearly always) the activations are straight-line code the compiler can interleave.
      float acc[G][kVecLanes];
      bool fast = true;
#if !defined(__CUDA_ARCH__)
      {
        // The host computes the same taps as flat loops over the group's G x 8 values (GCC's loop
        // vectoriser makes each one 8-wide; it does not vectorise the unrolled nest below, whose
        // tap loop has a run-time bound; docs/BENCHMARKS.md, "Host backend", session 6):
        // xs holds rows t - (W-1) .. t + G - 1, so the window of row t+g starts at xs[g], and a tap
        // jj of every value of the group is xs[jj * 8 + e], e = g * 8 + i. Same operations, same
        // order per element (acc = bias, then one fma per tap, oldest first).
        constexpr int E = G * kVecLanes;
        float xs[(G + W - 1) * kVecLanes];
        float* a = &acc[0][0];
        std::memcpy(xs, &win[1][0], sizeof(float) * (W - 1) * kVecLanes);
        for (int g = 0; g < G; ++g) {
          const TX* src = x + (t + g) * p.x_stride + c0;
          for (int i = 0; i < kVecLanes; ++i) xs[(W - 1 + g) * kVecLanes + i] = load(src, i);
        }
        for (int e = 0; e < E; ++e) a[e] = wb[e];
        for (int jj = W - K; jj < W; ++jj) {
          const float* wj = &wrb[jj][0];
          const float* xj = xs + jj * kVecLanes;
#pragma GCC ivdep
          for (int e = 0; e < E; ++e) a[e] = det_fma(wj[e], xj[e], a[e]);
        }
        std::memcpy(&win[0][0], xs + (G - 1) * kVecLanes, sizeof(float) * W * kVecLanes);
      }
#else
      GDN_UNROLL
      for (int g = 0; g < G; ++g) {
        GDN_UNROLL
        for (int jj = 0; jj + 1 < W; ++jj) {
          GDN_UNROLL
          for (int i = 0; i < kVecLanes; ++i) win[jj][i] = win[jj + 1][i];
        }
        GDN_UNROLL
        for (int i = 0; i < kVecLanes; ++i) win[W - 1][i] = rows[g].get(i);
        // acc = bias, then one fma per tap, oldest first: apply_taps' order, lane by lane.
        GDN_UNROLL
        for (int i = 0; i < kVecLanes; ++i) acc[g][i] = b[i];
        GDN_UNROLL
        for (int jj = 0; jj < W; ++jj) {
          if (jj < W - K) continue;
          GDN_UNROLL
          for (int i = 0; i < kVecLanes; ++i) acc[g][i] = det_fma(wr[jj][i], win[jj][i], acc[g][i]);
        }
        GDN_UNROLL
        for (int i = 0; i < kVecLanes; ++i) fast = fast && gdn_silu_fast_range(acc[g][i]);
      }
#endif
#if !defined(__CUDA_ARCH__)
      {
        // The range test over the whole group as one branch-free loop (vectorised): the same
        // predicate as gdn_silu_fast_range (false for NaN).
        const float* flat = &acc[0][0];
        int ok = 1;
        for (int e = 0; e < G * kVecLanes; ++e) ok &= (flat[e] <= 80.0f) & (flat[e] >= -80.0f);
        fast = ok != 0;
      }
#endif
      if (fast) {
#if defined(__CUDA_ARCH__)
        GDN_UNROLL
        for (int g = 0; g < G; ++g) {
          GDN_UNROLL
          for (int i = 0; i < kVecLanes; ++i) acc[g][i] = gdn_silu_fast(acc[g][i]);
        }
#else
        // One flat loop over the G x 8 activations: GCC's loop vectoriser makes it 8-wide, the
        // unrolled nest above it does not (the element operations, and so the bits, are the same).
        float* flat = &acc[0][0];
#pragma GCC ivdep
        for (int e = 0; e < G * kVecLanes; ++e) flat[e] = gdn_silu_fast(flat[e]);
#endif
      } else {
        GDN_UNROLL
        for (int g = 0; g < G; ++g) {
          GDN_UNROLL
          for (int i = 0; i < kVecLanes; ++i) acc[g][i] = gdn_silu(acc[g][i]);
        }
      }
#if defined(__CUDA_ARCH__)
      GDN_UNROLL
      for (int g = 0; g < G; ++g) emit(t + g, acc[g]);
#else
      if constexpr (std::is_same<TO, bf16_bits>::value) {
        // The host rounds the whole group to bf16 in one flat loop (vectorised; f32_to_bf16 per
        // element, as store8 does) and stores it row by row.
        uint16_t h[G * kVecLanes];
        const float* flat = &acc[0][0];
        for (int e = 0; e < G * kVecLanes; ++e) h[e] = f32_to_bf16(flat[e]);
        for (int g = 0; g < G; ++g) {
          const int64_t o = (t + g) * p.C + c_lane;
          if (o < out_elems) std::memcpy(out + o, h + g * kVecLanes, 16);
          emit_state(t + g, acc[g]);
        }
      } else {
        for (int g = 0; g < G; ++g) emit(t + g, acc[g]);
      }
#endif
    } else {
      GDN_UNROLL
      for (int g = 0; g < G; ++g) {
        if (t + g >= s.t1c) break;
        float y[kVecLanes];
        GDN_UNROLL
        for (int i = 0; i < kVecLanes; ++i) {
          GDN_UNROLL
          for (int jj = 0; jj + 1 < W; ++jj) win[jj][i] = win[jj + 1][i];
          win[W - 1][i] = rows[g].get(i);
          float a = b[i];
          GDN_UNROLL
          for (int jj = 0; jj < W; ++jj)
            if (jj >= W - K) a = det_fma(wr[jj][i], win[jj][i], a);
          y[i] = gdn_silu(a);
        }
        emit(t + g, y);
      }
    }
  }

  if (!in_range || !s.writes_state) return;
  if (s.t1c == s.end) {
    GDN_UNROLL
    for (int jj = 1; jj < W; ++jj) {
      if (jj < W - K + 1) continue;
      const int j = jj - (W - K + 1);
      if (M::is(p, kStateFromOutput) && s.end - (K - 1) + j >= s.start) continue;
      GDN_UNROLL
      for (int i = 0; i < kVecLanes; ++i) state_row(p, s.seq, c0 + i)[j] = win[jj][i];
    }
  } else if (!M::is(p, kStateFromOutput)) {
    for (int j = 0; j < K - 1; ++j) {
      Vec8<TX> v;
      load8(x + (s.end - (K - 1) + j) * p.x_stride + c0, v);
      GDN_UNROLL
      for (int i = 0; i < kVecLanes; ++i) state_row(p, s.seq, c0 + i)[j] = v.get(i);
    }
  }
}

struct ArmVec {
  static constexpr ArmSpec spec = {
      "vec", "roofline arm: 8 channels per thread in 16-byte vectors, 4 rows in flight, 64-token chunks",
      kThreads, kVecMinBlocks, kVecTile, kVecChunk, kAllMappings, 0, 0, 0, GDN_ARM_REQ_VEC8, GDN_CONV_REG, 0,
      kThreadsFixed, kLayoutNone};
  static constexpr int kVariants = 2;
  static int variant(const Params& p) { return p.K <= 4 ? 0 : 1; }

  template <class TX, class TO, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    vec_thread<TX, TO, M, V == 0 ? 4 : kMaxK>(p, t.bx(), t.by(), t.tid());
  }
};

}  // namespace conv
}  // namespace gdn
