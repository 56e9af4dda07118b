// `gdnlab arms` in process (lib/cli/arms.ts): the listing of each op family from a made-up arm table that reaches
// every branch of the launch-contract line, --json, --define with and without --backend, and one real listing.

import { strict as assert } from 'assert';
import { ArmInfo, ARM_OPS } from '../../lib/arms/table';
import { Stubs, cli, fakeBackend, fakeBackends, fakeDefine, lines } from './edges-helpers';

const table = require('../../lib/arms/table') as Record<string, unknown>;
const backendModule = require('../../lib/backend') as Record<string, unknown>;

const base: ArmInfo = {
  op: 'conv', id: 0, name: 'scalar', description: 'one thread per channel', threadsPerBlock: 128, perBlock: 128, tokensPerProgram: 0,
  mappings: ['exact', 'sequence'], sharedBytes: { base: 0, perK: 0 }, fixedK: 0, requires: [], fallback: null, fallbackRule: '',
  reference: false, mutant: false, barrier: false, shuffle: false, user: false, fallbackTarget: false, threadsFromD: false, layout: 'token-major' as ArmInfo['layout'],
  minBlocksPerSm: 1,
};
const arm = (o: Partial<ArmInfo>): ArmInfo => ({ ...base, ...o });

const TABLE: Record<string, ArmInfo[]> = {
  conv: [
    arm({ reference: true }),
    arm({
      id: 12, name: 'tile', description: 'tiles', threadsPerBlock: 256, perBlock: 32, tokensPerProgram: 16, sharedBytes: { base: 256, perK: 64 },
      mappings: ['exact', 'exact-racy', 'sequence'], minBlocksPerSm: 2, fallbackRule: 'C % 8 != 0: vec',
      mutant: true, barrier: true, shuffle: true, user: true, fallbackTarget: true,
    }),
  ],
  'conv-update': [arm({ op: 'conv-update', id: 3, name: 'upd', description: 'update', perBlock: 64, tokensPerProgram: 8, sharedBytes: { base: 512, perK: 0 }, barrier: true })],
  postconv: [arm({ op: 'postconv', id: 1, name: 'tree', description: 'a tree', threadsFromD: true, perBlock: 2, tokensPerProgram: 4, layout: 'head-major' as ArmInfo['layout'], minBlocksPerSm: 1, shuffle: true })],
  fused: [arm({ op: 'fused', id: 2, name: 'chunk', description: 'fused', perBlock: 4, tokensPerProgram: 64, user: true, fallbackTarget: true })],
};

const LISTING = [
  'conv:',
  '   0 scalar       one thread per channel',
  '     128 threads, 128 channels per block, whole sequences; no shared memory; mappings exact/sequence [reference]',
  '  12 tile         tiles',
  '     256 threads, 32 channels per block, 16-token programs; 256 + 64·K B shared; mappings exact/exact-racy/sequence; >= 2 blocks/SM; C % 8 != 0: vec [PLANTED MUTANT, barriers, shuffles, user, fallback target]',
  'conv-update:',
  '   3 upd          update',
  '     128 threads, 64 channels per block; 512 B shared [barriers]',
  'postconv:',
  '   1 tree         a tree',
  '     max(32, pow2 >= Dk) threads (<= 128), 2 head slot(s) x 4 token(s) per block, layout head-major; no shared memory [shuffles]',
  'fused:',
  '   2 chunk        fused',
  '     128 threads, 4 head slot(s) x a 64-token program per block; no shared memory [user, fallback target]',
];

describe('gdnlab arms, in process', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());
  const madeUp = () => stubs.set(table, 'arms', (op: string) => TABLE[op]);

  it('every op family in ARM_OPS order, each arm with its launch contract and flags', async () => {
    assert.deepEqual([...ARM_OPS], ['conv', 'conv-update', 'postconv', 'fused']);
    madeUp();
    const backends = fakeBackends(stubs);
    const r = await cli(['arms']);
    assert.equal(r.status, 0, r.err);
    assert.deepEqual(lines(r.out), LISTING);
    // Without --define no backend is opened or asked for (--backend only says where --define compiles).
    assert.deepEqual([backends.opened.length, backends.activeCalls], [0, 0]);
    assert.equal(r.err, '');
  });

  it('--json: the library and every table as JSON, nothing else', async () => {
    madeUp();
    const lib = { path: '/l/libgdn.so', build: 'host', abi: 3 };
    stubs.set(backendModule, 'buildInfo', () => lib);
    const r = await cli(['arms', '--json']);
    assert.equal(r.status, 0);
    assert.equal(r.out, JSON.stringify({ library: lib, arms: TABLE }, null, 2) + '\n');
  });

  it('--define FILE defines the arms on the active backend first; with --backend on the backend given', async () => {
    madeUp();
    const active = fakeBackend('host');
    const backends = fakeBackends(stubs, active);
    const defined = fakeDefine(stubs);
    const r = await cli(['arms', '--define', 'a.json,b.json']);
    assert.equal(r.status, 0, r.err);
    assert.equal(r.err, 'gdnlab: defined a.json,b.json\n');
    assert.deepEqual(lines(r.out), LISTING);
    assert.deepEqual(defined.map((d) => d.files), ['a.json,b.json']);
    assert.equal(defined[0].backend, active);
    const cuda = await cli(['arms', '--define', 'c.json', '--backend', 'cuda']);
    assert.equal(cuda.status, 0, cuda.err);
    assert.deepEqual(backends.opened.map((b) => b.kind), ['cuda']);
    assert.equal(defined[1].backend, backends.opened[0]);
    assert.equal(backends.activeCalls, 1);
  });

  it('lists the real registry (the host build)', async () => {
    const r = await cli(['arms']);
    assert.equal(r.status, 0, r.err);
    for (const op of ARM_OPS) assert.match(r.out, new RegExp(`^${op}:$`, 'm'));
    assert.match(r.out, /^ +0 scalar +.*\n {5}\d+ threads, .*whole sequences.*\[reference\]$/m);
  });
});
