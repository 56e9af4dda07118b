// registry.cpp — the arm table (common/registry.h) and its C entry points gdn_arm_count,
// gdn_arm_info_get, gdn_conv_mutant_name.
#include "common/registry.h"

#include "common/backend.h"
#include "common/internal.h"

#include <cstdio>
#include <cstring>
#include <mutex>

namespace gdn {
namespace registry {

namespace {

const int32_t kOps[kFamilies] = {GDN_OP_CONV, GDN_OP_CONV_UPDATE, GDN_OP_POSTCONV, GDN_OP_FUSED};

struct Table {
  std::mutex mu;
  std::vector<EntryRef> arms[kFamilies];
  int32_t builtins[kFamilies] = {};
};

void copy_text(char* dst, size_t cap, const char* src) { std::snprintf(dst, cap, "%s", src ? src : ""); }

// The fallback rule in words, from fixed_k / data_requires.
void describe_fallback(const std::vector<EntryRef>& arms, gdn_arm_info* info) {
  info->fallback_rule[0] = '\0';
  if (info->fallback < 0 || (size_t)info->fallback >= arms.size()) return;
  const char* target = arms[(size_t)info->fallback]->info.name;
  std::string why;
  if (info->fixed_k > 0) why += "K != " + std::to_string(info->fixed_k);
  if (info->data_requires & GDN_ARM_REQ_VEC8)
    why += std::string(why.empty() ? "" : ", or ") + "C or x_row_stride not a multiple of 8 or x/out not 16-byte aligned";
  if (info->data_requires & GDN_ARM_REQ_D128) why += std::string(why.empty() ? "" : ", or ") + "Dk or Dv != 128";
  if (why.empty()) return;
  std::snprintf(info->fallback_rule, sizeof info->fallback_rule, "%s: runs %s", why.c_str(), target);
}

// Recomputes the derived fields (fallback rule text, FALLBACK_TARGET flags) of a family's table.
void derive(std::vector<EntryRef>& arms) {
  std::vector<bool> target(arms.size(), false);
  for (const EntryRef& e : arms)
    if (e->info.fallback >= 0 && (size_t)e->info.fallback < arms.size()) target[(size_t)e->info.fallback] = true;
  for (size_t i = 0; i < arms.size(); ++i) {
    const bool is_target = target[i];
    const bool has_flag = (arms[i]->info.flags & GDN_ARM_FALLBACK_TARGET) != 0;
    char rule[sizeof arms[i]->info.fallback_rule];
    gdn_arm_info probe = arms[i]->info;
    describe_fallback(arms, &probe);
    std::memcpy(rule, probe.fallback_rule, sizeof rule);
    if (is_target == has_flag && std::strcmp(rule, arms[i]->info.fallback_rule) == 0) continue;
    auto copy = std::make_shared<Entry>(*arms[i]);
    copy->info.flags = is_target ? (copy->info.flags | GDN_ARM_FALLBACK_TARGET) : (copy->info.flags & ~GDN_ARM_FALLBACK_TARGET);
    std::memcpy(copy->info.fallback_rule, rule, sizeof rule);
    arms[i] = copy;
  }
}

Table& table() {
  static Table* t = [] {
    Table* tb = new Table();
    for (int f = 0; f < kFamilies; ++f) {
      std::vector<Entry> built = builtin_entries((Family)f);
      for (Entry& e : built) tb->arms[f].push_back(std::make_shared<const Entry>(std::move(e)));
      tb->builtins[f] = (int32_t)tb->arms[f].size();
      derive(tb->arms[f]);
    }
    return tb;
  }();
  return *t;
}

bool valid_name(const char* n) {
  const size_t len = std::strlen(n);
  if (len == 0 || len >= sizeof(gdn_arm_info{}.name)) return false;
  for (size_t i = 0; i < len; ++i) {
    const char c = n[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.')) return false;
  }
  return true;
}

}  // namespace

bool family_of_op(int32_t op, Family* family) {
  for (int f = 0; f < kFamilies; ++f)
    if (kOps[f] == op) {
      *family = (Family)f;
      return true;
    }
  return false;
}

const char* family_name(Family family) {
  switch (family) {
    case kConv: return "conv";
    case kUpdate: return "conv update";
    case kPostconv: return "post-conv";
    case kFused: return "fused";
    default: return "?";
  }
}

bool Entry::has_planted() const {
  for (int c = 0; c < kMaxCombos; ++c)
    for (int v = 0; v < kMaxVariants; ++v)
      if (host[c][1][v] != nullptr) return true;
  return false;
}

void info_from_spec(const ArmSpec& s, int32_t op, int32_t id, gdn_arm_info* info) {
  std::memset(info, 0, sizeof *info);
  info->op = op;
  info->id = id;
  copy_text(info->name, sizeof info->name, s.name);
  copy_text(info->description, sizeof info->description, s.description);
  info->threads_per_block = s.threads;
  info->per_block = s.per_block;
  info->tokens_per_program = s.tokens_per_program;
  info->mappings = (int32_t)s.mappings;
  info->shared_bytes_base = s.shared_base;
  info->shared_bytes_per_k = s.shared_per_k;
  info->fixed_k = s.fixed_k;
  info->data_requires = (int32_t)s.data_requires;
  info->fallback = s.fallback;
  info->flags = (int32_t)(s.flags | (s.threads_rule == kThreadsTreeOfD ? GDN_ARM_THREADS_FROM_D : 0u));
  info->layout = s.layout;
  info->min_blocks_per_sm = s.min_blocks;
}

int32_t count(Family family) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  return (int32_t)t.arms[family].size();
}

int32_t builtin_count(Family family) {
  Table& t = table();
  return t.builtins[family];  // fixed after construction
}

EntryRef get(Family family, int32_t id) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  if (id < 0 || (size_t)id >= t.arms[family].size()) return nullptr;
  return t.arms[family][(size_t)id];
}

int32_t find(Family family, const char* name) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  for (size_t i = 0; i < t.arms[family].size(); ++i)
    if (std::strcmp(t.arms[family][i]->info.name, name) == 0) return (int32_t)i;
  return -1;
}

std::string id_list(Family family) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  std::string s;
  for (size_t i = 0; i < t.arms[family].size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(i) + " " + t.arms[family][i]->info.name;
  }
  return s;
}

gdn_status add(gdn_backend* b, Family family, Entry e, int32_t* id) {
  gdn_arm_info& in = e.info;
  in.name[sizeof in.name - 1] = '\0';
  in.description[sizeof in.description - 1] = '\0';
  if (!valid_name(in.name))
    return fail(b, GDN_ERR_INVALID_ARGUMENT,
                "arm.name: expected 1..31 characters of a-z, 0-9, '-', '_', '.', got \"%s\"", in.name);
  if (in.threads_per_block < 1 || in.threads_per_block > exec::kMaxThreads)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "arm %s: threads_per_block must be in 1..%d, got %d", in.name,
                exec::kMaxThreads, (int)in.threads_per_block);
  if (in.per_block < 1)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "arm %s: per_block (channels or head slots per block) must be >= 1, got %d",
                in.name, (int)in.per_block);
  if (family == kConv) {
    if (!(in.mappings & (1 << GDN_MAP_SEQUENCE)) || (in.mappings & ~(int32_t)kAllMappings))
      return fail(b, GDN_ERR_INVALID_ARGUMENT,
                  "arm %s: mappings must include SEQUENCE (bit %d) and name only gdn_conv_mapping bits, got 0x%x", in.name,
                  (int)GDN_MAP_SEQUENCE, (unsigned)in.mappings);
    if ((in.mappings & ~(int32_t)kWholeSequences) && in.tokens_per_program < 1)
      return fail(b, GDN_ERR_INVALID_ARGUMENT, "arm %s: exact mappings need tokens_per_program >= 1, got %d", in.name,
                  (int)in.tokens_per_program);
  }
  const int64_t shared_max = (int64_t)in.shared_bytes_base + (int64_t)in.shared_bytes_per_k * GDN_CONV_MAX_K;
  if (in.shared_bytes_base < 0 || in.shared_bytes_per_k < 0 || shared_max > 48 * 1024)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "arm %s: shared memory must be 0..48 KiB per block, got %lld bytes at K = %d",
                in.name, (long long)shared_max, GDN_CONV_MAX_K);
  if (in.fixed_k != 0 && (in.fixed_k < 2 || in.fixed_k > GDN_CONV_MAX_K))
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "arm %s: fixed_k must be 0 (any) or 2..%d, got %d", in.name, GDN_CONV_MAX_K,
                (int)in.fixed_k);
  const uint32_t known = GDN_ARM_REFERENCE | GDN_ARM_MUTANT | GDN_ARM_BARRIER | GDN_ARM_SHUFFLE | GDN_ARM_USER |
                         GDN_ARM_FALLBACK_TARGET | GDN_ARM_THREADS_FROM_D;
  if ((uint32_t)in.flags & ~known)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "arm %s: flags 0x%x name unknown bits", in.name, (unsigned)in.flags);
  if (in.flags & GDN_ARM_REFERENCE)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "arm %s: a registered arm cannot be the family's reference", in.name);
  in.flags |= GDN_ARM_USER;
  e.threads_rule = (in.flags & GDN_ARM_THREADS_FROM_D) ? kThreadsTreeOfD : kThreadsFixed;
  if (e.variants < 1 || e.variants > kMaxVariants)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "arm %s: variants must be 1..%d", in.name, kMaxVariants);

  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  std::vector<EntryRef>& arms = t.arms[family];
  if (in.fallback < -1 || in.fallback >= (int32_t)arms.size())
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "arm %s: fallback must be -1 or an existing %s arm id (0..%d), got %d",
                in.name, family_name(family), (int)arms.size() - 1, (int)in.fallback);
  if ((in.fixed_k != 0 || in.data_requires != 0) && in.fallback < 0)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "arm %s: fixed_k or data_requires needs a fallback arm", in.name);
  int32_t slot = -1;
  for (size_t i = 0; i < arms.size(); ++i)
    if (std::strcmp(arms[i]->info.name, in.name) == 0) slot = (int32_t)i;
  if (slot >= 0 && slot < t.builtins[family])
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "arm.name: \"%s\" is a built-in %s arm and cannot be replaced", in.name,
                family_name(family));
  if (slot == in.fallback && slot >= 0)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "arm %s: cannot fall back to itself", in.name);
  in.op = kOps[family];
  in.id = slot >= 0 ? slot : (int32_t)arms.size();
  auto ref = std::make_shared<const Entry>(std::move(e));
  if (slot >= 0) arms[(size_t)slot] = ref;
  else arms.push_back(ref);
  derive(arms);
  *id = ref->info.id;
  return GDN_OK;
}

}  // namespace registry
}  // namespace gdn

using namespace gdn;

extern "C" {

GDN_API int32_t gdn_arm_count(int32_t op) {
  clear_error();
  registry::Family f;
  if (!registry::family_of_op(op, &f)) {
    fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "op: must be %d (conv), %d (conv update), %d (post-conv) or %d (fused), got %d",
         GDN_OP_CONV, GDN_OP_CONV_UPDATE, GDN_OP_POSTCONV, GDN_OP_FUSED, (int)op);
    return -1;
  }
  return registry::count(f);
}

GDN_API gdn_status gdn_arm_info_get(int32_t op, int32_t id, gdn_arm_info* out) {
  clear_error();
  if (out == nullptr) return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "out: is null");
  registry::Family f;
  if (!registry::family_of_op(op, &f))
    return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "op: must be %d (conv), %d (conv update), %d (post-conv) or %d (fused), got %d",
                GDN_OP_CONV, GDN_OP_CONV_UPDATE, GDN_OP_POSTCONV, GDN_OP_FUSED, (int)op);
  registry::EntryRef e = registry::get(f, id);
  if (!e)
    return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "id: must be a %s arm (%s), got %d", registry::family_name(f),
                registry::id_list(f).c_str(), (int)id);
  *out = e->info;
  return GDN_OK;
}

GDN_API const char* gdn_conv_mutant_name(int32_t mutant) {
  static const char* const names[GDN_CONV_MUTANT_COUNT] = {"none", "taps-reversed", "state-from-output", "no-tail-guard",
                                                           "chunk-off-by-one"};
  return mutant >= 0 && mutant < GDN_CONV_MUTANT_COUNT ? names[mutant] : nullptr;
}

}  // extern "C"
