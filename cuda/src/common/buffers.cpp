// buffers.cpp — the registry of live buffers of a backend, and the range check every op argument
// goes through.
#include "common/backend.h"
#include "common/internal.h"

#include <cinttypes>

namespace gdn {

void registry_add(gdn_backend* b, uint64_t addr, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(b->registry_mu);
  b->buffers[addr] = bytes;
  b->live_bytes += bytes;
}

bool registry_remove(gdn_backend* b, uint64_t addr, uint64_t* bytes) {
  std::lock_guard<std::mutex> lock(b->registry_mu);
  auto it = b->buffers.find(addr);
  if (it == b->buffers.end()) return false;
  *bytes = it->second;
  b->live_bytes -= it->second;
  b->buffers.erase(it);
  return true;
}

gdn_status check_range(gdn_backend* backend, gdn_addr addr, uint64_t bytes, const char* what) {
  if (bytes == 0) return GDN_OK;
  if (backend == nullptr) return fail(nullptr, GDN_ERR_INTERNAL, "%s: checked without a backend", what);
  bool ok = false;
  uint64_t base = 0, size = 0;
  {
    std::lock_guard<std::mutex> lock(backend->registry_mu);
    auto it = backend->buffers.upper_bound(addr);  // first buffer starting after addr
    if (it != backend->buffers.begin()) {
      --it;
      base = it->first;
      size = it->second;
      const uint64_t offset = addr - base;
      ok = offset < size && bytes <= size - offset;
    }
  }
  if (ok) return GDN_OK;
  if (addr == 0)
    return fail(backend, GDN_ERR_INVALID_BUFFER, "%s: address is 0 (null) but %" PRIu64 " bytes are needed", what,
                bytes);
  if (size != 0 && addr - base < size)
    return fail(backend, GDN_ERR_INVALID_BUFFER,
                "%s: 0x%" PRIx64 " + %" PRIu64 " bytes runs past the end of its buffer (0x%" PRIx64 ", %" PRIu64
                " bytes, %" PRIu64 " bytes available from this address)",
                what, addr, bytes, base, size, size - (addr - base));
  return fail(backend, GDN_ERR_INVALID_BUFFER,
              "%s: 0x%" PRIx64 " is not inside a live buffer (freed, foreign or too short: need %" PRIu64 " bytes)",
              what, addr, bytes);
}

}  // namespace gdn
