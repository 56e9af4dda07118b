// Arms defined at run time and what any arm compiles to (docs/USER-ARMS.md). `gdn.arms.*`; the
// definitions themselves are gdn.conv.defineArm and gdn.postconv.defineArm.

export { defineConvArm, definePostconvArm, undefineArm, ConvArmSpec, PostconvArmSpec, DefinedArm, ModuleInfo } from './define';
export { inspectArm, excerpt, occupancy, parsePtxasVerbose, SM_LIMITS, SmLimits, ResourceUsage, Occupancy, ArmInspection, InspectOptions } from './inspect';
export { compileModule, buildRecipe, cacheDir, ArmCompileError, CompiledModule, CompileRequest } from './compile';
export { userArms, userArm, RegisteredArm } from './registry';
