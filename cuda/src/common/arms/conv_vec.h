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

  // Lane arrays are [slot][lane]; on the GPU they are registers (fully unrolled, layout-neutral).
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
    GDN_UNROLL
    for (int g = 0; g < G; ++g)
      if (t + g < s.t1c) load8(x + (t + g) * p.x_stride + c0, rows[g]);
    if (t + G <= s.t1c) {
      // A full group: all G x 8 pre-activations first; when every one is in exp's common range
      // (nearly always) the activations are straight-line code the compiler can interleave.
      float acc[G][kVecLanes];
      bool fast = true;
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
      if (fast) {
        GDN_UNROLL
        for (int g = 0; g < G; ++g) {
          GDN_UNROLL
          for (int i = 0; i < kVecLanes; ++i) acc[g][i] = gdn_silu_fast(acc[g][i]);
        }
      } else {
        GDN_UNROLL
        for (int g = 0; g < G; ++g) {
          GDN_UNROLL
          for (int i = 0; i < kVecLanes; ++i) acc[g][i] = gdn_silu(acc[g][i]);
        }
      }
      GDN_UNROLL
      for (int g = 0; g < G; ++g) emit(t + g, acc[g]);
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

#if !defined(__CUDA_ARCH__)
// ----------------------------------------------------------------- the host's traversal of a block
// On the host, a production (unmutated) vec block is replayed as one pass over its token rows
// instead of 128 thread bodies of 8 channels each (docs/SPEC.md §3.5, CHANGELOG
// 2026-12-02, 8a33669): the thread bodies' fixed costs (lane arrays through the stack, per-group
// range tests, 16-byte row pieces 16 KiB apart) were most of the host time, not the arithmetic.
// Each pass covers kHostPass channels of the block's tile; every loop below is flat over those
// channels, so GCC's loop vectoriser makes it 8-wide (AVX2). The element operations and their order
// are the thread body's: acc = bias (or +0), one det_fma per tap oldest first, gdn_silu (the fast
// form when the whole row is in its range: the same function there), one rounding to TO; the final
// state is the last K-1 raw inputs, written by the program that owns it (Span::writes_state), after
// its reads of the old state. So the bits are the thread body's (the conv matrix checks every mapping
// against `scalar` on the host; CUDA == host on an H200). The planted-mutant build keeps the thread
// body: its NO_TAIL_GUARD spill depends on the order of the threads.
constexpr int kHostPass = 256;

// One pass: channels c0 .. c0+n-1 of program s. KF = 4: K fixed at 4 (Qwen3.5's kernel), every
// step of a row in one flat loop; KF = 0: K at run time, the taps as one loop each.
template <class TX, class TO, int W, int KF>
inline void vec_pass_host(const Params& p, const Span& s, int64_t c0, int n, bool init) {
  const int K = KF > 0 ? KF : p.K;
  const TX* x = static_cast<const TX*>(p.x);
  const TX* w = static_cast<const TX*>(p.w);
  const TX* bias = static_cast<const TX*>(p.bias);
  TO* out = static_cast<TO*>(p.out);
  // ring[slot(row)] holds row `row` widened to f32, for the last W rows (rows t - (K-1) .. t are the
  // window of row t; K <= W).
  auto slot = [&](int64_t row) { return (int)((row - s.t0 + W) % W); };
  float wr[kMaxK][kHostPass], b[kHostPass], ring[W][kHostPass], acc[kHostPass];
  for (int j = 0; j < K; ++j)
    for (int i = 0; i < n; ++i) wr[j][i] = load(w, (c0 + i) * K + j);
  for (int i = 0; i < n; ++i) b[i] = bias ? load(bias, c0 + i) : 0.0f;
  for (int h = 1; h < K; ++h) {  // the window's history: x, or the old state / zero before the start
    const int64_t row = s.t0 - h;
    float* r = ring[slot(row)];
    if (row >= s.start)
      for (int i = 0; i < n; ++i) r[i] = load(x, row * p.x_stride + c0 + i);
    else
      for (int i = 0; i < n; ++i) r[i] = init ? state_row(p, s.seq, c0 + i)[K - 1 + (row - s.start)] : 0.0f;
  }
  for (int64_t t = s.t0; t < s.t1; ++t) {
    const TX* xr = x + t * p.x_stride + c0;
    TO* o = out + t * p.C + c0;
    const float* v[kMaxK];
    for (int j = 0; j < K; ++j) v[j] = ring[slot(t - (K - 1) + j)];
    float* cur = ring[slot(t)];
    int fast = 1;  // every pre-activation of the row within gdn_silu_fast_range (false for NaN)
    if constexpr (KF > 0) {
      // Widen, taps, range, fast SiLU and rounding per element in one loop; the row is redone with
      // gdn_silu below if any value was outside the fast range (the fast results are then discarded).
#pragma GCC ivdep
      for (int i = 0; i < n; ++i) {
        const float xi = load(xr, i);
        cur[i] = xi;
        float a = b[i];
        for (int j = 0; j + 1 < KF; ++j) a = det_fma(wr[j][i], v[j][i], a);
        a = det_fma(wr[KF - 1][i], xi, a);
        acc[i] = a;
        fast &= (a <= 80.0f) & (a >= -80.0f);
        store(o, i, gdn_silu_fast(a));
      }
    } else {
      for (int i = 0; i < n; ++i) cur[i] = load(xr, i);
      for (int i = 0; i < n; ++i) acc[i] = b[i];
      for (int j = 0; j < K; ++j) {
        const float* vj = v[j];
        const float* wj = wr[j];
#pragma GCC ivdep
        for (int i = 0; i < n; ++i) acc[i] = det_fma(wj[i], vj[i], acc[i]);
      }
      for (int i = 0; i < n; ++i) fast &= (acc[i] <= 80.0f) & (acc[i] >= -80.0f);
      if (fast)
#pragma GCC ivdep
        for (int i = 0; i < n; ++i) store(o, i, gdn_silu_fast(acc[i]));
    }
    if (!fast)
      for (int i = 0; i < n; ++i) store(o, i, gdn_silu(acc[i]));
  }
  if (!s.writes_state) return;
  for (int j = 0; j < K - 1; ++j) {
    const int64_t row = s.end - (K - 1) + j;
    // A program that reaches the end has these rows in its ring (from x, or the old state it read
    // first); chunk 0 of a longer sequence reads them from x (they are inside the sequence).
    if (s.t1 == s.end) {
      const float* r = ring[slot(row)];
      for (int i = 0; i < n; ++i) state_row(p, s.seq, c0 + i)[j] = r[i];
    } else {
      for (int i = 0; i < n; ++i) state_row(p, s.seq, c0 + i)[j] = load(x, row * p.x_stride + c0 + i);
    }
  }
}

template <class TX, class TO, int W, int THREADS>
inline void vec_block_host(const Params& p, int64_t bx, int64_t by) {
  const Span s = program_span<NoMutant>(p, by);
  if (s.t0 >= s.t1) return;
  const bool init = has_initial_state(p, s.seq);
  const int64_t tile0 = bx * THREADS * kVecLanes;
  const int64_t tile1 = tile0 + THREADS * kVecLanes < p.C ? tile0 + THREADS * kVecLanes : p.C;
  for (int64_t c0 = tile0; c0 < tile1; c0 += kHostPass) {
    const int n = (int)(tile1 - c0 < kHostPass ? tile1 - c0 : kHostPass);
    if (W == 4 && p.K == 4)
      vec_pass_host<TX, TO, W, 4>(p, s, c0, n, init);
    else
      vec_pass_host<TX, TO, W, 0>(p, s, c0, n, init);
  }
}
#endif

struct ArmVec {
  static constexpr ArmSpec spec = {
      "vec", "roofline arm: 8 channels per thread in 16-byte vectors, 4 rows in flight, 64-token chunks",
      kThreads, kVecMinBlocks, kVecTile, kVecChunk, kAllMappings, 0, 0, 0, GDN_ARM_REQ_VEC8, GDN_CONV_REG, 0,
      kThreadsFixed, kLayoutNone};
  static constexpr int kVariants = 2;
  static int variant(const Params& p) { return p.K <= 4 ? 0 : 1; }

  template <class TX, class TO, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    constexpr int W = V == 0 ? 4 : kMaxK;
#if !defined(__CUDA_ARCH__)
    if constexpr (!M::kPlanted) {  // the host's traversal of the whole block, by its thread 0
      if (t.tid() == 0) vec_block_host<TX, TO, W, kThreads>(p, t.bx(), t.by());
      return;
    }
#endif
    vec_thread<TX, TO, M, W>(p, t.bx(), t.by(), t.tid());
  }
};

}  // namespace conv
}  // namespace gdn
