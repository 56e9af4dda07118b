// arms_host.h — the host instantiations of the built-in arms, one function per family, each in its own
// translation unit (arms_host_conv.cpp, arms_host_update.cpp, arms_host_postconv.cpp, arms_host_fused.cpp).
#pragma once

#include <vector>

#include "common/registry.h"

namespace gdn {
namespace registry {

// A built-in arm's table entry as its definition gives it (name, contract, variants and the host-side
// variant choice over the family's Params); each family's file then fills the host bodies.
template <class Params, class Arm>
int arm_variant(const void* p) {
  return Arm::variant(*static_cast<const Params*>(p));
}
template <class Params, class Arm>
Entry arm_entry(int32_t op, int32_t id) {
  static_assert(Arm::kVariants >= 1 && Arm::kVariants <= kMaxVariants, "variants");
  static_assert(text_length(Arm::spec.name) < sizeof(gdn_arm_info::name), "an arm's name must fit gdn_arm_info::name");
  static_assert(text_length(Arm::spec.description) < sizeof(gdn_arm_info::description),
                "an arm's description must fit gdn_arm_info::description (224 bytes with its NUL)");
  Entry e;
  info_from_spec(Arm::spec, op, id, &e.info);
  e.threads_rule = Arm::spec.threads_rule;
  e.short_batch_tokens_per_program = Arm::spec.short_batch_tokens_per_program;
  e.variants = Arm::kVariants;
  e.variant = &arm_variant<Params, Arm>;
  return e;
}

std::vector<Entry> conv_host_entries();
std::vector<Entry> update_host_entries();
std::vector<Entry> postconv_host_entries();
std::vector<Entry> fused_host_entries();

}  // namespace registry
}  // namespace gdn
