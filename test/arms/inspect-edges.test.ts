// lib/arms/inspect.ts without a compiler: the ptxas -v reader on a log written like ptxas's, the
// occupancy calculator on cases worked by hand from the SM limits, excerpt(), and inspectArm with
// compileModule, findOnPath, the arm lookups and spawnSync replaced by stand-ins, so that each input
// it builds (defines, threads, shared memory, which disassembler with which arguments) and each line
// and display it makes is seen exactly.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as util from 'util';
import { excerpt, inspectArm, LISTING_CHARS, LISTING_LINES, occupancy, parsePtxasVerbose, SM_LIMITS } from '../../lib/arms/inspect';
import { MIME_BUNDLE, MimeBundle } from '../../lib/view/display';

/* eslint-disable @typescript-eslint/no-var-requires */
const compile = require('../../lib/arms/compile') as Record<string, unknown>;
const define = require('../../lib/arms/define') as Record<string, unknown>;
const table = require('../../lib/arms/table') as Record<string, unknown>;
const childProcess = require('child_process') as Record<string, unknown>;
/* eslint-enable @typescript-eslint/no-var-requires */

const LOG = [
  "ptxas info    : Used 9 registers, 64 bytes smem", // before any entry: ignored
  "ptxas info    : Compiling entry function 'gdn_arm_conv_f32_f32' for 'sm_90'",
  'ptxas info    : Function properties for gdn_arm_conv_f32_f32',
  '    24 bytes stack frame, 16 bytes spill stores, 12 bytes spill loads',
  'ptxas info    : Used 40 registers, used 1 barriers, 1024 bytes smem, 400 bytes cmem[0], 28 bytes cmem[2]',
  "ptxas info    : Compiling entry function 'gdn_arm_conv_bf16_f32' for 'sm_90'",
  'ptxas info    : Used 128 registers, 380 bytes cmem[0]',
].join('\n');

describe('arm inspection: edges (no compiler)', () => {
  it('parsePtxasVerbose: one record per entry, every field, absent fields 0, lines before the first entry ignored', () => {
    assert.deepEqual(parsePtxasVerbose(LOG), [
      { entry: 'gdn_arm_conv_f32_f32', registers: 40, barriers: 1, stackBytes: 24, spillStoreBytes: 16, spillLoadBytes: 12, staticSharedBytes: 1024, constantBytes: 428 },
      { entry: 'gdn_arm_conv_bf16_f32', registers: 128, barriers: 0, stackBytes: 0, spillStoreBytes: 0, spillLoadBytes: 0, staticSharedBytes: 0, constantBytes: 380 },
    ]);
    assert.deepEqual(parsePtxasVerbose(''), []);
  });

  it('occupancy: threads and block slots tie (sm_86: 3 warps, 33 registers, 1000 B)', () => {
    // 33 regs × 32 = 1056 → 1280 per warp; 65536 / 1280 = 51 warps → 17 blocks of 3. Shared 1000 → 1024 + 1 KiB
    // reserved = 2048 → 50 blocks. Threads 1536 / 96 = 16. Block slots 16.
    assert.deepEqual(occupancy(SM_LIMITS['86'], 'e', 96, 33, 1000), {
      entry: 'e', threadsPerBlock: 96, registers: 33, sharedBytesPerBlock: 1000, blocksPerSm: 16, warpsPerSm: 48, maxWarpsPerSm: 48, occupancy: 1,
      limitedBy: ['threads per SM', 'blocks per SM'], byResource: { registers: 17, sharedMemory: 50, threads: 16, blocks: 16 },
    });
  });

  it('occupancy: a partial warp counts whole; 0 registers count as 1; registers and shared memory tie', () => {
    // 100 threads = 4 warps; 1 register → 256 per warp → 64 blocks; shared 0 + 1 KiB → 100; threads 1536 / 128 = 12.
    const a = occupancy(SM_LIMITS['86'], 'a', 100, 0, 0);
    assert.deepEqual([a.byResource, a.blocksPerSm, a.warpsPerSm, a.limitedBy], [{ registers: 64, sharedMemory: 100, threads: 12, blocks: 16 }, 12, 48, ['threads per SM']]);
    // sm_90, 4 warps of 128 registers: 4096 per warp → 16 warps → 4 blocks; 50000 B → 50048 + 1024 = 51072 → 228 KiB / that = 4.
    const b = occupancy(SM_LIMITS['90'], 'b', 128, 128, 50000);
    assert.deepEqual([b.byResource, b.blocksPerSm, b.warpsPerSm, b.maxWarpsPerSm, b.occupancy, b.limitedBy], [{ registers: 4, sharedMemory: 4, threads: 16, blocks: 32 }, 4, 16, 64, 0.25, ['registers', 'shared memory']]);
    // 255 registers × 32 = 8160 → 8192 per warp → 8 warps; 9 warps per block → 0 blocks.
    const c = occupancy(SM_LIMITS['80'], 'c', 288, 255, 0);
    assert.deepEqual([c.byResource.registers, c.blocksPerSm, c.occupancy, c.limitedBy], [0, 0, 0, ['registers']]);
  });

  it('excerpt: the lines from the first that names the entry, or from the top', () => {
    const listing = ['head', '.entry a', 'a1', '.entry b', 'b1', 'b2'].join('\n');
    assert.equal(excerpt(listing, '.entry b', 2), '.entry b\nb1');
    assert.equal(excerpt(listing, 'none', 2), 'head\n.entry a');
    assert.equal(excerpt(listing, 'a1'), 'a1\n.entry b\nb1\nb2');
    const long = Array.from({ length: 50 }, (_, i) => `l${i}`).join('\n');
    assert.equal(excerpt(long, 'l3').split('\n').length, 40);
    assert.equal(excerpt(long, 'l3').split('\n')[39], 'l42');
  });
});

describe('inspectArm: edges (stand-ins for the compiler and the tools)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-inspect-edges-'));
  const ptxFile = path.join(dir, 'a.ptx');
  const saved: [Record<string, unknown>, string, unknown][] = [];
  let compiles: Record<string, unknown>[];
  let tools: Record<string, string>;
  let spawned: unknown[][];
  let spawnResult: { status: number | null; stdout: string; stderr: string | null };
  let spec: Record<string, unknown> | undefined;
  let defines: Record<string, string | number> | undefined;
  let builtin: Record<string, unknown>;
  let cachedCubin: boolean;
  const replace = (m: Record<string, unknown>, key: string, value: unknown) => {
    saved.push([m, key, m[key]]);
    m[key] = value;
  };
  beforeEach(() => {
    compiles = [];
    cachedCubin = false;
    tools = {};
    spawned = [];
    spawnResult = { status: 0, stdout: 'SASS TEXT', stderr: '' };
    spec = undefined;
    defines = undefined;
    builtin = { name: 'reg', user: false, threadsFromD: false, threadsPerBlock: 256, minBlocksPerSm: 0, sharedBytes: { base: 100, perK: 16 } };
    fs.writeFileSync(ptxFile, '.version 8\n.entry gdn_arm_conv_f32_f32\n');
    replace(compile, 'compileModule', (req: Record<string, unknown>) => {
      compiles.push(req);
      return req.target === 'ptx'
        ? { file: ptxFile, cached: true, compileMs: 0, log: '' }
        : { file: path.join(dir, 'k.cubin'), cached: cachedCubin, compileMs: 1234, log: LOG };
    });
    replace(compile, 'findOnPath', (tool: string) => tools[tool] ?? '');
    replace(define, 'armSpec', () => spec);
    replace(define, 'armDefines', () => defines);
    replace(table, 'armByName', (op: string, name: string) => ({ ...builtin, op, name }));
    replace(childProcess, 'spawnSync', (...args: unknown[]) => {
      spawned.push(args);
      return spawnResult;
    });
  });
  afterEach(() => {
    while (saved.length) {
      const [m, key, v] = saved.pop() as [Record<string, unknown>, string, unknown];
      m[key] = v;
    }
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('an unknown SM is refused with the known ones', () => {
    assert.throws(() => inspectArm('conv', 'reg', { sm: '75' }), { name: 'RangeError', message: "sm: expected one of 80, 86, 89, 90, 100, 120, got '75'" });
    assert.equal(compiles.length, 0);
  });

  it('a built-in arm: its body picked by name, threads, min blocks and shared memory for K = 4; the account line by line', () => {
    const r = inspectArm('conv', 'reg');
    const defs = { GDN_ARM_THREADS: 256, GDN_ARM_MIN_BLOCKS: 1, GDN_BUILTIN: '"reg"' };
    assert.equal(compiles.length, 2);
    assert.deepEqual(Object.keys(compiles[0]).sort(), ['defines', 'name', 'op', 'preamble', 'sm', 'source', 'target']);
    assert.deepEqual([compiles[0].op, compiles[0].name, compiles[0].preamble, compiles[0].defines, compiles[0].target, compiles[0].sm], ['conv', 'reg', '', defs, 'cuda', '90']);
    assert.ok(String(compiles[0].source).startsWith('#include "common/arms/conv_list.h"'));
    assert.deepEqual({ ...compiles[1], source: '' }, { ...compiles[0], source: '', target: 'ptx' });
    assert.deepEqual([r.op, r.arm, r.builtIn, r.sm, r.cubin, r.cached, r.compileMs], ['conv', 'reg', true, '90', path.join(dir, 'k.cubin'), false, 1234]);
    assert.equal(r.ptx, '.version 8\n.entry gdn_arm_conv_f32_f32\n');
    assert.deepEqual(r.resources, parsePtxasVerbose(LOG));
    // 164 B dynamic: 100 + 4 × 16; the first entry has 1024 B static on top: 1188 → 1280 + 1 KiB → 233472 / 2304 = 101
    // blocks by shared memory; the second 164 → 256 + 1 KiB → 182. Registers: 40 → 1280 per warp → 51 warps / 8 = 6.
    assert.deepEqual(r.occupancy, [occupancy(SM_LIMITS['90'], 'gdn_arm_conv_f32_f32', 256, 40, 1188), occupancy(SM_LIMITS['90'], 'gdn_arm_conv_bf16_f32', 256, 128, 164)]);
    assert.deepEqual(r.rows, [
      { entry: 'f32_f32', registers: 40, 'spill st/ld B': '16/12', 'stack B': 24, 'static smem B': 1024, 'blocks/SM': 6, 'warps/SM': '48/64', occupancy: '75%', 'limited by': 'registers' },
      { entry: 'bf16_f32', registers: 128, 'spill st/ld B': '0/0', 'stack B': 0, 'static smem B': 0, 'blocks/SM': 2, 'warps/SM': '16/64', occupancy: '25%', 'limited by': 'registers' },
    ]);
    assert.deepEqual(r.text.split('\n'), [
      "conv arm 'reg' (built-in, compiled from its per-thread body) for sm_90: 256 threads per block, 164 B dynamic shared memory",
      'cubin k.cubin in the arm cache (compiled in 1.2 s)',
      'sm_90 limits: 65536 registers, 2048 threads, 32 blocks, 228 KiB shared memory per SM; registers allocated per warp in units of 256',
      '  gdn_arm_conv_f32_f32: 40 registers/thread → 6 blocks/SM (registers allow 6, shared memory 101, threads 8, block slots 32): 48 of 64 warps, limited by registers',
      '  gdn_arm_conv_bf16_f32: 128 registers/thread → 2 blocks/SM (registers allow 2, shared memory 182, threads 8, block slots 32): 16 of 64 warps, limited by registers',
      'SASS not available: neither cuobjdump nor nvdisasm is installed on this machine (the CUDA toolkit here has nvcc and ptxas only); registers, spills and shared memory above come from ptxas -v',
    ]);
    assert.equal(r.sass, null);
    assert.equal(spawned.length, 0);
  });

  it('a built-in arm sized from D is inspected at 128 threads; its min blocks kept; another SM; no PTX, no SASS asked', () => {
    builtin = { ...builtin, threadsFromD: true, minBlocksPerSm: 3, sharedBytes: { base: 0, perK: 0 } };
    const r = inspectArm('postconv', 'tree', { sm: '86', ptx: false, sass: false });
    assert.equal(compiles.length, 1);
    assert.deepEqual(compiles[0].defines, { GDN_ARM_THREADS: 128, GDN_ARM_MIN_BLOCKS: 3, GDN_BUILTIN: '"tree"' });
    assert.ok(String(compiles[0].source).startsWith('#include "common/arms/postconv_list.h"'));
    assert.deepEqual([r.ptx, r.sass, r.sassTool], [null, null, '']);
    assert.equal(r.text.split('\n')[0], "postconv arm 'tree' (built-in, compiled from its per-thread body) for sm_86: 128 threads per block, 0 B dynamic shared memory");
    assert.equal(r.text.split('\n')[2], 'sm_86 limits: 65536 registers, 1536 threads, 16 blocks, 100 KiB shared memory per SM; registers allocated per warp in units of 256');
    assert.equal(r.text.split('\n').length, 6);
    assert.equal(r.text.split('\n')[5], '');
  });

  it('a user arm: its own source and defines, threads from GDN_ARM_THREADS (128 without), its shared bytes; a cached cubin', () => {
    spec = { source: 'USER BODY', sharedBytes: 512 };
    defines = { GDN_ARM_THREADS: 64, X: 'y' };
    cachedCubin = true;
    const r = inspectArm('conv', 'mine');
    assert.deepEqual([compiles[0].source, compiles[0].defines, r.builtIn], ['USER BODY', { GDN_ARM_THREADS: 64, X: 'y' }, false]);
    assert.equal(r.text.split('\n')[0], "conv arm 'mine' for sm_90: 64 threads per block, 512 B dynamic shared memory");
    assert.equal(r.text.split('\n')[1], 'cubin k.cubin in the arm cache (cached)');
    spec = { source: 'USER BODY' };
    defines = undefined;
    compiles = [];
    const r2 = inspectArm('conv', 'mine', { ptx: false, sass: false });
    assert.deepEqual(compiles[0].defines, {});
    assert.equal(r2.text.split('\n')[0], "conv arm 'mine' for sm_90: 128 threads per block, 0 B dynamic shared memory");
  });

  it('an arm registered by another definition is refused', () => {
    builtin = { ...builtin, user: true };
    assert.throws(() => inspectArm('conv', 'theirs'), { name: 'TypeError', message: "arm: 'theirs' was registered by another definition than this process's (its source is unknown here)" });
  });

  it('SASS from cuobjdump when there, else nvdisasm; a failing tool is named with the first line of its error', () => {
    tools = { cuobjdump: '/t/cuobjdump', nvdisasm: '/t/nvdisasm' };
    const cubin = path.join(dir, 'k.cubin');
    let r = inspectArm('conv', 'reg', { ptx: false });
    assert.deepEqual(spawned, [['/t/cuobjdump', ['-sass', cubin], { encoding: 'utf8', maxBuffer: 1 << 26 }]]);
    assert.deepEqual([r.sass, r.sassTool], ['SASS TEXT', 'cuobjdump -sass (/t/cuobjdump)']);
    assert.equal(r.text.split('\n')[5], 'SASS: cuobjdump -sass (/t/cuobjdump)');
    tools = { nvdisasm: '/t/nvdisasm' };
    spawned = [];
    r = inspectArm('conv', 'reg', { ptx: false });
    assert.deepEqual(spawned, [['/t/nvdisasm', ['-c', cubin], { encoding: 'utf8', maxBuffer: 1 << 26 }]]);
    assert.deepEqual([r.sass, r.sassTool], ['SASS TEXT', 'nvdisasm -c (/t/nvdisasm)']);
    spawnResult = { status: 1, stdout: 'partial', stderr: '  bad cubin\nsecond line' };
    r = inspectArm('conv', 'reg', { ptx: false });
    assert.deepEqual([r.sass, r.sassTool], [null, 'SASS not available: /t/nvdisasm failed: bad cubin']);
    assert.equal(r.text.split('\n')[5], 'SASS not available: /t/nvdisasm failed: bad cubin');
    tools = { cuobjdump: '/t/cuobjdump' };
    spawnResult = { status: null, stdout: '', stderr: null };
    r = inspectArm('conv', 'reg', { ptx: false });
    assert.equal(r.sassTool, 'SASS not available: /t/cuobjdump failed: ');
  });

  it('the display: a table and the account, listings folded and cut at LISTING_LINES, none of it enumerable', () => {
    tools = { cuobjdump: '/t/cuobjdump' };
    spawnResult = { status: 0, stdout: Array.from({ length: LISTING_LINES + 1 }, (_, i) => `s${i}`).join('\n'), stderr: '' };
    fs.writeFileSync(ptxFile, Array.from({ length: LISTING_LINES }, (_, i) => `p<${i}>`).join('\n'));
    const r = inspectArm('conv', 'reg');
    assert.deepEqual(Object.keys(r), ['op', 'arm', 'builtIn', 'sm', 'cubin', 'cached', 'compileMs', 'resources', 'occupancy', 'ptx', 'sass', 'sassTool', 'rows', 'text']);
    const bundle = (r as unknown as Record<symbol, () => MimeBundle>)[MIME_BUNDLE]();
    const html = String(bundle.data['text/html']);
    const parts = html.split('\n');
    assert.equal(parts[0], '<div class="gdnlab-inspect">');
    assert.equal(parts[parts.length - 1], '</div>');
    assert.ok(html.includes('conv arm &#39;reg&#39; on sm_90: registers, spills, shared memory, occupancy per entry</caption>'), html.slice(0, 400));
    assert.ok(html.includes('<th>limited by</th>'));
    assert.ok(html.includes('<pre style="font-size:smaller">conv arm &#39;reg&#39; (built-in, compiled from its per-thread body) for sm_90: 256 threads'));
    assert.ok(html.includes(`<details><summary>PTX (${LISTING_LINES} lines)</summary><pre style="font-size:smaller;max-height:30em;overflow:auto">p&lt;0&gt;\n`));
    assert.ok(html.includes(`p&lt;${LISTING_LINES - 1}&gt;</pre></details>`));
    assert.ok(html.includes(`<details><summary>SASS (${LISTING_LINES + 1} lines)</summary>`));
    assert.ok(html.includes(`s${LISTING_LINES - 1}\n… 1 more lines (the whole listing is in the report&#39;s .sass)</pre></details>`));
    assert.ok(!html.includes(`s${LISTING_LINES}\n`));
    const plain = String(bundle.data['text/plain']);
    assert.equal(String(r), plain);
    assert.equal(util.inspect(r), plain);
    const lines = plain.split('\n');
    assert.match(lines[0], /^entry +registers +spill st\/ld B/);
    assert.equal(lines[lines.length - 1], `PTX ${LISTING_LINES} lines (.ptx); SASS ${LISTING_LINES + 1} lines (.sass)`);
    assert.ok(plain.includes(r.text));
  });

  it('the display cuts a listing of long lines at the last line end within LISTING_CHARS (SASS lines carry their encodings)', () => {
    tools = { cuobjdump: '/t/cuobjdump' };
    // 300 lines of 100 characters with their line ends: 240 fit in 24,000 characters.
    const row = (i: number) => `s${String(i).padStart(3, '0')}`.padEnd(99, '.');
    spawnResult = { status: 0, stdout: Array.from({ length: 300 }, (_, i) => row(i)).join('\n'), stderr: '' };
    fs.writeFileSync(ptxFile, 'p'.repeat(LISTING_CHARS + 5));  // one line longer than the cap: cut inside it
    const html = String((inspectArm('conv', 'reg') as unknown as Record<symbol, () => MimeBundle>)[MIME_BUNDLE]().data['text/html']);
    assert.equal(LISTING_CHARS, 24_000);
    assert.ok(html.includes(`${row(239)}\n… 60 more lines (the whole listing is in the report&#39;s .sass)</pre></details>`));
    assert.ok(!html.includes(row(240)));
    assert.ok(html.includes(`overflow:auto">${'p'.repeat(LISTING_CHARS)}\n… 1 more lines (the whole listing is in the report&#39;s .ptx)</pre>`));
  });

  it('the display without listings says why, and a report without entries still has a table', () => {
    replace(compile, 'compileModule', (req: Record<string, unknown>) => ({ file: path.join(dir, 'k.cubin'), cached: true, compileMs: 0, log: '', target: req.target }));
    const r = inspectArm('conv', 'reg', { ptx: false });
    const html = String((r as unknown as Record<symbol, () => MimeBundle>)[MIME_BUNDLE]().data['text/html']);
    assert.ok(html.includes('<p><i>PTX:</i> not kept (inspectArm(…, { ptx: false }))</p>'));
    assert.ok(html.includes('<p><i>SASS:</i> SASS not available: neither cuobjdump nor nvdisasm is installed'));
    assert.ok(html.includes('<th>entry</th>'));
    const plain = String(r).split('\n');
    assert.equal(plain[0], 'entry');
    assert.ok(plain[plain.length - 1].startsWith('PTX not kept; SASS not available: neither cuobjdump'));
  });
});
