// gdnlab: run Gated DeltaNet causal-conv and post-conv kernels from TypeScript, compare them bit by
// bit, time them honestly. `import * as gdn from 'gdnlab'`.

export { DType, DTYPES, dtypeSize, f32ToBf16Bits, bf16BitsToF32, f32ToF16Bits, f16BitsToF32, f32Bits, f32FromBits, roundTo } from './dtype';
export { Tensor, scope, TensorOptions, RandomOptions, MAX_HOST_BYTES } from './tensor';
export { Rng } from './random';
export { Backend, BackendKind, DeviceInfo, NativeOp, GdnError, activeBackend, useBackend, backendChoice, buildInfo, cudaDeviceCount } from './backend';
export { revision } from './provenance';
export * as conv from './ops/conv';
export * as postconv from './ops/postconv';
export * as fused from './ops/fused';
export { launchContract, ConvArm, ConvMapping, ConvMutant, Schedule, CONV_MAPPINGS, CONV_MUTANTS, convArms, updateArms } from './ops/conv';
export { PostconvArm, postconvArms } from './ops/postconv';
export { arms, armNames, armByName, referenceArm, ArmInfo, ArmOp, ARM_OPS } from './arms/table';
// Arms written in a cell (docs/USER-ARMS.md): gdn.conv.defineArm / gdn.postconv.defineArm, and what any arm compiles to.
export { inspectArm, excerpt as listingExcerpt, occupancy as armOccupancy, SM_LIMITS, ArmInspection, InspectOptions, ResourceUsage, Occupancy, SmLimits } from './arms/inspect';
export { ArmCompileError, buildRecipe, cacheDir as armCacheDir } from './arms/compile';
export { DefinedArm, ConvArmSpec, PostconvArmSpec, undefineArm } from './arms/define';
// Why is this arm slow: each arm once under Nsight Compute in a child process (docs/SPEC.md §14).
export { profile, ProfileOptions, ProfileResult } from './profile/profile';
import { convArms as listConvArms } from './ops/conv';
import { postconvArms as listPostconvArms } from './ops/postconv';
/** Every conv arm's name, read from libgdn's registry each time it is accessed (same as convArms()). */
export declare const CONV_ARMS: readonly string[];
/** Every post-conv arm's name, read from libgdn's registry each time it is accessed (same as postconvArms()). */
export declare const POSTCONV_ARMS: readonly string[];
Object.defineProperty(exports, 'CONV_ARMS', { enumerable: true, get: () => listConvArms() });
Object.defineProperty(exports, 'POSTCONV_ARMS', { enumerable: true, get: () => listPostconvArms() });
export { matmulNT } from './ops/matmul';
export { copyOp, formatBytes } from './ops/copy';
export { convReference, maxError, CONV_TOLERANCE } from './reference/conv';
export { countBitMismatches } from './analysis/bits';
export * as check from './check/conv';
export { diff, DiffResult, DiffOptions, countMismatches, isClose } from './analysis/diff';
export { auditExactness, ExactnessAudit } from './analysis/audit';
export { convCoordinates, postconvCoordinates, plainCoordinates, namedCoordinates } from './analysis/coordinates';
// timeArms checks the bits of every case an op prepared before timing it (lib/check/timed.ts).
export { timeArms } from './check/timed';
export { compare, TimingResult, TimingCase, TimingOptions, CaseTiming, Comparison, Verdict, TimingAborted } from './analysis/timing';
export { summarize, bootstrapMedianRatio } from './analysis/stats';
export { plotTiming, plotUlpHistogram, plotMismatchMap, standaloneHtml, Figure } from './analysis/plot';
export { table, renderTable } from './view/table';
export { progress } from './view/progress';
export { display, inKernel } from './view/display';
export { showDiagram, svgToPng } from './view/png';
export { runInfo, showRunInfo, RunInfo, RUN_INFO_MIME } from './view/run-info';
export { raceTrials, raceCase, RaceTrialsResult } from './check/race';
export { benchConv, benchPostconv, benchFused, benchMarkdown } from './bench/bench';
export { runConvMutants, runUserConvDefects, MutantOutcome } from './check/mutants';
export { runPostconvDefects } from './check/postconv';
export { LocatedMismatch } from './analysis/located';
export { BitsCheck, checkTimedBits } from './check/timed';
export { chunkMappingSvg, reductionFoldSvg } from './view/diagrams';
export { projectRoot } from './native/gdn';
export { Mismatch, MismatchKind, ToleranceOptions, ToleranceResult } from './analysis/diff';
export { AuditInput, AuditVerdict } from './analysis/audit';
export { Coordinates } from './analysis/coordinates';
export { UlpHistogram, ulpBucket, ulpBucketLabel } from './analysis/ulp-histogram';
export { MismatchMap } from './analysis/mismatch-map';
export { FLOAT_FORMATS, FloatDType, ulpDistance, orderedKey } from './analysis/floatbits';
export * as stats from './analysis/stats';
export { CompareOptions, StopReason, RunProvenance, MIN_COMPARE_SAMPLES } from './analysis/timing';
export { PLOTLY_MIME, TimingPlotOptions, UlpHistogramPlotOptions, HeatmapPlotOptions, StandaloneOptions } from './analysis/plot';
export { renderSvg } from './view/svg';
export { toDataFrame, TableOptions } from './view/table';
export { Progress, ProgressOptions } from './view/progress';
export { MIME_BUNDLE, MimeBundle } from './view/display';
export { postconvReference } from './reference/postconv';
export * as checkPostconv from './check/postconv';
export * as checkFused from './check/fused';
export { diffFused } from './check/fused';
export * as safetensors from './model/safetensors';
export { SafetensorsFile, SafetensorsCheckpoint, writeSafetensors, IoCounter } from './model/safetensors';
export { Qwen35Checkpoint, QWEN35_PRESETS, syntheticGdnLayer, writeSyntheticCheckpoint } from './model/qwen35';
export { layer0Activations, decoderRmsNorm, Layer0Activations } from './model/activations';
