// user_arms.cpp — the table of user arms (gdn_arm_register), their launch contracts, and running them
// on the host backend inside the isolation worker (docs/USER-ARMS.md).
#include "user/user_arms.h"

#include "common/backend.h"
#include "common/backend_ops.h"
#include "common/exec.h"
#include "common/postconv_kernels.h"

#include <cinttypes>
#include <cstring>
#include <dlfcn.h>
#include <mutex>

namespace gdn {
namespace user {
namespace {

// Host module entry points (entry_conv.h, entry_postconv.h): exec::HostThreadFn.
constexpr const char* kConvEntries[4] = {"gdn_arm_conv_f32_f32", "gdn_arm_conv_f32_bf16", "gdn_arm_conv_bf16_f32",
                                         "gdn_arm_conv_bf16_bf16"};
constexpr const char* kPostconvEntries[8] = {
    "gdn_arm_postconv_f32_f32_f32",  "gdn_arm_postconv_f32_f32_bf16",  "gdn_arm_postconv_f32_bf16_f32",
    "gdn_arm_postconv_f32_bf16_bf16", "gdn_arm_postconv_bf16_f32_f32", "gdn_arm_postconv_bf16_f32_bf16",
    "gdn_arm_postconv_bf16_bf16_f32", "gdn_arm_postconv_bf16_bf16_bf16"};

struct HostModule {
  void* dl = nullptr;
  exec::HostThreadFn fn[8] = {};
};

struct Slot {
  bool live = false;
  Arm arm;
  HostModule host, host_fast;  // worker only
};

std::mutex g_mu;
Slot g_conv[GDN_USER_ARM_MAX], g_postconv[GDN_USER_ARM_MAX];
uint64_t g_version = 0;
bool g_in_worker = false;
char* g_fault_page = nullptr;
thread_local bool t_timing = false;

Slot* table(int32_t op) { return op == GDN_OP_CONV ? g_conv : op == GDN_OP_POSTCONV ? g_postconv : nullptr; }

Slot* slot_of(int32_t op, int32_t id) {
  Slot* t = table(op);
  if (t == nullptr || id < GDN_USER_ARM_FIRST_ID || id >= GDN_USER_ARM_FIRST_ID + GDN_USER_ARM_MAX) return nullptr;
  Slot* s = &t[id - GDN_USER_ARM_FIRST_ID];
  return s->live ? s : nullptr;
}

void unload(HostModule* m) {
  if (m->dl) dlclose(m->dl);
  *m = HostModule{};
}

gdn_status load(const std::string& name, const std::string& path, int32_t op, HostModule* m) {
  if (path.empty()) return GDN_OK;
  void* dl = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (dl == nullptr)
    return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "arm '%s': cannot load its host module %s: %s", name.c_str(),
                path.c_str(), dlerror());
  HostModule hm;
  hm.dl = dl;
  const int n = op == GDN_OP_CONV ? 4 : 8;
  for (int i = 0; i < n; ++i) {
    const char* sym = op == GDN_OP_CONV ? kConvEntries[i] : kPostconvEntries[i];
    hm.fn[i] = reinterpret_cast<exec::HostThreadFn>(dlsym(dl, sym));
    if (hm.fn[i] == nullptr) {
      dlclose(dl);
      return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "arm '%s': its host module %s has no entry %s (not built from "
                  "user/entry_*.h)", name.c_str(), path.c_str(), sym);
    }
  }
  using SetFault = void (*)(char*);
  if (SetFault set = reinterpret_cast<SetFault>(dlsym(dl, "gdn_arm_set_fault_buffer"))) set(g_fault_page);
  *m = hm;
  return GDN_OK;
}

std::string str(const char* s) { return s ? std::string(s) : std::string(); }

gdn_status check_desc(const gdn_user_arm_desc* d) {
  if (d == nullptr) return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "desc: is null");
  if (d->op != GDN_OP_CONV && d->op != GDN_OP_POSTCONV)
    return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "desc.op: must be GDN_OP_CONV (1) or GDN_OP_POSTCONV (3), got %d",
                (int)d->op);
  if (d->name == nullptr || d->name[0] == '\0' || std::strlen(d->name) > 64)
    return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "desc.name: must be 1..64 characters");
  const char* n = d->name;
  if (d->threads_per_block < 1 || d->threads_per_block > 1024)
    return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "arm '%s': threads_per_block must be in 1..1024, got %d", n,
                (int)d->threads_per_block);
  if (d->shared_bytes < 0 || d->shared_bytes > 49152)
    return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "arm '%s': shared_bytes must be in 0..49152, got %d", n,
                (int)d->shared_bytes);
  if (d->time_limit_ms < 0)
    return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "arm '%s': time_limit_ms must be >= 0, got %d", n, (int)d->time_limit_ms);
  if (d->tokens_per_program < 1 || d->tokens_per_program > (1 << 20))
    return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "arm '%s': tokens_per_program must be in 1..2^20, got %d", n,
                (int)d->tokens_per_program);
  if (d->op == GDN_OP_CONV) {
    if (d->channels_per_block < 1 || d->channels_per_block > (1 << 20))
      return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "arm '%s': channels_per_block must be in 1..2^20, got %d", n,
                  (int)d->channels_per_block);
    if (d->mappings <= 0 || d->mappings >= (1 << GDN_MAP_COUNT))
      return fail(nullptr, GDN_ERR_INVALID_ARGUMENT,
                  "arm '%s': mappings must be a non-empty mask of 1 exact, 2 exact-racy, 4 sequence, got %d", n,
                  (int)d->mappings);
  }
  if (!d->host_module && !d->cuda_module)
    return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "arm '%s': needs a host_module or a cuda_module", n);
  return GDN_OK;
}

const char* kMappingNames[GDN_MAP_COUNT] = {"exact", "exact-racy", "sequence"};

}  // namespace

bool in_worker() { return g_in_worker; }
void set_in_worker() { g_in_worker = true; }
void set_fault_page(char* page) { g_fault_page = page; }
void set_timing(bool timing) { t_timing = timing; }

bool is_user(int32_t op, int32_t id) {
  std::lock_guard<std::mutex> lock(g_mu);
  return slot_of(op, id) != nullptr;
}

bool find(int32_t op, int32_t id, Arm* out) {
  std::lock_guard<std::mutex> lock(g_mu);
  Slot* s = slot_of(op, id);
  if (s == nullptr) return false;
  *out = s->arm;
  return true;
}

std::string name_of(int32_t op, int32_t id) {
  Arm a;
  return find(op, id, &a) ? a.name : std::string("?");
}

std::vector<Arm> all_arms() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<Arm> v;
  for (Slot* t : {g_conv, g_postconv})
    for (int i = 0; i < GDN_USER_ARM_MAX; ++i)
      if (t[i].live) v.push_back(t[i].arm);
  return v;
}

// Registers in this process. id_hint >= 0 (the worker): use that id, as the parent assigned it.
gdn_status register_arm(const gdn_user_arm_desc* d, int32_t id_hint, int32_t* id_out) {
  gdn_status st = check_desc(d);
  if (st != GDN_OK) return st;
  std::lock_guard<std::mutex> lock(g_mu);
  Slot* t = table(d->op);
  int idx = -1;
  if (id_hint >= 0) {
    idx = id_hint - GDN_USER_ARM_FIRST_ID;
    if (idx < 0 || idx >= GDN_USER_ARM_MAX) return fail(nullptr, GDN_ERR_INTERNAL, "register: bad id %d", (int)id_hint);
  } else {
    for (int i = 0; i < GDN_USER_ARM_MAX && idx < 0; ++i)
      if (t[i].live && t[i].arm.name == d->name) idx = i;  // replace: same name, same id
    for (int i = 0; i < GDN_USER_ARM_MAX && idx < 0; ++i)
      if (!t[i].live) idx = i;
    if (idx < 0)
      return fail(nullptr, GDN_ERR_UNSUPPORTED, "arm '%s': %d user arms of this op are live already; unregister one",
                  d->name, GDN_USER_ARM_MAX);
  }
  Slot fresh;
  fresh.live = true;
  fresh.arm.id = GDN_USER_ARM_FIRST_ID + idx;
  fresh.arm.op = d->op;
  fresh.arm.version = ++g_version;
  fresh.arm.name = d->name;
  fresh.arm.host_module = str(d->host_module);
  fresh.arm.host_fast_module = str(d->host_fast_module);
  fresh.arm.cuda_module = str(d->cuda_module);
  fresh.arm.desc = *d;
  fresh.arm.desc.name = nullptr;  // the strings live in arm, not in the caller's memory
  fresh.arm.desc.host_module = fresh.arm.desc.host_fast_module = fresh.arm.desc.cuda_module = nullptr;
  if (g_in_worker) {
    st = load(fresh.arm.name, fresh.arm.host_module, d->op, &fresh.host);
    if (st == GDN_OK) st = load(fresh.arm.name, fresh.arm.host_fast_module, d->op, &fresh.host_fast);
    if (st != GDN_OK) {
      unload(&fresh.host);
      return st;
    }
  }
  Slot& s = t[idx];
  unload(&s.host);
  unload(&s.host_fast);
  s = fresh;
  *id_out = s.arm.id;
  return GDN_OK;
}

gdn_status unregister_arm(int32_t op, int32_t id) {
  std::lock_guard<std::mutex> lock(g_mu);
  Slot* s = slot_of(op, id);
  if (s == nullptr) return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "id: %d is not a live user arm of op %d", (int)id, (int)op);
  unload(&s->host);
  unload(&s->host_fast);
  *s = Slot{};
  return GDN_OK;
}

// ----------------------------------------------------------------- contracts
gdn_status conv_contract(gdn_backend* b, int32_t arm, int32_t mapping, int64_t C, const int32_t* qsl,
                         int32_t num_seqs, gdn_launch_contract* ct, std::vector<int32_t>* programs) {
  Arm a;
  if (!find(GDN_OP_CONV, arm, &a)) return fail(b, GDN_ERR_INVALID_ARGUMENT, "arm: %d is not a live conv arm", (int)arm);
  const gdn_user_arm_desc& d = a.desc;
  if (!(d.mappings & (1 << mapping))) {
    std::string ok;
    for (int m = 0; m < GDN_MAP_COUNT; ++m)
      if (d.mappings & (1 << m)) ok += std::string(ok.empty() ? "" : ", ") + kMappingNames[m];
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "mapping: arm '%s' supports %s, got %s", a.name.c_str(), ok.c_str(),
                kMappingNames[mapping]);
  }
  std::memset(ct, 0, sizeof *ct);
  ct->arm_ran = arm;
  ct->mapping_ran = mapping;
  ct->threads_per_block = d.threads_per_block;
  ct->channels_per_block = d.channels_per_block;
  ct->channel_tiles = (int32_t)((C + d.channels_per_block - 1) / d.channels_per_block);
  ct->shared_bytes = d.shared_bytes;
  int64_t n_programs = num_seqs;
  if (programs) programs->clear();
  if (mapping == GDN_MAP_SEQUENCE) {
    ct->tokens_per_program = 0;
  } else {
    const int64_t chunk = d.tokens_per_program;
    ct->tokens_per_program = (int32_t)chunk;
    n_programs = 0;
    for (int32_t s = 0; s < num_seqs; ++s) {
      const int64_t n = (qsl[s + 1] - qsl[s] + chunk - 1) / chunk;
      for (int64_t k = 0; k < n && programs; ++k) {
        programs->push_back(s);
        programs->push_back((int32_t)k);
      }
      n_programs += n;
    }
  }
  if (n_programs * ct->channel_tiles > INT32_MAX)
    return fail(b, GDN_ERR_UNSUPPORTED, "launch: %" PRId64 " programs x %d channel tiles exceeds 2^31-1 blocks",
                n_programs, (int)ct->channel_tiles);
  ct->programs = (int32_t)n_programs;
  ct->grid_x = ct->channel_tiles;
  ct->grid_y = (int32_t)n_programs;
  ct->grid_z = 1;
  return GDN_OK;
}

gdn_status postconv_result(gdn_backend* b, const gdn_postconv_args& a, gdn_postconv_result* r) {
  Arm arm;
  if (!find(GDN_OP_POSTCONV, a.arm, &arm))
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.arm: %d is not a live post-conv arm", (int)a.arm);
  *r = gdn_postconv_result{};
  if (arm.desc.requires_d128 && !(a.Dk == postconv::kTileD && a.Dv == postconv::kTileD)) {
    r->arm_ran = GDN_POSTCONV_TREE;  // the reference arm, as token-tile falls back
    r->threads_per_block = postconv::tree_threads(a.Dk);
    r->grid_x = (int32_t)a.T;
    r->grid_y = (int32_t)(2 * a.Hk + a.Hv);
    return GDN_OK;
  }
  const int64_t tiles = (a.T + arm.desc.tokens_per_program - 1) / arm.desc.tokens_per_program;
  if (tiles > postconv::kMaxGridY)
    return fail(b, GDN_ERR_UNSUPPORTED, "args.T: arm '%s' covers %d tokens per block and its grid has at most %" PRId64
                " token tiles, got T = %" PRId64, arm.name.c_str(), (int)arm.desc.tokens_per_program,
                postconv::kMaxGridY, a.T);
  r->arm_ran = a.arm;
  r->threads_per_block = arm.desc.threads_per_block;
  r->grid_x = (int32_t)(2 * a.Hk + a.Hv + 1);
  r->grid_y = (int32_t)tiles;
  return GDN_OK;
}

// ----------------------------------------------------------------- running (worker)
namespace {
gdn_status host_fault(gdn_backend* b, const Arm& a, int32_t fault, int64_t block) {
  return fail(b, GDN_ERR_ARM_FAULT, "arm '%s': %s (block %" PRId64 ")", a.name.c_str(), exec::host_fault_text(fault),
              block);
}

// The host module to run and its entry for dtype combination k.
gdn_status host_entry(gdn_backend* b, int32_t op, int32_t id, int k, Arm* arm, exec::HostThreadFn* fn) {
  std::lock_guard<std::mutex> lock(g_mu);
  Slot* s = slot_of(op, id);
  if (s == nullptr) return fail(b, GDN_ERR_INTERNAL, "user arm %d vanished", (int)id);
  const HostModule& m = t_timing && s->host_fast.dl ? s->host_fast : s->host.dl ? s->host : s->host_fast;
  if (m.dl == nullptr)
    return fail(b, GDN_ERR_UNSUPPORTED, "arm '%s': was defined without a host module (CUDA only)", s->arm.name.c_str());
  *arm = s->arm;
  *fn = m.fn[k];
  return GDN_OK;
}
}  // namespace

gdn_status run_conv(gdn_backend* b, ConvPlan& plan) {
  if (!g_in_worker) return fail(b, GDN_ERR_INTERNAL, "user arms run only in the isolation worker");
#if GDN_HAVE_CUDA
  if (backend_is_cuda(b)) {
    gdn_status st = cuda::conv_prepare(b, &plan);
    if (st == GDN_OK) st = launch_conv_cuda(b, plan);
    return st == GDN_OK ? cuda::synchronize(b) : st;
  }
#endif
  const int k = (plan.x_dtype == GDN_BF16 ? 2 : 0) + (plan.out_dtype == GDN_BF16 ? 1 : 0);
  Arm arm;
  exec::HostThreadFn fn = nullptr;
  gdn_status st = host_entry(b, GDN_OP_CONV, plan.contract.arm_ran, k, &arm, &fn);
  if (st != GDN_OK) return st;
  exec::HostGrid g;
  g.grid_x = plan.contract.grid_x;
  g.grid_y = plan.contract.grid_y;
  g.threads = plan.contract.threads_per_block;
  g.shared_bytes = (size_t)plan.contract.shared_bytes;
  g.order = plan.order.empty() ? nullptr : plan.order.data();
  g.cooperative = arm.desc.cooperative != 0;
  if (g.grid_x * g.grid_y == 0) return GDN_OK;
  int64_t fault_block = -1;
  const int32_t f = exec::run_host_grid(g, fn, &plan.params, &fault_block);
  return f == exec::kFaultNone ? GDN_OK : host_fault(b, arm, f, fault_block);
}

gdn_status run_postconv(gdn_backend* b, const gdn_postconv_args* args, const gdn_postconv_result* plan) {
  if (!g_in_worker) return fail(b, GDN_ERR_INTERNAL, "user arms run only in the isolation worker");
#if GDN_HAVE_CUDA
  if (backend_is_cuda(b)) {
    const gdn_status st = launch_postconv_cuda(b, args, plan);
    return st == GDN_OK ? cuda::synchronize(b) : st;
  }
#endif
  const int k = (args->conv_dtype == GDN_BF16 ? 4 : 0) + (args->qkv_dtype == GDN_BF16 ? 2 : 0) +
                (args->gate_dtype == GDN_BF16 ? 1 : 0);
  Arm arm;
  exec::HostThreadFn fn = nullptr;
  gdn_status st = host_entry(b, GDN_OP_POSTCONV, plan->arm_ran, k, &arm, &fn);
  if (st != GDN_OK) return st;
  const postconv::Params p = postconv::make_params(*args);
  exec::HostGrid g;
  g.grid_x = plan->grid_x;
  g.grid_y = plan->grid_y;
  g.threads = plan->threads_per_block;
  g.shared_bytes = (size_t)arm.desc.shared_bytes;
  g.cooperative = arm.desc.cooperative != 0;
  if (g.grid_x * g.grid_y == 0) return GDN_OK;
  int64_t fault_block = -1;
  const int32_t f = exec::run_host_grid(g, fn, &p, &fault_block);
  return f == exec::kFaultNone ? GDN_OK : host_fault(b, arm, f, fault_block);
}

}  // namespace user
}  // namespace gdn

// ----------------------------------------------------------------- C API
GDN_API gdn_status gdn_arm_register(const gdn_user_arm_desc* desc, int32_t* id_out) {
  gdn::clear_error();
  if (id_out == nullptr) return gdn::fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "id_out: is null");
  try {
    return gdn::user::register_arm(desc, -1, id_out);
  } catch (...) {
    return gdn::fail(nullptr, GDN_ERR_INTERNAL, "gdn_arm_register: unexpected error");
  }
}

GDN_API gdn_status gdn_arm_unregister(int32_t op, int32_t id) {
  gdn::clear_error();
  return gdn::user::unregister_arm(op, id);
}
