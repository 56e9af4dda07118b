// conv arm `tile` (docs/SPEC.md §3.5): the fastest exact conv arm on an H200
// when it was added (CHANGELOG 2026-12-01, 0cc566a), one body for the CUDA kernel and the host backend.
//
// Channel-last tiles: a block owns THREADS·V consecutive channels and one program of the exact
// mapping (a run of `chunk` tokens of one sequence, chunk 0 owning the final state as in every exact
// arm); thread i owns V consecutive channels (one V·sizeof(TX)-byte vector per token row) and walks
// the run token by token with a K−1-value register window per channel. Rows are loaded in groups of
// G, and the next group's loads are issued before the current group is computed (two groups in
// flight per thread), so each thread keeps 2·G rows of loads outstanding without a staging buffer in
// shared memory and without a block barrier (the host backend runs it as a plain loop).
//
// Per element the arithmetic is the reference's, in the same order: acc = bias (or 0); for j = 0..K−1
// acc = fmaf(w[c][j], x_at(t − (K−1) + j), acc); out = round(silu(acc)) — so the bits equal scalar's.
// The common case of SiLU (every value of a row within gdn_silu_fast_range) runs as straight-line
// code; a row with any other value takes gdn_silu for all of its values (the same function).
//
// Planted mutants (conv_common.h) are honoured as vec honours them (compiled into the PlantedMutants
// instantiation only). Declares GDN_ARM_REQ_VEC8 (C and x_row_stride multiples of 8, 16-byte
// aligned x and out — more than the V = 4 vectors need); otherwise reg runs.
#pragma once

#include <cstring>

#include "common/arms/conv_common.h"

namespace gdn {
namespace conv {

// V values of T as one vector access (V·sizeof(T) bytes).
template <class T, int V>
struct TileVec;

template <int V>
struct TileVec<bf16_bits, V> {
  static_assert(V == 2 || V == 4 || V == 8, "bf16 tile vectors hold 2, 4 or 8 channels");
  uint32_t u[V / 2];
  GDN_HDI float get(int i) const { return bf16_to_f32((uint16_t)(u[i >> 1] >> ((i & 1) * 16))); }
  GDN_HDI void load(const bf16_bits* src) {
#if defined(__CUDA_ARCH__)
    if constexpr (V == 8) {
      const uint4 q = __ldg(reinterpret_cast<const uint4*>(src));
      u[0] = q.x; u[1] = q.y; u[2] = q.z; u[3] = q.w;
    } else if constexpr (V == 4) {
      const uint2 q = __ldg(reinterpret_cast<const uint2*>(src));
      u[0] = q.x; u[1] = q.y;
    } else {
      u[0] = __ldg(reinterpret_cast<const unsigned int*>(src));
    }
#else
    std::memcpy(u, src, V * 2);
#endif
  }
};

template <int V>
struct TileVec<float, V> {
  static_assert(V == 2 || V == 4 || V == 8, "f32 tile vectors hold 2, 4 or 8 channels");
  float f[V];
  GDN_HDI float get(int i) const { return f[i]; }
  GDN_HDI void load(const float* src) {
#if defined(__CUDA_ARCH__)
    if constexpr (V == 2) {
      const float2 a = __ldg(reinterpret_cast<const float2*>(src));
      f[0] = a.x; f[1] = a.y;
    } else {
      GDN_UNROLL
      for (int k = 0; k < V / 4; ++k) {
        const float4 a = __ldg(reinterpret_cast<const float4*>(src) + k);
        f[4 * k] = a.x; f[4 * k + 1] = a.y; f[4 * k + 2] = a.z; f[4 * k + 3] = a.w;
      }
    }
#else
    std::memcpy(f, src, V * 4);
#endif
  }
};

// Stores of V results, rounded once to TO. Written as PTX vector stores on the GPU (a plain vector
// assignment was split into 32-bit stores by NVVM, see conv_vec.h store8).
template <int V>
GDN_HDI void tile_store(bf16_bits* dst, const float (&y)[V]) {
  uint32_t u[V / 2];
  GDN_UNROLL
  for (int i = 0; i < V / 2; ++i) u[i] = f32x2_to_bf16x2(y[2 * i], y[2 * i + 1]);
#if defined(__CUDA_ARCH__)
  if constexpr (V == 8)
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "r"(u[0]), "r"(u[1]), "r"(u[2]), "r"(u[3]) : "memory");
  else if constexpr (V == 4)
    asm volatile("st.global.v2.u32 [%0], {%1, %2};" ::"l"(dst), "r"(u[0]), "r"(u[1]) : "memory");
  else
    asm volatile("st.global.u32 [%0], %1;" ::"l"(dst), "r"(u[0]) : "memory");
#else
  std::memcpy(dst, u, V * 2);
#endif
}
template <int V>
GDN_HDI void tile_store(float* dst, const float (&y)[V]) {
#if defined(__CUDA_ARCH__)
  if constexpr (V == 2) {
    asm volatile("st.global.v2.f32 [%0], {%1, %2};" ::"l"(dst), "f"(y[0]), "f"(y[1]) : "memory");
  } else {
    GDN_UNROLL
    for (int k = 0; k < V / 4; ++k)
      asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(dst + 4 * k), "f"(y[4 * k]), "f"(y[4 * k + 1]),
                   "f"(y[4 * k + 2]), "f"(y[4 * k + 3])
                   : "memory");
  }
#else
  std::memcpy(dst, y, V * 4);
#endif
}

// Launch shape of the library's tile arm, chosen with cuda/tests/tile_tune.cu on an H200 (two sweeps of
// 16 and 12 variants, CHANGELOG 2026-12-01, 0cc566a): 4 channels per thread (8-byte
// bf16 vectors), one row per group, 128 threads, registers capped at 64 (8 blocks, 50% occupancy),
// 32-token programs. It was the fastest exact variant on 6 of the 8 benchmark shapes and within 4% on
// the other two: 1.86x copy at Qwen3.5-4B T = 8192 (vec: 2.08x), 2.17x on the 32-sequence varlen batch
// (vec: 3.26x). ncu: 0.80 warp instructions issued per scheduler per cycle, DRAM at 42% of peak — the
// arm is bound by instruction issue (47 instructions per output), not by memory.
constexpr int kTileV = 4;        // channels per thread
constexpr int kTileG = 1;        // rows per group (two groups in flight)
constexpr int kTileThreads = 128;
constexpr int kTileMinBlocks = 8;  // __launch_bounds__ minimum blocks per SM: caps registers at 64
constexpr int kTileChannels = kTileV * kTileThreads;
constexpr int kTileChunk = 32;   // tokens per exact-mapping program

// One thread's lane of V channels in one program, shared by `tile` and `stream` (conv_stream.h):
// the weights right-aligned in W slots (slot W-1 multiplies the newest row, taps below W-K skipped),
// the biases, and the K-1 history rows before the program's first token (slots 1..W-1 of `win`,
// rows before the sequence start taken from the old state). What the planted mutants change here is
// the weight order (TAPS_REVERSED); the rest is the program's span (CHUNK_OFF_BY_ONE) and the rows.
template <class TX, int W, int V>
struct TileLane {
  float wr[V][W], win[V][W], b[V];

  GDN_HDI void load_taps(const Params& p, int64_t c0, bool reversed) {
    const int K = p.K;
    const TX* w = static_cast<const TX*>(p.w);
    GDN_UNROLL
    for (int i = 0; i < V; ++i) {
      b[i] = p.bias ? load(static_cast<const TX*>(p.bias), c0 + i) : 0.0f;
      GDN_UNROLL
      for (int jj = 0; jj < W; ++jj) {
        wr[i][jj] = jj >= W - K ? load(w, (c0 + i) * K + tap_of_slot(jj, W, K, reversed)) : 0.0f;
        win[i][jj] = 0.0f;
      }
    }
  }
  // History: slot jj holds row t0 - (W - jj); rows before the sequence come from the old state.
  // SPEC_STATE: the old state is read whether or not the sequence has one and then selected by `init`,
  // so its load does not wait for the initial-state flag's (conv_state is always N·C·(K−1) floats,
  // checked by the plan, so the read is in bounds; the value is discarded when init is false).
  template <bool SPEC_STATE = false>
  GDN_HDI void load_history(const Params& p, const Span& s, int64_t c0, bool init) {
    const int K = p.K;
    const TX* x = static_cast<const TX*>(p.x);
    GDN_UNROLL
    for (int jj = 1; jj < W; ++jj) {
      if (jj < W - K + 1) continue;
      const int64_t row = s.t0 - (W - jj);
      if (row >= s.start) {
        TileVec<TX, V> v;
        v.load(x + row * p.x_stride + c0);
        GDN_UNROLL
        for (int i = 0; i < V; ++i) win[i][jj] = v.get(i);
      } else {
        GDN_UNROLL
        for (int i = 0; i < V; ++i) {
          if constexpr (SPEC_STATE) {
            const float old = state_row(p, s.seq, c0 + i)[K - 1 + (row - s.start)];
            win[i][jj] = init ? old : 0.0f;
          } else {
            win[i][jj] = init ? state_row(p, s.seq, c0 + i)[K - 1 + (row - s.start)] : 0.0f;
          }
        }
      }
    }
  }
  // The final state, by the program that owns it, once its rows are done (win = the last W slots).
  GDN_HDI void write_state(const Params& p, const Span& s, int64_t c0, bool state_from_output) {
    const int K = p.K;
    if (s.t1c == s.end) {
      // The window ends at the sequence end: its last K-1 slots are the final state (this also covers
      // sequences shorter than K-1, whose window still holds shifted old state).
      GDN_UNROLL
      for (int jj = 1; jj < W; ++jj) {
        if (jj < W - K + 1) continue;
        const int j = jj - (W - K + 1);
        if (state_from_output && s.end - (K - 1) + j >= s.start) continue;
        GDN_UNROLL
        for (int i = 0; i < V; ++i) state_row(p, s.seq, c0 + i)[j] = win[i][jj];
      }
    } else if (!state_from_output) {
      // Chunk 0 of a longer sequence owns the state: the last K-1 inputs are rows of x.
      const TX* x = static_cast<const TX*>(p.x);
      for (int j = 0; j < K - 1; ++j) {
        TileVec<TX, V> v;
        v.load(x + (s.end - (K - 1) + j) * p.x_stride + c0);
        GDN_UNROLL
        for (int i = 0; i < V; ++i) state_row(p, s.seq, c0 + i)[j] = v.get(i);
      }
    }
  }
};

// M: NoMutant (production) or PlantedMutants; S: the SiLU (the tuning bench substitutes version 1 and
// the hardware approximation). Both mutant instances do the same arithmetic per element.
template <class TX, class TO, class M, int W, int V = kTileV, int G = kTileG, int THREADS = kTileThreads,
          class S = TileSilu>
GDN_HD inline void tile_thread(const Params& p, int64_t bx, int64_t by, int tid) {
  constexpr bool kMut = M::kPlanted;
  const int mutant = kMut ? p.mutant : 0;
  const int64_t c_lane = (bx * THREADS + tid) * V;
  const bool in_range = c_lane < p.C;  // C is a multiple of V: a vector is all in or all out
  if (!in_range && mutant != kNoTailGuard) return;
  const int64_t c0 = in_range ? c_lane : p.C - V;
  const Span s = program_span<M>(p, by);
  if (s.t0 >= s.t1) return;
  const int K = p.K;

  TileLane<TX, W, V> lane;
  float (&wr)[V][W] = lane.wr;
  float (&win)[V][W] = lane.win;
  float (&b)[V] = lane.b;
  lane.load_taps(p, c0, mutant == kTapsReversed);
  const bool init = has_initial_state(p, s.seq);
  widen_before_state_read(p, s);
  lane.load_history(p, s, c0, init);
  const TX* x = static_cast<const TX*>(p.x);

  // The hot loop walks pointers: xp at row t of x, op at row t of out (lane c_lane).
  const int n = (int)(s.t1c - s.t0);  // tokens of this program (< 2^31)
  const TX* xp = x + s.t0 * p.x_stride + c0;
  TO* op = static_cast<TO*>(p.out) + s.t0 * p.C + c_lane;
  const int64_t xs = p.x_stride, os = p.C;
  const int64_t out_left = kMut ? p.T * p.C - (s.t0 * p.C + c_lane) : 0;  // NO_TAIL_GUARD: drop spills past out
  auto row = [&](int k, const TileVec<TX, V>& v) {
    float acc[V];
    bool fast = true;
    GDN_UNROLL
    for (int i = 0; i < V; ++i) {
      GDN_UNROLL
      for (int jj = 0; jj + 1 < W; ++jj) win[i][jj] = win[i][jj + 1];
      win[i][W - 1] = v.get(i);
      acc[i] = apply_taps<W>(wr[i], win[i], K, b[i]);
      fast = fast && S::fast_range(acc[i]);
    }
    float y[V];
    if (fast) {
      GDN_UNROLL
      for (int i = 0; i < V; ++i) y[i] = S::fast(acc[i]);
    } else {
      GDN_UNROLL
      for (int i = 0; i < V; ++i) y[i] = S::any(acc[i]);
    }
    if (!kMut || (int64_t)k * os < out_left) tile_store<V>(op + (int64_t)k * os, y);
    if (kMut && mutant == kStateFromOutput && in_range) {
      const int64_t t = s.t0 + k;
      if (t >= s.end - (K - 1)) {
        GDN_UNROLL
        for (int i = 0; i < V; ++i) state_row(p, s.seq, c0 + i)[t - (s.end - (K - 1))] = y[i];
      }
    }
  };
  auto load_group = [&](TileVec<TX, V> (&g)[G], int k) {
    GDN_UNROLL
    for (int j = 0; j < G; ++j)
      if (k + j < n) g[j].load(xp + (int64_t)(k + j) * xs);
  };
  auto run_group = [&](const TileVec<TX, V> (&g)[G], int k) {
    GDN_UNROLL
    for (int j = 0; j < G; ++j)
      if (k + j < n) row(k + j, g[j]);
  };
  // Two groups in flight: group A is computed while group B's loads are outstanding, and so on.
  TileVec<TX, V> ga[G], gb[G];
  load_group(ga, 0);
  for (int k = 0; k < n;) {
    if (k + G < n) load_group(gb, k + G);
    run_group(ga, k);
    k += G;
    if (k >= n) break;
    if (k + G < n) load_group(ga, k + G);
    run_group(gb, k);
    k += G;
  }

  if (!in_range || !s.writes_state) return;
  lane.write_state(p, s, c0, kMut && mutant == kStateFromOutput);
}

struct ArmTile {
  static constexpr ArmSpec spec = {
      "tile", "4 channels per thread in 8-byte vectors, two rows in flight, 64 registers, 32-token chunks",
      kTileThreads, kTileMinBlocks, kTileChannels, kTileChunk, kAllMappings, 0, 0, 0, GDN_ARM_REQ_VEC8, GDN_CONV_REG, 0,
      kThreadsFixed, kLayoutNone};
  static constexpr int kVariants = 2;  // window width 4 (K <= 4) and kMaxK
  static int variant(const Params& p) { return p.K <= 4 ? 0 : 1; }

  template <class TX, class TO, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    tile_thread<TX, TO, M, V == 0 ? 4 : kMaxK>(p, t.bx(), t.by(), t.tid());
  }
};

}  // namespace conv
}  // namespace gdn
