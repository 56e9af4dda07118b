// arms_host.cpp — the built-in entries of the arm table (common/registry.h) with every arm body
// instantiated for the host backend: one per dtype combination, build (production / planted
// mutants) and compile-time variant, all generated from the family lists in common/arms/*_list.h.
// Each family is instantiated in its own translation unit (arms_host_*.cpp), so that a 2-core build
// compiles them in parallel: in one file they took 206 s of one core (docs/MAINTAINING.md, "CI time").
#include "host/arms_host.h"

namespace gdn {
namespace registry {

std::vector<Entry> builtin_entries(Family family) {
  switch (family) {
    case kConv: return conv_host_entries();
    case kUpdate: return update_host_entries();
    case kPostconv: return postconv_host_entries();
    case kFused: return fused_host_entries();
    default: return {};
  }
}

}  // namespace registry
}  // namespace gdn
