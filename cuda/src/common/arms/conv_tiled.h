// conv arm `tiled` (docs/SPEC.md, "Causal conv: arms"): a block owns (32 channels, one sequence).
// Shared memory holds rows of a virtual input of K-1 + T_s rows (the K-1 history rows, then the
// tokens): for tile i (tokens 16i .. 16i+15) row r is virtual row 16i + r, r < 16 + K-1. Phases,
// separated by block barriers (t.sync(): __syncthreads on CUDA, fibers on the host):
//   init (history rows) | per tile: load 16 token rows | compute | shift the K-1 halo rows down
//   | final state (from shared memory).
// 128 threads: loads are spread over all of them; in compute thread (ty, tx) = (tid/32, tid%32)
// does tokens ty, ty+4, ty+8, ty+12 of channel tx.
#pragma once

#include "common/arms/conv_common.h"

namespace gdn {
namespace conv {

struct ArmTiled {
  static constexpr ArmSpec spec = {
      "tiled", "shared-memory tile of (16 + K-1) tokens x 32 channels, one block per (channel tile, sequence), barriers",
      kThreads, 1, kTiledTile, 0, kWholeSequences, (kTiledTokens - 1) * kTiledTile * 4, kTiledTile * 4, 0, 0, -1,
      GDN_ARM_BARRIER, kThreadsFixed, kLayoutNone};
  static constexpr int kVariants = 1;
  static int variant(const Params&) { return 0; }

  struct Block {
    Span s;
    bool init;
  };

  GDN_HDI static int64_t tiles(const Span& s) { return (s.end - s.start + kTiledTokens - 1) / kTiledTokens; }

  // Channel of tile column ch, clamped for the reads of lanes past C (only alive under NO_TAIL_GUARD).
  GDN_HDI static int64_t channel(const Params& p, int64_t bx, int ch, bool* in_range) {
    const int64_t c_lane = bx * kTiledTile + ch;
    *in_range = c_lane < p.C;
    return *in_range ? c_lane : p.C - 1;
  }

  template <class TX>
  GDN_HD static void init_rows(const Params& p, const Block& tb, float* sm, int64_t bx, int tid) {
    if (tid >= kTiledTile) return;
    bool in_range;
    const int64_t c = channel(p, bx, tid, &in_range);
    for (int r = 0; r < p.K - 1; ++r) sm[r * kTiledTile + tid] = input_at<TX>(p, tb.s, tb.init, tb.s.start - (p.K - 1) + r, c);
  }

  template <class TX>
  GDN_HD static void load_tile(const Params& p, const Block& tb, float* sm, int64_t bx, int tid, int64_t tile) {
    for (int e = tid; e < kTiledTokens * kTiledTile; e += kThreads) {
      const int k = e / kTiledTile, ch = e % kTiledTile;
      const int64_t t = tb.s.start + tile * kTiledTokens + k;
      if (t >= tb.s.end) continue;
      bool in_range;
      const int64_t c = channel(p, bx, ch, &in_range);
      sm[(p.K - 1 + k) * kTiledTile + ch] = load(static_cast<const TX*>(p.x), t * p.x_stride + c);
    }
  }

  template <class TX, class TO, class M>
  GDN_HD static void compute(const Params& p, const Block& tb, const float* sm, int64_t bx, int tid, int64_t tile) {
    const int ch = tid % kTiledTile;
    bool in_range;
    const int64_t c = channel(p, bx, ch, &in_range);
    if (!in_range && !M::is(p, kNoTailGuard)) return;
    const int K = p.K;
    const TX* w = static_cast<const TX*>(p.w) + c * K;
    const float b = p.bias ? load(static_cast<const TX*>(p.bias), c) : 0.0f;
    const int64_t c_lane = bx * kTiledTile + ch;
    for (int k = tid / kTiledTile; k < kTiledTokens; k += kThreads / kTiledTile) {
      const int64_t t = tb.s.start + tile * kTiledTokens + k;
      if (t >= tb.s.end) break;
      float acc = b;
      for (int j = 0; j < K; ++j) {
        const int tap = M::is(p, kTapsReversed) ? K - 1 - j : j;
        acc = det_fma(load(w, tap), sm[(k + j) * kTiledTile + ch], acc);
      }
      const float y = gdn_silu(acc);
      store_out<TO>(p, t, c_lane, y);
      // The state is read only in init, so the mutant may write its columns straight away.
      if (M::is(p, kStateFromOutput) && in_range && t >= tb.s.end - (K - 1))
        state_row(p, tb.s.seq, c)[t - (tb.s.end - (K - 1))] = y;
    }
  }

  GDN_HD static void shift(const Params& p, float* sm, int tid) {
    if (tid >= kTiledTile) return;
    for (int r = 0; r < p.K - 1; ++r) sm[r * kTiledTile + tid] = sm[(kTiledTokens + r) * kTiledTile + tid];
  }

  template <class M>
  GDN_HD static void final_state(const Params& p, const Block& tb, const float* sm, int64_t bx, int tid) {
    if (tid >= kTiledTile) return;
    bool in_range;
    const int64_t c = channel(p, bx, tid, &in_range);
    if (!in_range) return;
    const int64_t Ts = tb.s.end - tb.s.start;
    const int64_t last_tile = tiles(tb.s) - 1;
    float* st = state_row(p, tb.s.seq, c);
    for (int j = 0; j < p.K - 1; ++j) {
      if (M::is(p, kStateFromOutput) && tb.s.end - (p.K - 1) + j >= tb.s.start) continue;  // written in compute
      st[j] = sm[(Ts + j - last_tile * kTiledTokens) * kTiledTile + tid];
    }
  }

  template <class TX, class TO, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    const int64_t bx = t.bx();
    Block tb;
    tb.s = program_span<M>(p, t.by());
    if (tb.s.end == tb.s.start) return;  // the whole block: no thread reaches a barrier
    tb.init = has_initial_state(p, tb.s.seq);
    float* sm = t.smem();
    const int tid = t.tid();
    init_rows<TX>(p, tb, sm, bx, tid);
    const int64_t n = tiles(tb.s);
    for (int64_t i = 0; i < n; ++i) {
      t.sync();
      load_tile<TX>(p, tb, sm, bx, tid, i);
      t.sync();
      compute<TX, TO, M>(p, tb, sm, bx, tid, i);
      if (i + 1 < n) {
        t.sync();
        shift(p, sm, tid);
      }
    }
    t.sync();
    final_state<M>(p, tb, sm, bx, tid);
  }
};

}  // namespace conv
}  // namespace gdn
