// user_arms.cpp — gdn_arm_register: an arm compiled at run time becomes an entry of the arm registry
// (common/registry.h) with its contract, so every planner, the host replay and the CUDA dispatch take
// it like a built-in arm (docs/USER-ARMS.md). The entry's functions exist only in the isolation
// worker, which loads the modules: the host module's per-thread entries become the entry's host
// bodies (variant 0 the checked build forward runs, variant 1 the unchecked build timing runs), the
// cubin is launched through the entry's CUDA hook (user_cuda.cu).
#include "user/user_arms.h"

#include "common/backend.h"
#include "common/backend_ops.h"
#include "common/exec.h"

#include <cinttypes>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <memory>
#include <mutex>

namespace gdn {
namespace user {
namespace {

constexpr const char* kConvEntries[4] = {"gdn_arm_conv_f32_f32", "gdn_arm_conv_f32_bf16", "gdn_arm_conv_bf16_f32",
                                         "gdn_arm_conv_bf16_bf16"};
constexpr const char* kPostconvEntries[8] = {
    "gdn_arm_postconv_f32_f32_f32",  "gdn_arm_postconv_f32_f32_bf16",  "gdn_arm_postconv_f32_bf16_f32",
    "gdn_arm_postconv_f32_bf16_bf16", "gdn_arm_postconv_bf16_f32_f32", "gdn_arm_postconv_bf16_f32_bf16",
    "gdn_arm_postconv_bf16_bf16_f32", "gdn_arm_postconv_bf16_bf16_bf16"};

std::mutex g_mu;
std::map<int64_t, Arm> g_arms;  // (op << 32 | id) -> what was registered
uint64_t g_version = 0;
bool g_in_worker = false;
char* g_fault_page = nullptr;
thread_local bool t_timing = false;

int64_t key(int32_t op, int32_t id) { return ((int64_t)op << 32) | (uint32_t)id; }
std::string str(const char* s) { return s ? std::string(s) : std::string(); }

// Which host build runs: the registry asks at plan time (variant 1 = unchecked, while timing).
int timing_variant(const void*) { return t_timing ? 1 : 0; }

void* load_module(const std::string& name, const std::string& path, int32_t op, exec::HostThreadFn* fns, gdn_status* st) {
  *st = GDN_OK;
  if (path.empty()) return nullptr;
  void* dl = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (dl == nullptr) {
    *st = fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "arm '%s': cannot load its host module %s: %s", name.c_str(),
               path.c_str(), dlerror());
    return nullptr;
  }
  const int n = op == GDN_OP_CONV ? 4 : 8;
  for (int i = 0; i < n; ++i) {
    const char* sym = op == GDN_OP_CONV ? kConvEntries[i] : kPostconvEntries[i];
    fns[i] = reinterpret_cast<exec::HostThreadFn>(dlsym(dl, sym));
    if (fns[i] == nullptr) {
      dlclose(dl);
      *st = fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "arm '%s': host module %s has no entry %s (not built from "
                 "user/entry_*.h)", name.c_str(), path.c_str(), sym);
      return nullptr;
    }
  }
  using SetFault = void (*)(char*);
  if (SetFault set = reinterpret_cast<SetFault>(dlsym(dl, "gdn_arm_set_fault_buffer"))) set(g_fault_page);
  return dl;
}

gdn_status check_desc(const gdn_user_arm_desc* d) {
  if (d == nullptr) return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "desc: is null");
  if (d->op != GDN_OP_CONV && d->op != GDN_OP_POSTCONV)
    return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "desc.op: must be GDN_OP_CONV (1) or GDN_OP_POSTCONV (3), got %d",
                (int)d->op);
  if (d->name == nullptr || d->name[0] == '\0') return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "desc.name: is empty");
  if (d->time_limit_ms < 0)
    return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "arm '%s': time_limit_ms must be >= 0, got %d", d->name,
                (int)d->time_limit_ms);
  if (!d->host_module && !d->cuda_module)
    return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "arm '%s': needs a host_module or a cuda_module", d->name);
  return GDN_OK;
}

}  // namespace

#if !GDN_HAVE_CUDA
void cuda_unload(Module*) {}
#endif

Module::~Module() {
  cuda_unload(this);
  if (host) dlclose(host);
  if (host_fast) dlclose(host_fast);
}

bool in_worker() { return g_in_worker; }
void set_in_worker() { g_in_worker = true; }
void set_fault_page(char* page) { g_fault_page = page; }
void set_timing(bool timing) { t_timing = timing; }

gdn_status register_arm(const gdn_user_arm_desc* d, int32_t id_hint, int32_t* id_out) {
  gdn_status st = check_desc(d);
  if (st != GDN_OK) return st;
  const registry::Family family = d->op == GDN_OP_CONV ? registry::kConv : registry::kPostconv;
  registry::Entry e;
  gdn_arm_info& in = e.info;
  std::snprintf(in.name, sizeof in.name, "%s", d->name);
  std::snprintf(in.description, sizeof in.description, "defined at run time (docs/USER-ARMS.md)");
  in.threads_per_block = d->threads_per_block;
  in.fallback = -1;
  in.min_blocks_per_sm = 1;
  in.shared_bytes_base = d->shared_bytes;
  in.flags = d->cooperative ? (int32_t)(GDN_ARM_BARRIER | GDN_ARM_SHUFFLE) : 0;
  if (d->op == GDN_OP_CONV) {
    in.per_block = d->channels_per_block;
    in.tokens_per_program = d->tokens_per_program;
    in.mappings = d->mappings | (1 << GDN_MAP_SEQUENCE);  // every conv arm runs whole sequences too
    in.layout = GDN_LAYOUT_NONE;
  } else {
    in.per_block = 1;  // one head slot per block
    in.tokens_per_program = 16;
    in.layout = GDN_LAYOUT_TILE_SLOTS;
    if (d->requires_d128) {
      in.data_requires = GDN_ARM_REQ_D128;
      in.fallback = registry::find(registry::kPostconv, "tree");
    }
  }
  e.variants = 2;
  e.variant = timing_variant;
  if (g_in_worker) {
    auto m = std::make_shared<Module>();
    m->name = d->name;
    m->op = d->op;
    m->cuda_module = str(d->cuda_module);
    exec::HostThreadFn checked[8] = {}, fast[8] = {};
    m->host = load_module(m->name, str(d->host_module), d->op, checked, &st);
    if (st == GDN_OK) m->host_fast = load_module(m->name, str(d->host_fast_module), d->op, fast, &st);
    if (st != GDN_OK) return st;
    for (int c = 0; c < registry::kMaxCombos; ++c) {
      e.host[c][0][0] = checked[c] ? checked[c] : fast[c];
      e.host[c][0][1] = fast[c] ? fast[c] : checked[c];
    }
#if GDN_HAVE_CUDA
    if (!m->cuda_module.empty()) e.cuda_launch = cuda_launch;
#endif
    e.owner = m;
  }
  int32_t id = -1;
  st = registry::add(nullptr, family, std::move(e), &id);
  if (st != GDN_OK) return st;
  if (id_hint >= 0 && id != id_hint)
    return fail(nullptr, GDN_ERR_INTERNAL, "arm '%s': the worker gave id %d, the caller %d", d->name, (int)id, (int)id_hint);
  Arm a;
  a.id = id;
  a.op = d->op;
  a.name = d->name;
  a.host_module = str(d->host_module);
  a.host_fast_module = str(d->host_fast_module);
  a.cuda_module = str(d->cuda_module);
  a.desc = *d;
  a.desc.name = a.desc.host_module = a.desc.host_fast_module = a.desc.cuda_module = nullptr;
  std::lock_guard<std::mutex> lock(g_mu);
  a.version = ++g_version;
  g_arms[key(d->op, id)] = a;
  *id_out = id;
  return GDN_OK;
}

bool find(int32_t op, int32_t id, Arm* out) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_arms.find(key(op, id));
  if (it == g_arms.end()) return false;
  *out = it->second;
  return true;
}

std::string name_of(int32_t op, int32_t id) {
  Arm a;
  return find(op, id, &a) ? a.name : std::string("?");
}

std::vector<Arm> all_arms() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<Arm> v;
  for (const auto& kv : g_arms) v.push_back(kv.second);
  return v;
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
