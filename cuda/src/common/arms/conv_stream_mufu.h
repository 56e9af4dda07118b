// conv arm `stream-mufu` (docs/SPEC.md §3.5, §9.2): `stream` with the GPU's SiLU shortcut for a bf16 `out`.
//
// Why: `stream` is bound by instruction issue and its exact SiLU is about 27 issued instructions of ~35
// per output (CHANGELOG 2026-12-01, 3bc32cb and 8ea8210); the same structure with the hardware
// approximations ran at 1.06-1.19x copy at T >= 8192, but those are not the op's bits. Here each value
// takes ex2.approx / rcp.approx and a rounding test (silu_bf16_shortcut, detmath.h) that accepts the
// approximation only when its bf16 rounding is provably gdn_silu's; the rest (about 0.1%) take gdn_silu.
// The stored bits are therefore `stream`'s and `scalar`'s. The shortcut runs only where all of this holds:
// bf16 `out` (an f32 `out` keeps gdn_silu's f32 bits, so it runs `stream`'s policy), the production build
// (planted mutants run `stream`'s policy, so they are caught as in `stream`), a GPU of compute capability
// 9.0 (Params::silu_shortcut from the backend's flag; the exhaustive test ran there: variants 3..5), and
// never on the host, which computes gdn_silu as `stream` does (variants 0..2).
#pragma once

#include <type_traits>

#include "common/arms/conv_stream.h"

namespace gdn {
namespace conv {

struct ArmStreamMufu {
  static constexpr ArmSpec spec = {
      "stream-mufu", "stream; bf16 out on sm_90: SiLU from ex2/rcp.approx where a rounding test proves its bf16 is gdn_silu's (else gdn_silu)",
      kStreamThreads, kStreamMinBlocks, kStreamChannels, kStreamChunk, kAllMappings,
      stream_ring_shared(kStreamThreads, kStreamRing), 0, 0, GDN_ARM_REQ_VEC8,
      GDN_CONV_REG, 0, kThreadsFixed, kLayoutNone, kStreamShortBatchChunk};
  // stream's window variants (0..2), and the same three with the shortcut (3..5) when the plan allows
  // it: a kernel holds one SiLU policy, not a branch between two (which spilled at the 72-register cap).
  static constexpr int kVariants = 2 * kStreamWindowVariants;
  static int variant(const Params& p) { return stream_window_variant(p) + (p.silu_shortcut ? kStreamWindowVariants : 0); }

  // Its own kernels are the shortcut's (variants 3..5, bf16 out, production build); every other variant
  // is stream's kernel (cuda/src/cuda/kernel_of.cuh), compiled once.
  using Twin = ArmStream;
  template <class TO, class M, int V>
  GDN_HD static constexpr bool own_kernel() {
    return V >= kStreamWindowVariants && std::is_same<TO, bf16_bits>::value && !M::kPlanted;
  }

  template <class TX, class TO, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    // The host compiles variants 3..5 with TileSilu too (it never takes the shortcut, and the same
    // instantiation as 0..2 costs no compile time).
#if defined(__CUDACC__)
    constexpr bool kShortcut = own_kernel<TO, M, V>();
#else
    constexpr bool kShortcut = false;
#endif
    stream_window_body<TX, TO, M, V % kStreamWindowVariants, std::conditional_t<kShortcut, Bf16ShortcutSilu, TileSilu>>(p, t);
  }
};

}  // namespace conv
}  // namespace gdn
