// The byte codecs of lib/native/struct-codec.ts must write exactly what koffi's own marshalling
// writes for every op struct of gdn.h (they replace it on the ops' hot path).

import { strict as assert } from 'assert';
import koffi from 'koffi';
import {
  ConvArgsT, ConvUpdateArgsT, PostconvArgsT, MatmulArgsT, LaunchContractT, PostconvResultT, FusedArgsT, FusedResultT,
  convArgsCodec, convUpdateArgsCodec, postconvArgsCodec, matmulArgsCodec, launchContractCodec, postconvResultCodec,
  fusedArgsCodec, fusedResultCodec,
} from '../../lib/native/gdn';
import { Rng } from '../../lib/random';

interface TypeInfo { primitive: string; members?: Record<string, { name: string; type: unknown }> }

/** A random value for every primitive member (64-bit ones up to 2^53, some negative where signed). */
function randomObject(type: unknown, rng: Rng): Record<string, unknown> {
  const info = koffi.type(type as never) as unknown as TypeInfo;
  const o: Record<string, unknown> = {};
  for (const m of Object.values(info.members ?? {})) {
    const mt = koffi.type(m.type as never) as unknown as TypeInfo;
    const r = rng.uniform();
    switch (mt.primitive) {
      case 'Record': o[m.name] = randomObject(m.type, rng); break;
      case 'Array': break;
      case 'Int32': o[m.name] = Math.floor((r - 0.5) * 2 ** 32); break;
      case 'UInt32': o[m.name] = Math.floor(r * 2 ** 32); break;
      case 'Int64': o[m.name] = Math.floor((r - 0.5) * 2 ** 53); break;
      case 'UInt64': o[m.name] = Math.floor(r * 2 ** 53); break;
      default: throw new Error(`unexpected member type ${mt.primitive}`);
    }
  }
  return o;
}

describe('native struct codec', () => {
  const cases: [string, unknown, { encode(o: never): Uint8Array; encodeScratch(o: never): Uint8Array; size: number }][] = [
    ['gdn_conv_args', ConvArgsT, convArgsCodec as never],
    ['gdn_conv_update_args', ConvUpdateArgsT, convUpdateArgsCodec as never],
    ['gdn_postconv_args', PostconvArgsT, postconvArgsCodec as never],
    ['gdn_matmul_args', MatmulArgsT, matmulArgsCodec as never],
    ['gdn_fused_args', FusedArgsT, fusedArgsCodec as never],
  ];
  for (const [name, type, codec] of cases) {
    it(`${name}: the same bytes as koffi.encode for 200 random objects`, () => {
      const rng = new Rng(name.length * 7919);
      assert.equal(codec.size, koffi.sizeof(type as never));
      for (let i = 0; i < 200; i++) {
        const o = randomObject(type, rng);
        const want = new Uint8Array(codec.size);
        koffi.encode(want, type as never, o);
        assert.deepEqual(Buffer.from(codec.encode(o as never)), Buffer.from(want), `object ${i}`);
        assert.deepEqual(Buffer.from(codec.encodeScratch(o as never)), Buffer.from(want), `object ${i} (scratch)`);
      }
    });
  }

  it('rejects a field that is not an integer, naming it', () => {
    const o = randomObject(ConvArgsT, new Rng(1));
    assert.throws(() => convArgsCodec.encode({ ...o, x: 1.5 } as never), /gdn_conv_args\.x: expected an integer/);
    assert.throws(() => convArgsCodec.encode({ ...o, arm: undefined } as never), /gdn_conv_args\.arm: expected an integer/);
    assert.throws(() => convArgsCodec.encode({ ...o, schedule: { ...(o.schedule as object), seed: '3' } } as never), /gdn_conv_args\.schedule\.seed/);
  });

  it('takes bigints for 64-bit fields (the schedule seed)', () => {
    const o = randomObject(ConvArgsT, new Rng(2)) as { schedule: Record<string, unknown> };
    o.schedule.seed = 0xfedcba9876543210n;
    const want = new Uint8Array(convArgsCodec.size);
    koffi.encode(want, ConvArgsT, o);
    assert.deepEqual(Buffer.from(convArgsCodec.encode(o as never)), Buffer.from(want));
  });

  for (const [name, type, codec] of [
    ['gdn_launch_contract', LaunchContractT, launchContractCodec],
    ['gdn_postconv_result', PostconvResultT, postconvResultCodec],
    ['gdn_fused_result', FusedResultT, fusedResultCodec],
  ] as const) {
    it(`${name}: decodes what koffi encodes`, () => {
      const o = randomObject(type, new Rng(3));
      const bytes = new Uint8Array(codec.size);
      koffi.encode(bytes, type as never, o);
      assert.deepEqual(codec.decode(bytes), o);
    });
  }
});
