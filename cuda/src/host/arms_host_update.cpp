// arms_host_update.cpp — the built-in conv update entries of the arm table (common/registry.h) with every arm body
// instantiated for the host backend: one per dtype combination and compile-time variant, generated from
// common/arms/update_list.h. One translation unit per family so that the families compile in parallel
// (arms_host.cpp gathers them; docs/MAINTAINING.md, "CI time").
#include "common/arms/update_list.h"
#include "common/registry.h"
#include "host/arms_host.h"

namespace gdn {
namespace registry {
namespace {

using conv::bf16_bits;

// ---- conv update: combo = (x is bf16); out and state dtypes are read at run time
template <class Arm, class TX, int V>
void update_thread(const void* p, exec::HostThread& t) {
  Arm::template body<TX, NoMutant, V>(*static_cast<const update::Params*>(p), t);
}
template <class Arm, class TX, int V = 0>
void fill_update_variants(Entry& e, int combo) {
  if constexpr (V < Arm::kVariants) {
    e.host[combo][0][V] = &update_thread<Arm, TX, V>;
    fill_update_variants<Arm, TX, V + 1>(e, combo);
  }
}
template <class Arm>
Entry update_entry(int32_t id) {
  Entry e = arm_entry<update::Params, Arm>(GDN_OP_CONV_UPDATE, id);
  fill_update_variants<Arm, float>(e, 0);
  fill_update_variants<Arm, bf16_bits>(e, 1);
  return e;
}

}  // namespace

std::vector<Entry> update_host_entries() {
  std::vector<Entry> out;
#define GDN_ADD(Arm) out.push_back(update_entry<Arm>((int32_t)out.size()));
  GDN_UPDATE_ARM_LIST(GDN_ADD)
#undef GDN_ADD
  return out;
}

}  // namespace registry
}  // namespace gdn
