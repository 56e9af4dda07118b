// gdnlab: run Gated DeltaNet causal-conv and post-conv kernels from TypeScript, compare them bit by
// bit, time them honestly. `import * as gdn from 'gdnlab'`.

export { DType, DTYPES, dtypeSize, f32ToBf16Bits, bf16BitsToF32, f32ToF16Bits, f16BitsToF32, f32Bits, f32FromBits, roundTo } from './dtype';
export { Tensor, scope, TensorOptions, RandomOptions } from './tensor';
export { Rng } from './random';
export { Backend, BackendKind, DeviceInfo, NativeOp, GdnError, activeBackend, useBackend, backendChoice, buildInfo, cudaDeviceCount } from './backend';
export { revision } from './provenance';
export * as conv from './ops/conv';
export * as postconv from './ops/postconv';
export { launchContract, ConvArm, ConvMapping, ConvMutant, Schedule, CONV_ARMS, CONV_MAPPINGS, CONV_MUTANTS } from './ops/conv';
export { POSTCONV_ARMS, PostconvArm } from './ops/postconv';
export { matmulNT } from './ops/matmul';
export { copyOp, formatBytes } from './ops/copy';
export { convReference, maxError, CONV_TOLERANCE } from './reference/conv';
export { countBitMismatches } from './check/bits';
export * as check from './check/conv';
