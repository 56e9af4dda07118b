// conv arm `stream` (docs/SPEC.md §3.5): `tile`'s channel-last lanes with the token
// loop rebuilt to issue fewer instructions per output, one body for the CUDA kernel and the host
// backend.
//
// Why: on an H200 `tile` is bound by instruction issue, not by memory (CHANGELOG 2026-12-01, 0cc566a:
// 47 SASS instructions per output at 0.80 issued per scheduler per cycle, DRAM at 42%).
// The SiLU (22 operations) and the K fmas are the arithmetic every exact arm must do; the rest was
// bookkeeping that `stream` removes:
//   - rows come in groups of R = 4 and the register window is indexed by constants across the group
//     (h = the K-1 history values, then the group's R rows), so no value moves between registers
//     while a group is computed; only the last K-1 values become the next group's history;
//   - one range test per group: SiLU's common case runs for all R·V values when every one of them is
//     within gdn_silu_fast_range (the bitwise AND of the tests, no branch per row); otherwise the
//     group takes gdn_silu, the same function, for all of them;
//   - no bounds test per row inside a group (a group is whole by construction; the last n mod R rows
//     take `tile`'s per-row path);
//   - pointers advance once per group;
//   - each thread's rows arrive in a small ring in shared memory by asynchronous copies issued a group
//     ahead (async_copy.h), so the next group's loads are in flight while this one is computed without
//     holding registers; a thread reads only what it copied itself, so no block barrier is needed and
//     the host backend runs it as a plain loop (the copy is immediate there).
// The per-element arithmetic is the reference's, in the same order (conv_common.h), so the bits equal
// scalar's. Planted mutants are honoured as `tile` honours them (PlantedMutants instantiation only).
// Declares GDN_ARM_REQ_VEC8 like `tile`; otherwise reg runs.
#pragma once

#include "common/arms/conv_tile.h"
#include "common/async_copy.h"

namespace gdn {
namespace conv {

// Launch shape, chosen with cuda/tests/tile_tune.cu on an H200 (sets 3 to 5, CHANGELOG 2026-12-01,
// 891003a and 3bc32cb): 4 channels per thread, groups of 4 rows, 128 threads, registers capped at 72 (7 blocks
// per SM), 64-token programs, and a ring of row groups per thread in shared memory. Without the ring the
// fastest exact variant ran at 1.40-1.79x copy; with 2 groups 1.39-1.62x at T >= 2048 in the same run (set 5),
// 2-10% less time, most at T <= 8192. A second register buffer for the next group (set 4) needed 8 more
// registers and lost more to occupancy than it gained.
// The ring's size is fixed (kStreamRingBytes per thread, 16 KiB per block); its depth follows the dtype of x:
// 4 groups of bf16 rows, 2 of f32 rows. With the ring's first groups requested before the dependent loads of
// the program's start (RING_FIRST below), 4 bf16 groups took 2-6% less time than 2 at T >= 8192 and tied at
// T = 2048 and on short-sequence batches (in their 32-token programs); the order alone took 0-5% off (up to 6%
// with 4 groups) (set 10, CHANGELOG 2026-12-03, a5cc6a3). Deeper rings requested after those loads were no
// faster (sets 5 and 9).
constexpr int kStreamV = 4;        // channels per thread (8-byte bf16 vectors)
constexpr int kStreamR = 4;        // rows per group
constexpr int kStreamThreads = 128;
constexpr int kStreamMinBlocks = 7;
constexpr int kStreamChannels = kStreamV * kStreamThreads;
constexpr int kStreamChunk = 64;   // tokens per exact-mapping program
constexpr int kStreamShortBatchChunk = 32;  // ... on batches of short sequences (ArmSpec, conv_plan.cpp)
constexpr int kStreamRing = 2;     // row groups of f32 x in each thread's ring (async_copy.h)
constexpr int kStreamRingBytes = kStreamRing * kStreamR * kStreamV * (int)sizeof(float);  // per thread

// Shared memory of a block whose threads each keep a ring of `ring` groups of R rows of V channels, sized
// for f32 x (the widest input), so that one figure serves every dtype combination.
GDN_HD constexpr int32_t stream_ring_shared(int threads, int ring, int rows = kStreamR, int lanes = kStreamV) {
  return threads * ring * rows * lanes * (int32_t)sizeof(float);
}
// Row groups of x of type TX that fill kStreamRingBytes: 2 for f32, 4 for bf16.
template <class TX>
GDN_HD constexpr int stream_ring_depth() {
  return kStreamRingBytes / (kStreamR * (int)sizeof(TileVec<TX, kStreamV>));
}

// W: window slots; KF: the kernel width when fixed at compile time (the common K = 4: no per-tap test),
// 0 when K is read at run time (K <= W).
// D: row groups in a per-thread ring in shared memory, filled by asynchronous copies (async_copy.h):
// D − 1 groups are in flight while one is computed, at no register cost. 0: each group is loaded into
// registers when it starts. smem: the block's shared memory (stream_ring_shared(THREADS, D, R, V) bytes),
// unused when D = 0.
// RING_FIRST: the ring's first D − 1 groups are requested before the taps, the initial-state flag and the
// history are read, so the first x rows are in flight while those dependent loads (flag, then state) wait;
// false: after them (the order before a5cc6a3, kept as tile_tune's control). The bits are the same either way
// (the ring only holds copies of x rows).
template <class TX, class TO, class M, int W, int KF = 0, int V = kStreamV, int R = kStreamR,
          int THREADS = kStreamThreads, class S = TileSilu, int D = stream_ring_depth<TX>(), bool RING_FIRST = true,
          bool SPEC_STATE = false>
GDN_HD inline void stream_thread(const Params& p, int64_t bx, int64_t by, int tid, void* smem) {
  constexpr bool kMut = M::kPlanted;
  constexpr int H = W - 1;  // history values per channel
  const int mutant = kMut ? p.mutant : 0;
  const int64_t c_lane = (bx * THREADS + tid) * V;
  const bool in_range = c_lane < p.C;  // C is a multiple of V: a vector is all in or all out
  if (!in_range && mutant != kNoTailGuard) return;
  const int64_t c0 = in_range ? c_lane : p.C - V;
  const Span s = program_span<M>(p, by);
  if (s.t0 >= s.t1) return;
  static_assert(KF == 0 || KF == W, "a fixed K fills the window");
  const int K = KF > 0 ? KF : p.K;  // the planner picks the KF variant only when p.K == KF

  const int n = (int)(s.t1c - s.t0);  // tokens of this program (< 2^31)
  const TX* xp = static_cast<const TX*>(p.x) + s.t0 * p.x_stride + c0;

  // The ring (D > 0): slot (d, r) of this thread is ring[(d·R + r)·THREADS]; issue(gi) requests group gi
  // into slot gi mod D and commits one copy group (empty past the program's end, so counts stay even).
  using Vec = TileVec<TX, V>;
  Vec* ring = D > 0 ? static_cast<Vec*>(smem) + tid : nullptr;
  const unsigned groups = (unsigned)(n / R);
  const TX* src = xp;  // the next group to copy
  auto issue = [&](unsigned gi) {
    if constexpr (D > 0) {
      if (gi < groups) {
        Vec* dst = ring + (gi % D) * (R * THREADS);
        GDN_UNROLL
        for (int r = 0; r < R; ++r) exec::async_copy<(int)sizeof(Vec)>(dst + r * THREADS, src + (int64_t)r * p.x_stride);
        src += R * p.x_stride;
      }
      exec::async_commit();
    }
  };
  auto prime = [&]() {
    GDN_UNROLL
    for (int gi = 0; gi < D - 1; ++gi) issue((unsigned)gi);
  };
  if constexpr (D > 0 && RING_FIRST) prime();

  TileLane<TX, W, V> lane;
  lane.load_taps(p, c0, mutant == kTapsReversed);
  const bool init = has_initial_state(p, s.seq);
  widen_before_state_read(p, s);
  if (SPEC_STATE && p.widen_cycles == 0) lane.template load_history<true>(p, s, c0, init);
  else lane.load_history(p, s, c0, init);
  TO* op = static_cast<TO*>(p.out) + s.t0 * p.C + c_lane;
  const int64_t xs = p.x_stride, os = p.C;
  const int64_t out_left = kMut ? p.T * p.C - (s.t0 * p.C + c_lane) : 0;  // NO_TAIL_GUARD: drop spills past out

  // Row k of the program is done: its store (dropped past `out` under NO_TAIL_GUARD) and, under
  // STATE_FROM_OUTPUT, the mutant's state write from the activation.
  auto finish_row = [&](TO* dst, int k, const float (&y)[V]) {
    if (!kMut || (int64_t)k * os < out_left) tile_store<V>(dst, y);
    if (kMut && mutant == kStateFromOutput && in_range) {
      const int64_t t = s.t0 + k;
      if (t >= s.end - (K - 1)) {
        GDN_UNROLL
        for (int i = 0; i < V; ++i) state_row(p, s.seq, c0 + i)[t - (s.end - (K - 1))] = y[i];
      }
    }
  };

  // h[i][0..H-1]: channel i's last H inputs, oldest first (win slots 1..W-1 of TileLane).
  float h[V][H];
  GDN_UNROLL
  for (int i = 0; i < V; ++i)
    GDN_UNROLL
    for (int j = 0; j < H; ++j) h[i][j] = lane.win[i][j + 1];

  // One whole group of R rows (loaded in g), rows k .. k+R-1 at xp / op.
  auto group = [&](const TileVec<TX, V> (&g)[R], int k) {
    float x[R][V], acc[R][V];
    GDN_UNROLL
    for (int r = 0; r < R; ++r)
      GDN_UNROLL
      for (int i = 0; i < V; ++i) x[r][i] = g[r].get(i);
    const bool fast = window_group<S, W, R, V>(h, x, lane.wr, lane.b, K, acc);
    silu_group<S>(acc, fast);
    GDN_UNROLL
    for (int r = 0; r < R; ++r) finish_row(op + (int64_t)r * os, k + r, acc[r]);
    xp += R * xs;
    op += R * os;
  };
  auto load_group = [&](TileVec<TX, V> (&g)[R]) {  // the group at xp, into registers
    GDN_UNROLL
    for (int r = 0; r < R; ++r) g[r].load(xp + (int64_t)r * xs);
  };

  // Whole groups. D > 0: the ring is filled D − 1 groups ahead; each step refills the slot the
  // previous step consumed (its values are already in registers), then waits for the oldest group.
  // Every step commits one copy group, empty past the program's end, so the wait count stays D − 1.
  int k = 0;
  if constexpr (D > 0) {
    static_assert(D >= 2 && (D & (D - 1)) == 0, "the ring holds a power of two of at least 2 groups");
    static_assert(sizeof(Vec) <= V * sizeof(float), "stream_ring_shared sizes the ring for f32 vectors");
    if constexpr (!RING_FIRST) prime();
    for (unsigned gi = 0; gi < groups; ++gi, k += R) {
      issue(gi + D - 1);
      exec::async_wait<D - 1>();
      const Vec* slot = ring + (gi % D) * (R * THREADS);
      Vec g[R];
      GDN_UNROLL
      for (int r = 0; r < R; ++r) g[r] = slot[r * THREADS];
      group(g, k);
    }
  } else {
    for (; k + R <= n; k += R) {
      TileVec<TX, V> g[R];
      load_group(g);
      group(g, k);
    }
  }
  // The last n mod R rows, one at a time (`tile`'s row).
  for (; k < n; ++k) {
    TileVec<TX, V> v;
    v.load(xp);
    float acc[V];
    bool fast = true;
    GDN_UNROLL
    for (int i = 0; i < V; ++i) {
      float w_in[W];
      GDN_UNROLL
      for (int j = 0; j < H; ++j) w_in[j] = h[i][j];
      w_in[W - 1] = v.get(i);
      acc[i] = apply_taps<W>(lane.wr[i], w_in, K, lane.b[i]);
      fast = fast & S::fast_range(acc[i]);
      GDN_UNROLL
      for (int j = 0; j < H; ++j) h[i][j] = w_in[j + 1];
    }
    float y[V];
    GDN_UNROLL
    for (int i = 0; i < V; ++i) y[i] = fast ? S::fast(acc[i]) : S::any(acc[i]);
    finish_row(op, k, y);
    xp += xs;
    op += os;
  }

  if (!in_range || !s.writes_state) return;
  GDN_UNROLL
  for (int i = 0; i < V; ++i)
    GDN_UNROLL
    for (int j = 0; j < H; ++j) lane.win[i][j + 1] = h[i][j];
  lane.write_state(p, s, c0, kMut && mutant == kStateFromOutput);
}

// The stream arms' window variants with SiLU policy S: 0: K = 4 fixed (Qwen3.5's kernel); 1: K < 4 in a
// 4-slot window; 2: K > 4 in kMaxK slots.
constexpr int kStreamWindowVariants = 3;
GDN_HD inline int stream_window_variant(const Params& p) { return p.K == 4 ? 0 : p.K < 4 ? 1 : 2; }
template <class TX, class TO, class M, int WV, class S, class Ctx>
GDN_HD inline void stream_window_body(const Params& p, Ctx& t) {
  // The ring a thread fills must fit the shared memory the arm declares (ArmSpec below), for every dtype.
  static_assert(stream_ring_depth<TX>() * kStreamR * kStreamThreads * (int)sizeof(TileVec<TX, kStreamV>) <=
                    stream_ring_shared(kStreamThreads, kStreamRing),
                "the stream ring outgrows the arm's shared memory");
  if constexpr (WV == 0) stream_thread<TX, TO, M, 4, 4, kStreamV, kStreamR, kStreamThreads, S>(p, t.bx(), t.by(), t.tid(), t.shared());
  else if constexpr (WV == 1) stream_thread<TX, TO, M, 4, 0, kStreamV, kStreamR, kStreamThreads, S>(p, t.bx(), t.by(), t.tid(), t.shared());
  else stream_thread<TX, TO, M, kMaxK, 0, kStreamV, kStreamR, kStreamThreads, S>(p, t.bx(), t.by(), t.tid(), t.shared());
}

struct ArmStream {
  static constexpr ArmSpec spec = {
      "stream", "tile's lanes, rows in groups of 4 with a constant-indexed window and one SiLU range test per group; 32-token programs on short-sequence batches",
      kStreamThreads, kStreamMinBlocks, kStreamChannels, kStreamChunk, kAllMappings,
      stream_ring_shared(kStreamThreads, kStreamRing), 0, 0, GDN_ARM_REQ_VEC8,
      GDN_CONV_REG, 0, kThreadsFixed, kLayoutNone, kStreamShortBatchChunk};
  static constexpr int kVariants = kStreamWindowVariants;  // stream_window_variant
  static int variant(const Params& p) { return stream_window_variant(p); }

  template <class TX, class TO, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    stream_window_body<TX, TO, M, V, TileSilu>(p, t);
  }
};

}  // namespace conv
}  // namespace gdn
