// buffers.cpp — the registry of live buffers of a backend, the range check every op argument goes
// through, and the caching allocator (common/buffer_cache.h) that backs gdn_buffer_alloc/free.
#include "common/backend.h"
#include "common/buffer_cache.h"
#include "common/internal.h"

#include <cinttypes>
#include <vector>

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

// ================================================================= caching allocator
namespace {
uint64_t round_up(uint64_t v, uint64_t m) { return (v + m - 1) / m * m; }
}  // namespace

gdn_status BufferCache::map_segment(uint64_t bytes, uint64_t* addr) {
  gdn_status st = src_.map(src_.ctx, bytes, addr);
  if (st != GDN_ERR_OUT_OF_MEMORY) return st;
  // Out of memory: give back what the cache holds unused, then try once more.
  if (trim_locked() == 0) return st;
  return src_.map(src_.ctx, bytes, addr);
}

gdn_status BufferCache::allocate(uint64_t bytes, uint64_t* addr) {
  const uint64_t size = round_up(bytes, kGranule);
  const bool small = size <= kSmallLimit;
  std::lock_guard<std::mutex> lock(mu_);
  FreeSet& fs = pool(small);
  auto it = fs.lower_bound({size, 0});
  uint64_t at = 0;
  if (it != fs.end()) {
    at = it->second;
    fs.erase(it);
  } else {
    const uint64_t minimal = small ? kSmallSegment : round_up(size, kLargeRound);
    const uint64_t want = small ? kSmallSegment : size <= kMidLimit ? kMidSegment : minimal;
    uint64_t base = 0, got = want;
    gdn_status st = map_segment(want, &base);
    if (st == GDN_ERR_OUT_OF_MEMORY && want > minimal) {
      got = minimal;
      st = map_segment(minimal, &base);
    }
    if (st != GDN_OK) return st;
    segments_[base] = got;
    blocks_[base] = Block{got, base, true, small};
    st_.reserved_bytes += got;
    st_.segments += 1;
    st_.segment_maps += 1;
    st_.free_blocks += 1;
    if (st_.reserved_bytes > st_.peak_reserved_bytes) st_.peak_reserved_bytes = st_.reserved_bytes;
    at = base;
  }
  Block& blk = blocks_[at];
  const uint64_t rest = blk.size - size;
  // Split off the rest when it is worth keeping as its own block (small pool: any granule; large
  // pool: more than 1 MiB, so large segments are not shredded into slivers).
  if (rest >= (small ? kGranule : kSmallLimit + kGranule)) {
    blocks_[at + size] = Block{rest, blk.segment, true, small};
    fs.insert({rest, at + size});
    blk.size = size;
    st_.free_blocks += 1;
  }
  blk.free = false;
  st_.allocated_bytes += blk.size;
  st_.allocated_blocks += 1;
  st_.free_blocks -= 1;
  st_.alloc_calls += 1;
  st_.cached_bytes = st_.reserved_bytes - st_.allocated_bytes;
  *addr = at;
  return GDN_OK;
}

bool BufferCache::release(uint64_t addr) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(addr);
  if (it == blocks_.end() || it->second.free) return false;
  Block& blk = it->second;
  FreeSet& fs = pool(blk.small);
  st_.allocated_bytes -= blk.size;
  st_.allocated_blocks -= 1;
  st_.free_blocks += 1;
  blk.free = true;
  // Merge with the next block of the same segment, then with the previous one.
  auto next = std::next(it);
  if (next != blocks_.end() && next->second.free && next->second.segment == blk.segment) {
    fs.erase({next->second.size, next->first});
    blk.size += next->second.size;
    blocks_.erase(next);
    st_.free_blocks -= 1;
  }
  if (it != blocks_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.free && prev->second.segment == blk.segment) {
      fs.erase({prev->second.size, prev->first});
      prev->second.size += blk.size;
      blocks_.erase(it);
      it = prev;
      st_.free_blocks -= 1;
    }
  }
  fs.insert({it->second.size, it->first});
  st_.cached_bytes = st_.reserved_bytes - st_.allocated_bytes;
  return true;
}

uint64_t BufferCache::trim_locked() {
  std::vector<std::pair<uint64_t, uint64_t>> idle;
  for (const auto& seg : segments_) {
    auto b = blocks_.find(seg.first);
    if (b != blocks_.end() && b->second.free && b->second.size == seg.second) idle.push_back(seg);
  }
  if (idle.empty()) return 0;
  if (src_.sync) src_.sync(src_.ctx);
  uint64_t returned = 0;
  for (const auto& seg : idle) {
    const Block& b = blocks_[seg.first];
    pool(b.small).erase({b.size, seg.first});
    blocks_.erase(seg.first);
    segments_.erase(seg.first);
    src_.unmap(src_.ctx, seg.first, seg.second);
    returned += seg.second;
    st_.reserved_bytes -= seg.second;
    st_.segments -= 1;
    st_.segment_unmaps += 1;
    st_.free_blocks -= 1;
  }
  st_.cached_bytes = st_.reserved_bytes - st_.allocated_bytes;
  return returned;
}

uint64_t BufferCache::trim() {
  std::lock_guard<std::mutex> lock(mu_);
  return trim_locked();
}

void BufferCache::release_all() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!segments_.empty() && src_.sync) src_.sync(src_.ctx);
  for (const auto& seg : segments_) {
    src_.unmap(src_.ctx, seg.first, seg.second);
    st_.segment_unmaps += 1;
  }
  segments_.clear();
  blocks_.clear();
  free_small_.clear();
  free_large_.clear();
  st_.reserved_bytes = st_.allocated_bytes = st_.cached_bytes = 0;
  st_.segments = st_.allocated_blocks = st_.free_blocks = 0;
}

BufferCacheStats BufferCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return st_;
}

}  // namespace gdn
