// detmath_exhaustive.cu — host vs GPU bits of common/detmath.h over all 2^32 float inputs.
//
// Each function's results are folded into an order-independent checksum (sum over inputs of a mix
// of (input bits, result bits), mod 2^64); a second sum leaves out the inputs whose result is a NaN,
// so a difference can be placed in NaN handling or in the numbers. Run on the host to print the checksums, then on a GPU
// machine with those checksums to compare (the host pass takes about a minute per function on one
// core, so it is done once, off the GPU machine):
//   nvcc -O3 -std=c++17 --fmad=false -arch=sm_90 -Xcompiler -ffp-contract=off,-mfma \
//        -Icuda/src/common cuda/tests/detmath_exhaustive.cu -o detmath_exhaustive
//   ./detmath_exhaustive host            -> prints 10 checksums
//   ./detmath_exhaustive gpu SUM1 ...    -> exit 0 when the GPU's sums equal them
#include "detmath.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

using namespace gdn;

constexpr int kFuncs = 5;
constexpr int kSums = 2 * kFuncs;  // [f]: every input; [kFuncs + f]: inputs with a non-NaN result
const char* kNames[kFuncs] = {"gdn_expf", "gdn_silu", "gdn_log1pf", "gdn_softplus", "f32_to_bf16"};

__host__ __device__ inline uint32_t eval(int f, float x) {
  switch (f) {
    case 0: return f32_bits(gdn_expf(x));
    case 1: return f32_bits(gdn_silu(x));
    case 2: return f32_bits(gdn_log1pf(x));
    case 3: return f32_bits(gdn_softplus(x));
    default: return f32_to_bf16(x);
  }
}

__host__ __device__ inline uint64_t mix(uint32_t in, uint32_t out) {
  uint64_t z = ((uint64_t)in << 32 | out) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__host__ __device__ inline bool result_is_nan(int f, uint32_t r) {
  return f == kFuncs - 1 ? (r & 0x7fffu) > 0x7f80u : (r & 0x7fffffffu) > 0x7f800000u;
}

__host__ __device__ inline void accumulate(uint32_t i, unsigned long long* acc) {
  const float x = f32_from_bits(i);
  for (int f = 0; f < kFuncs; ++f) {
    const uint32_t r = eval(f, x);
    const uint64_t m = mix(i, r);
    acc[f] += m;
    if (!result_is_nan(f, r)) acc[kFuncs + f] += m;
  }
}

__global__ void sums_kernel(unsigned long long* sums) {
  unsigned long long acc[kSums] = {};
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (1ull << 32); i += (uint64_t)gridDim.x * blockDim.x)
    accumulate((uint32_t)i, acc);
  for (int f = 0; f < kSums; ++f) atomicAdd(&sums[f], acc[f]);
}

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "host") == 0) {
    unsigned long long sums[kSums] = {};
    for (uint64_t i = 0; i < (1ull << 32); ++i) accumulate((uint32_t)i, sums);
    for (int f = 0; f < kSums; ++f) std::printf("%016llx ", sums[f]);
    std::printf("\n");
    return 0;
  }
  if (argc == 2 + kSums && std::strcmp(argv[1], "gpu") == 0) {
    unsigned long long* d;
    unsigned long long h[kSums];
    if (cudaMalloc(&d, sizeof h) != cudaSuccess) return 2;
    cudaMemset(d, 0, sizeof h);
    sums_kernel<<<8192, 256>>>(d);
    if (cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess) return 2;
    int bad = 0;
    for (int f = 0; f < kSums; ++f) {
      const unsigned long long want = std::strtoull(argv[2 + f], nullptr, 16);
      std::printf("%-13s %-13s host %016llx gpu %016llx %s\n", kNames[f % kFuncs], f < kFuncs ? "all inputs" : "non-NaN out",
                  want, h[f], want == h[f] ? "identical" : "DIFFERENT");
      bad += want != h[f];
    }
    return bad == 0 ? 0 : 1;
  }
  std::fprintf(stderr, "usage: %s host | gpu SUM1 .. SUM%d\n", argv[0], kSums);
  return 2;
}
