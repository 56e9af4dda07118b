// cuda_backend.cu — the CUDA backend: device discovery and facts (runtime attributes, NVML through
// dlopen for current clocks and the driver string), the stream, memory and copies.
//
// The CUDA runtime is linked statically; it loads the driver at the first call, so on a machine with
// no driver or GPU every entry here fails cleanly (device count 0, GDN_ERR_NO_DEVICE on open).
#include "common/backend_ops.h"
#include "cuda/cuda_util.h"

#include <cstdio>
#include <cstring>
#include <dlfcn.h>

namespace gdn {

void* cuda_stream(gdn_backend* b) { return b && b->cuda ? (void*)cuda_state(b)->stream : nullptr; }

namespace {

// The one fill kernel (gdn_buffer_fill_u32 is a single range): up to kFillRangesPerLaunch ranges in the
// kernel's parameters, blockIdx.y picks the range. An op's fresh outputs (five for post-conv and the
// fused op) are poisoned by one launch instead of five (docs/SPEC.md §2, "Fresh outputs").
constexpr uint32_t kFillRangesPerLaunch = 8;
struct FillRanges {
  uint32_t* dst[kFillRangesPerLaunch];
  uint64_t words[kFillRangesPerLaunch];
  uint32_t pattern[kFillRangesPerLaunch];
};
__global__ void fill_ranges_kernel(const __grid_constant__ FillRanges r) {
  uint32_t* dst = r.dst[blockIdx.y];
  const uint64_t n = r.words[blockIdx.y];
  const uint32_t pattern = r.pattern[blockIdx.y];
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
    dst[i] = pattern;
}

// ----------------------------------------------------------------- NVML (optional)
// Only the few entry points we use, declared here so no NVML header is needed at build time.
typedef int nvml_return;
typedef struct nvml_device* nvml_device_t;
constexpr int kNvmlClockSm = 1, kNvmlClockMem = 2;

struct Nvml {
  void* lib = nullptr;
  nvml_return (*init)() = nullptr;
  nvml_return (*shutdown)() = nullptr;
  nvml_return (*by_pci)(const char*, nvml_device_t*) = nullptr;
  nvml_return (*clock)(nvml_device_t, int, unsigned*) = nullptr;
  nvml_return (*max_clock)(nvml_device_t, int, unsigned*) = nullptr;
  nvml_return (*driver_version)(char*, unsigned) = nullptr;

  bool load() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    init = (nvml_return(*)())dlsym(lib, "nvmlInit_v2");
    shutdown = (nvml_return(*)())dlsym(lib, "nvmlShutdown");
    by_pci = (nvml_return(*)(const char*, nvml_device_t*))dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    clock = (nvml_return(*)(nvml_device_t, int, unsigned*))dlsym(lib, "nvmlDeviceGetClockInfo");
    max_clock = (nvml_return(*)(nvml_device_t, int, unsigned*))dlsym(lib, "nvmlDeviceGetMaxClockInfo");
    driver_version = (nvml_return(*)(char*, unsigned))dlsym(lib, "nvmlSystemGetDriverVersion");
    if (!init || !shutdown || !by_pci || !clock || !max_clock || !driver_version || init() != 0) {
      dlclose(lib);
      lib = nullptr;
      return false;
    }
    return true;
  }
  ~Nvml() {
    if (lib) {
      shutdown();
      dlclose(lib);
    }
  }
};

}  // namespace

namespace cuda {

int32_t device_count(std::string* why) {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    if (why) *why = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    cudaGetLastError();  // clear it
    return 0;
  }
  if (n == 0 && why) *why = "the CUDA runtime reports no devices";
  return n;
}

gdn_status open(gdn_backend* b, int32_t ordinal) {
  std::string why;
  const int32_t n = device_count(&why);
  if (n == 0) return fail(nullptr, GDN_ERR_NO_DEVICE, "no usable CUDA device (%s); use the host backend", why.c_str());
  if (ordinal < 0 || ordinal >= n)
    return fail(nullptr, GDN_ERR_INVALID_ARGUMENT, "device_ordinal: must be in 0..%d, got %d", (int)n - 1, (int)ordinal);
  gdn_status st = cuda_check(nullptr, cudaSetDevice(ordinal), "cudaSetDevice");
  if (st != GDN_OK) return st;
  // Does this build carry code for the device? (sm_90 / sm_120 machine code, compute_90 PTX.)
  cudaFuncAttributes attr;
  const cudaError_t img = cudaFuncGetAttributes(&attr, fill_ranges_kernel);
  if (img != cudaSuccess) {
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, ordinal);
    cudaGetLastError();
    return fail(nullptr, img == cudaErrorNoKernelImageForDevice ? GDN_ERR_UNSUPPORTED : GDN_ERR_DEVICE,
                "device %d (%s, compute capability %d.%d) cannot run this libgdn's kernels: %s (built for: %s)",
                (int)ordinal, prop.name, prop.major, prop.minor, cudaGetErrorString(img), gdn_build_info());
  }
  CudaState* cs = new CudaState();
  st = cuda_check(nullptr, cudaStreamCreateWithFlags(&cs->stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  if (st == GDN_OK) st = cuda_check(nullptr, cudaEventCreate(&cs->ev_start), "cudaEventCreate");
  if (st == GDN_OK) st = cuda_check(nullptr, cudaEventCreate(&cs->ev_stop), "cudaEventCreate");
  if (st == GDN_OK) st = cuda_check(nullptr, cudaDeviceGetAttribute(&cs->l2_bytes, cudaDevAttrL2CacheSize, ordinal), "L2 size");
  if (st == GDN_OK) {
    int major = 0, minor = 0;
    st = cuda_check(nullptr, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal), "compute capability");
    if (st == GDN_OK) st = cuda_check(nullptr, cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ordinal), "compute capability");
    // The architecture where cuda/tests/detmath_exhaustive.cu (mode shortcut) proved silu_bf16_shortcut
    // over every input (docs/SPEC.md §9.2); elsewhere the arms that offer it take gdn_silu.
    b->silu_shortcut = major == 9 && minor == 0;
  }
  if (st == GDN_OK) {
    constexpr size_t kPinned = 64 << 10;
    if (cudaMallocHost(&cs->pinned, kPinned) == cudaSuccess) cs->pinned_bytes = kPinned;
    else {
      cs->pinned = nullptr;  // optional: small reads then take the pageable path
      cudaGetLastError();
    }
  }
  b->cuda = cs;
  if (st != GDN_OK) {
    close(b);
    return st;
  }
  return GDN_OK;
}

void close(gdn_backend* b) {
  CudaState* cs = cuda_state(b);
  if (cs == nullptr) return;
  cudaSetDevice(b->device_ordinal);
  if (cs->stream) cudaStreamSynchronize(cs->stream);
  if (cs->flush) cudaFree(cs->flush);
  if (cs->pinned) cudaFreeHost(cs->pinned);
  if (cs->ev_start) cudaEventDestroy(cs->ev_start);
  if (cs->ev_stop) cudaEventDestroy(cs->ev_stop);
  if (cs->stream) cudaStreamDestroy(cs->stream);
  delete cs;
  b->cuda = nullptr;
}

gdn_status device_info(gdn_backend* b, gdn_device_info* info) {
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  std::memset(info, 0, sizeof *info);
  const int dev = b->device_ordinal;
  cudaDeviceProp prop;
  st = cuda_check(b, cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  if (st != GDN_OK) return st;
  info->backend = GDN_BACKEND_CUDA;
  info->device_ordinal = dev;
  std::snprintf(info->name, sizeof info->name, "%s", prop.name);
  info->sm_major = prop.major;
  info->sm_minor = prop.minor;
  info->sm_count = prop.multiProcessorCount;
  info->l2_bytes = prop.l2CacheSize;
  info->mem_bus_width_bits = prop.memoryBusWidth;
  size_t free_b = 0, total_b = 0;
  st = cuda_check(b, cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  if (st != GDN_OK) return st;
  info->total_mem_bytes = total_b;
  info->free_mem_bytes = free_b;
  int v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess) info->driver_version = v;
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) info->runtime_version = v;
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) == cudaSuccess) info->max_sm_clock_mhz = khz / 1000;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev) == cudaSuccess) info->max_mem_clock_mhz = khz / 1000;
  cudaGetLastError();
  // Current clocks and the driver string from NVML when it is there; else the attributes.
  info->sm_clock_mhz = info->max_sm_clock_mhz;
  info->mem_clock_mhz = info->max_mem_clock_mhz;
  info->clocks_source = 2;
  Nvml nvml;
  if (nvml.load()) {
    char pci[32] = {0};
    nvml_device_t d = nullptr;
    unsigned mhz = 0;
    if (nvml.driver_version(info->driver_string, sizeof info->driver_string) != 0) info->driver_string[0] = '\0';
    if (cudaDeviceGetPCIBusId(pci, sizeof pci, dev) == cudaSuccess && nvml.by_pci(pci, &d) == 0) {
      bool current = true;
      if (nvml.clock(d, kNvmlClockSm, &mhz) == 0) info->sm_clock_mhz = (int32_t)mhz;
      else current = false;
      if (nvml.clock(d, kNvmlClockMem, &mhz) == 0) info->mem_clock_mhz = (int32_t)mhz;
      else current = false;
      if (nvml.max_clock(d, kNvmlClockSm, &mhz) == 0) info->max_sm_clock_mhz = (int32_t)mhz;
      if (nvml.max_clock(d, kNvmlClockMem, &mhz) == 0) info->max_mem_clock_mhz = (int32_t)mhz;
      if (current) info->clocks_source = 1;
    }
    cudaGetLastError();
  }
  return GDN_OK;
}

// ----------------------------------------------------------------- memory
// Segments for the buffer cache (common/buffer_cache.h). The cache calls these with its lock held,
// from a thread that entered through the API, so the device is bound (cuda_bind) already; binding
// again is cheap and keeps them safe from any thread.
namespace {
gdn_status cuda_map(void* ctx, uint64_t bytes, uint64_t* addr) {
  gdn_backend* b = static_cast<gdn_backend*>(ctx);
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, (size_t)bytes);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it, the cache retries after a trim
    return GDN_ERR_OUT_OF_MEMORY;
  }
  st = cuda_check(b, err, "cudaMalloc of a buffer segment");
  if (st != GDN_OK) return st;
  *addr = (uint64_t)(uintptr_t)p;
  return GDN_OK;
}

void cuda_unmap(void* ctx, uint64_t addr, uint64_t) {
  gdn_backend* b = static_cast<gdn_backend*>(ctx);
  cudaSetDevice(b->device_ordinal);
  cudaFree(reinterpret_cast<void*>((uintptr_t)addr));
}

// Before a segment goes back to the driver, nothing enqueued may still use it. (cudaFree waits for
// the device as well; the explicit wait keeps that from being the only guarantee.)
void cuda_sync(void* ctx) {
  gdn_backend* b = static_cast<gdn_backend*>(ctx);
  CudaState* cs = cuda_state(b);
  cudaSetDevice(b->device_ordinal);
  if (cs && cs->stream) cudaStreamSynchronize(cs->stream);
}
}  // namespace

SegmentSource segment_source(gdn_backend* b) {
  SegmentSource s;
  s.ctx = b;
  s.map = cuda_map;
  s.unmap = cuda_unmap;
  s.sync = cuda_sync;
  return s;
}

gdn_status synchronize(gdn_backend* b) {
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  return cuda_check(b, cudaStreamSynchronize(cuda_state(b)->stream), "synchronize (a kernel or copy failed)");
}

gdn_status upload(gdn_backend* b, uint64_t dst, const void* src, uint64_t bytes) {
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  st = cuda_check(b, cudaMemcpyAsync(reinterpret_cast<void*>((uintptr_t)dst), src, (size_t)bytes, cudaMemcpyHostToDevice,
                                     cuda_state(b)->stream),
                  "upload (cudaMemcpyAsync)");
  return st == GDN_OK ? synchronize(b) : st;
}

gdn_status download(gdn_backend* b, void* dst, uint64_t src, uint64_t bytes) {
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  CudaState* cs = cuda_state(b);
  const bool small = cs->pinned != nullptr && bytes <= cs->pinned_bytes;
  st = cuda_check(b, cudaMemcpyAsync(small ? cs->pinned : dst, reinterpret_cast<const void*>((uintptr_t)src), (size_t)bytes,
                                     cudaMemcpyDeviceToHost, cs->stream),
                  "download (cudaMemcpyAsync)");
  if (st == GDN_OK) st = synchronize(b);
  if (st == GDN_OK && small) std::memcpy(dst, cs->pinned, (size_t)bytes);
  return st;
}

// Enqueued on the stream like a kernel: whatever reads the buffers next is ordered after it.
gdn_status fill_ranges_u32(gdn_backend* b, const FillRange* ranges, uint32_t n) {
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  for (uint32_t first = 0; first < n; first += kFillRangesPerLaunch) {
    const uint32_t count = n - first < kFillRangesPerLaunch ? n - first : kFillRangesPerLaunch;
    FillRanges r{};
    uint64_t most = 0;
    for (uint32_t i = 0; i < count; ++i) {
      r.dst[i] = reinterpret_cast<uint32_t*>((uintptr_t)ranges[first + i].addr);
      r.words[i] = ranges[first + i].words;
      r.pattern[i] = ranges[first + i].pattern;
      most = r.words[i] > most ? r.words[i] : most;
    }
    const unsigned blocks = (unsigned)(most / 256 + 1 < 4096 ? most / 256 + 1 : 4096);
    fill_ranges_kernel<<<dim3(blocks, count), 256, 0, cuda_state(b)->stream>>>(r);
    st = cuda_check_launch(b, "fill kernel");
    if (st != GDN_OK) return st;
  }
  return GDN_OK;
}

gdn_status copy(gdn_backend* b, uint64_t dst, uint64_t src, uint64_t bytes) {
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  return cuda_check(b, cudaMemcpyAsync(reinterpret_cast<void*>((uintptr_t)dst), reinterpret_cast<const void*>((uintptr_t)src),
                                       (size_t)bytes, cudaMemcpyDeviceToDevice, cuda_state(b)->stream),
                    "copy (cudaMemcpyAsync device to device)");
}

}  // namespace cuda
gdn_status upload_program_list(gdn_backend* b, const std::vector<int32_t>& programs, std::shared_ptr<void>* owner,
                               const int32_t** device, const char* op) {
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  const size_t bytes = programs.size() * sizeof(int32_t);
  uint64_t addr = 0;
  st = b->cache->allocate(bytes, &addr);
  if (st == GDN_ERR_OUT_OF_MEMORY)
    return fail(b, st, "%s: out of device memory for the program list (%llu bytes)", op, (unsigned long long)bytes);
  if (st != GDN_OK) return st;
  BufferCache* cache = b->cache.get();
  void* d = reinterpret_cast<void*>((uintptr_t)addr);
  *owner = std::shared_ptr<void>(d, [cache](void* q) { cache->release((uint64_t)(uintptr_t)q); });
  *device = static_cast<const int32_t*>(d);
  char what[64];
  std::snprintf(what, sizeof what, "%s: upload of the program list", op);
  return cuda_check(b, cudaMemcpyAsync(d, programs.data(), bytes, cudaMemcpyHostToDevice, cuda_state(b)->stream), what);
}

gdn_status upload_plan_lists(gdn_backend* b, const std::vector<int32_t>& programs, const std::vector<int32_t>* host_qsl,
                             std::shared_ptr<void>* owner, const int32_t** device_programs, const int32_t** device_qsl,
                             const char* op) {
  if (host_qsl == nullptr) {
    if (programs.empty()) {
      *device_programs = nullptr;
      return GDN_OK;
    }
    return upload_program_list(b, programs, owner, device_programs, op);
  }
  std::vector<int32_t> both(programs);
  both.insert(both.end(), host_qsl->begin(), host_qsl->end());
  const int32_t* base = nullptr;
  const gdn_status st = upload_program_list(b, both, owner, &base, op);
  if (st != GDN_OK) return st;
  *device_programs = programs.empty() ? nullptr : base;
  *device_qsl = base + programs.size();
  return GDN_OK;
}

}  // namespace gdn
