// registry.h — the table of arms of every op family (docs/SPEC.md §3.5, §12): a fixed prefix of
// built-in arms (from arms/*_list.h, in list order: id = position) and a tail of arms registered at
// run time, behind one mutex. Entries are immutable once published; a lookup hands out a shared
// reference, so replacing a user arm never pulls an entry from under a launch in flight.
//
// Everything that needs to know the arms reads this table: the planners (contracts, fallbacks, the
// "must be one of" lists of the error messages), the host replay (host/replay_host.cpp: the one loop
// over blocks and threads), the CUDA dispatch (cuda/conv.cu, cuda/postconv.cu: built-in ids index
// kernel tables generated from the same lists; registered arms bring their own launch hook), and
// through gdn_arm_count / gdn_arm_info_get the TypeScript layer, the CLI and the benchmarks.
#pragma once

#include "common/arms/arm_spec.h"
#include "common/exec.h"
#include "gdn.h"

#include <memory>
#include <string>
#include <vector>

namespace gdn {
namespace registry {

enum Family : int32_t { kConv = 0, kUpdate = 1, kPostconv = 2, kFused = 3, kFamilies = 4 };

// GDN_OP_CONV / GDN_OP_CONV_UPDATE / GDN_OP_POSTCONV / GDN_OP_FUSED -> family; false for another op.
bool family_of_op(int32_t op, Family* family);
const char* family_name(Family family);  // "conv", "conv update", "post-conv", "fused"

constexpr int kMaxCombos = 8;    // dtype combinations of a family (post-conv: 2 x 2 x 2)
constexpr int kMaxVariants = 6;  // compile-time variants of one arm
constexpr int kBuilds = 2;       // 0: production, 1: planted mutants (conv only)

struct Entry;

// Launch of an arm that is not compiled into libgdn's CUDA kernels (a registered arm): params is
// the family's Params struct (params_bytes long), the grid as the family launches it (conv: 1-D,
// grid_x * grid_y blocks; the others 2-D).
using CudaLaunchFn = gdn_status (*)(gdn_backend* backend, const Entry& entry, const void* params, size_t params_bytes,
                                    int combo, int variant, uint32_t grid_x, uint32_t grid_y, uint32_t threads,
                                    uint32_t shared_bytes, void* stream);

struct Entry {
  gdn_arm_info info{};
  int32_t threads_rule = kThreadsFixed;
  int32_t short_batch_tokens_per_program = 0;  // ArmSpec's (built-in conv arms; 0 for the rest)
  int32_t variants = 1;
  int (*variant)(const void* params) = nullptr;  // which compile-time variant runs (null: 0)
  // Host: per-thread body for [dtype combo][build][variant] (null: not built).
  exec::HostThreadFn host[kMaxCombos][kBuilds][kMaxVariants] = {};
  // CUDA for registered arms; built-in arms (id < builtin_count) use the kernel tables of cuda/*.cu.
  CudaLaunchFn cuda_launch = nullptr;
  std::shared_ptr<void> owner;  // keeps what a registered arm's functions live in (a loaded module)

  bool cooperative() const { return (info.flags & (GDN_ARM_BARRIER | GDN_ARM_SHUFFLE)) != 0; }
  bool barriers() const { return (info.flags & GDN_ARM_BARRIER) != 0; }
  bool has_planted() const;  // a planted-mutant build exists
  int variant_for(const void* params) const { return variant ? variant(params) : 0; }
  // Shared memory for K taps (conv); post-conv arms declare a fixed amount (per_k = 0).
  int64_t shared_bytes(int64_t K) const { return (int64_t)info.shared_bytes_base + (int64_t)info.shared_bytes_per_k * K; }
};
using EntryRef = std::shared_ptr<const Entry>;

int32_t count(Family family);
int32_t builtin_count(Family family);
// Null when id is not an arm of the family.
EntryRef get(Family family, int32_t id);
// The id of the arm called name, -1 when none.
int32_t find(Family family, const char* name);
// "0 scalar, 1 tiled, 2 reg, ..." for error messages.
std::string id_list(Family family);

// Registers an arm (entry.info.name, contract, flags; entry.host and/or entry.cuda_launch). A new
// name is appended (its id = count before the call); the name of a registered arm replaces that arm
// under the same id; a built-in name is refused. Validates the contract; *id receives the id.
gdn_status add(gdn_backend* backend, Family family, Entry entry, int32_t* id);

// The fallback chain: the arm that runs for `requested` when its requirements fail. meets(info)
// says whether an arm's fixed_k / requires hold for the data. Null if requested is not an arm.
template <class Meets>
EntryRef resolve(Family family, int32_t requested, Meets meets) {
  EntryRef e = get(family, requested);
  for (int hops = 0; e && hops < 16 && !meets(e->info) && e->info.fallback >= 0; ++hops) e = get(family, e->info.fallback);
  return e;
}

// The built-in entries of a family, in list order (host/arms_host.cpp instantiates every body for
// the host backend from the list files).
std::vector<Entry> builtin_entries(Family family);

// Fills info's contract fields from a spec (shared by the built-in table and the tests).
void info_from_spec(const ArmSpec& spec, int32_t op, int32_t id, gdn_arm_info* info);

}  // namespace registry
}  // namespace gdn
