// Arm definitions from files (`--define FILE`, lib/arms/file.ts) and the benchmark's arm and shape
// selection (`--arms`, `--shapes`) and its trust in baselines: the examples in examples/arms load and register as a cell's
// defineArm would, and every malformed definition or selection is an error naming what was wrong.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Backend } from '../../lib/backend';
import { defineArmsFromFiles } from '../../lib/arms/file';
import { undefineArm } from '../../lib/arms/define';
import { arms } from '../../lib/arms/table';
import { projectRoot } from '../../lib/native/gdn';
import { baselineTrust, convBenchShapes, convTimed, selectArms, selectShapes } from '../../lib/bench/bench';

const examples = path.join(projectRoot(), 'examples', 'arms');

// The modules stay until the whole run ends: libgdn keeps every registered arm for the process, and a fresh
// worker (after another file's fault test) registers them all again from their module files.
const cacheRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-define-file-'));
after(() => fs.rmSync(cacheRoot, { recursive: true, force: true }));

describe('arm definitions from files (--define)', function () {
  this.timeout(120_000);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-define-specs-'));
  const cacheBefore = process.env.GDNLAB_ARM_CACHE;
  let host: Backend;
  const defined: { op: 'conv' | 'postconv'; name: string }[] = [];
  before(() => {
    process.env.GDNLAB_ARM_CACHE = cacheRoot;
    host = Backend.open('host');
  });
  after(() => {
    for (const d of defined) undefineArm(d.op, d.name);
    host.close();
    if (cacheBefore === undefined) delete process.env.GDNLAB_ARM_CACHE;
    else process.env.GDNLAB_ARM_CACHE = cacheBefore;
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  const write = (name: string, text: string) => {
    const f = path.join(scratch, name);
    fs.writeFileSync(f, text);
    return f;
  };

  it('loads the examples: a JSON spec with sourceFile, and a module exporting two planted defects', () => {
    const got = defineArmsFromFiles([path.join(examples, 'reg16.json'), path.join(examples, 'planted-defects.js')].join(','), host);
    for (const d of got) defined.push({ op: d.op, name: d.name });
    assert.deepEqual(got.map((d) => `${d.op}:${d.name}`), ['conv:reg16', 'conv:reg16-racy', 'postconv:tile16-seq']);
    const conv = arms('conv');
    assert.ok(conv.find((a) => a.name === 'reg16' && a.user && !a.mutant), 'reg16 is a user arm that must equal scalar');
    assert.ok(conv.find((a) => a.name === 'reg16-racy' && a.user && a.mutant), 'reg16-racy is listed as a planted defect');
    assert.ok(arms('postconv').find((a) => a.name === 'tile16-seq' && a.mutant));
    // Listings (gdnlab arms, gdn.arms) show the definition's own description.
    assert.equal(conv.find((a) => a.name === 'reg16')!.description, "the register arm with 16-token programs (the built-in reg uses 8); chunk 0 owns the final state (user arm)");
    assert.match(conv.find((a) => a.name === 'reg16-racy')!.description, /the #305 shape \(user arm, PLANTED DEFECT\)$/);
    assert.match(got[1].summary, /PLANTED DEFECT/);
    // The benchmark times the defined arms with the built-ins.
    assert.ok(convTimed().some((a) => a.arm === 'reg16' && a.note === 'user arm (defineArm)'));
    assert.ok(convTimed().some((a) => a.arm === 'reg16-racy' && /^PLANTED DEFECT/.test(a.note ?? '')));
  });

  it('an undefined arm leaves the listings (its libgdn id stays for the process)', () => {
    const [d] = defineArmsFromFiles(write('gone.json', JSON.stringify({ op: 'conv', name: 'gone16', sourceFile: path.join(examples, 'reg16.cuh'), tokensPerProgram: 16 })), host);
    assert.ok(arms('conv').some((a) => a.name === 'gone16'));
    assert.ok(undefineArm('conv', d.name));
    assert.ok(!arms('conv').some((a) => a.name === 'gone16'));
    assert.ok(!convTimed().some((a) => a.arm === 'gone16'));
  });

  it('rejects malformed definitions with the file and the field named', () => {
    const cases: [string, RegExp][] = [
      [path.join(scratch, 'missing.json'), /--define .*missing\.json: no such file/],
      [write('bad.txt', '{}'), /expected a \.json, \.js or \.cjs file/],
      [write('broken.json', '{ "op": '), /not valid JSON/],
      [write('empty.json', '[]'), /defines no arm/],
      [write('noop.json', JSON.stringify({ name: 'x1', source: 'x' })), /op: expected 'conv' or 'postconv', got undefined/],
      [write('both.json', JSON.stringify({ op: 'conv', name: 'x2', source: 'x', sourceFile: 'y.cuh' })), /give source or sourceFile, not both/],
      [write('nosrc.json', JSON.stringify({ op: 'conv', name: 'x3', sourceFile: 'absent.cuh' })), /sourceFile: no such file/],
      [write('list.json', JSON.stringify([{ op: 'conv', name: 'x4', source: 'x', threadsPerBlock: 0 }])), /list\.json: arm .x4.: threadsPerBlock: expected an integer in 1\.\.1024, got 0/],
      [write('planted.json', JSON.stringify({ op: 'conv', name: 'x5', source: 'x', plantedDefect: '' })), /plantedDefect: expected a sentence/],
    ];
    for (const [file, re] of cases) assert.throws(() => defineArmsFromFiles(file, host), re, file);
  });
});

describe('benchmark selection (--arms, --shapes)', () => {
  const backend = undefined as unknown as Backend;  // selection reads no device
  it('picks arms by name or arm/mapping and shapes by a part of their name', () => {
    const timed = convTimed();
    const picked = selectArms(timed, { backend, arms: ['scalar', 'vec/exact'] });
    assert.deepEqual(picked.map((a) => `${a.arm}/${a.mapping}`), ['scalar/sequence', 'vec/exact']);
    assert.deepEqual(selectArms(timed, { backend }), timed, 'no filter: every timed arm');
    const shapes = selectShapes(convBenchShapes(), { backend, shapes: ['27B T=8192', 'varlen'] });
    assert.deepEqual(shapes.map((s) => s.id.replace(/ varlen.*/, ' varlen')), ['Qwen3.5-4B varlen', 'Qwen3.5-27B T=8192', 'Qwen3.5-27B varlen']);
  });
  it('a selection that matches nothing is an error listing the choices', () => {
    assert.throws(() => selectArms(convTimed(), { backend, arms: ['vec/racy'] }), /arms: 'vec\/racy' is not a timed arm; expected one of scalar, .*vec\/exact/);
    assert.throws(() => selectShapes(convBenchShapes(), { backend, shapes: ['T=4'] }), /shapes: \["T=4"\] match none of 'Qwen3.5-4B T=512'/);
  });
});

describe('benchmark baselines: a time is set beside ours only when the baseline did the work', () => {
  it('needs a passed output check and a time not below a copy of the same traffic', () => {
    assert.deepEqual(baselineTrust({ x_copy: 1.3, check: { ok: true } }).ok, true);
    // The vLLM harness once mapped sequence 0 to vLLM's null state slot: the kernel returned at once.
    const skipped = baselineTrust({ x_copy: 0.4, check: { ok: false, max_excess_err: 3.2 } });
    assert.equal(skipped.ok, false);
    assert.match(skipped.note, /output check FAILED \(max excess error 3\.2\); 0\.40× its copy is BELOW THE COPY FLOOR/);
    assert.match(baselineTrust({ x_copy: 1.2 }).note, /outputs not checked/);
    assert.match(baselineTrust({ x_copy: 1.2, check: { ok: false, error: 'TypeError: x' } }).note, /output check FAILED \(TypeError: x\)/);
  });
});
