// host_backend.cpp — the host backend's memory (segments of anonymous pages for the buffer cache of
// common/buffer_cache.h; their addresses are the gdn_addr values) and its device facts (CPU model,
// logical CPUs, last-level cache, memory).
#include "common/backend_ops.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace gdn {
namespace host {

// The one place host-backend memory is mapped: anonymous private pages, zero-filled by the kernel,
// page-aligned (so 256-byte aligned). A forked child that must share buffers with its parent needs
// MAP_SHARED here instead of MAP_PRIVATE, nothing else.
void* map_pages(uint64_t bytes) {
  void* p = mmap(nullptr, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void unmap_pages(uint64_t addr, uint64_t bytes) { munmap(reinterpret_cast<void*>((uintptr_t)addr), (size_t)bytes); }

namespace {
gdn_status host_map(void*, uint64_t bytes, uint64_t* addr) {
  void* p = map_pages(bytes);
  if (p == nullptr) return GDN_ERR_OUT_OF_MEMORY;
  *addr = (uint64_t)(uintptr_t)p;
  return GDN_OK;
}
void host_unmap(void*, uint64_t addr, uint64_t bytes) { unmap_pages(addr, bytes); }
}  // namespace

// Host ops run to completion inside their call, so cached blocks need no synchronisation.
SegmentSource segment_source(gdn_backend* b) {
  SegmentSource s;
  s.ctx = b;
  s.map = host_map;
  s.unmap = host_unmap;
  s.sync = nullptr;
  return s;
}

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  const char* keys[] = {"model name", "Model", "Hardware", "cpu model"};
  while (std::getline(in, line)) {
    for (const char* k : keys) {
      if (line.compare(0, std::strlen(k), k) == 0) {
        const size_t colon = line.find(':');
        if (colon != std::string::npos) {
          size_t s = colon + 1;
          while (s < line.size() && line[s] == ' ') ++s;
          if (s < line.size()) return line.substr(s);
        }
      }
    }
  }
  return "unknown CPU";
}

// Size of the highest cache level of cpu0 from sysfs ("32768K"), 0 when unknown.
int64_t last_level_cache_bytes() {
  int best_level = 0;
  int64_t best = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream lv(dir + "level"), sz(dir + "size"), ty(dir + "type");
    if (!lv || !sz) continue;
    int level = 0;
    std::string size, type;
    lv >> level;
    sz >> size;
    if (ty) ty >> type;
    if (type == "Instruction" || size.empty()) continue;
    int64_t v = std::atoll(size.c_str());
    const char unit = size.back();
    if (unit == 'K') v *= 1024;
    else if (unit == 'M') v *= 1024 * 1024;
    else if (unit == 'G') v *= int64_t(1024) * 1024 * 1024;
    if (level > best_level || (level == best_level && v > best)) {
      best_level = level;
      best = v;
    }
  }
  return best;
}

uint64_t mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

}  // namespace

gdn_status device_info(gdn_backend* b, gdn_device_info* info) {
  std::memset(info, 0, sizeof *info);
  info->backend = GDN_BACKEND_HOST;
  info->device_ordinal = b->device_ordinal;
  std::snprintf(info->name, sizeof info->name, "%s", cpu_model().c_str());
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  info->sm_count = cpus > 0 ? (int32_t)cpus : 0;
  const int64_t llc = last_level_cache_bytes();
  info->l2_bytes = llc > 0 && llc <= INT32_MAX ? (int32_t)llc : 0;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  info->total_mem_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
  info->free_mem_bytes = mem_available_bytes();
  info->clocks_source = 0;
  return GDN_OK;
}

}  // namespace host
}  // namespace gdn
