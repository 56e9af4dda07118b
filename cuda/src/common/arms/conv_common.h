// conv_common.h — what every causal-conv arm body shares (docs/SPEC.md §3): the
// parameters and helpers of conv_params.h, the spec of arm_spec.h, and the register-window helpers
// of the register arms.
//
// Every arm computes, per (sequence, channel, token), exactly
//     acc = bias (or 0);  for j = 0..K-1: acc = fmaf(w[c][j], x_at(t - (K-1) + j), acc);
//     out = round(silu(acc))
// and leaves conv_state[s][c] = the last K-1 raw inputs. They differ only in how work is organised,
// so they give identical bits; the planted mutants (gdn_conv_mutant, compiled only into the
// PlantedMutants instantiation, see conv_params.h) are the exceptions:
//   TAPS_REVERSED      the kernel applied newest-to-oldest: w[c][K-1-j] multiplies x_at(t-(K-1)+j)
//                      (tap 0 lands on the current token; the fma chain still runs oldest first)
//   STATE_FROM_OUTPUT  state column j takes the f32 activation of token T_s-(K-1)+j, written by the
//                      thread that computes that token, instead of its raw input
//   NO_TAIL_GUARD      lanes past C in the last channel tile compute (reads clamped to channel C-1)
//                      and store at t*C + c, i.e. into row t+1
//   CHUNK_OFF_BY_ONE   exact-mapping programs stop one token early (7 of 8, 63 of 64)
#pragma once

#include "common/arms/arm_spec.h"
#include "common/conv_params.h"

namespace gdn {
namespace conv {

constexpr int kTapsReversed = GDN_CONV_MUTANT_TAPS_REVERSED;
constexpr int kStateFromOutput = GDN_CONV_MUTANT_STATE_FROM_OUTPUT;
constexpr int kNoTailGuard = GDN_CONV_MUTANT_NO_TAIL_GUARD;

// ----------------------------------------------------------------- register window helpers
// The window and the weights are right-aligned in W slots (slot W-1 = newest token); with a run-time
// K (W = kMaxK) taps below W-K are skipped, with a fixed K = W nothing is guarded.
template <int W>
GDN_HDI float apply_taps(const float (&wr)[W], const float (&win)[W], int K, float bias) {
  float acc = bias;
  GDN_UNROLL
  for (int jj = 0; jj < W; ++jj)
    if (jj >= W - K) acc = det_fma(wr[jj], win[jj], acc);
  return acc;
}

// SiLU of the production arithmetic (detmath.h) as a policy; the tuning bench substitutes version 1 and
// the hardware approximation to measure what the arithmetic costs.
struct TileSilu {
  static GDN_HDI bool fast_range(float x) { return gdn_silu_fast_range(x); }
  static GDN_HDI float fast(float x) { return gdn_silu_fast(x); }
  static GDN_HDI float any(float x) { return gdn_silu(x); }
};

// SiLU for a bf16 store (arm stream-mufu): on the GPU, silu_bf16_shortcut's value where its rounding
// test accepts it (its bf16 rounding is then gdn_silu's), else gdn_silu; on the host always gdn_silu
// (stream-mufu's host variants use TileSilu). Only for values that are stored as bf16 and nothing else.
// Over a group (silu_group, kGroupShortcut) the approximation runs for every value of a run of RUN rows
// and one test decides for the run: all accepted, or gdn_silu for all of them — one branch per run, not
// per value (CHANGELOG 2026-12-03, 5c83917). fast_range is therefore always true: no value needs the
// fast-range test first.
template <int RUN>
struct Bf16ShortcutSiluRun {
  static constexpr bool kGroupShortcut = true;
  static constexpr int kShortcutRows = RUN;
  static GDN_HDI bool fast_range(float) { return true; }
  static GDN_HDI float fast(float x) {  // one value (a program's last rows)
#if defined(__CUDA_ARCH__)
    float y;
    if (silu_bf16_shortcut(x, &y)) return y;
#endif
    return gdn_silu(x);
  }
  static GDN_HDI float any(float x) { return gdn_silu(x); }
};
using Bf16ShortcutSilu = Bf16ShortcutSiluRun<1>;  // stream-mufu's: one test per row of a group

// Whether SiLU policy S decides the shortcut per group (S::kGroupShortcut), without <type_traits>: these
// headers are also compiled by NVRTC for arms defined in a cell (docs/USER-ARMS.md).
template <class S>
GDN_HD constexpr auto group_shortcut(int) -> decltype(S::kGroupShortcut, bool()) {
  return S::kGroupShortcut;
}
template <class S>
GDN_HD constexpr bool group_shortcut(long) {
  return false;
}

// SiLU in place over a group of R x N pre-activations: the common case as straight-line code when `fast`
// (every value within gdn_silu_fast_range, tested by the caller once for the group), else S::any for all
// (the same function): two loops rather than a select per value. A group-shortcut policy (above) ignores
// `fast`: the shortcut for all values when its test accepts every one, else S::any for all.
template <class S, int R, int N>
GDN_HDI void silu_group(float (&y)[R][N], bool fast) {
#if defined(__CUDA_ARCH__)
  if constexpr (group_shortcut<S>(0)) {
    // Decided per run of S::kShortcutRows rows: a run's approximations and inputs are live together until
    // its test is known (a whole group of 16 spilled at the 72-register cap: tile_tune set 9, 5c83917).
    constexpr int kRun = S::kShortcutRows;
    static_assert(R % kRun == 0, "whole runs of rows");
    GDN_UNROLL
    for (int r0 = 0; r0 < R; r0 += kRun) {
      float a[kRun][N];
      bool all = true;
      GDN_UNROLL
      for (int r = 0; r < kRun; ++r)
        GDN_UNROLL
        for (int i = 0; i < N; ++i) {
          a[r][i] = silu_bf16_approx(y[r0 + r][i]);
          all = all & silu_bf16_shortcut_ok(y[r0 + r][i], a[r][i]);
        }
      if (all) {
        GDN_UNROLL
        for (int r = 0; r < kRun; ++r)
          GDN_UNROLL
          for (int i = 0; i < N; ++i) y[r0 + r][i] = a[r][i];
      } else {
        GDN_UNROLL
        for (int r = 0; r < kRun; ++r)
          GDN_UNROLL
          for (int i = 0; i < N; ++i) y[r0 + r][i] = S::any(y[r0 + r][i]);
      }
    }
    return;
  }
#endif
#if !defined(__CUDA_ARCH__)
  // The host: the group as one flat loop, which GCC's loop vectoriser turns into AVX2 code (8 values per
  // instruction; gdn_silu_fast has no branch), as `vec`'s host passes do (conv_vec.h). The same function per
  // value, so the same bits; the GPU keeps the unrolled form below.
  if (fast) {
    float(&v)[R * N] = *reinterpret_cast<float(*)[R * N]>(&y);  // the group as one array (same floats, same layout)
#pragma GCC ivdep
    for (int k = 0; k < R * N; ++k) v[k] = S::fast(v[k]);
    return;
  }
#endif
  if (fast) {
    GDN_UNROLL
    for (int r = 0; r < R; ++r)
      GDN_UNROLL
      for (int i = 0; i < N; ++i) y[r][i] = S::fast(y[r][i]);
  } else {
    GDN_UNROLL
    for (int r = 0; r < R; ++r)
      GDN_UNROLL
      for (int i = 0; i < N; ++i) y[r][i] = S::any(y[r][i]);
  }
}

// The pre-activations of a group of R rows of V channels with the register window indexed by constants
// (the `stream` arms, conv and fused): channel i's inputs are h[i][0..W-2] (its last W-1 inputs, oldest
// first) then x[0..R-1][i], row r's window is their run r .. r+W-1 (slot jj = r + jj), and h becomes the last
// W-1 of them. No value moves between registers inside the group. Returns whether every pre-activation is
// within S's fast range (one test for the group; silu_group takes it).
template <class S, int W, int R, int V>
GDN_HDI bool window_group(float (&h)[V][W - 1], const float (&x)[R][V], const float (&wr)[V][W], const float (&b)[V],
                          int K, float (&acc)[R][V]) {
  constexpr int H = W - 1;
  bool fast = true;
  GDN_UNROLL
  for (int i = 0; i < V; ++i) {
    float buf[H + R];
    GDN_UNROLL
    for (int j = 0; j < H; ++j) buf[j] = h[i][j];
    GDN_UNROLL
    for (int r = 0; r < R; ++r) buf[H + r] = x[r][i];
    GDN_UNROLL
    for (int r = 0; r < R; ++r) {
      float w_in[W];
      GDN_UNROLL
      for (int jj = 0; jj < W; ++jj) w_in[jj] = buf[r + jj];
      acc[r][i] = apply_taps<W>(wr[i], w_in, K, b[i]);
      fast = fast & S::fast_range(acc[r][i]);
    }
    GDN_UNROLL
    for (int j = 0; j < H; ++j) h[i][j] = buf[R + j];
  }
  return fast;
}

// Weight of slot jj (right-aligned taps); TAPS_REVERSED mirrors the kernel at load time.
GDN_HDI int tap_of_slot(int jj, int W, int K, bool reversed) {
  const int j = jj - (W - K);
  return reversed ? K - 1 - j : j;
}

// One channel's work in one program: preload the K-1 history inputs, then for each token shift the
// window, read x once, apply the taps from registers. KF = 0: K at run time (W = kMaxK); KF > 0: K
// fixed at KF (W = KF).
template <class TX, class TO, class M, int KF>
GDN_HD inline void reg_channel(const Params& p, const Span& s, int64_t c_lane) {
  constexpr int W = KF > 0 ? KF : kMaxK;
  const int K = KF > 0 ? KF : p.K;
  const bool in_range = c_lane < p.C;
  if (!in_range && !M::is(p, kNoTailGuard)) return;
  const int64_t c = in_range ? c_lane : p.C - 1;
  const TX* x = static_cast<const TX*>(p.x);
  const TX* w = static_cast<const TX*>(p.w) + c * K;
  float wr[W], win[W];
  GDN_UNROLL
  for (int jj = 0; jj < W; ++jj) {
    wr[jj] = jj >= W - K ? load(w, tap_of_slot(jj, W, K, M::is(p, kTapsReversed))) : 0.0f;
    win[jj] = 0.0f;
  }
  const float b = p.bias ? load(static_cast<const TX*>(p.bias), c) : 0.0f;
  const bool init = has_initial_state(p, s.seq);

  widen_before_state_read(p, s);
  // slot jj holds row t0 - (W - jj); the K-1 history rows fill slots W-K+1 .. W-1
  GDN_UNROLL
  for (int jj = 1; jj < W; ++jj)
    if (jj >= W - K + 1) win[jj] = input_at<TX>(p, s, init, s.t0 - (W - jj), c);

  const bool state_from_output = M::is(p, kStateFromOutput) && in_range;
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
      if (M::is(p, kStateFromOutput) && s.end - (K - 1) + j >= s.start) continue;
      st[j] = win[jj];
    }
  } else {
    // chunk 0 of a longer sequence: the last K-1 inputs are rows of x (T_s > chunk >= K-1).
    for (int j = 0; j < K - 1; ++j) {
      if (M::is(p, kStateFromOutput)) continue;
      st[j] = load(x, (s.end - (K - 1) + j) * p.x_stride + c);
    }
  }
}

}  // namespace conv
}  // namespace gdn
