// User arms compiled with NVRTC (lib/arms/nvrtc.ts; docs/USER-ARMS.md, "Compiling"), for a GPU machine
// without nvcc: the same module text and device flags give a cubin whose every entry point uses the same
// registers, spills and stack as nvcc's; compile errors point into the arm's source; and the choice of
// compiler is explicit. Compile only: this proves what NVRTC builds, not how it runs (that needs a GPU).
// CI installs libnvrtc from the nvidia-cuda-nvrtc wheel (test/fixtures/requirements.txt).

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ArmCompileError, buildRecipe, compileModule, pickCudaCompiler } from '../../lib/arms/compile';
import { parsePtxasVerbose } from '../../lib/arms/inspect';
import { nvrtcLibrary } from '../../lib/arms/nvrtc';
import { REG16_SOURCE, TILE_PAIRS_SOURCE, TILE_TREE_SOURCE } from './sources';

describe('user arms compiled with NVRTC (compile only)', function () {
  this.timeout(120_000);
  const saved = { cache: process.env.GDNLAB_ARM_CACHE, compiler: process.env.GDNLAB_CUDA_COMPILER };
  const cacheRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-nvrtc-'));
  before(function () {
    if (!nvrtcLibrary()) {
      console.log('      SKIPPED: no libnvrtc here (GDNLAB_NVRTC, or pip install nvidia-cuda-nvrtc into .venv)');
      this.skip();
    }
    process.env.GDNLAB_ARM_CACHE = cacheRoot;
  });
  after(() => {
    for (const [k, v] of [['GDNLAB_ARM_CACHE', saved.cache], ['GDNLAB_CUDA_COMPILER', saved.compiler]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    fs.rmSync(cacheRoot, { recursive: true, force: true });
  });
  const using = <T>(compiler: string, f: () => T): T => {
    process.env.GDNLAB_CUDA_COMPILER = compiler;
    try {
      return f();
    } finally {
      delete process.env.GDNLAB_CUDA_COMPILER;
    }
  };
  const reg16 = { op: 'conv' as const, name: 'reg16-nvrtc', source: REG16_SOURCE, defines: { GDN_ARM_THREADS: 128 }, target: 'cuda' as const, sm: '90' };

  it('compiles a conv arm to an sm_90 cubin; every entry uses what nvcc gives it (registers, spills, stack)', function () {
    const m = using('nvrtc', () => compileModule(reg16));
    assert.match(m.command, /^nvrtc:/);
    assert.ok(fs.readFileSync(m.file).subarray(0, 4).equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46])), 'a cubin is an ELF file');
    const usage = parsePtxasVerbose(m.log);
    assert.deepEqual(usage.map((u) => u.entry).sort(), ['gdn_arm_conv_bf16_bf16', 'gdn_arm_conv_bf16_f32', 'gdn_arm_conv_f32_bf16', 'gdn_arm_conv_f32_f32']);
    assert.equal(using('nvrtc', () => compileModule(reg16)).cached, true, 'the unchanged module is a cache hit');
    if (!buildRecipe().nvcc) return;  // nothing to compare with
    const byNvcc = using('nvcc', () => compileModule(reg16));
    assert.notEqual(byNvcc.key, m.key, 'the two compilers are cached apart');
    const brief = (log: string) => parsePtxasVerbose(log).map((u) => ({ ...u })).sort((a, b) => a.entry.localeCompare(b.entry));
    assert.deepEqual(brief(m.log), brief(byNvcc.log));
  });

  it('compiles a post-conv arm with barriers and warp shuffles, and PTX for inspection', () => {
    const tile = using('nvrtc', () => compileModule({ op: 'postconv', name: 'tile16-nvrtc', source: TILE_TREE_SOURCE, defines: { GDN_ARM_THREADS: 128 }, target: 'cuda', sm: '90' }));
    assert.ok(parsePtxasVerbose(tile.log).length > 0, tile.log);
    // exec.h's grouped exchanges (t.shfl_xor_each) compile under NVRTC too (docs/SPEC.md §13).
    const pairs = using('nvrtc', () => compileModule({ op: 'postconv', name: 'tile16-pairs-nvrtc', source: TILE_PAIRS_SOURCE, defines: { GDN_ARM_THREADS: 128 }, target: 'cuda', sm: '90' }));
    assert.ok(parsePtxasVerbose(pairs.log).length > 0, pairs.log);
    const ptx = using('nvrtc', () => compileModule({ ...reg16, target: 'ptx' }));
    const text = fs.readFileSync(ptx.file, 'utf8');
    assert.match(text, /\.target sm_90/);
    assert.match(text, /\.entry gdn_arm_conv_bf16_bf16/);
  });

  it("a compile error is the cell's error with the arm's own line numbers", () => {
    const broken = REG16_SOURCE.replace('float acc = b;', 'float acc = no_such_value;');
    const line = broken.split('\n').findIndex((l) => l.includes('no_such_value')) + 1;
    assert.throws(
      () => using('nvrtc', () => compileModule({ ...reg16, name: 'reg16-broken', source: broken })),
      (e: unknown) => e instanceof ArmCompileError && /arm 'reg16-broken': compiling for cuda failed/.test(e.message) && new RegExp(`arm:reg16-broken\\(${line}\\): error: identifier "no_such_value" is undefined`).test(e.message),
    );
  });

  it('the compiler choice is explicit: GDNLAB_CUDA_COMPILER must be auto, nvcc or nvrtc', () => {
    assert.throws(() => using('clang', () => pickCudaCompiler(buildRecipe(), 'x')), /GDNLAB_CUDA_COMPILER: expected auto, nvcc or nvrtc, got 'clang'/);
    assert.equal(using('nvrtc', () => pickCudaCompiler(buildRecipe(), 'x')), 'nvrtc');
    assert.equal(using('auto', () => pickCudaCompiler(buildRecipe(), 'x')), buildRecipe().nvcc ? 'nvcc' : 'nvrtc');
  });
});
