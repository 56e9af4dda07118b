// tile_tune.cu — tuning bench of the `tile` conv arm and of the arithmetic version on a GPU (not part
// of libgdn, not run in CI).
//
//   1. math: throughput of SiLU in arithmetic version 1 and 2 (and the hardware approximation
//      __expf/__fdividef for scale, not exact) on register-resident values; the SASS of these kernels
//      (cuobjdump) gives the instructions per call.
//   2. conv: variants of conv::tile_thread (channels per thread V, rows per group G, threads per block,
//      register cap, tokens per program, SiLU version) and the library's vec arm, on the Qwen3.5-4B
//      (C = 8192) and 27B (C = 10240) shapes at T = 2048, 8192, 32768 and on a 32-sequence varlen batch
//      of 2048 tokens. Every variant's out and conv_state are compared bit for bit with the scalar
//      reference arm run once per shape BEFORE it is timed; each is timed with CUDA events (L2 flushed
//      before every launch, variants interleaved round by round) beside a device-to-device copy of the
//      same bytes (4·T·C: x read once, out written once).
//   3. postconv: see postconv_tune in this file.
//
//   nvcc -O3 -std=c++17 --fmad=false -arch=sm_90 -Xptxas -v -Icuda/include -Icuda/src -Icuda/src/common -Icuda/tests \
//        cuda/tests/tile_tune.cu -o tile_tune && ./tile_tune [math|conv|conv2|conv3|conv5|conv6|conv7|conv8|conv9|conv10|conv11|conv12|profile9|postconv|postconv2|all] [rounds]
#include "common/arms/conv_scalar.h"
#include "common/arms/conv_stream.h"
#include "common/arms/conv_tile.h"
#include "common/arms/conv_vec.h"
#include "common/arms/postconv_common.h"
#include "common/arms/postconv_token_tile.h"
#include "common/arms/postconv_vec_tile.h"
#include "conv_tile_smem.h"
#include "postconv_wide.h"
#include "cuda_check.h"
#include "splitmix.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>


using namespace gdn;
using conv::bf16_bits;

// ================================================================= SiLU policies
struct SiluV1 {
  static __host__ __device__ __forceinline__ bool fast_range(float x) { return gdn_expf_fast_range(x); }
  static __host__ __device__ __forceinline__ float fast(float x) { return v1::silu_fast(x); }
  static __host__ __device__ __forceinline__ float any(float x) { return v1::silu(x); }
};
struct SiluHw {  // hardware approximations: NOT exact, for scale only
  static __host__ __device__ __forceinline__ bool fast_range(float) { return true; }
  static __device__ __forceinline__ float fast(float x) { return __fdividef(x, 1.0f + __expf(-x)); }
  static __device__ __forceinline__ float any(float x) { return __fdividef(x, 1.0f + __expf(-x)); }
};

// ================================================================= 1. math
template <class S>
__global__ void silu_throughput(float* out, float base, int iters) {
  float v[8], acc[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    v[i] = base + 0.37f * (float)((threadIdx.x + i * 131) % 97) - 18.0f;  // in [-18, 18]: the fast path
    acc[i] = 0.0f;
  }
  for (int k = 0; k < iters; ++k) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      acc[i] += S::fast(v[i]);
      v[i] = v[i] + 1e-3f;
    }
  }
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) s += acc[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
template <class S>
__global__ void silu_empty(float* out, float base, int iters) {  // the loop without the SiLU
  float v[8], acc[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    v[i] = base + 0.37f * (float)((threadIdx.x + i * 131) % 97) - 18.0f;
    acc[i] = 0.0f;
  }
  for (int k = 0; k < iters; ++k) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      acc[i] += v[i];
      v[i] = v[i] + 1e-3f;
    }
  }
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) s += acc[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

static void run_math() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int blocks = sms * 8, threads = 256, iters = 4096;
  float* out;
  CK(cudaMalloc(&out, (size_t)blocks * threads * 4));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  struct M {
    const char* name;
    void (*k)(float*, float, int);
  } ms[] = {{"loop only", silu_empty<SiluV1>}, {"silu v1 (exact)", silu_throughput<SiluV1>},
            {"silu v2 (exact)", silu_throughput<conv::TileSilu>}, {"silu hw approx", silu_throughput<SiluHw>}};
  double loop_ns = 0;
  std::printf("\n== math: SiLU throughput, %d blocks x %d threads x %d iterations x 8 values\n", blocks, threads, iters);
  for (const M& m : ms) {
    std::vector<float> ts;
    for (int r = 0; r < 7; ++r) {
      CK(cudaEventRecord(e0));
      m.k<<<blocks, threads>>>(out, 0.25f, iters);
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms_;
      CK(cudaEventElapsedTime(&ms_, e0, e1));
      if (r >= 2) ts.push_back(ms_);
    }
    std::sort(ts.begin(), ts.end());
    const double calls = (double)blocks * threads * iters * 8;
    const double ps = ts[ts.size() / 2] * 1e9 / calls;  // picoseconds per call (whole GPU)
    if (loop_ns == 0) loop_ns = ps;
    std::printf("  %-18s %8.3f ps/call (GPU)  %7.2f Gcall/s  minus loop: %7.3f ps/call\n", m.name, ps, 1e3 / ps,
                ps - loop_ns);
  }
  CK(cudaFree(out));
}

// ================================================================= 2. conv
__global__ void __launch_bounds__(conv::kThreads, conv::kVecMinBlocks) vec_lib(const conv::Params p) {
  conv::vec_thread<bf16_bits, bf16_bits, NoMutant, 4>(p, (int64_t)blockIdx.x % p.grid_x, (int64_t)blockIdx.x / p.grid_x,
                                                       threadIdx.x);
}
template <int V, int G, int THREADS, int MINB, class S>
__global__ void __launch_bounds__(THREADS, MINB) tile_variant(const conv::Params p) {
  conv::tile_thread<bf16_bits, bf16_bits, NoMutant, 4, V, G, THREADS, S>(p, (int64_t)blockIdx.x % p.grid_x,
                                                                        (int64_t)blockIdx.x / p.grid_x, threadIdx.x);
}
template <int V, int R, int THREADS, int MINB, class S, int D = 0, bool RING_FIRST = true, bool SPEC_STATE = false>
__global__ void __launch_bounds__(THREADS, MINB) stream_variant(const conv::Params p) {
  extern __shared__ __align__(16) float stream_ring_[];
  conv::stream_thread<bf16_bits, bf16_bits, NoMutant, 4, 4, V, R, THREADS, S, D, RING_FIRST, SPEC_STATE>(
      p, (int64_t)blockIdx.x % p.grid_x, (int64_t)blockIdx.x / p.grid_x, threadIdx.x, stream_ring_);
}
// Dynamic shared memory of a stream variant with a ring of D groups of R rows of V bf16 channels per thread.
constexpr int ring_smem(int threads, int d, int r = 4, int v = 4) { return threads * d * r * v * 2; }
// A CUDA context with the names of exec.h's CudaThread (1-D launch: blockIdx.x = y * grid_x + x).
struct SmemCtx {
  int64_t gx;
  __device__ int tid() const { return threadIdx.x; }
  __device__ int64_t bx() const { return (int64_t)blockIdx.x % gx; }
  __device__ int64_t by() const { return (int64_t)blockIdx.x / gx; }
  template <class T>
  __device__ T* smem() const {
    extern __shared__ uint4 conv_smem_[];
    return reinterpret_cast<T*>(conv_smem_);
  }
  __device__ void sync() const { __syncthreads(); }
};
template <int MINB, class S>
__global__ void __launch_bounds__(conv::kTsThreads, MINB) tile_smem_variant(const conv::Params p) {
  SmemCtx t{p.grid_x};
  conv::tile_smem_thread<bf16_bits, bf16_bits, 4, S, false>(p, t);
}
constexpr int kSmem = (int)conv::tile_smem_bytes<bf16_bits, bf16_bits, 4>();
template <int W>
__global__ void __launch_bounds__(conv::kThreads) scalar_ref(const conv::Params p) {
  SmemCtx t{p.grid_x};
  conv::ArmScalar::body<bf16_bits, bf16_bits, NoMutant, 0>(p, t);
}

struct ConvVariant {
  const char* name;
  void (*kernel)(const conv::Params);
  int threads, lanes, chunk;  // chunk 0: the sequence mapping; lanes: channels per thread (per block / threads)
  bool exact;                 // false: hardware math, bits not expected to match
  int smem = 0;               // dynamic shared memory per block
  int order = 0;              // program list order (set 12): 0 sequence-major, as the planner;
                              // 1 longest first (stable); 2 shortest first; 3 chunk 0 first, then longest first
};

struct ConvShape {
  std::string name;
  int64_t C;
  std::vector<int32_t> lengths;
};

static std::vector<int32_t> varlen_lengths(int total, int count, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> w(count);
  double sum = 0;
  for (auto& v : w) sum += (v = 0.25 + rng.uniform());
  std::vector<int32_t> len(count);
  int acc = 0;
  for (int i = 0; i < count; ++i) acc += (len[i] = std::max(1, (int)std::floor(w[i] / sum * total)));
  for (int i = 0; acc < total; i = (i + 1) % count, ++acc) len[i]++;
  return len;
}

static double median(std::vector<float> v) {
  if (v.empty()) return 0.0;  // profile mode: nothing timed
  std::sort(v.begin(), v.end());
  return v[v.size() / 2] * 1e3;
}

static bool g_profile = false;  // one shape (4B T = 8192), no validation copies kept, 0 timed rounds
static bool g_more_shapes = false;  // set 8: T = 4096 and 16384 and a 16-sequence varlen batch of 8192 too
static void run_conv(const std::vector<ConvVariant>& vars, int rounds) {
  std::vector<ConvShape> shapes;
  if (g_profile) shapes.push_back({"4B T=8192", 8192, {8192}});
  else for (int64_t C : {8192, 10240}) {
    const char* m = C == 8192 ? "4B" : "27B";
    std::vector<int32_t> lengths = {2048, 8192, 32768};
    if (g_more_shapes) lengths = {2048, 4096, 8192, 16384, 32768};
    for (int32_t T : lengths) shapes.push_back({std::string(m) + " T=" + std::to_string(T), C, {T}});
    shapes.push_back({std::string(m) + " varlen 32x/2048", C, varlen_lengths(2048, 32, 2048)});
    if (g_more_shapes) shapes.push_back({std::string(m) + " varlen 16x/8192", C, varlen_lengths(8192, 16, 8192)});
  }
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  void* flush;
  CK(cudaMalloc(&flush, (size_t)l2 * 2));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::printf("\n== conv (bf16 in/out, K = 4, bias, initial state on even sequences); x copy = median / copy median, same run\n");
  std::printf("%-22s", "variant");
  for (const auto& sh : shapes) std::printf(" %14s", sh.name.c_str());
  std::printf("\n");
  std::vector<std::vector<std::string>> cells(vars.size() + 1, std::vector<std::string>(shapes.size()));
  std::vector<std::vector<unsigned>> blocks(vars.size(), std::vector<unsigned>(shapes.size()));
  for (size_t si = 0; si < shapes.size(); ++si) {
    const ConvShape& sh = shapes[si];
    const int64_t C = sh.C, K = 4, N = (int64_t)sh.lengths.size();
    std::vector<int32_t> qsl(1, 0);
    for (int32_t l : sh.lengths) qsl.push_back(qsl.back() + l);
    const int64_t T = qsl.back();
    const size_t xn = (size_t)(T * C);
    Rng rng(1000 + si);
    std::vector<uint16_t> hx(xn), hw((size_t)C * K), hb((size_t)C);
    for (auto& v : hx) v = f32_to_bf16((float)rng.normal());
    for (auto& v : hw) v = f32_to_bf16(rng.uniform(-0.5f, 0.5f));
    for (auto& v : hb) v = f32_to_bf16(rng.uniform(-0.1f, 0.1f));
    std::vector<float> hstate((size_t)(N * C * (K - 1)));
    for (auto& v : hstate) v = (float)rng.normal();
    std::vector<int8_t> his((size_t)N);
    for (int64_t i = 0; i < N; ++i) his[i] = i % 2 == 0;
    bf16_bits *x, *w, *b, *out;
    float* state;
    int32_t* dqsl;
    int8_t* dhis;
    CK(cudaMalloc(&x, xn * 2));
    CK(cudaMalloc(&out, xn * 2));
    CK(cudaMalloc(&w, hw.size() * 2));
    CK(cudaMalloc(&b, hb.size() * 2));
    CK(cudaMalloc(&state, hstate.size() * 4));
    CK(cudaMalloc(&dqsl, qsl.size() * 4));
    CK(cudaMalloc(&dhis, N));
    CK(cudaMemcpy(x, hx.data(), xn * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(w, hw.data(), hw.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dqsl, qsl.data(), qsl.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dhis, his.data(), N, cudaMemcpyHostToDevice));

    auto params = [&](int threads, int lanes, int chunk, int32_t** dprog, unsigned* blocks, int order = 0) {
      conv::Params p;
      std::memset(&p, 0, sizeof p);
      p.T = T; p.C = C; p.x_stride = C; p.K = (int32_t)K; p.N = (int32_t)N;
      p.x = x; p.w = w; p.bias = b; p.qsl = dqsl; p.his = dhis; p.his_i32 = 0;
      p.mutant = 0; p.state = state; p.out = out;
      const int64_t cpb = lanes > 0 ? (int64_t)threads * lanes : conv::kTsChannels;  // lanes 0: tile-smem
      p.grid_x = (int32_t)((C + cpb - 1) / cpb);
      int64_t progs = N;
      *dprog = nullptr;
      if (chunk > 0) {
        std::vector<std::pair<int32_t, int32_t>> programs;  // (sequence, chunk)
        for (int64_t s = 0; s < N; ++s)
          for (int64_t k = 0; k * chunk < sh.lengths[s]; ++k) programs.push_back({(int32_t)s, (int32_t)k});
        if (order != 0) {  // set 12: the same programs in another order (bits cannot change: each is independent)
          auto len = [&](const std::pair<int32_t, int32_t>& q) {
            return std::min<int64_t>(chunk, sh.lengths[q.first] - (int64_t)q.second * chunk);
          };
          std::stable_sort(programs.begin(), programs.end(), [&](const auto& a, const auto& b) {
            if (order == 3 && (a.second == 0) != (b.second == 0)) return a.second == 0;
            return order == 2 ? len(a) < len(b) : len(a) > len(b);
          });
        }
        std::vector<int32_t> pr;
        for (const auto& q : programs) { pr.push_back(q.first); pr.push_back(q.second); }
        CK(cudaMalloc(dprog, pr.size() * 4));
        CK(cudaMemcpy(*dprog, pr.data(), pr.size() * 4, cudaMemcpyHostToDevice));
        progs = (int64_t)pr.size() / 2;
        p.mapping = GDN_MAP_EXACT;
        p.chunk = chunk;
      } else {
        p.mapping = GDN_MAP_SEQUENCE;
      }
      p.programs = *dprog;
      *blocks = (unsigned)(p.grid_x * progs);
      return p;
    };

    // Reference: scalar (sequence mapping), once.
    std::vector<uint16_t> ref_out(xn);
    std::vector<float> ref_state(hstate.size());
    {
      int32_t* dp;
      unsigned blocks;
      const conv::Params p = params(conv::kThreads, 1, 0, &dp, &blocks);
      CK(cudaMemcpy(state, hstate.data(), hstate.size() * 4, cudaMemcpyHostToDevice));
      scalar_ref<4><<<blocks, conv::kThreads>>>(p);
      CK(cudaGetLastError());
      CK(cudaMemcpy(ref_out.data(), out, xn * 2, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(ref_state.data(), state, ref_state.size() * 4, cudaMemcpyDeviceToHost));
    }
    // Validate every variant, then time all interleaved.
    std::vector<conv::Params> ps(vars.size());
    std::vector<unsigned> nb(vars.size());
    std::vector<int32_t*> progs(vars.size());
    std::vector<std::string> verdict(vars.size());
    for (size_t v = 0; v < vars.size(); ++v) {
      ps[v] = params(vars[v].threads, vars[v].lanes, vars[v].chunk, &progs[v], &nb[v], vars[v].order);
      blocks[v][si] = nb[v];
      CK(cudaMemcpy(state, hstate.data(), hstate.size() * 4, cudaMemcpyHostToDevice));
      CK(cudaMemset(out, 0xff, xn * 2));
      vars[v].kernel<<<nb[v], vars[v].threads, vars[v].smem>>>(ps[v]);
      CK(cudaGetLastError());
      std::vector<uint16_t> ho(xn);
      std::vector<float> hs(hstate.size());
      CK(cudaMemcpy(ho.data(), out, xn * 2, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(hs.data(), state, hs.size() * 4, cudaMemcpyDeviceToHost));
      size_t bad_o = 0, bad_s = 0;
      for (size_t i = 0; i < xn; ++i) bad_o += ho[i] != ref_out[i];
      for (size_t i = 0; i < hs.size(); ++i) bad_s += std::memcmp(&hs[i], &ref_state[i], 4) != 0;
      verdict[v] = bad_o == 0 && bad_s == 0 ? "=" : (vars[v].exact ? "DIFF" : "~");
      if (bad_o || bad_s)
        std::printf("  [%s] %s: %zu of %zu out and %zu of %zu state values differ from scalar%s\n", sh.name.c_str(),
                    vars[v].name, bad_o, xn, bad_s, hs.size(), vars[v].exact ? "" : " (hardware math: expected)");
    }
    std::vector<std::vector<float>> ts(vars.size() + 1);
    for (int r = 0; r < rounds + 2; ++r) {
      for (size_t k = 0; k <= vars.size(); ++k) {
        const size_t v = (k + r) % (vars.size() + 1);  // rotated order
        CK(cudaMemsetAsync(flush, r, (size_t)l2 * 2));
        CK(cudaEventRecord(e0));
        if (v == vars.size()) CK(cudaMemcpyAsync(out, x, xn * 2, cudaMemcpyDeviceToDevice));
        else vars[v].kernel<<<nb[v], vars[v].threads, vars[v].smem>>>(ps[v]);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 2) ts[v].push_back(ms);
      }
    }
    const double copy_us = median(ts[vars.size()]);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1fus", copy_us);
    cells[vars.size()][si] = buf;
    for (size_t v = 0; v < vars.size(); ++v) {
      const double us = median(ts[v]);
      std::snprintf(buf, sizeof buf, "%.1f %.2fx%s", us, us / copy_us, verdict[v].c_str());
      cells[v][si] = buf;
      if (progs[v]) CK(cudaFree(progs[v]));
    }
    std::printf("  shape %-18s T=%lld N=%lld copy %.1f us (%.0f GB/s)\n", sh.name.c_str(), (long long)T, (long long)N,
                copy_us, 4.0 * T * C / copy_us * 1e-3);
    CK(cudaFree(x)); CK(cudaFree(out)); CK(cudaFree(w)); CK(cudaFree(b));
    CK(cudaFree(state)); CK(cudaFree(dqsl)); CK(cudaFree(dhis));
  }
  std::printf("\n== conv table: median us, x copy, '=' bits equal scalar (out and state), DIFF: they differ, ~ not exact by design\n");
  std::printf("%-26s %5s %4s", "variant", "regs", "b/SM");
  for (const auto& sh : shapes) std::printf(" %17s", sh.name.c_str());
  std::printf("\n");
  for (size_t v = 0; v <= vars.size(); ++v) {
    if (v == vars.size()) {
      std::printf("%-26s %5s %4s", "copy (same bytes)", "", "");
    } else {
      cudaFuncAttributes attr;
      CK(cudaFuncGetAttributes(&attr, vars[v].kernel));
      int per_sm = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, vars[v].kernel, vars[v].threads, vars[v].smem));
      std::printf("%-26s %5d %4d", vars[v].name, attr.numRegs, per_sm);
    }
    for (size_t si = 0; si < shapes.size(); ++si) std::printf(" %17s", cells[v][si].c_str());
    std::printf("\n");
  }
  // Blocks per launch, and what they are in waves of the resident blocks (SMs x blocks per SM).
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::printf("\n== blocks per launch (waves = blocks / (SMs x resident blocks per SM))\n");
  for (size_t v = 0; v < vars.size(); ++v) {
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, vars[v].kernel, vars[v].threads, vars[v].smem));
    std::printf("%-26s %5s %4d", vars[v].name, "", per_sm);
    for (size_t si = 0; si < shapes.size(); ++si) {
      char b[48];
      std::snprintf(b, sizeof b, "%u %.2fw", blocks[v][si], (double)blocks[v][si] / (sms * std::max(per_sm, 1)));
      std::printf(" %17s", b);
    }
    std::printf("\n");
  }
  CK(cudaFree(flush));
}

// Set 2: the second sweep, around the best of set 1 (CHANGELOG 2026-12-01, 0cc566a).
static std::vector<ConvVariant> conv_variants2() {
  using conv::TileSilu;
  return {
      {"vec (library) c64", vec_lib, 128, 8, 64, true},
      {"tile v8 g1 t128 m4 c64", tile_variant<8, 1, 128, 4, TileSilu>, 128, 8, 64, true},
      {"tile v8 g1 t128 m4 c32", tile_variant<8, 1, 128, 4, TileSilu>, 128, 8, 32, true},
      {"tile v8 g1 t128 m3 c64", tile_variant<8, 1, 128, 3, TileSilu>, 128, 8, 64, true},
      {"tile v8 g1 t64 m8 c64", tile_variant<8, 1, 64, 8, TileSilu>, 64, 8, 64, true},
      {"tile v8 g1 t256 m2 c64", tile_variant<8, 1, 256, 2, TileSilu>, 256, 8, 64, true},
      {"tile v4 g2 t128 m6 c64", tile_variant<4, 2, 128, 6, TileSilu>, 128, 4, 64, true},
      {"tile v4 g2 t128 m6 c32", tile_variant<4, 2, 128, 6, TileSilu>, 128, 4, 32, true},
      {"tile v4 g1 t128 m6 c64", tile_variant<4, 1, 128, 6, TileSilu>, 128, 4, 64, true},
      {"tile v4 g1 t128 m8 c32", tile_variant<4, 1, 128, 8, TileSilu>, 128, 4, 32, true},
      {"tile v4 g2 t64 m12 c64", tile_variant<4, 2, 64, 12, TileSilu>, 64, 4, 64, true},
      {"tile v8 g1 t128 m4 hw", tile_variant<8, 1, 128, 4, SiluHw>, 128, 8, 64, false},
  };
}

static std::vector<ConvVariant> conv_variants() {
  using conv::TileSilu;
  return {
      {"vec (library) c64", vec_lib, 128, 8, 64, true},
      {"tile v8 g2 t128 m4 s1", tile_variant<8, 2, 128, 4, SiluV1>, 128, 8, 64, true},
      {"tile v8 g2 t128 m4", tile_variant<8, 2, 128, 4, TileSilu>, 128, 8, 64, true},
      {"tile v8 g1 t128 m4", tile_variant<8, 1, 128, 4, TileSilu>, 128, 8, 64, true},
      {"tile v4 g2 t128 m8", tile_variant<4, 2, 128, 8, TileSilu>, 128, 4, 64, true},
      {"tile v4 g2 t128 m6", tile_variant<4, 2, 128, 6, TileSilu>, 128, 4, 64, true},
      {"tile v4 g4 t128 m6", tile_variant<4, 4, 128, 6, TileSilu>, 128, 4, 64, true},
      {"tile v4 g2 t128 m8 c128", tile_variant<4, 2, 128, 8, TileSilu>, 128, 4, 128, true},
      {"tile v4 g2 t128 m8 c32", tile_variant<4, 2, 128, 8, TileSilu>, 128, 4, 32, true},
      {"tile v2 g4 t128 m8", tile_variant<2, 4, 128, 8, TileSilu>, 128, 2, 64, true},
      {"tile v2 g2 t128 m12", tile_variant<2, 2, 128, 12, TileSilu>, 128, 2, 64, true},
      {"smem m8 s1", tile_smem_variant<8, SiluV1>, 128, 0, 64, true, kSmem},
      {"smem m8", tile_smem_variant<8, TileSilu>, 128, 0, 64, true, kSmem},
      {"smem m12", tile_smem_variant<12, TileSilu>, 128, 0, 64, true, kSmem},
      {"smem m16", tile_smem_variant<16, TileSilu>, 128, 0, 64, true, kSmem},
      {"smem m8 hw", tile_smem_variant<8, SiluHw>, 128, 0, 64, false, kSmem},
      {"tile v4 g2 t128 m8 hw", tile_variant<4, 2, 128, 8, SiluHw>, 128, 4, 64, false},
  };
}

// Set 3: the `stream` arm (rows in groups of R, constant-indexed window, one range test per group)
// against the library's tile and vec, same run.
static std::vector<ConvVariant> conv_variants3() {
  using conv::TileSilu;
  return {
      {"vec (library) c64", vec_lib, 128, 8, 64, true},
      {"tile (library)", tile_variant<4, 1, 128, 8, TileSilu>, 128, 4, 32, true},
      {"stream v4 r4 t128 m8 c64", stream_variant<4, 4, 128, 8, TileSilu>, 128, 4, 64, true},
      {"stream v4 r4 t128 m8 c32", stream_variant<4, 4, 128, 8, TileSilu>, 128, 4, 32, true},
      {"stream v4 r4 t128 m8 c128", stream_variant<4, 4, 128, 8, TileSilu>, 128, 4, 128, true},
      {"stream v4 r4 t128 m7 c64", stream_variant<4, 4, 128, 7, TileSilu>, 128, 4, 64, true},
      {"stream v4 r4 t128 m6 c64", stream_variant<4, 4, 128, 6, TileSilu>, 128, 4, 64, true},
      {"stream v4 r2 t128 m8 c64", stream_variant<4, 2, 128, 8, TileSilu>, 128, 4, 64, true},
      {"stream v4 r8 t128 m6 c64", stream_variant<4, 8, 128, 6, TileSilu>, 128, 4, 64, true},
      {"stream v8 r4 t128 m4 c64", stream_variant<8, 4, 128, 4, TileSilu>, 128, 8, 64, true},
      {"stream v8 r2 t128 m4 c64", stream_variant<8, 2, 128, 4, TileSilu>, 128, 8, 64, true},
      {"stream v2 r4 t128 m12 c64", stream_variant<2, 4, 128, 12, TileSilu>, 128, 2, 64, true},
      {"stream v4 r4 t256 m4 c64", stream_variant<4, 4, 256, 4, TileSilu>, 256, 4, 64, true},
      {"stream v4 r4 t64 m16 c64", stream_variant<4, 4, 64, 16, TileSilu>, 64, 4, 64, true},
      {"stream v4 r4 t128 m8 hw", stream_variant<4, 4, 128, 8, SiluHw>, 128, 4, 64, false},
  };
}

// Set 4 (the next group prefetched into a second register buffer) was run at 6c818723c8e9
// (CHANGELOG 2026-12-01); that option gave way to the shared-memory row ring of set 5 and lives in git.
// Set 5: stream with its rows copied asynchronously into a per-thread ring in shared memory
// (async_copy.h): D groups per thread (D · R · 8 bytes of bf16 V = 4 rows), register cap,
// program length, around the library's stream (m7 c64, no ring), same run as tile and vec.
static std::vector<ConvVariant> conv_variants5() {
  using conv::TileSilu;
  return {
      {"vec (library) c64", vec_lib, 128, 8, 64, true},
      {"tile (library)", tile_variant<4, 1, 128, 8, TileSilu>, 128, 4, 32, true},
      {"stream m7 c64 no ring", stream_variant<4, 4, 128, 7, TileSilu, 0>, 128, 4, 64, true},
      {"ring d4 (128 B) m7 c64", stream_variant<4, 4, 128, 7, TileSilu, 4>, 128, 4, 64, true, ring_smem(128, 4, 4, 4)},
      {"ring d4 (128 B) m6 c64", stream_variant<4, 4, 128, 6, TileSilu, 4>, 128, 4, 64, true, ring_smem(128, 4, 4, 4)},
      {"ring d4 (128 B) m7 c128", stream_variant<4, 4, 128, 7, TileSilu, 4>, 128, 4, 128, true, ring_smem(128, 4, 4, 4)},
      {"ring d4 (128 B) m7 c32", stream_variant<4, 4, 128, 7, TileSilu, 4>, 128, 4, 32, true, ring_smem(128, 4, 4, 4)},
      {"ring d2 (64 B) m7 c64", stream_variant<4, 4, 128, 7, TileSilu, 2>, 128, 4, 64, true, ring_smem(128, 2, 4, 4)},
      {"ring d8 (256 B) m6 c64", stream_variant<4, 4, 128, 6, TileSilu, 8>, 128, 4, 64, true, ring_smem(128, 8, 4, 4)},
      {"ring d8 (256 B) m6 c128", stream_variant<4, 4, 128, 6, TileSilu, 8>, 128, 4, 128, true, ring_smem(128, 8, 4, 4)},
      {"ring d8 (128 B) r2 m8 c64", stream_variant<4, 2, 128, 8, TileSilu, 8>, 128, 4, 64, true, ring_smem(128, 8, 2, 4)},
      {"ring d8 (256 B) m7 c64", stream_variant<4, 4, 128, 7, TileSilu, 8>, 128, 4, 64, true, ring_smem(128, 8, 4, 4)},
      {"ring d4 (256 B) v8 m4 c64", stream_variant<8, 4, 128, 4, TileSilu, 4>, 128, 8, 64, true, ring_smem(128, 4, 4, 8)},
      {"ring d4 (128 B) t256 m3 c64", stream_variant<4, 4, 256, 3, TileSilu, 4>, 256, 4, 64, true, ring_smem(256, 4, 4, 4)},
      {"ring d4 (128 B) t64 m14 c64", stream_variant<4, 4, 64, 14, TileSilu, 4>, 64, 4, 64, true, ring_smem(64, 4, 4, 4)},
      {"ring d4 (128 B) m7 c64 hw", stream_variant<4, 4, 128, 7, SiluHw, 4>, 128, 4, 64, false, ring_smem(128, 4, 4, 4)},
  };
}
// Set 6 (CHANGELOG 2026-12-01, 8ea8210): the program length of the library's stream (ring d2, m7) — 64 tokens (declared),
// 32 (what the planner now runs on batches of short sequences, docs/SPEC.md §3.4) and 16 — beside the
// library's tile and vec, same run.
static std::vector<ConvVariant> conv_variants6() {
  using conv::TileSilu;
  return {
      {"vec (library) c64", vec_lib, 128, 8, 64, true},
      {"tile (library)", tile_variant<4, 1, 128, 8, TileSilu>, 128, 4, 32, true},
      {"stream (library) d2 m7 c64", stream_variant<4, 4, 128, 7, TileSilu, 2>, 128, 4, 64, true, ring_smem(128, 2, 4, 4)},
      {"stream d2 m7 c32", stream_variant<4, 4, 128, 7, TileSilu, 2>, 128, 4, 32, true, ring_smem(128, 2, 4, 4)},
      {"stream d2 m7 c16", stream_variant<4, 4, 128, 7, TileSilu, 2>, 128, 4, 16, true, ring_smem(128, 2, 4, 4)},
  };
}

// Set 7 (CHANGELOG 2026-12-02, 3011402): `stream-mufu` (the library's stream with the SiLU shortcut, Bf16ShortcutSilu, bits
// equal to scalar's) around its launch shape: the register cap (m7 = 72 registers, m8 = 64), the ring depth
// and the program length, beside the library's stream, same run.
static std::vector<ConvVariant> conv_variants7() {
  using conv::Bf16ShortcutSilu;
  using conv::TileSilu;
  return {
      {"stream (library) d2 m7 c64", stream_variant<4, 4, 128, 7, TileSilu, 2>, 128, 4, 64, true, ring_smem(128, 2, 4, 4)},
      {"stream-mufu (library) d2 m7 c64", stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 2>, 128, 4, 64, true, ring_smem(128, 2, 4, 4)},
      {"mufu d2 m8 c64", stream_variant<4, 4, 128, 8, Bf16ShortcutSilu, 2>, 128, 4, 64, true, ring_smem(128, 2, 4, 4)},
      {"mufu d4 m7 c64", stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 4>, 128, 4, 64, true, ring_smem(128, 4, 4, 4)},
      {"mufu d4 m8 c64", stream_variant<4, 4, 128, 8, Bf16ShortcutSilu, 4>, 128, 4, 64, true, ring_smem(128, 4, 4, 4)},
      {"mufu d2 m7 c32", stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 2>, 128, 4, 32, true, ring_smem(128, 2, 4, 4)},
      {"mufu d2 m7 c128", stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 2>, 128, 4, 128, true, ring_smem(128, 2, 4, 4)},
      {"mufu d0 m8 c64", stream_variant<4, 4, 128, 8, Bf16ShortcutSilu, 0>, 128, 4, 64, true},
      {"mufu v8 d2 m4 c64", stream_variant<8, 4, 128, 4, Bf16ShortcutSilu, 2>, 128, 8, 64, true, ring_smem(128, 2, 4, 8)},
  };
}

// Set 8: stream-mufu as the library builds it (ring of 2 groups, 7 blocks per SM) at program lengths from 16
// to 128 tokens, on more sequence lengths: how the launch's waves (blocks over resident blocks) set the time,
// for a program length fitted to the GPU's resident blocks (CHANGELOG 2026-12-02, d5ea8d8).
static std::vector<ConvVariant> conv_variants8() {
  using conv::Bf16ShortcutSilu;
  static std::vector<std::string> names;
  const int chunks[] = {16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 72, 80, 96, 128};
  names.clear();
  for (int c : chunks) names.push_back("mufu d2 m7 c" + std::to_string(c));
  std::vector<ConvVariant> v;
  for (size_t i = 0; i < names.size(); ++i)
    v.push_back({names[i].c_str(), stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 2>, 128, 4, chunks[i], true, ring_smem(128, 2, 4, 4)});
  return v;
}

// Set 9 (CHANGELOG 2026-12-03, 5c83917): the SiLU shortcut's test as the library wrote it before (per value: ya normal,
// |x| < 8, the bf16 window by mask and subtract, a branch per value to gdn_silu_fast) against the new forms: the
// window in one multiply-add and one compare without the normal test, first per value, then decided once per
// row of 4 values (the library's Bf16ShortcutSilu now), 2 rows or the whole group of 16, beside `stream`'s exact SiLU, same run.
__device__ __forceinline__ bool shortcut_test_s14(float x, float ya) {
  const uint32_t m = f32_bits(ya) & 0x7fffffffu;
  return fabsf(x) < kSiluShortcutRange && m - 0x00800000u < 0x7f000000u &&
         (m & 0xffffu) - (0x8000u - kSiluShortcutSlack - 1u) > 2u * kSiluShortcutSlack + 1u;
}
struct ShortcutPerValueS14 {
  static __host__ __device__ __forceinline__ bool fast_range(float x) { return gdn_silu_fast_range(x); }
  static __device__ __forceinline__ float fast(float x) {
    const float ya = silu_bf16_approx(x);
    return shortcut_test_s14(x, ya) ? ya : gdn_silu_fast(x);
  }
  static __host__ __device__ __forceinline__ float any(float x) { return gdn_silu(x); }
};
struct ShortcutPerValueNewTest {
  static __host__ __device__ __forceinline__ bool fast_range(float x) { return gdn_silu_fast_range(x); }
  static __device__ __forceinline__ float fast(float x) {
    const float ya = silu_bf16_approx(x);
    return silu_bf16_shortcut_ok(x, ya) ? ya : gdn_silu_fast(x);
  }
  static __host__ __device__ __forceinline__ float any(float x) { return gdn_silu(x); }
};
static std::vector<ConvVariant> conv_variants9() {
  using conv::Bf16ShortcutSilu;
  using conv::TileSilu;
  return {
      {"stream (exact SiLU) d2 m7 c64", stream_variant<4, 4, 128, 7, TileSilu, 2>, 128, 4, 64, true, ring_smem(128, 2, 4, 4)},
      {"mufu s14 test per value d2 m7 c64", stream_variant<4, 4, 128, 7, ShortcutPerValueS14, 2>, 128, 4, 64, true, ring_smem(128, 2, 4, 4)},
      {"mufu new test per value d2 m7 c64", stream_variant<4, 4, 128, 7, ShortcutPerValueNewTest, 2>, 128, 4, 64, true, ring_smem(128, 2, 4, 4)},
      {"mufu test per row (library) d2 m7 c64", stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 2>, 128, 4, 64, true, ring_smem(128, 2, 4, 4)},
      {"mufu test per 2 rows d2 m7 c64", stream_variant<4, 4, 128, 7, conv::Bf16ShortcutSiluRun<2>, 2>, 128, 4, 64, true, ring_smem(128, 2, 4, 4)},
      {"mufu test per group d2 m7 c64", stream_variant<4, 4, 128, 7, conv::Bf16ShortcutSiluRun<4>, 2>, 128, 4, 64, true, ring_smem(128, 2, 4, 4)},
      {"mufu test per row d2 m8 c64", stream_variant<4, 4, 128, 8, Bf16ShortcutSilu, 2>, 128, 4, 64, true, ring_smem(128, 2, 4, 4)},
      {"mufu test per row d4 m7 c64", stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 4>, 128, 4, 64, true, ring_smem(128, 4, 4, 4)},
      {"mufu test per row d2 m7 c32", stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 2>, 128, 4, 32, true, ring_smem(128, 2, 4, 4)},
      {"mufu test per row d2 m7 c128", stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 2>, 128, 4, 128, true, ring_smem(128, 2, 4, 4)},
  };
}

// Set 10 (CHANGELOG 2026-12-03, a5cc6a3): the ring's first groups requested before the taps, the initial-state
// flag and the history (RING_FIRST, the library's order since a5cc6a3) against after them (the order until then), at the
// library's ring of 2 and at a ring of 4 (16 KiB of bf16 rows per block, the library's allocation), with 64- and
// 32-token programs (the library's single-sequence and short-batch lengths), same run.
static std::vector<ConvVariant> conv_variants10() {
  using conv::Bf16ShortcutSilu;
  return {
      {"mufu d2 c64 history first (s15)", stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 2, false>, 128, 4, 64, true, ring_smem(128, 2, 4, 4)},
      {"mufu d2 c64 ring first (library)", stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 2, true>, 128, 4, 64, true, ring_smem(128, 2, 4, 4)},
      {"mufu d2 c32 history first (s15)", stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 2, false>, 128, 4, 32, true, ring_smem(128, 2, 4, 4)},
      {"mufu d2 c32 ring first (library)", stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 2, true>, 128, 4, 32, true, ring_smem(128, 2, 4, 4)},
      {"mufu d4 c64 history first", stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 4, false>, 128, 4, 64, true, ring_smem(128, 4, 4, 4)},
      {"mufu d4 c64 ring first", stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 4, true>, 128, 4, 64, true, ring_smem(128, 4, 4, 4)},
      {"mufu d4 c32 history first", stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 4, false>, 128, 4, 32, true, ring_smem(128, 4, 4, 4)},
      {"mufu d4 c32 ring first", stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 4, true>, 128, 4, 32, true, ring_smem(128, 4, 4, 4)},
  };
}

// Set 11 (CHANGELOG 2026-12-04, f5a6192): set 8's question — the program length — again for the library's kernel since a5cc6a3
// (ring of 4 bf16 groups requested first), whose short-sequence batches run 32-token programs
// (kStreamShortBatchChunk) and miss their target (docs/BENCHMARKS.md, "Causal conv, prefill").
static std::vector<ConvVariant> conv_variants11() {
  using conv::Bf16ShortcutSilu;
  static std::vector<std::string> names;
  const int chunks[] = {16, 20, 24, 28, 32, 40, 48, 64};
  names.clear();
  for (int c : chunks) names.push_back("mufu d4 ring first c" + std::to_string(c));
  std::vector<ConvVariant> v;
  for (size_t i = 0; i < names.size(); ++i)
    v.push_back({names[i].c_str(), stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 4, true>, 128, 4, chunks[i], true, ring_smem(128, 4, 4, 4)});
  return v;
}

// Set 12 (CHANGELOG 2026-12-04, e366a67): what keeps the 32-sequence batches at 1.41-1.45x copy
// (docs/BENCHMARKS.md, "Causal conv, prefill"): their 78 programs x 16 channel tiles are 1.35 waves of resident blocks, listed sequence by sequence, so full and
// partial programs mix in the last wave. Here the same programs in other orders (longest first, as a scheduler of
// unequal jobs on identical machines would; shortest first as the control of that reasoning; chunk 0, the
// programs with the state chain, first), at several lengths, and the old state read without waiting for the
// initial-state flag (SPEC_STATE), same run.
static std::vector<ConvVariant> conv_variants12() {
  using conv::Bf16ShortcutSilu;
  auto lib = stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 4, true, false>;
  auto spec = stream_variant<4, 4, 128, 7, Bf16ShortcutSilu, 4, true, true>;
  const int sm = ring_smem(128, 4, 4, 4);
  return {
      {"lib c32 seq order (s17)", lib, 128, 4, 32, true, sm, 0},
      {"lib c32 longest first", lib, 128, 4, 32, true, sm, 1},
      {"lib c32 shortest first", lib, 128, 4, 32, true, sm, 2},
      {"lib c32 chunk0, longest", lib, 128, 4, 32, true, sm, 3},
      {"lib c24 longest first", lib, 128, 4, 24, true, sm, 1},
      {"lib c40 longest first", lib, 128, 4, 40, true, sm, 1},
      {"lib c48 longest first", lib, 128, 4, 48, true, sm, 1},
      {"lib c64 longest first", lib, 128, 4, 64, true, sm, 1},
      {"spec c32 seq order", spec, 128, 4, 32, true, sm, 0},
      {"spec c32 longest first", spec, 128, 4, 32, true, sm, 1},
      {"spec c40 longest first", spec, 128, 4, 40, true, sm, 1},
      {"spec c64 seq order", spec, 128, 4, 64, true, sm, 0},
      {"lib c64 seq order", lib, 128, 4, 64, true, sm, 0},
  };
}

static void run_conv_profile(const std::vector<ConvVariant>& v) {
  g_profile = true;
  run_conv(v, -1);
}

// ================================================================= 3. postconv
void run_postconv(int rounds, int set);  // postconv_tune.inc

#include "postconv_tune.inc"

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "all";
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  std::printf("device %s (sm_%d%d, %d SMs, L2 %d MiB), driver API %d, runtime %d; arithmetic version %d\n", prop.name,
              prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize >> 20, drv, rt, kArithVersion);
  if (what == "math" || what == "all") run_math();
  if (what == "conv" || what == "all") run_conv(conv_variants(), argc > 2 ? std::atoi(argv[2]) : 15);
  if (what == "conv2") run_conv(conv_variants2(), argc > 2 ? std::atoi(argv[2]) : 15);
  if (what == "conv3") run_conv(conv_variants3(), argc > 2 ? std::atoi(argv[2]) : 15);
  if (what == "conv5") run_conv(conv_variants5(), argc > 2 ? std::atoi(argv[2]) : 15);
  if (what == "conv6") run_conv(conv_variants6(), argc > 2 ? std::atoi(argv[2]) : 15);
  if (what == "conv7") run_conv(conv_variants7(), argc > 2 ? std::atoi(argv[2]) : 15);
  if (what == "conv8") {
    g_more_shapes = true;
    run_conv(conv_variants8(), argc > 2 ? std::atoi(argv[2]) : 15);
  }
  if (what == "conv9") run_conv(conv_variants9(), argc > 2 ? std::atoi(argv[2]) : 15);
  if (what == "conv10") run_conv(conv_variants10(), argc > 2 ? std::atoi(argv[2]) : 15);
  if (what == "conv11") run_conv(conv_variants11(), argc > 2 ? std::atoi(argv[2]) : 15);
  if (what == "conv12") run_conv(conv_variants12(), argc > 2 ? std::atoi(argv[2]) : 15);
  if (what == "profile9") {  // one launch of each set-9 variant at 4B T = 8192 (for ncu)
    std::vector<ConvVariant> v = conv_variants9();
    run_conv_profile(v);
  }
  if (what == "profile5") {  // one launch of each set-5 variant at 4B T = 8192 (for ncu)
    std::vector<ConvVariant> v = conv_variants5();
    run_conv_profile(v);
  }
  if (what == "profile3") {  // one launch of each set-3 variant at 4B T = 8192 (for ncu)
    std::vector<ConvVariant> v = conv_variants3();
    run_conv_profile(v);
  }
  if (what == "profile") {  // one launch of each set-2 variant at 4B T = 8192 (for ncu), no timing loop
    std::vector<ConvVariant> v = conv_variants2();
    run_conv_profile(v);
  }
  if (what == "postconv" || what == "all") run_postconv(argc > 2 ? std::atoi(argv[2]) : 15, 1);
  if (what == "postconv2") run_postconv(argc > 2 ? std::atoi(argv[2]) : 15, 2);
  return 0;
}
