// conv_arms.h — the per-thread bodies of the causal-conv arms (DOMAIN.md §3), shared by the CUDA
// kernels (cuda/conv.cu wraps each in a __global__) and the host backend (host/conv_host.cpp runs
// them over the same (block, thread) index space in a chosen block order).
//
// Every arm computes, per (sequence, channel, token), exactly
//     acc = bias (or 0);  for j = 0..K-1: acc = fmaf(w[c][j], x_at(t - (K-1) + j), acc);
//     out = round(silu(acc))
// and leaves conv_state[s][c] = the last K-1 raw inputs. They differ only in how work is organised,
// so they give identical bits; the mutants (gdn_conv_mutant) are the planted exceptions:
//   TAPS_REVERSED      the kernel applied newest-to-oldest: w[c][K-1-j] multiplies x_at(t-(K-1)+j)
//                      (tap 0 lands on the current token; the fma chain still runs oldest first)
//   STATE_FROM_OUTPUT  state column j takes the f32 activation of token T_s-(K-1)+j, written by the
//                      thread that computes that token, instead of its raw input
//   NO_TAIL_GUARD      lanes past C in the last channel tile compute (reads clamped to channel C-1)
//                      and store at t*C + c, i.e. into row t+1
//   CHUNK_OFF_BY_ONE   exact-mapping programs stop one token early (7 of 8, 63 of 64)
#pragma once

#include "common/conv_params.h"

namespace gdn {
namespace conv {

constexpr int kTapsReversed = GDN_CONV_MUTANT_TAPS_REVERSED;
constexpr int kStateFromOutput = GDN_CONV_MUTANT_STATE_FROM_OUTPUT;
constexpr int kNoTailGuard = GDN_CONV_MUTANT_NO_TAIL_GUARD;

// ================================================================= scalar
// One thread per (sequence, channel), serial over tokens; every tap re-reads its input (x or the old
// state). The reference: nothing is cached, so nothing can be stale.
template <class TX, class TO>
GDN_HD inline void scalar_thread(const Params& p, int64_t bx, int64_t by, int tid) {
  const int64_t c_lane = bx * kScalarTile + tid;
  const bool in_range = c_lane < p.C;
  if (!in_range && p.mutant != kNoTailGuard) return;
  const int64_t c = in_range ? c_lane : p.C - 1;
  const Span s = program_span(p, by);
  if (s.end == s.start) return;  // an empty sequence leaves its state as it was
  const int K = p.K;
  const bool init = has_initial_state(p, s.seq);
  const TX* w = static_cast<const TX*>(p.w) + c * K;
  const float b = p.bias ? load(static_cast<const TX*>(p.bias), c) : 0.0f;

  // The final state, taken before any token is computed (the state is read in place).
  float fin[kMaxK - 1];
  for (int j = 0; j < K - 1; ++j) fin[j] = input_at<TX>(p, s, init, s.end - (K - 1) + j, c);

  for (int64_t t = s.start; t < s.end; ++t) {
    float acc = b;
    for (int j = 0; j < K; ++j) {
      const int tap = p.mutant == kTapsReversed ? K - 1 - j : j;
      acc = det_fma(load(w, tap), input_at<TX>(p, s, init, t - (K - 1) + j, c), acc);
    }
    const float y = gdn_silu(acc);
    store_out<TO>(p, t, c_lane, y);
    if (p.mutant == kStateFromOutput && t >= s.end - (K - 1)) fin[t - (s.end - (K - 1))] = y;
  }
  if (in_range) {
    float* st = state_row(p, s.seq, c);
    for (int j = 0; j < K - 1; ++j) st[j] = fin[j];
  }
}

// ================================================================= tiled
// A block owns (32 channels, one sequence). Shared memory holds rows of a virtual input of
// K-1 + T_s rows (the K-1 history rows, then the tokens): for tile i (tokens 16i .. 16i+15) row r
// is virtual row 16i + r, r < 16 + K-1. Phases, separated by barriers:
//   init (history rows) | per tile: load 16 token rows | compute | shift the K-1 halo rows down
//   | final state (from shared memory).
// 128 threads: loads are spread over all of them; in compute thread (ty, tx) = (tid/32, tid%32)
// does tokens ty, ty+4, ty+8, ty+12 of channel tx.
struct TiledBlock {
  Span s;
  bool init;
};

GDN_HDI int tiled_rows(int K) { return kTiledTokens + K - 1; }
GDN_HDI int64_t tiled_tiles(const Span& s) { return (s.end - s.start + kTiledTokens - 1) / kTiledTokens; }

GDN_HDI TiledBlock tiled_block(const Params& p, int64_t by) {
  TiledBlock tb;
  tb.s = program_span(p, by);
  tb.init = tb.s.end > tb.s.start && has_initial_state(p, tb.s.seq);
  return tb;
}

// Channel of tile column ch, clamped for the reads of lanes past C (only alive under NO_TAIL_GUARD).
GDN_HDI int64_t tiled_channel(const Params& p, int64_t bx, int ch, bool* in_range) {
  const int64_t c_lane = bx * kTiledTile + ch;
  *in_range = c_lane < p.C;
  return *in_range ? c_lane : p.C - 1;
}

template <class TX>
GDN_HD inline void tiled_init(const Params& p, const TiledBlock& tb, float* sm, int64_t bx, int tid) {
  if (tid >= kTiledTile) return;
  bool in_range;
  const int64_t c = tiled_channel(p, bx, tid, &in_range);
  for (int r = 0; r < p.K - 1; ++r) sm[r * kTiledTile + tid] = input_at<TX>(p, tb.s, tb.init, tb.s.start - (p.K - 1) + r, c);
}

template <class TX>
GDN_HD inline void tiled_load(const Params& p, const TiledBlock& tb, float* sm, int64_t bx, int tid, int64_t tile) {
  for (int e = tid; e < kTiledTokens * kTiledTile; e += kThreads) {
    const int k = e / kTiledTile, ch = e % kTiledTile;
    const int64_t t = tb.s.start + tile * kTiledTokens + k;
    if (t >= tb.s.end) continue;
    bool in_range;
    const int64_t c = tiled_channel(p, bx, ch, &in_range);
    sm[(p.K - 1 + k) * kTiledTile + ch] = load(static_cast<const TX*>(p.x), t * p.x_stride + c);
  }
}

template <class TX, class TO>
GDN_HD inline void tiled_compute(const Params& p, const TiledBlock& tb, const float* sm, int64_t bx, int tid, int64_t tile) {
  const int ch = tid % kTiledTile;
  bool in_range;
  const int64_t c = tiled_channel(p, bx, ch, &in_range);
  if (!in_range && p.mutant != kNoTailGuard) return;
  const int K = p.K;
  const TX* w = static_cast<const TX*>(p.w) + c * K;
  const float b = p.bias ? load(static_cast<const TX*>(p.bias), c) : 0.0f;
  const int64_t c_lane = bx * kTiledTile + ch;
  for (int k = tid / kTiledTile; k < kTiledTokens; k += kThreads / kTiledTile) {
    const int64_t t = tb.s.start + tile * kTiledTokens + k;
    if (t >= tb.s.end) break;
    float acc = b;
    for (int j = 0; j < K; ++j) {
      const int tap = p.mutant == kTapsReversed ? K - 1 - j : j;
      acc = det_fma(load(w, tap), sm[(k + j) * kTiledTile + ch], acc);
    }
    const float y = gdn_silu(acc);
    store_out<TO>(p, t, c_lane, y);
    // The state is read only in init, so the mutant may write its columns straight away.
    if (p.mutant == kStateFromOutput && in_range && t >= tb.s.end - (K - 1))
      state_row(p, tb.s.seq, c)[t - (tb.s.end - (K - 1))] = y;
  }
}

GDN_HD inline void tiled_shift(const Params& p, float* sm, int tid) {
  if (tid >= kTiledTile) return;
  for (int r = 0; r < p.K - 1; ++r) sm[r * kTiledTile + tid] = sm[(kTiledTokens + r) * kTiledTile + tid];
}

GDN_HD inline void tiled_final_state(const Params& p, const TiledBlock& tb, const float* sm, int64_t bx, int tid) {
  if (tid >= kTiledTile) return;
  bool in_range;
  const int64_t c = tiled_channel(p, bx, tid, &in_range);
  if (!in_range) return;
  const int64_t Ts = tb.s.end - tb.s.start;
  const int64_t last_tile = tiled_tiles(tb.s) - 1;
  float* st = state_row(p, tb.s.seq, c);
  for (int j = 0; j < p.K - 1; ++j) {
    if (p.mutant == kStateFromOutput && tb.s.end - (p.K - 1) + j >= tb.s.start) continue;  // written in compute
    st[j] = sm[(Ts + j - last_tile * kTiledTokens) * kTiledTile + tid];
  }
}

// ================================================================= register window (reg, reg-k4, reg-k4x2)
// One channel's work in one program: preload the K-1 history inputs, then for each token shift the
// window, read x once, apply the taps from registers. The window and the weights are right-aligned
// in W slots (slot W-1 = newest token); with KF = 0 (reg) W = kMaxK and taps below W-K are skipped,
// with KF = 4 (reg-k4, reg-k4x2) W = 4 and nothing is guarded.
template <int W>
GDN_HDI float apply_taps(const float (&wr)[W], const float (&win)[W], int K, float bias) {
  float acc = bias;
  GDN_UNROLL
  for (int jj = 0; jj < W; ++jj)
    if (jj >= W - K) acc = det_fma(wr[jj], win[jj], acc);
  return acc;
}

// Weight of slot jj (right-aligned taps); TAPS_REVERSED mirrors the kernel at load time.
GDN_HDI int tap_of_slot(int jj, int W, int K, bool reversed) {
  const int j = jj - (W - K);
  return reversed ? K - 1 - j : j;
}

template <class TX, class TO, int KF>
GDN_HD inline void reg_channel(const Params& p, const Span& s, int64_t c_lane) {
  constexpr int W = KF > 0 ? KF : kMaxK;
  const int K = KF > 0 ? KF : p.K;
  const bool in_range = c_lane < p.C;
  if (!in_range && p.mutant != kNoTailGuard) return;
  const int64_t c = in_range ? c_lane : p.C - 1;
  const TX* x = static_cast<const TX*>(p.x);
  const TX* w = static_cast<const TX*>(p.w) + c * K;
  float wr[W], win[W];
  GDN_UNROLL
  for (int jj = 0; jj < W; ++jj) {
    wr[jj] = jj >= W - K ? load(w, tap_of_slot(jj, W, K, p.mutant == kTapsReversed)) : 0.0f;
    win[jj] = 0.0f;
  }
  const float b = p.bias ? load(static_cast<const TX*>(p.bias), c) : 0.0f;
  const bool init = has_initial_state(p, s.seq);

  widen_before_state_read(p, s);
  // slot jj holds row t0 - (W - jj); the K-1 history rows fill slots W-K+1 .. W-1
  GDN_UNROLL
  for (int jj = 1; jj < W; ++jj)
    if (jj >= W - K + 1) win[jj] = input_at<TX>(p, s, init, s.t0 - (W - jj), c);

  const bool state_from_output = p.mutant == kStateFromOutput && in_range;
  for (int64_t t = s.t0; t < s.t1c; ++t) {
    GDN_UNROLL
    for (int jj = 0; jj + 1 < W; ++jj) win[jj] = win[jj + 1];
    win[W - 1] = load(x, t * p.x_stride + c);
    const float y = gdn_silu(apply_taps<W>(wr, win, K, b));
    store_out<TO>(p, t, c_lane, y);
    if (state_from_output && t >= s.end - (K - 1)) state_row(p, s.seq, c)[t - (s.end - (K - 1))] = y;
  }

  if (!in_range || !s.writes_state) return;
  float* st = state_row(p, s.seq, c);
  if (s.t1c == s.end) {
    // The window ends at the sequence end: its last K-1 slots are the final state (this also covers
    // sequences shorter than K-1, whose window still holds shifted old state).
    GDN_UNROLL
    for (int jj = 1; jj < W; ++jj) {
      if (jj < W - K + 1) continue;
      const int j = jj - (W - K + 1);
      if (p.mutant == kStateFromOutput && s.end - (K - 1) + j >= s.start) continue;
      st[j] = win[jj];
    }
  } else {
    // chunk 0 of a longer sequence: the last K-1 inputs are rows of x (T_s > chunk >= K-1).
    for (int j = 0; j < K - 1; ++j) {
      if (p.mutant == kStateFromOutput) continue;
      st[j] = load(x, (s.end - (K - 1) + j) * p.x_stride + c);
    }
  }
}

template <class TX, class TO>
GDN_HD inline void reg_thread(const Params& p, int64_t bx, int64_t by, int tid) {
  const Span s = program_span(p, by);
  if (s.t0 >= s.t1) return;
  reg_channel<TX, TO, 0>(p, s, bx * kRegTile + tid);
}

template <class TX, class TO>
GDN_HD inline void reg_k4_thread(const Params& p, int64_t bx, int64_t by, int tid) {
  const Span s = program_span(p, by);
  if (s.t0 >= s.t1) return;
  reg_channel<TX, TO, 4>(p, s, bx * kRegTile + tid);
}

// Two stripes per thread, c and c + 128, one after the other: the second stripe reads its state
// only after the first stripe's whole chunk (the late read that once exposed #305).
template <class TX, class TO>
GDN_HD inline void reg_k4x2_thread(const Params& p, int64_t bx, int64_t by, int tid) {
  const Span s = program_span(p, by);
  if (s.t0 >= s.t1) return;
  reg_channel<TX, TO, 4>(p, s, bx * kRegX2Tile + tid);
  reg_channel<TX, TO, 4>(p, s, bx * kRegX2Tile + kRegTile + tid);
}

// ================================================================= vec (roofline arm)
// 8 consecutive channels per thread, moved as 16-byte vectors (one for bf16, two for f32), a
// register window per channel, kVecGroup token rows loaded before any is used (loads in flight).
// Exact mapping: 64-token programs (halo of K-1 rows re-read from x); sequence mapping: one program
// per sequence. Requires C and x_row_stride multiples of 8 and 16-byte aligned x and out.
// On an H200 (bf16, K = 4, T = 8192) it runs at ~41% of the copy rate (C = 8192: 162 us vs 67 us):
// it is bound by instruction issue, not memory — each output costs ~35 instructions of deterministic
// exp (magic-number rint, degree-8 polynomial), IEEE division and conversions. Measured variants:
// cuda/tests/vec_tune.cu (G = 4 rows in flight and a 128-register cap were best).
template <class T>
struct Vec8;  // eight values of T as loaded from memory

template <>
struct Vec8<bf16_bits> {
  uint32_t u[4];
  GDN_HDI float get(int i) const { return bf16_to_f32((uint16_t)(u[i >> 1] >> ((i & 1) * 16))); }
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
template <class TX, class TO, int W, int G = kVecGroup, int THREADS = kThreads>
GDN_HD inline void vec_thread(const Params& p, int64_t bx, int64_t by, int tid) {
  const int64_t c_lane = (bx * THREADS + tid) * kVecLanes;
  const bool in_range = c_lane < p.C;  // C is a multiple of 8: a group is all in or all out
  if (!in_range && p.mutant != kNoTailGuard) return;
  const int64_t c0 = in_range ? c_lane : p.C - kVecLanes;
  const Span s = program_span(p, by);
  if (s.t0 >= s.t1) return;
  const int K = p.K;
  const TX* x = static_cast<const TX*>(p.x);
  const TX* w = static_cast<const TX*>(p.w);

  float wr[kVecLanes][W], win[kVecLanes][W], b[kVecLanes];
  GDN_UNROLL
  for (int i = 0; i < kVecLanes; ++i) {
    b[i] = p.bias ? load(static_cast<const TX*>(p.bias), c0 + i) : 0.0f;
    GDN_UNROLL
    for (int jj = 0; jj < W; ++jj) {
      wr[i][jj] = jj >= W - K ? load(w, (c0 + i) * K + tap_of_slot(jj, W, K, p.mutant == kTapsReversed)) : 0.0f;
      win[i][jj] = 0.0f;
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
      for (int i = 0; i < kVecLanes; ++i) win[i][jj] = v.get(i);
    } else {
      GDN_UNROLL
      for (int i = 0; i < kVecLanes; ++i)
        win[i][jj] = init ? state_row(p, s.seq, c0 + i)[K - 1 + (row - s.start)] : 0.0f;
    }
  }

  const bool state_from_output = p.mutant == kStateFromOutput && in_range;
  TO* out = static_cast<TO*>(p.out);
  const int64_t out_elems = p.T * p.C;
  // Row t's results: store (a NO_TAIL_GUARD spill past the last row is dropped), and the mutant.
  auto emit = [&](int64_t t, const float (&y)[kVecLanes]) {
    const int64_t o = t * p.C + c_lane;
    if (o < out_elems) store8(out + o, y);
    if (state_from_output && t >= s.end - (K - 1)) {
      GDN_UNROLL
      for (int i = 0; i < kVecLanes; ++i) state_row(p, s.seq, c0 + i)[t - (s.end - (K - 1))] = y[i];
    }
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
        for (int i = 0; i < kVecLanes; ++i) {
          GDN_UNROLL
          for (int jj = 0; jj + 1 < W; ++jj) win[i][jj] = win[i][jj + 1];
          win[i][W - 1] = rows[g].get(i);
          acc[g][i] = apply_taps<W>(wr[i], win[i], K, b[i]);
          fast = fast && gdn_silu_fast_range(acc[g][i]);
        }
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
          for (int jj = 0; jj + 1 < W; ++jj) win[i][jj] = win[i][jj + 1];
          win[i][W - 1] = rows[g].get(i);
          y[i] = gdn_silu(apply_taps<W>(wr[i], win[i], K, b[i]));
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
      if (p.mutant == kStateFromOutput && s.end - (K - 1) + j >= s.start) continue;
      GDN_UNROLL
      for (int i = 0; i < kVecLanes; ++i) state_row(p, s.seq, c0 + i)[j] = win[i][jj];
    }
  } else if (p.mutant != kStateFromOutput) {
    for (int j = 0; j < K - 1; ++j) {
      Vec8<TX> v;
      load8(x + (s.end - (K - 1) + j) * p.x_stride + c0, v);
      GDN_UNROLL
      for (int i = 0; i < kVecLanes; ++i) state_row(p, s.seq, c0 + i)[j] = v.get(i);
    }
  }
}

}  // namespace conv
}  // namespace gdn
