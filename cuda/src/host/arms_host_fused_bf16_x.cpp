// arms_host_fused_bf16_x.cpp — the fused arms' host instantiations with x in bf16 (combos 4-7), a translation unit
// of their own so that the build compiles them beside arms_host_fused.cpp's f32-x half.
#include "host/arms_host_fused.h"

namespace gdn {
namespace registry {

void fill_fused_bf16_x(std::vector<Entry>& entries) {
  size_t id = 0;
#define GDN_FILL(Arm)                                                          \
  {                                                                            \
    Entry& e = entries.at(id++);                                               \
    fill_fused_variants<Arm, bf16_bits, float, float>(e, 4);                   \
    fill_fused_variants<Arm, bf16_bits, float, bf16_bits>(e, 5);               \
    fill_fused_variants<Arm, bf16_bits, bf16_bits, float>(e, 6);               \
    fill_fused_variants<Arm, bf16_bits, bf16_bits, bf16_bits>(e, 7);           \
  }
  GDN_FUSED_ARM_LIST(GDN_FILL)
#undef GDN_FILL
}

}  // namespace registry
}  // namespace gdn
