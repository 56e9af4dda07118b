// Shared plumbing of the op wrappers: dtype codes of gdn.h, argument checks whose messages name the
// argument, and staging of host inputs onto a backend (temporaries released after the call).

import { DType, describe, dtypeSize } from '../dtype';
import { HostStorage, Tensor } from '../tensor';
import { Backend, activeBackend } from '../backend';
import type { Fn } from '../native/gdn';

// The checks that need no Tensor live below the ops, where the arm table (lib/arms/table.ts) reads them too.
export { expectChoice, expectInt } from '../expect';

export const DTYPE_CODE: Record<DType, number> = { f32: 0, bf16: 1, f16: 2, i32: 3, i8: 4 };

/** Bit patterns written into outputs before a run, so an element no kernel wrote cannot pass as a result. */
export const POISON_U32 = { f32: 0x7fc0dead, bf16: 0x7fc17fc1 } as const;

export function backendOf(opts: { backend?: Backend }): Backend {
  return opts.backend ?? activeBackend();
}

export function expectTensor(value: unknown, what: string): Tensor {
  if (!(value instanceof Tensor)) throw new TypeError(`${what}: expected a Tensor, got ${describe(value)}`);
  value.assertLive(what);
  return value;
}

export function expectDType(t: Tensor, what: string, allowed: readonly DType[]): void {
  if (!allowed.includes(t.dtype)) {
    throw new TypeError(`${what}: expected dtype ${allowed.join(' or ')}, got ${t.dtype}`);
  }
}

/** Checks a tensor's shape; `null` entries in `expected` match any size. */
export function expectShape(t: Tensor, what: string, expected: readonly (number | null)[], names?: readonly string[]): void {
  const ok = t.rank === expected.length && expected.every((d, i) => d === null || t.shape[i] === d);
  if (!ok) {
    const want = expected.map((d, i) => (d === null ? (names?.[i] ?? '*') : names?.[i] ? `${names[i]}=${d}` : String(d))).join(', ');
    throw new RangeError(`${what}: expected shape [${want}], got [${t.shape.join(', ')}]`);
  }
}

export function expectContiguous(t: Tensor, what: string): void {
  if (!t.contiguous) throw new RangeError(`${what}: expected a contiguous tensor, got row stride ${t.rowStride} for rows of ${t.cols}`);
}

/** Whether a tensor has device bytes on `backend` (not host, not another backend's, not empty). */
function onDevice(t: Tensor, backend: Backend): boolean {
  return t.location === 'device' && t.backend === backend && t.numel > 0;
}

/** A named device byte range [lo, hi) of one call's tensors, for the alias checks of its outputs. */
export interface NamedRange {
  name: string;
  lo: number;
  hi: number;
}

/** The device byte ranges of the named tensors that live on `backend` (host, other-backend and empty ones have none). */
export function namedRanges(named: readonly (readonly [string, Tensor | null | undefined])[], backend: Backend): NamedRange[] {
  const out: NamedRange[] = [];
  for (const [name, t] of named) {
    if (!t || t.released) continue;  // a released tensor is refused by its own check, with its own name
    if (!onDevice(t, backend)) continue;
    const lo = t.addr;
    out.push({ name, lo, hi: lo + t.extentBytes });
  }
  return out;
}

/**
 * Checks an output buffer the caller gave through an op's `out` option: a live contiguous tensor on
 * the op's backend with the expected shape and dtype, not sharing a byte with any input or with
 * another output. `what` names the option ("out.q"); inputs and outputs are listed by name, and the
 * entry named `what` itself is skipped, so one list — the call's namedRanges, computed once — serves every
 * output of an op.
 */
export function expectOut(
  value: unknown,
  what: string,
  backend: Backend,
  shape: readonly number[],
  dtype: DType,
  others: readonly NamedRange[],
): Tensor {
  if (!(value instanceof Tensor)) throw new TypeError(`${what}: expected a Tensor (an output buffer to write into), got ${describe(value)}`);
  value.assertLive(what);
  if (value.location !== 'device' || value.backend !== backend) {
    const where = value.location === 'host' ? 'a host tensor' : `a tensor of another ${value.backend?.kind ?? ''} backend`;
    throw new TypeError(`${what}: expected a tensor on the ${backend.kind} backend of this call (Tensor.empty(shape, dtype, { backend })), got ${where}`);
  }
  const ok = value.rank === shape.length && shape.every((d, i) => value.shape[i] === d);
  if (!ok) throw new RangeError(`${what}: expected shape [${shape.join(', ')}], got [${value.shape.join(', ')}]`);
  if (value.dtype !== dtype) throw new TypeError(`${what}: expected dtype ${dtype}, got ${value.dtype}`);
  if (!value.contiguous) throw new RangeError(`${what}: expected a contiguous tensor, got row stride ${value.rowStride} for rows of ${value.cols}`);
  if (onDevice(value, backend)) {
    const lo = value.addr;
    const hi = lo + value.extentBytes;
    for (const r of others) {
      if (r.name !== what && lo < r.hi && r.lo < hi) {
        throw new RangeError(`${what}: shares memory with ${r.name} (an output must not alias an input or another output)`);
      }
    }
  }
  return value;
}

/**
 * Puts tensors on a backend for one call. Host tensors (or tensors of another backend) are copied
 * and the copies released by `release()`; tensors already there are used as they are.
 */
export class Staging {
  private temps: Tensor[] = [];
  constructor(readonly backend: Backend) {}

  input(t: Tensor): Tensor {
    if (t.location === 'device' && t.backend === this.backend) return t;
    const d = t.to(this.backend);
    this.temps.push(d);
    return d;
  }

  /** A fresh output on the backend, poisoned so unwritten elements show up. Kept unless `temp`. */
  output(shape: readonly number[], dtype: 'f32' | 'bf16', temp = false): Tensor {
    const [t] = this.outputs([[shape, dtype]]);
    if (temp) this.temps.push(t);
    return t;
  }

  /**
   * Fresh contiguous outputs, poisoned as `output` poisons one, all allocated and filled by one native
   * call (docs/SPEC.md §2, "Fresh outputs"). Kept (the caller's result releases them).
   */
  outputs(specs: readonly (readonly [readonly number[], 'f32' | 'bf16'])[]): Tensor[] {
    if (specs.length === 0) return [];
    return Tensor.emptyFilled(specs, specs.map(([, dtype]) => POISON_U32[dtype]), this.backend);
  }

  /** A device copy of t that the op may overwrite (state in/out). */
  mutableCopy(t: Tensor): Tensor {
    if (t.location === 'device' && t.backend === this.backend) {
      const copy = Tensor.empty(t.shape, t.dtype, { backend: this.backend, rowStride: t.rowStride });
      if (t.extentBytes > 0) this.backend.copy(copy.addr, t.addr, t.extentBytes);
      return copy;
    }
    return t.to(this.backend);
  }

  /** Copies src (contiguous; host or this backend) into dst, a device tensor of this backend of the same layout; returns dst. */
  copyInto(dst: Tensor, src: Tensor): Tensor {
    const bytes = src.extentBytes;
    if (bytes === 0) return dst;
    if (src.location === 'device' && src.backend === this.backend) {
      this.backend.copy(dst.addr, src.addr, bytes);
    } else {
      const h = src.host();
      const data = (h.storage as HostStorage).data;
      const start = h.offset * dtypeSize(h.dtype);
      this.backend.upload(dst.addr, data.subarray(start, start + bytes));
    }
    return dst;
  }

  release(): void {
    for (const t of this.temps) t.release();
    this.temps = [];
  }
}

/**
 * Where a call's argument bytes live: 'fresh' — its own (an async call's worker thread reads them after
 * the caller has returned to the event loop), 'scratch' — the shared scratch bytes (a synchronous call).
 */
export type CallPath = 'fresh' | 'scratch';

/** What one native op needs to be called both ways (opCall). */
export interface OpCallSpec<I, O, P extends { backend: Backend }, R> {
  /** Names the op in errors, e.g. 'conv.forward'. */
  what: string;
  /** Checks the arguments and stages the call (throws before anything is allocated on bad input). */
  prepare(inputs: I, opts: O, path: CallPath): P;
  /** The native entry point. */
  entry(lib: Backend['lib']): Fn;
  /** Its arguments after the backend handle: the encoded argument struct and any result struct. */
  args(p: P, path: CallPath): unknown[];
  /** Builds the result after a successful call (and releases what the call staged for itself). */
  finish(p: P, args: unknown[]): R;
  /** Releases everything prepare made after a failed call. */
  abandon(p: P): void;
}

/**
 * Slots of the phase marks a synchronous op call writes while marking is on (markCalls): performance.now()
 * at entry, after prepare (argument checks, staging, the args object), after encoding the args struct,
 * when the native call returns, and after the result is built; `entries` counts the calls that wrote
 * them, so that a caller can tell one call's marks from those of an op that calls another.
 */
export const CALL_MARK = { entered: 0, prepared: 1, encoded: 2, returned: 3, finished: 4, entries: 5 } as const;
export const CALL_MARK_SLOTS = 6;

let callMarks: Float64Array | null = null;

/**
 * Turns phase marking of synchronous op calls on (an array of CALL_MARK_SLOTS, written in place) or off
 * (null). Only `bench overhead` turns it on, to say where a call's time beyond its kernel goes
 * (docs/BENCHMARKS.md, "Per-op overhead"); off, each call pays one null test per phase.
 */
export function markCalls(marks: Float64Array | null): void {
  if (marks && marks.length < CALL_MARK_SLOTS) throw new RangeError(`markCalls: expected ${CALL_MARK_SLOTS} slots, got ${marks.length}`);
  callMarks = marks;
}

/**
 * An op's two calls from one description: `forward` (async, on libgdn's worker thread) and `forwardSync`
 * (on the calling thread, for tight loops). Both prepare, call and clean up in the same order, so an op
 * cannot differ between its two forms.
 */
export function opCall<I, O, P extends { backend: Backend }, R>(spec: OpCallSpec<I, O, P, R>): {
  forward(inputs: I, opts: O): Promise<R>;
  forwardSync(inputs: I, opts: O): R;
} {
  return {
    async forward(inputs, opts) {
      const p = spec.prepare(inputs, opts, 'fresh');
      let args: unknown[];
      try {
        args = spec.args(p, 'fresh');
        await p.backend.callAsync(spec.entry(p.backend.lib), [p.backend.native, ...args], spec.what);
      } catch (e) {
        spec.abandon(p);
        throw e;
      }
      return spec.finish(p, args);
    },
    forwardSync(inputs, opts) {
      const m = callMarks;
      if (m) {
        m[CALL_MARK.entered] = performance.now();
        m[CALL_MARK.entries]++;
      }
      const p = spec.prepare(inputs, opts, 'scratch');
      if (m) m[CALL_MARK.prepared] = performance.now();
      let args: unknown[];
      try {
        args = spec.args(p, 'scratch');
        if (m) m[CALL_MARK.encoded] = performance.now();
        const status = spec.entry(p.backend.lib)(p.backend.native, ...args) as number;
        if (m) m[CALL_MARK.returned] = performance.now();
        p.backend.check(status, spec.what);
      } catch (e) {
        spec.abandon(p);
        throw e;
      }
      const r = spec.finish(p, args);
      if (m) m[CALL_MARK.finished] = performance.now();
      return r;
    },
  };
}

// What a timed op was prepared from: defined beside timeArms, which reads it (lib/analysis/timing.ts).
export type { TimedSource } from '../analysis/timing';
