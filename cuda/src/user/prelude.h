// prelude.h — what an arm module compiled at run time sees (docs/USER-ARMS.md): the conv and post-conv
// parameter structs and helpers of libgdn, the deterministic math, an execution interface (block and
// thread index, dynamic shared memory, block barrier, warp shuffle) and typed loads and stores that,
// in checked mode, test every element index against the op's buffers.
//
// A module is   #include "user/prelude.h"  +  #line 1 "<arm>"  + the cell's body  +  user/entry_*.h.
// The same text compiles for both backends, against the execution interface of the built-in arms
// (common/exec.h): the body's context t is exec::CudaThread on CUDA (nvcc -cubin) and
// exec::HostThread on the host (c++ -shared; libgdn runs the module's per-thread function through
// exec::run_host_grid, as fibers when the arm declares barriers).
// GDN_USER_CHECKED (host only): loads and stores check their index and report the first fault as
// "arm '<name>' read x at element N, outside [0, M)"; the module then ends its process (user arms
// only ever run in the isolation worker, never in the kernel's process).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "common/conv_params.h"
#include "common/detmath.h"
#include "common/exec.h"
#include "common/arms/postconv_common.h"

#ifndef GDN_ARM_NAME
#define GDN_ARM_NAME "?"
#endif

#if !defined(__CUDACC__)
#include <unistd.h>
#endif

namespace gdn {
namespace arm {

using conv::bf16_bits;
using conv::Span;
using conv::has_initial_state;

// The program's token span (the library's program_span, production build: a user arm has no
// planted-mutant instantiation).
GDN_HDI Span program_span(const conv::Params& p, int64_t y) { return conv::program_span<NoMutant>(p, y); }

// ----------------------------------------------------------------- faults (host)
#if !defined(__CUDACC__)
// Set by the worker before a launch (the first 4 KiB of the shared I/O region): the parent reads the
// message after this process ended with kFaultExit.
inline char*& fault_buffer() {
  static char* buf = nullptr;
  return buf;
}
constexpr int kFaultExit = 86;
constexpr int kFaultBytes = 4096;

[[noreturn]] inline void fault(const char* what) {
  char* buf = fault_buffer();
  if (buf) std::snprintf(buf, kFaultBytes, "arm '%s' %s", GDN_ARM_NAME, what);
  _exit(kFaultExit);
}
#endif

// ----------------------------------------------------------------- bounds checks
#if defined(GDN_USER_CHECKED) && !defined(__CUDACC__)
inline void check_index(const char* verb, const char* buffer, int64_t i, int64_t n) {
  if (i >= 0 && i < n) return;
  char msg[256];
  std::snprintf(msg, sizeof msg, "%s %s at element %lld, outside [0, %lld) (checked mode)", verb, buffer, (long long)i,
                (long long)n);
  fault(msg);
}
#define GDN_ARM_CHECK(verb, buffer, i, n) ::gdn::arm::check_index(verb, buffer, (int64_t)(i), (int64_t)(n))
#else
#define GDN_ARM_CHECK(verb, buffer, i, n) ((void)0)
#endif

// ----------------------------------------------------------------- conv: typed access
// Element counts of the conv buffers (what checked mode tests against).
GDN_HDI int64_t x_elems(const conv::Params& p) { return p.T > 0 ? (p.T - 1) * p.x_stride + p.C : 0; }
GDN_HDI int64_t state_elems(const conv::Params& p) { return (int64_t)p.N * p.C * (p.K - 1); }

// x[t, c] as f32 (t is an absolute row of x)
template <class TX>
GDN_HDI float x_at(const conv::Params& p, int64_t t, int64_t c) {
  const int64_t i = t * p.x_stride + c;
  GDN_ARM_CHECK("read", "x", i, x_elems(p));
  return conv::load(static_cast<const TX*>(p.x), i);
}
// weight[c, j]
template <class TX>
GDN_HDI float w_at(const conv::Params& p, int64_t c, int j) {
  const int64_t i = c * p.K + j;
  GDN_ARM_CHECK("read", "weight", i, p.C * p.K);
  return conv::load(static_cast<const TX*>(p.w), i);
}
// bias[c], 0 without a bias
template <class TX>
GDN_HDI float bias_at(const conv::Params& p, int64_t c) {
  if (p.bias == nullptr) return 0.0f;
  GDN_ARM_CHECK("read", "bias", c, p.C);
  return conv::load(static_cast<const TX*>(p.bias), c);
}
// conv_state[seq][c][j] (column K-2 is the newest input)
GDN_HDI float state_at(const conv::Params& p, int32_t seq, int64_t c, int j) {
  const int64_t i = ((int64_t)seq * p.C + c) * (p.K - 1) + j;
  GDN_ARM_CHECK("read", "conv_state", i, state_elems(p));
  return p.state[i];
}
GDN_HDI void set_state(const conv::Params& p, int32_t seq, int64_t c, int j, float v) {
  const int64_t i = ((int64_t)seq * p.C + c) * (p.K - 1) + j;
  GDN_ARM_CHECK("wrote", "conv_state", i, state_elems(p));
  p.state[i] = v;
}
// out[t, c] = y rounded to TO
template <class TO>
GDN_HDI void out_store(const conv::Params& p, int64_t t, int64_t c, float y) {
  const int64_t i = t * p.C + c;
  GDN_ARM_CHECK("wrote", "out", i, p.T * p.C);
  conv::store(static_cast<TO*>(p.out), i, y);
}
// The input at absolute row `row` of sequence s: x, or before the sequence start the old state
// (with initial state) or 0 — the library's input_at, through the checked accessors.
template <class TX>
GDN_HDI float input(const conv::Params& p, const Span& s, bool init, int64_t row, int64_t c) {
  if (row >= s.start) return x_at<TX>(p, row, c);
  return init ? state_at(p, s.seq, c, p.K - 1 + (int)(row - s.start)) : 0.0f;
}

// ----------------------------------------------------------------- post-conv: typed access
using postconv::Slot;
using postconv::decode_slot;
using postconv::l2_inv;
using postconv::square;

GDN_HDI int64_t pc_gate_rows(const postconv::Params& p, int64_t stride) { return p.T > 0 ? (p.T - 1) * stride + p.Hv : 0; }

// The (head slot, token tile) of this block in the token-tile layout (GDN_LAYOUT_TILE_SLOTS): slot
// tb.slot, tokens tb.tile * 16 .. + 15 (a tile past T has none).
template <class Ctx>
GDN_HDI postconv::TileBlock tile_of(const postconv::Params& p, const Ctx& t) {
  return postconv::tile_block_coords(p, (uint32_t)t.bx(), (uint32_t)t.by(), (uint32_t)t.grid_y());
}

// conv_out element of token t, feature i of the slot's head
template <class TC>
GDN_HDI float head_x(const postconv::Params& p, const Slot& s, int64_t t, int64_t i) {
  const int64_t e = t * p.C + s.src_col + i;
  GDN_ARM_CHECK("read", "conv_out", e, p.T * p.C);
  return postconv::load_f32<TC>(p.conv, e);
}
// the slot's destination (q, k or v) at token t, feature i, rounded to TQ
template <class TQ>
GDN_HDI void head_store(const postconv::Params& p, const Slot& s, int64_t t, int64_t i, float y) {
  const int64_t e = t * s.dst_row + s.dst_col + i;
  GDN_ARM_CHECK("wrote", s.kind == postconv::kSlotQ ? "q" : s.kind == postconv::kSlotK ? "k" : "v", e,
                p.T * s.dst_row);
  postconv::store_f32<TQ>(s.dst, e, y);
}
// g and beta of (token t, value head h), the library's gate_element through checked reads.
template <class TG>
GDN_HDI void gates(const postconv::Params& p, int64_t t, int64_t h) {
  GDN_ARM_CHECK("read", "a", t * p.a_stride + h, pc_gate_rows(p, p.a_stride));
  GDN_ARM_CHECK("read", "b", t * p.b_stride + h, pc_gate_rows(p, p.b_stride));
  GDN_ARM_CHECK("wrote", "g", t * p.Hv + h, p.T * p.Hv);
  // g's index can stay inside g while h is past the value heads (t < T - 1, h >= Hv): A_log[h] and
  // dt_bias[h] would then be read out of bounds. beta shares g's index and extent, dt_bias A_log's.
  GDN_ARM_CHECK("read", "A_log", h, p.Hv);
  postconv::gate_element<TG>(p, t, h);
}

}  // namespace arm
}  // namespace gdn

// The body sees the dialect unqualified, as the built-in arms see theirs.
using namespace gdn;
using namespace gdn::arm;
using gdn::conv::Params;
using PostParams = gdn::postconv::Params;
