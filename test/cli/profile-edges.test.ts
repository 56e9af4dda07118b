// `gdnlab profile conv|postconv|fused` in process (lib/cli/profile.ts): what reaches syntheticInputs and profile()
// for each flag (both replaced by recorders: no ncu, no launch), the text and JSON output, the exit status (0
// profiled, 3 not), and the messages of --arms and --tokens.

import { strict as assert } from 'assert';
import { profileConvCommand } from '../../lib/cli/profile';
import { Stubs, captured, cli, fakeBackend, fakeBackends, fakeDefine, usageError } from './edges-helpers';

const profileLib = require('../../lib/profile/profile') as Record<string, unknown>;
const shapesLib = require('../../lib/profile/shapes') as Record<string, unknown>;

interface Call { op: string; inputs: unknown; opts: Record<string, unknown> }

const NOT_PROFILED = {
  profiled: false, unavailable: 'ncu was not found', minimalBytes: 1234, copyGBs: null, device: 'host device', analysis: null,
  plan: [{ arm: 'scalar', ran: 'scalar', launch: 'grid', registers: 'n/a', spills: 'n/a', occupancy: 'n/a' }], csvFile: null, reportFile: null, text: 'the plan as text',
};
const PROFILED = {
  ...NOT_PROFILED, profiled: true, unavailable: null, copyGBs: 900.5, analysis: { rows: [{ arm: 'tree', dramBytes: 10 }], missing: ['sm__cycles'] },
  csvFile: '/t/p.csv', reportFile: '/t/p.ncu-rep', text: 'the profile as text',
};

describe('gdnlab profile, in process', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());

  /** profile() and syntheticInputs() replaced; profile() answers `result`. */
  const recorded = (result: object) => {
    const calls: Call[] = [];
    const shapes: [string, number][] = [];
    stubs.set(shapesLib, 'syntheticInputs', (op: string, T: number) => (shapes.push([op, T]), { inputs: { x: `${op} T=${T}` }, forward: { mapping: 'exact', T, arms: 'overridden', show: true } }));
    stubs.set(profileLib, 'profile', async (op: string, inputs: unknown, opts: Record<string, unknown>) => (calls.push({ op, inputs, opts }), result));
    return { calls, shapes };
  };

  it('conv --json: the arms split at commas (blanks dropped), 8192 tokens by default, the active backend; exit 3 when not profiled', async () => {
    const active = fakeBackend('host');
    fakeBackends(stubs, active);
    const { calls, shapes } = recorded(NOT_PROFILED);
    const r = await cli(['profile', 'conv', '--arms', ' scalar, vec/exact,,', '--json']);
    assert.equal(r.status, 3, r.err);
    assert.deepEqual(shapes, [['conv', 8192]]);
    assert.deepEqual(calls, [{ op: 'conv', inputs: { x: 'conv T=8192' }, opts: { mapping: 'exact', T: 8192, arms: ['scalar', 'vec/exact'], backend: active, ncu: undefined, show: false } }]);
    assert.equal(r.out, JSON.stringify({
      op: 'conv', tokens: 8192, profiled: false, unavailable: 'ncu was not found', minimalBytes: 1234, copyGBs: null, device: 'host device',
      rows: null, missing: null, plan: NOT_PROFILED.plan, csv: null, report: null,
    }, null, 2) + '\n');
  });

  it('postconv --tokens 1 --ncu PATH --backend cuda: each reaches profile(); the text printed, exit 0 when profiled', async () => {
    const backends = fakeBackends(stubs);
    const { calls, shapes } = recorded(PROFILED);
    const r = await cli(['profile', 'postconv', '--arms', 'tree', '--tokens', '1', '--ncu', '/opt/ncu', '--backend', 'cuda']);
    assert.equal(r.status, 0, r.err);
    assert.equal(r.out, 'the profile as text\n');
    assert.deepEqual(shapes, [['postconv', 1]]);
    assert.deepEqual(backends.opened.map((b) => b.kind), ['cuda']);
    assert.equal(backends.activeCalls, 0);
    assert.deepEqual(calls[0].opts, { mapping: 'exact', T: 1, arms: ['tree'], backend: backends.opened[0], ncu: '/opt/ncu', show: false });
  });

  it('fused --json with a profile: its rows, missing metrics, CSV and report files; the largest token count', async () => {
    fakeBackends(stubs, fakeBackend('cuda'));
    const { calls, shapes } = recorded(PROFILED);
    const r = await cli(['profile', 'fused', '--arms', 'chunk', '--tokens', String(1 << 20), '--json']);
    assert.equal(r.status, 0, r.err);
    assert.deepEqual(shapes, [['fused', 1 << 20]]);
    assert.equal(calls[0].op, 'fused');
    assert.deepEqual(JSON.parse(r.out), {
      op: 'fused', tokens: 1 << 20, profiled: true, unavailable: null, minimalBytes: 1234, copyGBs: 900.5, device: 'host device',
      rows: PROFILED.analysis.rows, missing: ['sm__cycles'], plan: PROFILED.plan, csv: '/t/p.csv', report: '/t/p.ncu-rep',
    });
  });

  it('--define FILE defines the arms on the backend profiled', async () => {
    const active = fakeBackend('host');
    fakeBackends(stubs, active);
    const defined = fakeDefine(stubs);
    const { calls } = recorded(NOT_PROFILED);
    const r = await cli(['profile', 'conv', '--arms', 'reg16', '--define', 'reg16.json']);
    assert.equal(r.status, 3);
    assert.equal(r.out, 'the plan as text\n');
    assert.deepEqual(defined, [{ files: 'reg16.json', backend: active }]);
    assert.equal(calls[0].opts.backend, active);
    assert.equal(r.err, 'gdnlab: defined reg16.json\n');
  });

  it('--help ends with what it needs and what it shows elsewhere (exit 3); nothing runs', async () => {
    for (const op of ['conv', 'postconv', 'fused']) {
      const r = await cli(['profile', op, '--help']);
      assert.equal(r.status, 0);
      assert.equal(r.out.split('\n').slice(-3).join('\n'), "\nNeeds the CUDA backend on an NVIDIA GPU and ncu; elsewhere it says what is missing and shows each arm's launch and the op's minimal traffic (exit 3).\n");
    }
  });

  it('a Parsed made by hand with --ncu as a bare switch: no ncu path is passed (only a string is one)', async () => {
    fakeBackends(stubs, fakeBackend('host'));
    const { calls } = recorded(NOT_PROFILED);
    const flags = new Map<string, string | true>([['arms', 'vec'], ['ncu', true]]);
    assert.equal((await captured(() => profileConvCommand.run({ flags, all: new Map(), operands: [] }))).status, 3);
    assert.equal(calls[0].opts.ncu, undefined);
  });

  it('--arms missing or blank, --tokens out of 1..2^20 or not a whole number: usage errors naming the flag, nothing profiled', async () => {
    const backends = fakeBackends(stubs, fakeBackend('host'));
    const { calls } = recorded(PROFILED);
    const arms = '--arms: expected the arms to profile, e.g. --arms scalar,vec,stream-mufu';
    assert.equal(usageError(await cli(['profile', 'conv']), 'profile conv'), `gdnlab: ${arms}`);
    assert.equal(usageError(await cli(['profile', 'postconv', '--arms', '  ']), 'profile postconv'), `gdnlab: ${arms}`);
    for (const t of ['0', String((1 << 20) + 1), '1.5', 'many', '-3']) {
      const r = await cli(['profile', 'fused', '--arms', 'chunk', `--tokens=${t}`]);
      assert.equal(usageError(r, 'profile fused'), `gdnlab: --tokens: expected an integer in 1..1048576, got ${t}`);
    }
    assert.deepEqual([calls.length, backends.activeCalls], [0, 0]);
  });
});
