// A host backend for the ops' edge tests that shows what reaches libgdn: its op entry points decode and
// record the argument struct of every call (sync and async), keep the byte arrays the call passed (so a
// test can tell the shared scratch bytes from a call's own), and then make the real call, or answer
// with a failing status when the test asks for one. `kind` may be set to 'cuda' to exercise the
// TypeScript branches of CUDA-only options on this host library (no CUDA kernel runs).

import { strict as assert } from 'assert';
import koffi from 'koffi';
import { Backend } from '../../lib/backend';
import { ConvArgs, ConvArgsT, ConvUpdateArgs, ConvUpdateArgsT, FusedArgs, FusedArgsT, Fn, PostconvArgs, PostconvArgsT } from '../../lib/native/gdn';

export interface Seen {
  conv: ConvArgs[];
  update: ConvUpdateArgs[];
  postconv: PostconvArgs[];
  fused: FusedArgs[];
  /** The arguments each call passed after the backend handle (argument bytes, result bytes), in call order. */
  bytes: unknown[][];
  /** When set, the entry points return this status instead of calling libgdn. */
  failWith: number | null;
  clear(): void;
}

export function recordingBackend(kind: 'host' | 'cuda' = 'host'): { b: Backend; seen: Seen } {
  const b = Backend.open('host');
  const seen: Seen = {
    conv: [], update: [], postconv: [], fused: [], bytes: [], failWith: null,
    clear() {
      for (const list of [this.conv, this.update, this.postconv, this.fused, this.bytes]) list.length = 0;
      this.failWith = null;
    },
  };
  const real = b.lib;
  const wrap = (fn: Fn, type: unknown, into: unknown[]): Fn => {
    const f = ((...a: unknown[]) => {
      into.push(koffi.decode(a[1] as Uint8Array, type as never));
      seen.bytes.push(a.slice(1));
      return seen.failWith ?? fn(...a);
    }) as Fn;
    f.async = (...a: unknown[]) => {
      into.push(koffi.decode(a[1] as Uint8Array, type as never));
      seen.bytes.push(a.slice(1, -1));
      const done = a[a.length - 1] as (err: unknown, res: number) => void;
      if (seen.failWith !== null) setImmediate(() => done(null, seen.failWith as number));
      else fn.async(...a);
    };
    return f;
  };
  (b as unknown as { lib: unknown }).lib = {
    ...real,
    convForwardRaw: wrap(real.convForwardRaw, ConvArgsT, seen.conv),
    convUpdateRaw: wrap(real.convUpdateRaw, ConvUpdateArgsT, seen.update),
    postconvForwardRaw: wrap(real.postconvForwardRaw, PostconvArgsT, seen.postconv),
    fusedForwardRaw: wrap(real.fusedForwardRaw, FusedArgsT, seen.fused),
  };
  if (kind === 'cuda') (b as unknown as { kind: string }).kind = 'cuda';
  return { b, seen };
}

/**
 * What an op promises of the bytes it passes libgdn, over the four calls in `seen.bytes` (two sync, then two
 * async): the sync calls share the scratch bytes, so a call allocates nothing; each async call passes bytes of its
 * own, so a call in flight never sees the next one overwrite its arguments. `n`: the byte arguments of a call.
 */
export function assertArgumentBytes(seen: Seen, n: number): void {
  assert.equal(seen.bytes.length, 4, 'two sync calls, then two async calls');
  const [s1, s2, a1, a2] = seen.bytes;
  assert.equal(s1.length, n);
  for (let i = 0; i < n; i++) {
    assert.equal(s1[i], s2[i], `sync argument ${i}: the scratch bytes`);
    assert.ok(a1[i] !== s1[i] && a2[i] !== s1[i], `async argument ${i} is not the scratch`);
    assert.ok(a1[i] !== a2[i], `async argument ${i}: each call's own`);
  }
}
