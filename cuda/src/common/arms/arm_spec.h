// arm_spec.h — what one arm declares (docs/SPEC.md §3.5, §12): its name, a one-line description and
// its launch contract. Every built-in arm is a struct in cuda/src/common/arms/<family>_<arm>.h with
//
//     static constexpr ArmSpec spec = {...};
//     static constexpr int kVariants = N;                 // compile-time variants (1 if none)
//     static int variant(const Params& p);                // which one runs (host side)
//     template <class T..., class M, int V, class Ctx>    // element types of the family, mutant
//     GDN_HD static void body(const Params& p, Ctx& t);   // policy, variant, exec.h context
//
// listed once in its family's list file (arms/conv_list.h, update_list.h, postconv_list.h). The
// planner, both backends' dispatch, the name tables, the error messages, the ABI tables
// (gdn_arm_count / gdn_arm_info) and through them the TypeScript layer, the CLI and the benchmarks
// read that list.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "common/exec.h"
#include "gdn.h"

namespace gdn {

// The production mutant policy of every family: every M::is(p, mutant) is false at compile time.
// (conv::PlantedMutants, in conv_params.h, is the planted build of the conv arms.)
struct NoMutant {
  static constexpr bool kPlanted = false;
  template <class P>
  GDN_HDI static bool is(const P&, int) {
    return false;
  }
};

// How a family's planner derives threads per block from the spec.
enum ThreadsRule : int32_t {
  kThreadsFixed = 0,   // spec.threads
  kThreadsTreeOfD = 1, // post-conv: max(32, the next power of two >= Dk), at most spec.threads
};

// How a post-conv arm lays its blocks out (its body decodes the same layout).
enum PostconvLayout : int32_t {
  kLayoutNone = 0,       // conv families
  kLayoutTokenSlot = 1,  // grid (T, 2Hk+Hv): one block per (token, head slot); value slots compute gates
  kLayoutTileSlots = 2,  // grid ((2Hk+Hv+1) * folds, rows): one block per (head slot, 16-token tile),
                         // slots fastest; slot 2Hk+Hv computes the gates of the tile
};

struct ArmSpec {
  const char* name;
  const char* description;
  int32_t threads;             // threads per block (the CUDA __launch_bounds__ maximum)
  int32_t min_blocks;          // CUDA __launch_bounds__ minimum resident blocks per SM (1 = no constraint)
  int32_t per_block;           // conv/update: channels per block; post-conv: head slots per block
  int32_t tokens_per_program;  // conv: tokens per exact-mapping program (0: whole sequences only);
                               // post-conv: tokens per block
  uint32_t mappings;           // conv: bit m = gdn_conv_mapping m runs as asked (the others run SEQUENCE)
  int32_t shared_base;         // shared memory per block = shared_base + shared_per_k * K bytes
  int32_t shared_per_k;
  int32_t fixed_k;             // 0: any K; else the arm runs only with this K
  uint32_t data_requires;      // GDN_ARM_REQ_* bits
  int32_t fallback;            // arm id run instead when fixed_k or data_requires is not met; -1: none
  uint32_t flags;              // GDN_ARM_REFERENCE, GDN_ARM_MUTANT, GDN_ARM_BARRIER, GDN_ARM_SHUFFLE
  int32_t threads_rule;        // ThreadsRule
  int32_t layout;              // PostconvLayout (post-conv), kLayoutNone otherwise
  // conv, exact mapping: tokens per program when the batch's sequences are short — on average fewer
  // than 2 x tokens_per_program tokens (conv_plan.cpp); 0: tokens_per_program always. The exact
  // mapping's bits do not depend on the program length (docs/SPEC.md §3.4), only its speed does.
  int32_t short_batch_tokens_per_program = 0;
};

// Characters of a text before its NUL, at compile time: a built-in arm's name and description must fit the ABI's
// gdn_arm_info fields whole (arms_host.h checks), since copying them truncates silently.
constexpr size_t text_length(const char* s) { return *s ? 1 + text_length(s + 1) : 0; }

constexpr uint32_t kAllMappings = (1u << GDN_MAP_EXACT) | (1u << GDN_MAP_EXACT_RACY) | (1u << GDN_MAP_SEQUENCE);
constexpr uint32_t kWholeSequences = 1u << GDN_MAP_SEQUENCE;

}  // namespace gdn
