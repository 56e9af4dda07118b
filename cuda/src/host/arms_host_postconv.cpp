// arms_host_postconv.cpp — the built-in post-conv entries of the arm table (common/registry.h) with every arm body
// instantiated for the host backend: one per dtype combination and compile-time variant, generated from
// common/arms/postconv_list.h. One translation unit per family so that the families compile in parallel
// (arms_host.cpp gathers them; docs/MAINTAINING.md, "CI time").
#include "common/arms/postconv_list.h"
#include "common/registry.h"
#include "host/arms_host.h"

namespace gdn {
namespace registry {
namespace {

using bf16_bits = uint16_t;  // a bf16's raw bits, as conv::bf16_bits

// ---- post-conv: combo = 4 * (conv_out is bf16) + 2 * (q, k, v are bf16) + (a, b are bf16)
template <class Arm, class TC, class TQ, class TG, int V>
void postconv_thread(const void* p, exec::HostThread& t) {
  Arm::template body<TC, TQ, TG, NoMutant, V>(*static_cast<const postconv::Params*>(p), t);
}
template <class Arm, class TC, class TQ, class TG, int V = 0>
void fill_postconv_variants(Entry& e, int combo) {
  if constexpr (V < Arm::kVariants) {
    e.host[combo][0][V] = &postconv_thread<Arm, TC, TQ, TG, V>;
    fill_postconv_variants<Arm, TC, TQ, TG, V + 1>(e, combo);
  }
}
template <class Arm>
Entry postconv_entry(int32_t id) {
  Entry e = arm_entry<postconv::Params, Arm>(GDN_OP_POSTCONV, id);
  fill_postconv_variants<Arm, float, float, float>(e, 0);
  fill_postconv_variants<Arm, float, float, bf16_bits>(e, 1);
  fill_postconv_variants<Arm, float, bf16_bits, float>(e, 2);
  fill_postconv_variants<Arm, float, bf16_bits, bf16_bits>(e, 3);
  fill_postconv_variants<Arm, bf16_bits, float, float>(e, 4);
  fill_postconv_variants<Arm, bf16_bits, float, bf16_bits>(e, 5);
  fill_postconv_variants<Arm, bf16_bits, bf16_bits, float>(e, 6);
  fill_postconv_variants<Arm, bf16_bits, bf16_bits, bf16_bits>(e, 7);
  return e;
}

}  // namespace

std::vector<Entry> postconv_host_entries() {
  std::vector<Entry> out;
#define GDN_ADD(Arm) out.push_back(postconv_entry<Arm>((int32_t)out.size()));
  GDN_POSTCONV_ARM_LIST(GDN_ADD)
#undef GDN_ADD
  return out;
}

}  // namespace registry
}  // namespace gdn
