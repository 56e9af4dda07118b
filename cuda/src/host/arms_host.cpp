// arms_host.cpp — the built-in entries of the arm table (common/registry.h) with every arm body
// instantiated for the host backend: one per dtype combination, build (production / planted
// mutants) and compile-time variant, all generated from the family lists in common/arms/*_list.h.
#include "common/arms/conv_list.h"
#include "common/arms/fused_list.h"
#include "common/arms/postconv_list.h"
#include "common/arms/update_list.h"
#include "common/registry.h"

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
int conv_variant(const void* p) {
  return Arm::variant(*static_cast<const conv::Params*>(p));
}
template <class Arm>
Entry conv_entry(int32_t id) {
  static_assert(Arm::kVariants >= 1 && Arm::kVariants <= kMaxVariants, "variants");
  Entry e;
  info_from_spec(Arm::spec, GDN_OP_CONV, id, &e.info);
  e.threads_rule = Arm::spec.threads_rule;
  e.short_batch_tokens_per_program = Arm::spec.short_batch_tokens_per_program;
  e.variants = Arm::kVariants;
  e.variant = &conv_variant<Arm>;
  fill_conv_combo<Arm, float, float>(e, 0);
  fill_conv_combo<Arm, float, bf16_bits>(e, 1);
  fill_conv_combo<Arm, bf16_bits, float>(e, 2);
  fill_conv_combo<Arm, bf16_bits, bf16_bits>(e, 3);
  return e;
}

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
int update_variant(const void* p) {
  return Arm::variant(*static_cast<const update::Params*>(p));
}
template <class Arm>
Entry update_entry(int32_t id) {
  Entry e;
  info_from_spec(Arm::spec, GDN_OP_CONV_UPDATE, id, &e.info);
  e.threads_rule = Arm::spec.threads_rule;
  e.variants = Arm::kVariants;
  e.variant = &update_variant<Arm>;
  fill_update_variants<Arm, float>(e, 0);
  fill_update_variants<Arm, bf16_bits>(e, 1);
  return e;
}

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
int postconv_variant(const void* p) {
  return Arm::variant(*static_cast<const postconv::Params*>(p));
}
template <class Arm>
Entry postconv_entry(int32_t id) {
  Entry e;
  info_from_spec(Arm::spec, GDN_OP_POSTCONV, id, &e.info);
  e.threads_rule = Arm::spec.threads_rule;
  e.variants = Arm::kVariants;
  e.variant = &postconv_variant<Arm>;
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

// ---- fused: combo = 4 * (x is bf16) + 2 * (conv_dtype is bf16) + (q, k, v are bf16); the gate dtype is
// read at run time. The planted build exists for the last variant only (the plan runs it for any K).
template <class Arm, class TX, class TC, class TQ, class M, int V>
void fused_thread(const void* p, exec::HostThread& t) {
  Arm::template body<TX, TC, TQ, M, V>(*static_cast<const fused::Params*>(p), t);
}
template <class Arm, class TX, class TC, class TQ, int V = 0>
void fill_fused_variants(Entry& e, int combo) {
  if constexpr (V < Arm::kVariants) {
    e.host[combo][0][V] = &fused_thread<Arm, TX, TC, TQ, NoMutant, V>;
    if constexpr (V == Arm::kVariants - 1) e.host[combo][1][V] = &fused_thread<Arm, TX, TC, TQ, fused::PlantedMutants, V>;
    fill_fused_variants<Arm, TX, TC, TQ, V + 1>(e, combo);
  }
}
template <class Arm>
int fused_variant(const void* p) {
  return Arm::variant(*static_cast<const fused::Params*>(p));
}
template <class Arm>
Entry fused_entry(int32_t id) {
  Entry e;
  info_from_spec(Arm::spec, GDN_OP_FUSED, id, &e.info);
  e.threads_rule = Arm::spec.threads_rule;
  e.variants = Arm::kVariants;
  e.variant = &fused_variant<Arm>;
  fill_fused_variants<Arm, float, float, float>(e, 0);
  fill_fused_variants<Arm, float, float, bf16_bits>(e, 1);
  fill_fused_variants<Arm, float, bf16_bits, float>(e, 2);
  fill_fused_variants<Arm, float, bf16_bits, bf16_bits>(e, 3);
  fill_fused_variants<Arm, bf16_bits, float, float>(e, 4);
  fill_fused_variants<Arm, bf16_bits, float, bf16_bits>(e, 5);
  fill_fused_variants<Arm, bf16_bits, bf16_bits, float>(e, 6);
  fill_fused_variants<Arm, bf16_bits, bf16_bits, bf16_bits>(e, 7);
  return e;
}

}  // namespace

std::vector<Entry> builtin_entries(Family family) {
  std::vector<Entry> out;
  switch (family) {
    case kConv:
#define GDN_ADD(Arm) out.push_back(conv_entry<Arm>((int32_t)out.size()));
      GDN_CONV_ARM_LIST(GDN_ADD)
#undef GDN_ADD
      break;
    case kUpdate:
#define GDN_ADD(Arm) out.push_back(update_entry<Arm>((int32_t)out.size()));
      GDN_UPDATE_ARM_LIST(GDN_ADD)
#undef GDN_ADD
      break;
    case kPostconv:
#define GDN_ADD(Arm) out.push_back(postconv_entry<Arm>((int32_t)out.size()));
      GDN_POSTCONV_ARM_LIST(GDN_ADD)
#undef GDN_ADD
      break;
    case kFused:
#define GDN_ADD(Arm) out.push_back(fused_entry<Arm>((int32_t)out.size()));
      GDN_FUSED_ARM_LIST(GDN_ADD)
#undef GDN_ADD
      break;
    default: break;
  }
  return out;
}

}  // namespace registry
}  // namespace gdn
