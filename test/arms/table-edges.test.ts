// lib/arms/table.ts over a stand-in libgdn: gdnLib() answers with a made-up arm table, so that every
// field of gdn_arm_info is decoded from a known word (flags, mapping and requirement bits, a fallback
// by id or past the table, a layout past the list), user arms are listed only while defined, and the
// cache of names is seen to be used, refreshed on a miss and dropped by armsChanged(): the stand-in
// counts its calls. lib/arms/registry.ts is tested with it (the live definitions table.ts consults).

import { strict as assert } from 'assert';
import type { ArmInfoStruct } from '../../lib/native/gdn';
import { ARM_FLAGS } from '../../lib/native/gdn';
import { armByName, armId, armIsMutant, armName, armNames, arms, armsChanged, convArmMappings, convMutantNames, referenceArm } from '../../lib/arms/table';
import { forgetArm, registerArm, userArm, userArmById, userArms, RegisteredArm } from '../../lib/arms/registry';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const native = require('../../lib/native/gdn') as { gdnLib: unknown };

function info(id: number, name: string, over: Partial<ArmInfoStruct> = {}): ArmInfoStruct {
  return {
    op: 1, id, name, description: `${name} built in`, threads_per_block: 128, per_block: 64, tokens_per_program: 0, mappings: 0,
    shared_bytes_base: 0, shared_bytes_per_k: 0, fixed_k: 0, data_requires: 0, fallback: -1, flags: 0, layout: 0, min_blocks_per_sm: 0,
    fallback_rule: '', ...over,
  };
}

/** The stand-in library: tables by op code, a count of each call, failures on request. */
class StandIn {
  tables = new Map<number, ArmInfoStruct[]>();
  counts: number[] = [];
  infos = 0;
  countResult: number | null = null;
  infoStatus = 0;
  mutantNames: string[] = [];
  mutantAsked: number[] = [];
  armCount(code: number) {
    this.counts.push(code);
    return this.countResult ?? (this.tables.get(code) ?? []).length;
  }
  armInfo(code: number, id: number, out: ArmInfoStruct[]) {
    this.infos++;
    if (this.infoStatus !== 0) return this.infoStatus;
    // As koffi does with an out-parameter array: the element given is filled, none is added.
    if (out.length > 0) out[0] = { ...(this.tables.get(code) as ArmInfoStruct[])[id] };
    return 0;
  }
  lastError() {
    return 'the stand-in failed';
  }
  convMutantName(m: number) {
    this.mutantAsked.push(m);
    return this.mutantNames[m - 1] ?? null;
  }
}

const CONV = [
  info(0, 'scalar', { flags: ARM_FLAGS.reference | ARM_FLAGS.fallbackTarget, mappings: 0b101, threads_per_block: 64 }),
  info(1, 'vec', {
    flags: ARM_FLAGS.barrier | ARM_FLAGS.shuffle, mappings: 0b010, data_requires: 0x1, fallback: 0, fallback_rule: 'C % 8 != 0: scalar',
    layout: 1, min_blocks_per_sm: 2, fixed_k: 4, shared_bytes_base: 16, shared_bytes_per_k: 8, per_block: 32, tokens_per_program: 8,
  }),
  info(2, 'mine', { flags: ARM_FLAGS.user, description: 'defined at run time' }),
  info(3, 'gone', { flags: ARM_FLAGS.user }),
  info(4, 'mut', { flags: ARM_FLAGS.mutant | ARM_FLAGS.threadsFromD, data_requires: 0x3, fallback: 7, layout: 9, mappings: 0b111 }),
];

function user(name: string, over: Partial<RegisteredArm> = {}): RegisteredArm {
  return { op: 'conv', name, id: 2, mappings: ['exact'], description: '', prepareTiming() {}, ...over };
}

describe('arm table: edges (stand-in libgdn)', () => {
  let lib: StandIn;
  let original: unknown;
  beforeEach(() => {
    original = native.gdnLib;
    lib = new StandIn();
    lib.tables.set(1, CONV.map((c) => ({ ...c })));
    lib.tables.set(2, [info(0, 'reference', { flags: ARM_FLAGS.reference }), info(1, 'u', { flags: ARM_FLAGS.user })]);
    lib.tables.set(3, [info(0, 'tree', { flags: ARM_FLAGS.reference, mappings: 0b11 }), info(1, 'p', { flags: ARM_FLAGS.user })]);
    lib.tables.set(5, [info(0, 'chain')]);
    native.gdnLib = () => lib;
    armsChanged();
  });
  afterEach(() => {
    native.gdnLib = original;
    armsChanged();
    for (const a of userArms('conv')) forgetArm('conv', a.name);
    for (const a of userArms('postconv')) forgetArm('postconv', a.name);
  });

  it('arms: every field decoded; an undefined user arm is not listed', () => {
    registerArm(user('mine', { description: 'my arm' }));
    const got = arms('conv');
    assert.deepEqual(got.map((a) => a.name), ['scalar', 'vec', 'mine', 'mut']);
    const base = { op: 'conv', tokensPerProgram: 0, fixedK: 0, fallbackRule: '', minBlocksPerSm: 0, reference: false, mutant: false, barrier: false, shuffle: false, user: false, fallbackTarget: false, threadsFromD: false, requires: [], fallback: null, layout: 'none', perBlock: 64, threadsPerBlock: 128, sharedBytes: { base: 0, perK: 0 } };
    assert.deepEqual(got[0], { ...base, id: 0, name: 'scalar', description: 'scalar built in', threadsPerBlock: 64, mappings: ['exact', 'sequence'], reference: true, fallbackTarget: true });
    assert.deepEqual(got[1], {
      ...base, id: 1, name: 'vec', description: 'vec built in', perBlock: 32, tokensPerProgram: 8, mappings: ['exact-racy'], sharedBytes: { base: 16, perK: 8 },
      fixedK: 4, requires: ['vec8'], fallback: 'scalar', fallbackRule: 'C % 8 != 0: scalar', barrier: true, shuffle: true, layout: 'token-slot', minBlocksPerSm: 2,
    });
    assert.deepEqual(got[2], { ...base, id: 2, name: 'mine', description: 'my arm (user arm)', mappings: [], user: true });
    assert.deepEqual(got[3], { ...base, id: 4, name: 'mut', description: 'mut built in', mappings: ['exact', 'exact-racy', 'sequence'], requires: ['vec8', 'd128'], fallback: '7', mutant: true, threadsFromD: true });
    assert.deepEqual(lib.counts, [1]);
    assert.equal(lib.infos, 5);
  });

  it('arms: a user arm without a description keeps libgdn\'s; a planted defect is a mutant and says so', () => {
    registerArm(user('mine'));
    assert.equal(arms('conv')[2].description, 'defined at run time');
    assert.equal(arms('conv')[2].mutant, false);
    registerArm(user('mine', { description: 'wrong fold', plantedDefect: 'folds from the top' }));
    const a = arms('conv')[2];
    assert.equal(a.description, 'wrong fold (user arm, PLANTED DEFECT)');
    assert.equal(a.mutant, true);
    // A built-in arm whose name a user arm shares is not read as that user arm.
    registerArm(user('scalar', { description: 'not me', plantedDefect: 'x' }));
    assert.equal(arms('conv')[0].description, 'scalar built in');
    assert.equal(arms('conv')[0].mutant, false);
  });

  it('arms: mappings only for conv; user arms of conv-update are never listed; postconv user arms while defined', () => {
    assert.deepEqual(arms('postconv').map((a) => [a.name, a.mappings]), [['tree', []]]);
    registerArm(user('p', { op: 'postconv', description: 'pc' }));
    assert.deepEqual(arms('postconv').map((a) => [a.name, a.description]), [['tree', 'tree built in'], ['p', 'pc (user arm)']]);
    registerArm(user('u', { description: 'not conv-update' }));
    assert.deepEqual(arms('conv-update').map((a) => a.name), ['reference']);
    assert.deepEqual(arms('fused').map((a) => a.name), ['chain']);
    assert.deepEqual(lib.counts, [3, 3, 2, 5]);
  });

  it('the op is checked and each family asks libgdn for its own code; failures name the family', () => {
    assert.throws(() => arms('x' as never), { name: 'TypeError', message: "op: expected one of 'conv', 'conv-update', 'postconv', 'fused', got 'x'" });
    lib.countResult = -1;
    assert.throws(() => arms('conv'), { name: 'Error', message: 'arms(conv): the stand-in failed' });
    lib.countResult = null;
    lib.infoStatus = 3;
    assert.throws(() => armNames('postconv'), { name: 'Error', message: 'arms(postconv): the stand-in failed' });
    assert.equal(lib.infos, 1);
    lib.infoStatus = 0;
    lib.countResult = 0;
    assert.deepEqual(arms('conv'), []);
  });

  it('armNames: read once, a copy each time, read again after armsChanged()', () => {
    const names = armNames('conv');
    assert.deepEqual(names, ['scalar', 'vec', 'mine', 'gone', 'mut']);
    names.push('x');
    assert.deepEqual(armNames('conv'), ['scalar', 'vec', 'mine', 'gone', 'mut']);
    assert.deepEqual(lib.counts, [1]);
    armNames('postconv');
    assert.deepEqual(lib.counts, [1, 3]);
    armsChanged();
    armNames('conv');
    assert.deepEqual(lib.counts, [1, 3, 1]);
  });

  it('armIsMutant: from the cache; an id past it is looked up once more; unknown ids are not mutants', () => {
    assert.equal(armIsMutant('conv', 4), true);
    assert.equal(armIsMutant('conv', 0), false);
    assert.equal(armIsMutant('conv', 2), false);
    assert.deepEqual(lib.counts, [1]);
    (lib.tables.get(1) as ArmInfoStruct[]).push(info(5, 'late', { flags: ARM_FLAGS.mutant }));
    assert.equal(armIsMutant('conv', 5), true);
    assert.deepEqual(lib.counts, [1, 1]);
    assert.equal(armIsMutant('conv', 9), false);
    assert.deepEqual(lib.counts, [1, 1, 1]);
  });

  it('armByName: the arm, or a TypeError naming the argument and every listed arm', () => {
    assert.equal(armByName('conv', 'vec').id, 1);
    assert.throws(() => armByName('conv', 'gone'), { name: 'TypeError', message: "arm: expected one of 'scalar', 'vec', 'mut', got 'gone'" });
    assert.throws(() => armByName('conv', 5, 'args.arm'), { name: 'TypeError', message: "args.arm: expected one of 'scalar', 'vec', 'mut', got 5" });
  });

  it('armId: from the cache; a name not in it (or not a string) is looked up once more before it is refused', () => {
    assert.equal(armId('conv', 'mut'), 4);
    assert.deepEqual(lib.counts, [1]);
    (lib.tables.get(1) as ArmInfoStruct[]).push(info(5, 'late'));
    assert.equal(armId('conv', 'late'), 5);
    assert.deepEqual(lib.counts, [1, 1]);
    assert.equal(armId('conv', 'late'), 5);
    assert.deepEqual(lib.counts, [1, 1]);
    assert.throws(() => armId('conv', 3, 'arm of x'), { name: 'TypeError', message: "arm of x: expected one of 'scalar', 'vec', 'mine', 'gone', 'mut', 'late', got 3" });
    assert.deepEqual(lib.counts, [1, 1, 1]);
  });

  it('convArmMappings: the mapping bits of arm id, looked up once more past the cache, none for an unknown id', () => {
    assert.deepEqual(convArmMappings(0), ['exact', 'sequence']);
    assert.deepEqual(convArmMappings(1), ['exact-racy']);
    assert.deepEqual(convArmMappings(4), ['exact', 'exact-racy', 'sequence']);
    assert.deepEqual(lib.counts, [1]);
    (lib.tables.get(1) as ArmInfoStruct[]).push(info(5, 'late', { mappings: 0b100 }));
    assert.deepEqual(convArmMappings(5), ['sequence']);
    assert.deepEqual(convArmMappings(6), []);
    assert.deepEqual(lib.counts, [1, 1, 1]);
  });

  it('armName: by id; one past the cache is looked up once more; out of range is a RangeError with the range', () => {
    assert.equal(armName('conv', 0), 'scalar');
    assert.equal(armName('conv', 4), 'mut');
    assert.deepEqual(lib.counts, [1]);
    (lib.tables.get(1) as ArmInfoStruct[]).push(info(5, 'late'));
    assert.equal(armName('conv', 5), 'late');
    assert.deepEqual(lib.counts, [1, 1]);
    assert.throws(() => armName('conv', -1), { name: 'RangeError', message: 'conv arm id -1: libgdn has arms 0..5' });
    assert.deepEqual(lib.counts, [1, 1]);
    assert.throws(() => armName('fused', 1), { name: 'RangeError', message: 'fused arm id 1: libgdn has arms 0..0' });
    assert.deepEqual(lib.counts, [1, 1, 5, 5]);
  });

  it('referenceArm: the flagged arm, or an error for a family that declares none', () => {
    assert.equal(referenceArm('conv').name, 'scalar');
    assert.equal(referenceArm('postconv').name, 'tree');
    assert.throws(() => referenceArm('fused'), { name: 'Error', message: 'fused: libgdn declares no reference arm' });
  });

  it('convMutantNames: 1, 2, … until libgdn has no name', () => {
    lib.mutantNames = ['a', 'b', 'c'];
    assert.deepEqual(convMutantNames(), ['a', 'b', 'c']);
    assert.deepEqual(lib.mutantAsked, [1, 2, 3, 4]);
    lib.mutantNames = [];
    assert.deepEqual(convMutantNames(), []);
  });
});

describe('arm table: the host libgdn', () => {
  it('fills the out-parameter element it is given (names of built-in arms as a launch reports them)', () => {
    armsChanged();
    assert.deepEqual(arms('conv').slice(0, 2).map((a) => [a.id, a.name]), [[0, 'scalar'], [1, 'tiled']]);
    assert.equal(armName('postconv', 0), 'tree');
  });
});

describe('arm registry: edges', () => {
  afterEach(() => {
    for (const a of userArms('conv')) forgetArm('conv', a.name);
    for (const a of userArms('postconv')) forgetArm('postconv', a.name);
  });

  it('by family and name, by id, in definition order; defining a name again replaces it in place', () => {
    const a = user('a', { id: 7 });
    const b = user('b', { id: 8 });
    const p = user('a', { op: 'postconv', id: 7 });
    registerArm(a);
    registerArm(b);
    registerArm(p);
    assert.equal(userArm('conv', 'a'), a);
    assert.equal(userArm('postconv', 'a'), p);
    assert.equal(userArm('conv', 'c'), undefined);
    assert.equal(userArmById('conv', 8), b);
    assert.equal(userArmById('postconv', 7), p);
    assert.equal(userArmById('postconv', 8), undefined);
    const a2 = user('a', { id: 7, description: 'again' });
    registerArm(a2);
    assert.deepEqual(userArms('conv'), [a2, b]);
    forgetArm('conv', 'a');
    assert.deepEqual(userArms('conv'), [b]);
    assert.deepEqual(userArms('postconv'), [p]);
    const list = userArms('conv');
    list.pop();
    assert.deepEqual(userArms('conv'), [b]);
  });
});
