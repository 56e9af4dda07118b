// conv_tile_smem.h — a shared-memory channel-last variant of the tile conv arm, measured by
// cuda/tests/tile_tune.cu and not a library arm: on an H200 it ran at 2.16–2.60x copy against the
// register arm's 1.77–2.21x (CHANGELOG 2026-12-01, 0cc566a), because it adds shared
// loads and stores per output to an arm already bound by instruction issue. Kept so that the
// comparison can be re-run. Written against the execution interface (t.tid(), t.bx(), t.by(),
// t.sync(), t.template smem<T>()) like a library arm.
#pragma once

#include <type_traits>

#include "common/arms/conv_tile.h"

namespace gdn {
namespace conv {

// ================================================================= tile-smem
// The channel-last tile of Dao-AILab's causal-conv1d channel-last kernel, in our arithmetic: a block of
// 128 threads owns 64 channels x one 64-token program (+ the K-1 halo rows before it). Three phases
// separated by block barriers (t.sync()):
//   load     the (64 + W-1) x 64 input tile into shared memory with 16-byte vectors (rows before the
//            sequence start are not loaded: they come from the old state in compute)
//   compute  thread (pair = tid % 32, quarter = tid / 32) computes channels 2·pair, 2·pair+1 for
//            tokens 16·quarter .. +15 from a register window (one 32-bit shared read per token for
//            bf16), writes the rounded results into an output tile in shared memory
//   store    the output tile to `out` with 16-byte vectors; chunk 0 writes the final state.
// Registers: one channel pair's window and weights, so many blocks fit an SM; no mutant is compiled
// into the kMut = false instance.
constexpr int kTsChannels = 64;
constexpr int kTsTokens = 64;
constexpr int kTsThreads = 128;
constexpr int kTsQuarter = kTsTokens / (kTsThreads / (kTsChannels / 2));  // 16 tokens per thread

template <class TX, class TO, int W>
GDN_HDI constexpr size_t tile_smem_bytes() {
  return (size_t)(kTsTokens + W - 1) * kTsChannels * sizeof(TX) + (size_t)kTsTokens * kTsChannels * sizeof(TO);
}

template <class T>
GDN_HDI void copy16(T* dst, const T* src) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<uint4*>(dst) = __ldg(reinterpret_cast<const uint4*>(src));
#else
  std::memcpy(dst, src, 16);
#endif
}
template <class T>
GDN_HDI void copy16_out(T* dst, const T* src) {
#if defined(__CUDA_ARCH__)
  const uint4 v = *reinterpret_cast<const uint4*>(src);
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
#else
  std::memcpy(dst, src, 16);
#endif
}

// Two consecutive channels from a shared row (one 32-bit read for bf16).
GDN_HDI void pair_get(const bf16_bits* q, float& lo, float& hi) {
  uint32_t u;
#if defined(__CUDA_ARCH__)
  u = *reinterpret_cast<const uint32_t*>(q);
#else
  std::memcpy(&u, q, 4);
#endif
  lo = bf16_to_f32((uint16_t)(u & 0xffffu));
  hi = bf16_to_f32((uint16_t)(u >> 16));
}
GDN_HDI void pair_get(const float* q, float& lo, float& hi) {
  lo = q[0];
  hi = q[1];
}
GDN_HDI void pair_put(bf16_bits* q, float lo, float hi) {
  const uint32_t u = f32x2_to_bf16x2(lo, hi);
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<uint32_t*>(q) = u;
#else
  std::memcpy(q, &u, 4);
#endif
}
GDN_HDI void pair_put(float* q, float lo, float hi) {
  q[0] = lo;
  q[1] = hi;
}

template <class TX, class TO, int W, class S = TileSilu, bool kMut = true, class Ctx>
GDN_HD inline void tile_smem_thread(const Params& p, Ctx& t) {
  const int mutant = kMut ? p.mutant : 0;
  const int tid = t.tid();
  const int64_t bx = t.bx();
  const Span s = program_span<std::conditional_t<kMut, PlantedMutants, NoMutant>>(p, t.by());
  if (s.t0 >= s.t1) return;  // block-uniform: no barrier is skipped by part of the block
  constexpr int kRows = kTsTokens + W - 1;
  constexpr int kInChunks = kTsChannels * (int)sizeof(TX) / 16;   // 16-byte chunks per input row
  constexpr int kOutChunks = kTsChannels * (int)sizeof(TO) / 16;
  constexpr int kInPer = 16 / (int)sizeof(TX), kOutPer = 16 / (int)sizeof(TO);
  TX* xin = t.template smem<TX>();                                       // [kRows][64]
  TO* yout = reinterpret_cast<TO*>(xin + (size_t)kRows * kTsChannels);   // [64][64]
  const TX* x = static_cast<const TX*>(p.x);
  const int64_t cbase = bx * kTsChannels;
  const int64_t row0 = s.t0 - (W - 1);  // shared row 0

  // ---- load
  for (int e = tid; e < kRows * kInChunks; e += kTsThreads) {
    const int r = e / kInChunks, ch = e % kInChunks;
    const int64_t row = row0 + r;
    int64_t c = cbase + (int64_t)ch * kInPer;
    if (row < s.start || row >= s.t1c) continue;
    if (c >= p.C) {
      if (mutant != kNoTailGuard) continue;
      c = p.C - kInPer;  // lanes past C read the last channels (only the mutant computes them)
    }
    copy16(xin + r * kTsChannels + ch * kInPer, x + row * p.x_stride + c);
  }
  t.sync();

  // ---- compute
  const int pair = tid % (kTsChannels / 2), quarter = tid / (kTsChannels / 2);
  const int64_t c_lane = cbase + 2 * pair;
  const bool in_range = c_lane < p.C;  // C is even: a pair is all in or all out
  const int64_t c0 = in_range ? c_lane : p.C - 2;
  const int K = p.K;
  const bool init = has_initial_state(p, s.seq);
  const int k0 = quarter * kTsQuarter;  // first token of this thread, relative to t0
  float win[2][W];
  if (in_range || mutant == kNoTailGuard) {
    const TX* w = static_cast<const TX*>(p.w);
    float wr[2][W], b[2];
    GDN_UNROLL
    for (int i = 0; i < 2; ++i) {
      b[i] = p.bias ? load(static_cast<const TX*>(p.bias), c0 + i) : 0.0f;
      GDN_UNROLL
      for (int jj = 0; jj < W; ++jj) {
        wr[i][jj] = jj >= W - K ? load(w, (c0 + i) * K + tap_of_slot(jj, W, K, mutant == kTapsReversed)) : 0.0f;
        win[i][jj] = 0.0f;
      }
    }
    if (k0 == 0) widen_before_state_read(p, s);
    GDN_UNROLL
    for (int jj = 1; jj < W; ++jj) {
      if (jj < W - K + 1) continue;
      const int64_t row = s.t0 + k0 - (W - jj);
      if (row >= s.start) {
        pair_get(xin + (row - row0) * kTsChannels + 2 * pair, win[0][jj], win[1][jj]);
      } else {
        GDN_UNROLL
        for (int i = 0; i < 2; ++i) win[i][jj] = init ? state_row(p, s.seq, c0 + i)[K - 1 + (row - s.start)] : 0.0f;
      }
    }
    const int kend = (int)(s.t1c - s.t0) < k0 + kTsQuarter ? (int)(s.t1c - s.t0) : k0 + kTsQuarter;
    for (int k = k0; k < kend; ++k) {
      float v0, v1;
      pair_get(xin + (k + W - 1) * kTsChannels + 2 * pair, v0, v1);
      GDN_UNROLL
      for (int jj = 0; jj + 1 < W; ++jj) {
        win[0][jj] = win[0][jj + 1];
        win[1][jj] = win[1][jj + 1];
      }
      win[0][W - 1] = v0;
      win[1][W - 1] = v1;
      const float a0 = apply_taps<W>(wr[0], win[0], K, b[0]);
      const float a1 = apply_taps<W>(wr[1], win[1], K, b[1]);
      float y0, y1;
      if (S::fast_range(a0) && S::fast_range(a1)) {
        y0 = S::fast(a0);
        y1 = S::fast(a1);
      } else {
        y0 = S::any(a0);
        y1 = S::any(a1);
      }
      pair_put(yout + k * kTsChannels + 2 * pair, y0, y1);
      if (kMut && mutant == kStateFromOutput && in_range) {
        const int64_t tt = s.t0 + k;
        if (tt >= s.end - (K - 1)) {
          state_row(p, s.seq, c0)[tt - (s.end - (K - 1))] = y0;
          state_row(p, s.seq, c0 + 1)[tt - (s.end - (K - 1))] = y1;
        }
      }
    }
  }
  t.sync();

  // ---- store
  TO* out = static_cast<TO*>(p.out);
  const int64_t out_elems = p.T * p.C;
  for (int e = tid; e < kTsTokens * kOutChunks; e += kTsThreads) {
    const int r = e / kOutChunks, ch = e % kOutChunks;
    const int64_t tt = s.t0 + r;
    const int64_t c = cbase + (int64_t)ch * kOutPer;
    if (tt >= s.t1c) continue;
    if (c >= p.C && mutant != kNoTailGuard) continue;
    const int64_t o = tt * p.C + c;  // lanes past C (the mutant) land in row tt + 1
    if (kMut && o + kOutPer > out_elems) continue;
    copy16_out(out + o, yout + r * kTsChannels + ch * kOutPer);
  }

  // ---- final state: chunk 0, one thread per channel pair (the old state was read before the
  // barrier above by this block only, so it is overwritten after every read of it)
  if (quarter != 0 || !in_range || !s.writes_state) return;
  float fin[2][W];
  GDN_UNROLL
  for (int j = 0; j + 1 < W; ++j) {
    if (j >= K - 1) continue;
    const int64_t row = s.end - (K - 1) + j;
    GDN_UNROLL
    for (int i = 0; i < 2; ++i)
      fin[i][j] = row >= s.start ? load(x, row * p.x_stride + c0 + i)
                                 : (init ? state_row(p, s.seq, c0 + i)[K - 1 + (row - s.start)] : 0.0f);
  }
  GDN_UNROLL
  for (int j = 0; j + 1 < W; ++j) {
    if (j >= K - 1) continue;
    if (kMut && mutant == kStateFromOutput && s.end - (K - 1) + j >= s.start) continue;  // written in compute
    GDN_UNROLL
    for (int i = 0; i < 2; ++i) state_row(p, s.seq, c0 + i)[j] = fin[i][j];
  }
}

}  // namespace conv
}  // namespace gdn
