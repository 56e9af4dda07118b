// ranges.cpp — the address-range validation every op family's planner shares (internal.h).
#include "common/internal.h"

#include <cinttypes>

namespace gdn {

gdn_status check_arg_ranges(gdn_backend* b, const ArgRange* r, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const gdn_status st = check_range(b, r[i].addr, r[i].bytes, r[i].name);
    if (st != GDN_OK) return st;
  }
  // A misaligned element access is a fault on the GPU, so both backends refuse it.
  for (size_t i = 0; i < n; ++i)
    if (r[i].bytes != 0 && r[i].elem_bytes > 0 && r[i].addr % (uint64_t)r[i].elem_bytes != 0)
      return fail(b, GDN_ERR_INVALID_ARGUMENT, "%s: expected an address aligned to its %d-byte %s elements, got 0x%" PRIx64,
                  r[i].name, r[i].elem_bytes, r[i].dtype, r[i].addr);
  // Outputs are written while inputs are read, by other blocks.
  for (size_t i = 0; i < n; ++i) {
    if (!r[i].written || r[i].bytes == 0) continue;
    for (size_t j = 0; j < n; ++j) {
      if (j == i || r[j].bytes == 0) continue;
      if (r[i].addr < r[j].addr + r[j].bytes && r[j].addr < r[i].addr + r[i].bytes)
        return fail(b, GDN_ERR_INVALID_ARGUMENT,
                    "%s: expected memory apart from %s, but the two overlap (a written buffer must not share a byte with "
                    "another argument)",
                    r[i].name, r[j].name);
    }
  }
  return GDN_OK;
}

}  // namespace gdn
