// arms_host_fused.cpp — the built-in fused entries of the arm table (common/registry.h) with every arm body
// instantiated for the host backend: one per dtype combination (x in f32 here, x in bf16 in
// arms_host_fused_bf16_x.cpp), build (production / planted mutants, last variant) and compile-time variant,
// generated from common/arms/fused_list.h. One translation unit per family so that the families compile in
// parallel (arms_host.cpp gathers them; docs/MAINTAINING.md, "CI time").
#include "common/arms/fused_list.h"
#include "common/registry.h"
#include "host/arms_host.h"
#include "host/arms_host_fused.h"

namespace gdn {
namespace registry {
namespace {

template <class Arm>
Entry fused_entry(int32_t id) {
  Entry e = arm_entry<fused::Params, Arm>(GDN_OP_FUSED, id);
  fill_fused_variants<Arm, float, float, float>(e, 0);
  fill_fused_variants<Arm, float, float, bf16_bits>(e, 1);
  fill_fused_variants<Arm, float, bf16_bits, float>(e, 2);
  fill_fused_variants<Arm, float, bf16_bits, bf16_bits>(e, 3);
  return e;  // combos 4-7 (bf16 x): fill_fused_bf16_x, arms_host_fused_bf16_x.cpp
}

}  // namespace

std::vector<Entry> fused_host_entries() {
  std::vector<Entry> out;
#define GDN_ADD(Arm) out.push_back(fused_entry<Arm>((int32_t)out.size()));
  GDN_FUSED_ARM_LIST(GDN_ADD)
#undef GDN_ADD
  fill_fused_bf16_x(out);
  return out;
}

}  // namespace registry
}  // namespace gdn
