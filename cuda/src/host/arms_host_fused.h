// arms_host_fused.h — the per-thread wrapper of a fused arm body for the host, and the fill of its variants,
// shared by the two translation units that instantiate the fused arms (arms_host_fused.cpp: x in f32,
// arms_host_fused_bf16_x.cpp: x in bf16; together they were the slowest file of the host build).
#pragma once

#include "common/arms/fused_list.h"
#include "common/registry.h"

namespace gdn {
namespace registry {

using conv::bf16_bits;

// ---- fused: combo = 4 * (x is bf16) + 2 * (conv_dtype is bf16) + (q, k, v are bf16); the gate dtype is
// read at run time. The planted build exists for the last variant only (the plan runs it for any K).
template <class Arm, class TX, class TC, class TQ, class M, int V>
inline void fused_thread(const void* p, exec::HostThread& t) {
  Arm::template body<TX, TC, TQ, M, V>(*static_cast<const fused::Params*>(p), t);
}
template <class Arm, class TX, class TC, class TQ, int V = 0>
inline void fill_fused_variants(Entry& e, int combo) {
  if constexpr (V < Arm::kVariants) {
    e.host[combo][0][V] = &fused_thread<Arm, TX, TC, TQ, NoMutant, V>;
    if constexpr (V == Arm::kVariants - 1) e.host[combo][1][V] = &fused_thread<Arm, TX, TC, TQ, fused::PlantedMutants, V>;
    fill_fused_variants<Arm, TX, TC, TQ, V + 1>(e, combo);
  }
}
// Combos 4-7 (x in bf16) of every fused entry, in GDN_FUSED_ARM_LIST order (arms_host_fused_bf16_x.cpp).
void fill_fused_bf16_x(std::vector<Entry>& entries);

}  // namespace registry
}  // namespace gdn
