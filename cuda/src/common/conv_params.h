// conv_params.h — what a causal-conv kernel receives (a plain struct, passed by value to every
// kernel), the launch shapes of the arms, and the small helpers every arm shares: where a program's
// tokens are, who owns the state, loads and stores in each storage dtype.
//
// Index space: a launch is a grid of (grid_x = channel tiles) x (grid_y = programs) blocks; linear
// block index = y * grid_x + x. The CUDA backend launches the linear index as blockIdx.x (a 1-D grid:
// programs can exceed gridDim.y); the host backend runs the linear indices in its schedule's order.
// Arm bodies see it through common/exec.h (t.bx() = channel tile, t.by() = program).
#pragma once

#include "common/arms/arm_spec.h"
#include "common/exec.h"
#include "common/detmath.h"
#include "common/plan_lists.h"
#include "gdn.h"

#include <stdint.h>

namespace gdn {
namespace conv {

// ----------------------------------------------------------------- launch shapes
constexpr int kThreads = 128;        // every built-in arm: 128 threads per block
constexpr int kMaxK = GDN_CONV_MAX_K;
constexpr int kScalarTile = 128;     // scalar: one thread per channel
constexpr int kTiledTile = 32;       // tiled: 32 channels x (16 + K-1) staged tokens
constexpr int kTiledTokens = 16;
constexpr int kRegTile = 128;        // reg, reg-k4
constexpr int kRegX2Tile = 256;      // reg-k4x2: stripes c and c + 128
constexpr int kVecLanes = 8;         // vec: 8 channels per thread, 16-byte bf16 vectors
constexpr int kVecTile = kThreads * kVecLanes;
constexpr int kVecChunk = 64;        // vec exact mapping: tokens per program
constexpr int kVecGroup = 4;         // vec: tokens loaded together (loads in flight per thread)
constexpr int kVecMinBlocks = 4;     // vec: __launch_bounds__ minimum blocks per SM (caps registers at 128)

// bf16 is stored as its 16 raw bits.
using bf16_bits = uint16_t;

struct Params {
  int64_t T, C, x_stride;
  int32_t K, N;
  const void* x;      // [T, x_stride] TX
  const void* w;      // [C, K] TX
  const void* bias;   // [C] TX or null
  const int32_t* qsl; // [N+1], or null: one sequence, offsets [0, T] (plan_lists.h)
  const void* his;    // [N] i8 or i32, or null
  int32_t his_i32;
  int32_t mapping;    // the mapping that runs (scalar and tiled: SEQUENCE)
  int32_t mutant;
  int32_t chunk;      // tokens per exact-mapping program
  int32_t grid_x;     // channel tiles
  int32_t widen_cycles;
  float* state;       // [N, C, K-1]
  void* out;          // [T, C] TO
  const int32_t* programs;  // exact mappings: (sequence, chunk) pairs, program y at [2y, 2y+1]; null: one sequence, (0, y)
  int32_t silu_shortcut;    // 1: bf16 out on a GPU that may take silu_bf16_shortcut (detmath.h; the
                            // backend's flag, compute capability 9.0 only); 0 on the host
};

// ----------------------------------------------------------------- loads and stores
GDN_HDI float load(const float* p, int64_t i) { return p[i]; }
GDN_HDI float load(const bf16_bits* p, int64_t i) { return bf16_to_f32(p[i]); }
GDN_HDI void store(float* p, int64_t i, float v) { p[i] = v; }
GDN_HDI void store(bf16_bits* p, int64_t i, float v) { p[i] = f32_to_bf16(v); }

// ----------------------------------------------------------------- planted mutants
// The mutants (gdn_conv_mutant) are compiled into a separate instantiation of every arm: bodies take
// a policy M and ask M::is(p, mutant). The production build (NoMutant) folds every such test to
// false at compile time, so no mutant branch exists in a production kernel; the planted build
// (PlantedMutants, chosen by the plan when args.mutant != 0) reads p.mutant.
using gdn::NoMutant;
struct PlantedMutants {
  static constexpr bool kPlanted = true;
  GDN_HDI static bool is(const Params& p, int mutant);
};

// ----------------------------------------------------------------- programs
// The tokens a program covers: rows [t0, t1) of sequence seq (rows [start, end)). t1c is where it
// actually stops computing (CHUNK_OFF_BY_ONE shortens exact-mapping programs by one token).
struct Span {
  int32_t seq;
  int64_t start, end;
  int64_t t0, t1, t1c;
  bool first;         // chunk 0: the only program whose window reaches back into conv_state
  bool writes_state;  // owns the final-state write
};

GDN_HDI bool PlantedMutants::is(const Params& p, int mutant) { return p.mutant == mutant; }

template <class M>
GDN_HDI Span program_span(const Params& p, int64_t y) {
  Span s;
  int32_t chunk_index = 0;
  if (p.mapping == GDN_MAP_SEQUENCE) {
    s.seq = (int32_t)y;
  } else {
    s.seq = program_word(p, 2 * y);
    chunk_index = program_word(p, 2 * y + 1);
  }
  s.start = offset_word(p, s.seq);
  s.end = offset_word(p, s.seq + 1);
  if (p.mapping == GDN_MAP_SEQUENCE) {
    s.t0 = s.start;
    s.t1 = s.end;
  } else {
    s.t0 = s.start + (int64_t)chunk_index * p.chunk;
    s.t1 = s.t0 + p.chunk < s.end ? s.t0 + p.chunk : s.end;
  }
  s.t1c = s.t1;
  if (M::is(p, GDN_CONV_MUTANT_CHUNK_OFF_BY_ONE) && p.mapping != GDN_MAP_SEQUENCE && s.t0 + p.chunk - 1 < s.t1)
    s.t1c = s.t0 + p.chunk - 1;
  s.first = chunk_index == 0;
  // exact: chunk 0 (it already holds the old state); exact-racy (#305): whoever reaches the end.
  s.writes_state = s.end > s.start && (p.mapping == GDN_MAP_EXACT_RACY ? s.t1 == s.end : s.first);
  return s;
}

GDN_HDI bool has_initial_state(const Params& p, int32_t seq) {
  if (p.his == nullptr) return false;
  return p.his_i32 ? static_cast<const int32_t*>(p.his)[seq] != 0 : static_cast<const int8_t*>(p.his)[seq] != 0;
}

// Address of conv_state[seq][c][0].
GDN_HDI float* state_row(const Params& p, int32_t seq, int64_t c) {
  return p.state + ((int64_t)seq * p.C + c) * (p.K - 1);
}

// The input at absolute row `row` of sequence s for channel c; rows before the sequence start come
// from the old conv_state (column K-1 + (row - start)) when the sequence has initial state, else 0.
template <class TX>
GDN_HDI float input_at(const Params& p, const Span& s, bool init, int64_t row, int64_t c) {
  if (row >= s.start) return load(static_cast<const TX*>(p.x), row * p.x_stride + c);
  return init ? state_row(p, s.seq, c)[p.K - 1 + (row - s.start)] : 0.0f;
}

// Output store. Lanes >= C exist only under NO_TAIL_GUARD: they store at t*C + c, which lands in
// row t+1; a spill past the last row is dropped so the mutant never writes outside `out`.
template <class TO>
GDN_HDI void store_out(const Params& p, int64_t t, int64_t c_lane, float y) {
  const int64_t i = t * p.C + c_lane;
  if (i < p.T * p.C) store(static_cast<TO*>(p.out), i, y);
}

// widen_cycles: the CUDA kernels spin before chunk 0 reads the state, so that the #305 race
// (exact-racy) becomes observable on a GPU. The host backend orders blocks instead.
GDN_HDI void widen_before_state_read(const Params& p, const Span& s) {
#if defined(__CUDA_ARCH__)
  if (p.widen_cycles > 0 && s.first && p.mapping != GDN_MAP_SEQUENCE) {
    const long long t_begin = clock64();
    while (clock64() - t_begin < (long long)p.widen_cycles) {
    }
  }
#else
  (void)p;
  (void)s;
#endif
}

}  // namespace conv
}  // namespace gdn
