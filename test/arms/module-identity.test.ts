// A user arm's compiled modules are what their definition says, never a stale file (docs/USER-ARMS.md,
// "Compiling"): the module key covers every header the compiler read (its own -MD list, or for NVRTC every
// file of the include folders), so an edit to any header a module includes, however deep, is a rebuild;
// re-defining a timed arm replaces its timing module too, so the timed launch runs the new body (checked on
// the bits the timed launch wrote); and host modules are built with the built-in arms' host replay flags,
// which are part of the key.
//
// Headers are edited in a temporary copy of cuda/ that the compiler is pointed at with GDNLAB_CUDA_SOURCE.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Tensor } from '../../lib/tensor';
import * as conv from '../../lib/ops/conv';
import { convMatrix, makeConvInputs } from '../../lib/check/conv';
import { countBitMismatches } from '../../lib/analysis/bits';
import { timeArms } from '../../lib/check/timed';
import { buildRecipe, compileModule, CompileRequest, cudaSourceDir, parseDepFile } from '../../lib/arms/compile';
import { undefineArm } from '../../lib/arms/define';
import { nvrtcLibrary } from '../../lib/arms/nvrtc';
import { gdnLib, projectRoot } from '../../lib/native/gdn';
import { forEachBackend, testBackendKinds } from '../backends';
import { REG16_SOURCE, TILE_TREE_SOURCE } from './sources';

/** Replaces the one occurrence of `from` in `text` (a stale edit fails loudly). */
function once(text: string, from: string, to: string): string {
  assert.equal(text.split(from).length, 2, `'${from}' must occur once`);
  return text.replace(from, to);
}

const STORE = 'out_store<TO>(p, tok, c, gdn_silu(acc));';
/** reg16 storing -silu: other bits than reg16 wherever the output is not zero. */
const NEGATED_SOURCE = once(REG16_SOURCE, STORE, 'out_store<TO>(p, tok, c, -gdn_silu(acc));');
/** reg16 whose store depends on a macro only an edited header defines. */
const HEADER_DEPENDENT_SOURCE = once(REG16_SOURCE, STORE, `#ifdef GDN_TEST_EDITED_HEADER
    out_store<TO>(p, tok, c, -gdn_silu(acc));
#else
    ${STORE}
#endif`);

const saved = { cache: process.env.GDNLAB_ARM_CACHE, source: process.env.GDNLAB_CUDA_SOURCE, compiler: process.env.GDNLAB_CUDA_COMPILER };
let scratch = '';
let cudaCopy = '';
before(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-module-identity-'));
  process.env.GDNLAB_ARM_CACHE = path.join(scratch, 'cache');
  cudaCopy = path.join(scratch, 'cuda');
  for (const sub of ['include', 'src']) fs.cpSync(path.join(projectRoot(), 'cuda', sub), path.join(cudaCopy, sub), { recursive: true });
});
after(() => {
  for (const [k, v] of [['GDNLAB_ARM_CACHE', saved.cache], ['GDNLAB_CUDA_SOURCE', saved.source], ['GDNLAB_CUDA_COMPILER', saved.compiler]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** Runs f with the compiler pointed at the temporary copy of cuda/. */
function inCopy<T>(f: () => T): T {
  process.env.GDNLAB_CUDA_SOURCE = cudaCopy;
  try {
    return f();
  } finally {
    if (saved.source === undefined) delete process.env.GDNLAB_CUDA_SOURCE;
    else process.env.GDNLAB_CUDA_SOURCE = saved.source;
  }
}

/** Appends `line` to a file of the copy, runs f (awaited), and puts the file back as it was. */
function withEdit<T>(file: string, line: string, f: () => T): T;
function withEdit<T>(file: string, line: string, f: () => Promise<T>): Promise<T>;
function withEdit<T>(file: string, line: string, f: () => T | Promise<T>): T | Promise<T> {
  const before = fs.readFileSync(file);
  fs.appendFileSync(file, `\n${line}\n`);
  let result: T | Promise<T>;
  try {
    result = f();
  } catch (e) {
    fs.writeFileSync(file, before);
    throw e;
  }
  if (result instanceof Promise) return result.finally(() => fs.writeFileSync(file, before));
  fs.writeFileSync(file, before);
  return result;
}

describe('user arms: module identity', function () {
  this.timeout(600_000);

  describe('the module key', () => {
    it('GDNLAB_CUDA_SOURCE points the compiler at a copy of cuda/, and a bad one is refused by name', () => {
      assert.equal(cudaSourceDir(), path.join(projectRoot(), 'cuda'));
      assert.equal(inCopy(() => cudaSourceDir()), cudaCopy);
      process.env.GDNLAB_CUDA_SOURCE = scratch;
      try {
        assert.throws(() => cudaSourceDir(), /GDNLAB_CUDA_SOURCE: expected a copy of gdnlab's cuda\/ folder \(with include\/gdn\.h\)/);
      } finally {
        delete process.env.GDNLAB_CUDA_SOURCE;
      }
    });

    it('reads make rules as compilers write them (continuations, escaped spaces)', () => {
      assert.deepEqual(parseDepFile('/t/a.so: /t/a.cpp /x/y.h \\\n /x/with\\ space.h\n/x/y.h:\n'), ['/t/a.cpp', '/x/y.h', '/x/with space.h']);
      assert.deepEqual(parseDepFile(''), []);
    });

    it('an edit to ANY header a post-conv host module includes (nested ones too) is a rebuild; undoing it finds the first module again', () => {
      const req: CompileRequest = { op: 'postconv', name: 'tile16-key', source: TILE_TREE_SOURCE, defines: { GDN_ARM_THREADS: 128 }, target: 'host' };
      const first = inCopy(() => compileModule(req));
      assert.equal(first.cached, false);
      const mine = first.dependencies.filter((f) => f.startsWith(cudaCopy + path.sep)).map((f) => path.relative(cudaCopy, f)).sort();
      // The compiler's list, not a folder listing: the nested headers the issue found missing are in it, and
      // headers the module does not include are not.
      for (const h of ['src/common/arms/postconv_common.h', 'src/common/arms/arm_spec.h', 'src/user/prelude.h', 'src/user/entry_postconv.h', 'include/gdn.h']) assert.ok(mine.includes(h), `${h} is listed: ${mine.join(', ')}`);
      assert.ok(!mine.includes('src/common/arms/conv_vec.h') && !mine.includes('src/user/entry_conv.h'), `only what the module includes: ${mine.join(', ')}`);
      assert.ok(first.dependencies.some((f) => !f.startsWith(cudaCopy)), 'the standard library headers are listed too');
      for (const rel of mine) {
        const edited = withEdit(path.join(cudaCopy, rel), `// edited by the module-identity test: ${rel}`, () => inCopy(() => compileModule(req)));
        assert.equal(edited.cached, false, `after an edit to ${rel} the module must be rebuilt, not found cached`);
        assert.notEqual(edited.key, first.key, rel);
      }
      const again = inCopy(() => compileModule(req));
      assert.equal(again.cached, true, 'every header as it was: the first module again');
      assert.equal(again.file, first.file);
    });

    it('an edit to a nested header is a rebuild for CUDA too (nvcc -MD, and NVRTC, keyed by its whole include tree)', function () {
      const compilers = [buildRecipe().nvcc ? 'nvcc' : '', nvrtcLibrary() ? 'nvrtc' : ''].filter(Boolean);
      if (compilers.length === 0) this.skip();
      const header = path.join(cudaCopy, 'src', 'common', 'arms', 'postconv_common.h');
      for (const compiler of compilers) {
        process.env.GDNLAB_CUDA_COMPILER = compiler;
        try {
          const req: CompileRequest = { op: 'postconv', name: `tile16-${compiler}`, source: TILE_TREE_SOURCE, defines: { GDN_ARM_THREADS: 128 }, target: 'cuda', sm: '90' };
          const first = inCopy(() => compileModule(req));
          assert.ok(inCopy(() => compileModule(req)).cached, `${compiler}: unchanged is a cache hit`);
          const edited = withEdit(header, '// edited by the module-identity test', () => inCopy(() => compileModule(req)));
          assert.equal(edited.cached, false, `${compiler}: an edit to postconv_common.h must rebuild the cubin`);
          assert.notEqual(edited.key, first.key);
        } finally {
          delete process.env.GDNLAB_CUDA_COMPILER;
        }
      }
    });
  });

  describe('host modules are built with the built-in arms\' host replay flags', () => {
    it('the flags are the host replay\'s, as libgdn itself reports them, and every host module of an arm carries them', () => {
      // libgdn's compiled-in build facts name the flags its host replay was compiled with.
      const info = String(gdnLib().buildInfo());
      const replay = /host_replay_flags=([^;]*)/.exec(info)?.[1].trim().split(/\s+/).filter(Boolean);
      assert.ok(replay && replay.length > 0, `libgdn's build facts name its replay flags: ${info}`);
      const r = buildRecipe();
      assert.deepEqual(r.hostReplayFlags, replay);
      const optLevel = (flags: string[]) => flags.filter((f) => /^-O/.test(f)).pop();
      assert.equal(optLevel(r.hostModuleFlags), optLevel(replay), 'the last -O decides: the replay\'s');
      for (const f of replay.filter((x) => x.startsWith('-m'))) assert.ok(r.hostModuleFlags.includes(f), `${f} is in ${r.hostModuleFlags.join(' ')}`);
      for (const f of ['-ffp-contract=off', '-fno-fast-math']) assert.ok(r.hostModuleFlags.includes(f), `${f}: libgdn's floating point`);
      for (const target of ['host', 'host-fast'] as const) {
        const m = compileModule({ op: 'conv', name: 'reg16-flags', source: REG16_SOURCE, defines: { GDN_ARM_THREADS: 128 }, target });
        assert.deepEqual(m.flags.slice(0, r.hostModuleFlags.length), r.hostModuleFlags, target);
      }
    });

    it('the flags are part of the key: other flags, another module', () => {
      const req: CompileRequest = { op: 'conv', name: 'reg16-flags', source: REG16_SOURCE, defines: { GDN_ARM_THREADS: 128 }, target: 'host-fast' };
      const r = buildRecipe();
      const first = compileModule(req);
      const o1 = { ...r, hostModuleFlags: r.hostModuleFlags.map((f) => (/^-O[0-9s]$/.test(f) ? '-O1' : f)) };
      const other = compileModule(req, o1);
      assert.equal(other.cached, false, 'a module of other flags is not the cached one');
      assert.notEqual(other.file, first.file);
      assert.ok(compileModule(req).cached, 'the recipe\'s own flags find their module again');
    });

    it('the defines are part of the key: another GDN_ARM_THREADS (threadsPerBlock), another module', () => {
      // On the host the thread count changes no arithmetic, so only the key can tell the modules apart; on CUDA it is
      // the kernel's __launch_bounds__, and a stale cubin would be launched with more threads than it was built for.
      const req: CompileRequest = { op: 'conv', name: 'reg16-defines', source: REG16_SOURCE, defines: { GDN_ARM_THREADS: 128 }, target: 'host-fast' };
      const first = compileModule(req);
      const other = compileModule({ ...req, defines: { GDN_ARM_THREADS: 256 } });
      assert.equal(other.cached, false, 'a module of other defines is not the cached one');
      assert.notEqual(other.file, first.file);
      assert.ok(compileModule(req).cached, 'the first defines find their module again');
    });
  });
});

forEachBackend((backend, kind) => {
  describe('user arms: a re-defined arm runs its new definition, checked and timed', function () {
    this.timeout(600_000);
    // No initial states: every timed launch then computes the same outputs (a timed launch writes the final
    // state into the op's state copy, which the next launch would read as its initial state).
    const c = { ...convMatrix({ quick: true }).find((x) => x.C === 1024 && x.K === 4 && x.outDtype === 'f32')!, initialState: null };
    const inputs = makeConvInputs(c);
    const T = c.lengths.reduce((a, b) => a + b, 0);
    const names: string[] = [];
    after(() => {
      for (const n of names) undefineArm('conv', n);
    });

    /** forward (the checked module) of `arm` on the case. */
    const forward = (arm: string) => conv.forwardSync(inputs, { arm, mapping: arm === 'scalar' ? 'sequence' : 'exact', outDtype: c.outDtype, backend: backend() });
    /** What the timed launches of `arm` wrote (the timing module: unchecked on the host, the cubin on CUDA). */
    async function timedOut(arm: string): Promise<Tensor> {
      const out = Tensor.empty([T, c.C], c.outDtype, { backend: backend() });
      const op = conv.prepareTimed(inputs, { arm, mapping: 'exact', outDtype: c.outDtype, backend: backend(), out: { out } }, arm);
      try {
        await timeArms([{ label: arm, op }], { backend: backend(), warmupMs: 1, minSamples: 2, minTimeMs: 0.001, noiseTarget: 1, maxSamples: 3, maxTimeMs: 60000, progress: false });
      } finally {
        op.release();
      }
      return out;
    }
    function same(a: Tensor, b: Tensor, what: string): void {
      assert.equal(countBitMismatches(a, b), 0, what);
    }

    it('re-defining a timed arm with another body (a new spec, or the same spec object edited) times the new body', async () => {
      names.push('retimed');
      const reference = forward('scalar');
      const negated = (() => {
        conv.defineArm({ name: 'retimed', source: NEGATED_SOURCE, tokensPerProgram: 16 }, { backend: backend() });
        return forward('retimed');
      })();
      assert.ok(countBitMismatches(negated.out, reference.out) > T * c.C / 4, 'the two bodies give other bits');

      const spec = { name: 'retimed', source: REG16_SOURCE, tokensPerProgram: 16 };
      conv.defineArm(spec, { backend: backend() });
      same(forward('retimed').out, reference.out, 'reg16 forward equals scalar');
      same(await timedOut('retimed'), reference.out, 'reg16 timed equals scalar');

      const b = conv.defineArm({ ...spec, source: NEGATED_SOURCE }, { backend: backend() });
      assert.match(b.summary, /replaced/);
      same(forward('retimed').out, negated.out, 'forward runs the new body');
      same(await timedOut('retimed'), negated.out, 'the timed launch runs the new body, not the old timing module');

      // A notebook edits its spec object and defines it again.
      spec.source = NEGATED_SOURCE;
      conv.defineArm(spec, { backend: backend() });
      spec.source = REG16_SOURCE;
      conv.defineArm(spec, { backend: backend() });
      same(await timedOut('retimed'), reference.out, 'back to reg16: timed equals scalar');
      spec.source = NEGATED_SOURCE;
      conv.defineArm(spec, { backend: backend() });
      same(forward('retimed').out, negated.out, 'the edited spec object: forward runs its new body');
      same(await timedOut('retimed'), negated.out, 'the edited spec object: the timed launch runs its new body');
      // On the host a timed arm's re-definition compiles (or finds) its timing module at once.
      if (kind === 'host') assert.ok(b.modules.some((m) => m.target === 'host-fast'), `the timing module is one of the definition's: ${b.summary}`);
    });

    it('an edit to a nested header (postconv_common.h) re-defines the arm as a rebuild whose checked and timed launches run the edited code', async () => {
      names.push('hdr');
      const reference = forward('scalar');
      const header = path.join(cudaCopy, 'src', 'common', 'arms', 'postconv_common.h');
      const spec = { name: 'hdr', source: HEADER_DEPENDENT_SOURCE, tokensPerProgram: 16 };
      const first = inCopy(() => conv.defineArm(spec, { backend: backend() }));
      assert.equal(first.cached, false);
      same(forward('hdr').out, reference.out, 'the header unedited: reg16');
      same(await timedOut('hdr'), reference.out, 'the header unedited: reg16 timed');
      await withEdit(header, '#define GDN_TEST_EDITED_HEADER 1', async () => {
        const edited = inCopy(() => conv.defineArm(spec, { backend: backend() }));
        const f = forward('hdr');
        assert.ok(countBitMismatches(f.out, reference.out) > T * c.C / 4, 'forward runs the edited header\'s code');
        same(await timedOut('hdr'), f.out, 'the timed launch runs the edited header\'s code');
        // Every module is another one than before the edit. A cache hit is right here only where the same edited
        // module exists already: the [host] pass builds the host modules the [cuda] pass then finds.
        const before = new Map(first.modules.map((m) => [m.target, m.file]));
        for (const m of edited.modules) assert.notEqual(m.file, before.get(m.target), `the ${m.target} module after the header edit is a new one: ${edited.summary}`);
        if (testBackendKinds()[0] === kind) assert.ok(edited.modules.every((m) => !m.cached), `every module rebuilt after the header edit: ${edited.summary}`);
      });
      const back = inCopy(() => conv.defineArm(spec, { backend: backend() }));
      assert.ok(back.cached, `the header as it was: every module from the cache (${back.summary})`);
      same(await timedOut('hdr'), reference.out, 'and timed it is reg16 again');
    });
  });
});
