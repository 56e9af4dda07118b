// arms_host_conv.cpp — the built-in conv entries of the arm table (common/registry.h) with every arm body
// instantiated for the host backend: one per dtype combination, build (production / planted mutants) and
// compile-time variant, generated from common/arms/conv_list.h. One translation unit per family so that the
// families compile in parallel (arms_host.cpp gathers them; docs/MAINTAINING.md, "CI time").
#include "common/arms/conv_list.h"
#include "common/registry.h"
#include "host/arms_host.h"

namespace gdn {
namespace registry {
namespace {

using conv::bf16_bits;

// ---- conv: combo = 2 * (x is bf16) + (out is bf16)
template <class Arm, class TX, class TO, class M, int V>
void conv_thread(const void* p, exec::HostThread& t) {
  Arm::template body<TX, TO, M, V>(*static_cast<const conv::Params*>(p), t);
}
template <class Arm, class TX, class TO, class M, int V = 0>
void fill_conv_variants(Entry& e, int combo, int build) {
  if constexpr (V < Arm::kVariants) {
    e.host[combo][build][V] = &conv_thread<Arm, TX, TO, M, V>;
    fill_conv_variants<Arm, TX, TO, M, V + 1>(e, combo, build);
  }
}
template <class Arm, class TX, class TO>
void fill_conv_combo(Entry& e, int combo) {
  fill_conv_variants<Arm, TX, TO, conv::NoMutant>(e, combo, 0);
  fill_conv_variants<Arm, TX, TO, conv::PlantedMutants>(e, combo, 1);
}
template <class Arm>
Entry conv_entry(int32_t id) {
  Entry e = arm_entry<conv::Params, Arm>(GDN_OP_CONV, id);
  fill_conv_combo<Arm, float, float>(e, 0);
  fill_conv_combo<Arm, float, bf16_bits>(e, 1);
  fill_conv_combo<Arm, bf16_bits, float>(e, 2);
  fill_conv_combo<Arm, bf16_bits, bf16_bits>(e, 3);
  return e;
}

}  // namespace

std::vector<Entry> conv_host_entries() {
  std::vector<Entry> out;
#define GDN_ADD(Arm) out.push_back(conv_entry<Arm>((int32_t)out.size()));
  GDN_CONV_ARM_LIST(GDN_ADD)
#undef GDN_ADD
  return out;
}

}  // namespace registry
}  // namespace gdn
