// vec_tune.cu — tuning bench of the vec conv arm on a GPU (not part of libgdn, not run in CI).
//
// Builds variants of conv::vec_thread (tokens per program, rows loaded together, block size,
// register cap), checks that each gives the same bits as the first, and times each with CUDA events
// (L2 flushed before every launch) against a device-to-device copy of the same bytes.
//
//   nvcc -O3 -std=c++17 --fmad=false -arch=sm_90 -Icuda/include -Icuda/src -Icuda/src/common \
//        cuda/tests/vec_tune.cu -o vec_tune && ./vec_tune
#include "cuda_check.h"
#include "common/arms/conv_vec.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>


using namespace gdn;
using conv::bf16_bits;

template <int W, int G, int THREADS, int MINB>
__global__ void __launch_bounds__(THREADS, MINB) vec_variant(const conv::Params p) {
  conv::vec_thread<bf16_bits, bf16_bits, conv::NoMutant, W, G, THREADS>(p, (int64_t)blockIdx.x % p.grid_x,
                                                        (int64_t)blockIdx.x / p.grid_x, threadIdx.x);
}

// Hardware bf16 rounding (cvt.rn.bf16.f32) against gdn::f32_to_bf16 over all 2^32 inputs.
__global__ void cvt_check(unsigned long long* counts, unsigned* examples) {
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (1ull << 32); i += (uint64_t)gridDim.x * blockDim.x) {
    const uint32_t u = (uint32_t)i;
    const float f = __uint_as_float(u);
    unsigned short hw;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(hw) : "f"(f));
    const uint16_t sw = f32_to_bf16(f);
    if (hw != sw) {
      const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
      const unsigned long long k = atomicAdd(&counts[nan ? 1 : 0], 1ull);
      if (k < 4) {
        examples[(nan ? 4 : 0) * 2 + 2 * k] = u;
        examples[(nan ? 4 : 0) * 2 + 2 * k + 1] = hw;
      }
    }
  }
}

struct Variant {
  const char* name;
  void (*kernel)(const conv::Params);
  int threads, chunk;
};

int main(int argc, char** argv) {
  const int64_t T = argc > 1 ? std::atoll(argv[1]) : 8192;
  const int reps = 20;
  Variant variants[] = {
      {"g4 c64 t128", vec_variant<4, 4, 128, 1>, 128, 64},
      {"g4 c64 t128 minb3", vec_variant<4, 4, 128, 3>, 128, 64},
      {"g4 c64 t128 minb4", vec_variant<4, 4, 128, 4>, 128, 64},
      {"g2 c64 t128 minb4", vec_variant<4, 2, 128, 4>, 128, 64},
      {"g2 c64 t128 minb6", vec_variant<4, 2, 128, 6>, 128, 64},
      {"g8 c64 t128 minb3", vec_variant<4, 8, 128, 3>, 128, 64},
      {"g4 c128 t128 minb4", vec_variant<4, 4, 128, 4>, 128, 128},
      {"g4 c32 t128 minb4", vec_variant<4, 4, 128, 4>, 128, 32},
      {"g4 c64 t64 minb8", vec_variant<4, 4, 64, 8>, 64, 64},
      {"g2 c64 t64 minb12", vec_variant<4, 2, 64, 12>, 64, 64},
      {"g4 c64 t256 minb2", vec_variant<4, 4, 256, 2>, 256, 64},
  };
  const int nv = sizeof variants / sizeof variants[0];
  {
    unsigned long long* counts;
    unsigned* ex;
    CK(cudaMalloc(&counts, 16));
    CK(cudaMalloc(&ex, 64));
    CK(cudaMemset(counts, 0, 16));
    CK(cudaMemset(ex, 0, 64));
    cvt_check<<<4096, 256>>>(counts, ex);
    CK(cudaGetLastError());
    unsigned long long hc[2];
    unsigned he[16];
    CK(cudaMemcpy(hc, counts, 16, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(he, ex, 64, cudaMemcpyDeviceToHost));
    std::printf("cvt.rn.bf16.f32 vs f32_to_bf16: %llu non-NaN mismatches, %llu NaN mismatches;", hc[0], hc[1]);
    for (int k = 0; k < 8; ++k)
      if (he[2 * k] || he[2 * k + 1]) std::printf(" %08x->%04x(sw %04x)", he[2 * k], he[2 * k + 1], f32_to_bf16(f32_from_bits(he[2 * k])));
    std::printf("\n");
    cudaFree(counts);
    cudaFree(ex);
  }
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  void* flush;
  CK(cudaMalloc(&flush, (size_t)l2 * 2));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));

  for (int64_t C : {8192, 10240}) {
    const int K = 4, N = 1;
    const size_t xn = (size_t)(T * C);
    std::vector<uint16_t> hx(xn), hw((size_t)C * K), hb((size_t)C);
    uint64_t s = 12345;
    auto rnd = [&]() {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      return (float)((s >> 40) * (1.0 / 16777216.0)) * 4.0f - 2.0f;
    };
    for (auto& v : hx) v = f32_to_bf16(rnd());
    for (auto& v : hw) v = f32_to_bf16(rnd() * 0.5f);
    for (auto& v : hb) v = f32_to_bf16(rnd() * 0.1f);
    std::vector<float> hstate((size_t)(N * C * (K - 1)));
    for (auto& v : hstate) v = rnd();
    const int32_t hqsl[2] = {0, (int32_t)T};
    const int8_t hhis[1] = {1};
    bf16_bits *x, *w, *b, *out;
    float* state;
    int32_t* qsl;
    int8_t* his;
    CK(cudaMalloc(&x, xn * 2));
    CK(cudaMalloc(&out, xn * 2));
    CK(cudaMalloc(&w, hw.size() * 2));
    CK(cudaMalloc(&b, hb.size() * 2));
    CK(cudaMalloc(&state, hstate.size() * 4));
    CK(cudaMalloc(&qsl, 8));
    CK(cudaMalloc(&his, 1));
    CK(cudaMemcpy(x, hx.data(), xn * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(w, hw.data(), hw.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(qsl, hqsl, 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(his, hhis, 1, cudaMemcpyHostToDevice));

    // copy roofline: read + write of the same bytes
    std::vector<float> ts;
    for (int r = 0; r < reps + 3; ++r) {
      CK(cudaMemsetAsync(flush, r, (size_t)l2 * 2));
      CK(cudaEventRecord(e0));
      CK(cudaMemcpyAsync(out, x, xn * 2, cudaMemcpyDeviceToDevice));
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r >= 3) ts.push_back(ms);
    }
    std::sort(ts.begin(), ts.end());
    const double copy_us = ts[ts.size() / 2] * 1e3, bytes = 2.0 * xn * 2;
    std::printf("T=%lld C=%lld bf16 K=4: copy %.1f us = %.0f GB/s\n", (long long)T, (long long)C, copy_us,
                bytes / copy_us * 1e-3);

    std::vector<uint16_t> first_out;
    std::vector<float> first_state;
    for (int v = 0; v < nv; ++v) {
      const Variant& var = variants[v];
      std::vector<int32_t> programs;
      for (int64_t k = 0; k * var.chunk < T; ++k) {
        programs.push_back(0);
        programs.push_back((int32_t)k);
      }
      int32_t* dprog;
      CK(cudaMalloc(&dprog, programs.size() * 4));
      CK(cudaMemcpy(dprog, programs.data(), programs.size() * 4, cudaMemcpyHostToDevice));
      conv::Params p;
      std::memset(&p, 0, sizeof p);
      p.T = T;
      p.C = C;
      p.x_stride = C;
      p.K = K;
      p.N = N;
      p.x = x;
      p.w = w;
      p.bias = b;
      p.qsl = qsl;
      p.his = his;
      p.his_i32 = 0;
      p.mapping = GDN_MAP_EXACT;
      p.mutant = 0;
      p.chunk = var.chunk;
      p.grid_x = (int32_t)((C + var.threads * 8 - 1) / (var.threads * 8));
      p.state = state;
      p.out = out;
      p.programs = dprog;
      const unsigned blocks = (unsigned)(p.grid_x * (int64_t)(programs.size() / 2));
      ts.clear();
      for (int r = 0; r < reps + 3; ++r) {
        CK(cudaMemcpy(state, hstate.data(), hstate.size() * 4, cudaMemcpyHostToDevice));
        CK(cudaMemsetAsync(flush, r, (size_t)l2 * 2));
        CK(cudaEventRecord(e0));
        var.kernel<<<blocks, var.threads>>>(p);
        CK(cudaGetLastError());
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 3) ts.push_back(ms);
      }
      std::sort(ts.begin(), ts.end());
      const double us = ts[ts.size() / 2] * 1e3;
      std::vector<uint16_t> ho(xn);
      std::vector<float> hs(hstate.size());
      CK(cudaMemcpy(ho.data(), out, xn * 2, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(hs.data(), state, hs.size() * 4, cudaMemcpyDeviceToHost));
      bool same = true;
      if (v == 0) {
        first_out = ho;
        first_state = hs;
        uint64_t h = 1469598103934665603ull;
        for (uint16_t q : ho) h = (h ^ q) * 1099511628211ull;
        std::printf("  output hash %016llx\n", (unsigned long long)h);
      } else {
        same = std::memcmp(ho.data(), first_out.data(), xn * 2) == 0 &&
               std::memcmp(hs.data(), first_state.data(), hs.size() * 4) == 0;
      }
      cudaFuncAttributes attr;
      CK(cudaFuncGetAttributes(&attr, var.kernel));
      int per_sm = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, var.kernel, var.threads, 0));
      std::printf("  %-20s %8.1f us  %6.0f GB/s  %5.1f%% of copy  regs %3d  blocks/SM %2d  grid %u  %s\n", var.name, us,
                  bytes / us * 1e-3, copy_us / us * 100.0, attr.numRegs, per_sm, blocks, same ? "bits=first" : "BITS DIFFER");
      CK(cudaFree(dprog));
    }
    CK(cudaFree(x));
    CK(cudaFree(out));
    CK(cudaFree(w));
    CK(cudaFree(b));
    CK(cudaFree(state));
    CK(cudaFree(qsl));
    CK(cudaFree(his));
  }
  return 0;
}
