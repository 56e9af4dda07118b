// lib/arms/file.ts (`--define FILE[,FILE]`) with defineConvArm / definePostconvArm replaced by a
// recorder, so no module is compiled: what each spec becomes (op and sourceFile taken out, the source
// read relative to the definition file), the backend passed on, the order, and every refusal with
// the exact words the command line prints (file and spec index named).

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Backend } from '../../lib/backend';
import { defineArmsFromFiles } from '../../lib/arms/file';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const define = require('../../lib/arms/define') as { defineConvArm: unknown; definePostconvArm: unknown };

describe('arm definitions from files: edges (no compile)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-file-edges-'));
  const backend = { kind: 'stand-in' } as unknown as Backend;
  let calls: { op: string; spec: Record<string, unknown>; opts: unknown }[];
  let fail: unknown;
  const saved = { conv: define.defineConvArm, post: define.definePostconvArm };
  beforeEach(() => {
    calls = [];
    fail = undefined;
    const rec = (op: string) => (spec: Record<string, unknown>, opts: unknown) => {
      calls.push({ op, spec, opts });
      if (fail !== undefined) throw fail;
      return { op, name: spec.name };
    };
    define.defineConvArm = rec('conv');
    define.definePostconvArm = rec('postconv');
  });
  afterEach(() => {
    define.defineConvArm = saved.conv;
    define.definePostconvArm = saved.post;
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, text);
    return f;
  };

  it('JSON and CommonJS files, lists and single specs, in order; op and sourceFile are not passed on', () => {
    write('body.cu', 'BODY\n');
    const a = write('a.json', JSON.stringify([{ op: 'conv', name: 'c1', source: 'S1' }, { op: 'postconv', name: 'p1', sourceFile: 'body.cu', requiresD128: false }]));
    const b = write('b.JS', "module.exports = { op: 'conv', name: 'c2', source: 'S2', mappings: ['exact'] };");
    const c = write('c.cjs', "module.exports = { default: { op: 'postconv', name: 'p2', source: 'S3' } };");
    const got = defineArmsFromFiles(` ${a}, ,${b},${c} ,`, backend);
    assert.deepEqual(got, [{ op: 'conv', name: 'c1' }, { op: 'postconv', name: 'p1' }, { op: 'conv', name: 'c2' }, { op: 'postconv', name: 'p2' }]);
    assert.deepEqual(calls, [
      { op: 'conv', spec: { name: 'c1', source: 'S1' }, opts: { backend } },
      { op: 'postconv', spec: { name: 'p1', source: 'BODY\n', requiresD128: false }, opts: { backend } },
      { op: 'conv', spec: { name: 'c2', source: 'S2', mappings: ['exact'] }, opts: { backend } },
      { op: 'postconv', spec: { name: 'p2', source: 'S3' }, opts: { backend } },
    ]);
    assert.deepEqual(defineArmsFromFiles(' , ', backend), []);
  });

  it('a relative path is taken from the working folder and named as given', () => {
    const f = write('rel.json', JSON.stringify({ op: 'conv', name: 'r', source: 'S' }));
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      assert.deepEqual(defineArmsFromFiles('rel.json', backend), [{ op: 'conv', name: 'r' }]);
      assert.throws(() => defineArmsFromFiles('none.json', backend), { name: 'TypeError', message: '--define none.json: no such file' });
      fail = new Error('bad body');
      assert.throws(() => defineArmsFromFiles('rel.json', backend), { name: 'Error', message: '--define rel.json: bad body' });
    } finally {
      process.chdir(cwd);
    }
    assert.ok(fs.existsSync(f));
  });

  it('refuses files it cannot read as specs', () => {
    const bad = write('bad.json', '{ op: conv }');
    assert.throws(() => defineArmsFromFiles(bad, backend), (e: Error) => e instanceof TypeError && e.message.startsWith(`--define ${bad}: not valid JSON (`) && e.message.endsWith(')') && e.message.length > `--define ${bad}: not valid JSON ()`.length);
    const txt = write('spec.txt', '{}');
    assert.throws(() => defineArmsFromFiles(txt, backend), { name: 'TypeError', message: `--define ${txt}: expected a .json, .js or .cjs file holding one arm spec or a list of them` });
    const empty = write('empty.json', '[]');
    assert.throws(() => defineArmsFromFiles(empty, backend), { name: 'TypeError', message: `--define ${empty}: the file defines no arm (an empty list)` });
    const nul = write('null.cjs', 'module.exports = null;');
    assert.throws(() => defineArmsFromFiles(nul, backend), { name: 'TypeError', message: `--define ${nul}: expected an arm spec object, got null` });
    const num = write('num.json', '[{"op":"conv","name":"ok","source":"S"}, 3]');
    assert.throws(() => defineArmsFromFiles(num, backend), { name: 'TypeError', message: `--define ${num} [1]: expected an arm spec object, got 3` });
    assert.equal(calls.length, 1);
  });

  it('refuses a bad op, sourceFile or both sources, naming the spec', () => {
    const op = write('op.json', '[{"op":"fused","name":"x","source":"S"}, {"name":"y"}]');
    assert.throws(() => defineArmsFromFiles(op, backend), { name: 'TypeError', message: `--define ${op} [0]: op: expected 'conv' or 'postconv', got "fused"` });
    const noOp = write('noop.json', '{"name":"y","source":"S"}');
    assert.throws(() => defineArmsFromFiles(noOp, backend), { name: 'TypeError', message: `--define ${noOp}: op: expected 'conv' or 'postconv', got undefined` });
    const sf = write('sf.json', '{"op":"conv","name":"y","sourceFile":7}');
    assert.throws(() => defineArmsFromFiles(sf, backend), { name: 'TypeError', message: `--define ${sf}: sourceFile: expected a path relative to the file, got 7` });
    const both = write('both.json', '{"op":"conv","name":"y","sourceFile":"body.cu","source":"S"}');
    assert.throws(() => defineArmsFromFiles(both, backend), { name: 'TypeError', message: `--define ${both}: give source or sourceFile, not both` });
    const missing = write('missing.json', '{"op":"postconv","name":"y","sourceFile":"sub/none.cu"}');
    assert.throws(() => defineArmsFromFiles(missing, backend), { name: 'TypeError', message: `--define ${missing}: sourceFile: no such file ${path.join(dir, 'sub', 'none.cu')}` });
    assert.equal(calls.length, 0);
  });

  it('an error from the definition gets the file and spec in front, keeping its class; a thrown non-error passes as is', () => {
    const two = write('two.json', '[{"op":"conv","name":"a","source":"S"},{"op":"postconv","name":"b","source":"S"}]');
    class CompileError extends Error {}
    fail = new CompileError('nvcc: 2 errors');
    assert.throws(() => defineArmsFromFiles(two, backend), (e: Error) => e instanceof CompileError && e.message === `--define ${two} [0]: nvcc: 2 errors`);
    fail = 'a string';
    assert.throws(() => defineArmsFromFiles(two, backend), (e: unknown) => e === 'a string');
  });
});
