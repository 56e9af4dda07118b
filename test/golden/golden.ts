// Pinned reference bits (docs/TESTING.md, "Pinned reference bits"): every op's reference arm —
// conv scalar, conv.update reference, post-conv tree, matmulNT — run over a fixed, seeded set of
// inputs that covers every dtype combination, and the SHA-256 of the raw bits of each output.
//
// The arms are compared with each other bit for bit elsewhere; that cannot notice a change of the
// shared arithmetic (an exp coefficient, a rounding mode), because every arm and both backends move
// together. These hashes can: a change to the reference's bits fails test/ops/golden.test.ts until
// the goldens are regenerated on purpose, together with a new ARITHMETIC_VERSION
// (lib/provenance.ts), in the same commit:
//
//   bash scripts/build.sh && node dist/test/golden/regenerate.js           # shows what changed
//   node dist/test/golden/regenerate.js --write                            # rewrites test/golden/*.json
//
// `--write` refuses when hashes changed but ARITHMETIC_VERSION did not.
//
// Inputs are drawn with dist 'uniform' (Rng.uniform is exact integer arithmetic, no Math.log/cos),
// so they are the same bits on every machine; their hashes are pinned too, so a failure says
// whether the inputs or the outputs moved.

import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { Tensor } from '../../lib/tensor';
import { Backend } from '../../lib/backend';
import * as conv from '../../lib/ops/conv';
import * as postconv from '../../lib/ops/postconv';
import { matmulNT } from '../../lib/ops/matmul';
import { projectRoot } from '../../lib/paths';
import { ARITHMETIC_VERSION } from '../../lib/provenance';

export const GOLDEN_OPS = ['conv', 'update', 'postconv', 'matmul'] as const;
export type GoldenOp = (typeof GOLDEN_OPS)[number];

/** The hash of one tensor's raw element bits (little-endian words, rows packed), with its dtype and shape. */
export interface BitsHash {
  dtype: string;
  shape: number[];
  sha256: string;
}

export interface GoldenCase {
  name: string;
  inputs: Record<string, BitsHash>;
  outputs: Record<string, BitsHash>;
}

export interface GoldenFile {
  op: GoldenOp;
  arm: string;
  arithmeticVersion: number;
  note: string;
  cases: GoldenCase[];
}

export function hashBits(t: Tensor): BitsHash {
  const bits = t.bits();
  const bytes = new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength);
  return { dtype: t.dtype, shape: [...t.shape], sha256: createHash('sha256').update(bytes).digest('hex') };
}

function hashAll(ts: Record<string, Tensor | null | undefined>): Record<string, BitsHash> {
  const out: Record<string, BitsHash> = {};
  for (const [k, t] of Object.entries(ts)) if (t) out[k] = hashBits(t);
  return out;
}

const rand = (shape: number[], dtype: 'f32' | 'bf16', seed: number, scale: number) =>
  Tensor.random(shape, dtype, { seed, scale, dist: 'uniform' });

const DT = ['f32', 'bf16'] as const;

// ------------------------------------------------------------------------------------------ conv

async function convCases(backend: Backend): Promise<GoldenCase[]> {
  const cases: GoldenCase[] = [];
  let seed = 9100;
  // K = 2 and MAX_K; lengths with an empty sequence, one shorter than K-1, a full chunk and more;
  // x scale 1 (the usual range) and 12 (silu's exp far into both tails).
  for (const K of [2, 4, conv.MAX_K]) {
    for (const xDtype of DT) for (const outDtype of DT) {
      const scale = K === conv.MAX_K ? 12 : 1;
      const C = 37;
      const lengths = [5, 0, 1, 8, 19];
      const T = lengths.reduce((a, b) => a + b, 0);
      const qsl = [0];
      for (const l of lengths) qsl.push(qsl[qsl.length - 1] + l);
      const s = seed;
      seed += 10;
      const x = rand([T, C], xDtype, s, scale);
      const weight = rand([C, K], xDtype, s + 1, 0.6);
      const bias = K === 4 ? null : rand([C], xDtype, s + 2, 0.3);
      const convState = rand([lengths.length, C, K - 1], 'f32', s + 3, scale);
      const maskDtype = K === 2 ? 'i8' : 'i32';
      const hasInitialState = Tensor.from([1, 1, 0, 1, 1], [lengths.length], maskDtype);
      const r = conv.forwardSync({ x, weight, bias, queryStartLoc: qsl, hasInitialState, convState }, { arm: 'scalar', outDtype, backend });
      try {
        cases.push({
          name: `K=${K} x ${xDtype} out ${outDtype} ${bias ? 'bias' : 'nobias'} mask ${maskDtype} scale ${scale}`,
          inputs: hashAll({ x, weight, bias, hasInitialState, convState }),
          outputs: hashAll({ out: r.out, convState: r.convState }),
        });
      } finally {
        r.release();
      }
    }
  }
  // A sweep of silu itself: weight [0, 1] and no bias make acc = x exactly, so out = silu(x) over
  // 2^18 f32 inputs spread over [-110, 110] plus ±0, ±Inf, NaN and subnormals. A change of one ulp
  // in a coefficient of the exp polynomial moves some of these bits even where the random cases
  // above do not.
  const sweep = sweepValues(512 * 512);
  const x = Tensor.from(sweep, [512, 512], 'f32');
  const weight = Tensor.from(new Array(512 * 2).fill(0).map((_, i) => i % 2), [512, 2], 'f32');
  const convState = Tensor.zeros([1, 512, 1], 'f32');
  const r = conv.forwardSync({ x, weight, queryStartLoc: [0, 512], convState }, { arm: 'scalar', outDtype: 'f32', backend });
  try {
    cases.push({ name: 'silu sweep: 2^18 inputs over [-110, 110] and specials', inputs: hashAll({ x, weight }), outputs: hashAll({ out: r.out }) });
  } finally {
    r.release();
  }
  return cases;
}

/** n f32 values: ±0, ±Inf, NaN, the smallest subnormals and normal, then an even spread over [-110, 110]. */
export function sweepValues(n: number): Float64Array {
  const special = [0, -0, Infinity, -Infinity, NaN, 2 ** -149, -(2 ** -149), 2 ** -126, -(2 ** -126), 87, -87, 88.72, -103.9, 20, -20];
  const v = new Float64Array(n);
  for (let i = 0; i < n; i++) v[i] = i < special.length ? special[i] : -110 + (220 * (i - special.length)) / (n - special.length);
  return v;
}

// ------------------------------------------------------------------------------------------ update

async function updateCases(backend: Backend): Promise<GoldenCase[]> {
  const cases: GoldenCase[] = [];
  let seed = 9300;
  for (const K of [3, 4]) {
    for (const xDtype of DT) for (const stateDtype of DT) for (const outDtype of DT) {
      const s = seed;
      seed += 10;
      const B = 5;
      const C = 29;
      const slots = 7;
      const x = rand([B, C], xDtype, s, 2);
      const weight = rand([C, K], xDtype, s + 1, 0.6);
      const bias = K === 3 ? rand([C], xDtype, s + 2, 0.3) : null;
      const state = rand([slots, C, K - 1], stateDtype, s + 3, 2);
      // Slot -1 skips sequence 2: its out row keeps the initial contents, pinned too.
      const stateIndices = [4, 0, -1, 6, 2];
      const outInit = rand([B, C], outDtype, s + 4, 1);
      const r = await conv.update({ x, weight, bias, state, stateIndices }, { arm: 'reference', outDtype, backend, out: outInit });
      try {
        cases.push({
          name: `K=${K} x ${xDtype} state ${stateDtype} out ${outDtype} ${bias ? 'bias' : 'nobias'}`,
          inputs: hashAll({ x, weight, bias, state, outInit }),
          outputs: hashAll({ out: r.out, state: r.state }),
        });
      } finally {
        r.release();
      }
    }
  }
  return cases;
}

// ------------------------------------------------------------------------------------------ post-conv

async function postconvCases(backend: Backend): Promise<GoldenCase[]> {
  const cases: GoldenCase[] = [];
  let seed = 9500;
  // Dk = Dv = 128 (the model's heads) and an odd layout; gate scale 12 reaches softplus's
  // linear branch and sigmoid's tails.
  const layouts = [
    { Hk: 2, Hv: 4, Dk: 128, Dv: 128, T: 6 },
    { Hk: 1, Hv: 3, Dk: 40, Dv: 24, T: 9 },
  ];
  for (const shape of layouts) {
    for (const convDtype of DT) for (const gateDtype of DT) for (const qkvDtype of DT) {
      const s = seed;
      seed += 10;
      const { Hk, Hv, Dk, Dv, T } = shape;
      const C = 2 * Hk * Dk + Hv * Dv;
      const convOut = rand([T, C], convDtype, s, 3);
      const packed = rand([T, 2 * Hv + 3], gateDtype, s + 1, 12);
      const inputs: postconv.PostconvInputs = {
        convOut,
        a: packed.sliceCols(1, Hv),
        b: packed.sliceCols(1 + Hv, Hv),
        ALog: rand([Hv], 'f32', s + 2, 1.5),
        dtBias: rand([Hv], 'f32', s + 3, 2),
      };
      const r = await postconv.forward(inputs, { Hk, Hv, Dk, Dv, arm: 'tree', qkvDtype, backend });
      try {
        cases.push({
          name: `T=${T} Hk=${Hk} Hv=${Hv} Dk=${Dk} Dv=${Dv} conv ${convDtype} gate ${gateDtype} qkv ${qkvDtype}`,
          inputs: hashAll({ convOut, packed, ALog: inputs.ALog, dtBias: inputs.dtBias }),
          outputs: hashAll({ q: r.q, k: r.k, v: r.v, g: r.g, beta: r.beta }),
        });
      } finally {
        r.release();
      }
    }
  }
  // A sweep of the gates: Hk = Dk = Dv = 1 leaves little but g and beta; a and b run over the sweep
  // values, so softplus (both branches), log1p, exp and sigmoid are pinned over 2^17 inputs each.
  {
    const T = 2048;
    const Hv = 64;
    const sw = sweepValues(T * Hv);
    const a = Tensor.from(sw, [T, Hv], 'f32');
    const b = Tensor.from(sw.map((v) => -v / 2), [T, Hv], 'f32');
    const inputs: postconv.PostconvInputs = {
      convOut: rand([T, 2 + Hv], 'f32', 9999, 3), a, b,
      ALog: rand([Hv], 'f32', 9998, 1.5), dtBias: rand([Hv], 'f32', 9997, 0.5),
    };
    const r = await postconv.forward(inputs, { Hk: 1, Hv, Dk: 1, Dv: 1, arm: 'tree', qkvDtype: 'f32', backend });
    try {
      cases.push({
        name: 'gate sweep: softplus, exp, log1p and sigmoid over 2^17 inputs and specials',
        inputs: hashAll({ convOut: inputs.convOut, a, b, ALog: inputs.ALog, dtBias: inputs.dtBias }),
        outputs: hashAll({ q: r.q, k: r.k, v: r.v, g: r.g, beta: r.beta }),
      });
    } finally {
      r.release();
    }
  }
  return cases;
}

// ------------------------------------------------------------------------------------------ matmul

async function matmulCases(backend: Backend): Promise<GoldenCase[]> {
  const cases: GoldenCase[] = [];
  let seed = 9700;
  for (const inDtype of DT) for (const outDtype of DT) {
    const s = seed;
    seed += 10;
    const a = rand([7, 67], inDtype, s, 1);
    const b = rand([9, 67], inDtype, s + 1, 1);
    const out = matmulNT(a, b, { outDtype, backend });
    try {
      cases.push({ name: `M=7 N=9 K=67 in ${inDtype} out ${outDtype}`, inputs: hashAll({ a, b }), outputs: hashAll({ out }) });
    } finally {
      out.release();
    }
  }
  return cases;
}

const MAKERS: Record<GoldenOp, { arm: string; make: (b: Backend) => Promise<GoldenCase[]> }> = {
  conv: { arm: 'scalar', make: convCases },
  update: { arm: 'reference', make: updateCases },
  postconv: { arm: 'tree', make: postconvCases },
  matmul: { arm: 'matmulNT', make: matmulCases },
};

/** Runs one op's golden cases on a backend and hashes them. */
export async function computeGolden(op: GoldenOp, backend: Backend): Promise<GoldenFile> {
  const m = MAKERS[op];
  return {
    op,
    arm: m.arm,
    arithmeticVersion: ARITHMETIC_VERSION,
    note: 'SHA-256 of raw output bits of the reference arm; regenerate only with a new ARITHMETIC_VERSION (docs/TESTING.md)',
    cases: await m.make(backend),
  };
}

export function goldenPath(op: GoldenOp): string {
  return path.join(projectRoot(), 'test', 'golden', `${op}.json`);
}

/** One case per block, one tensor hash per line: diffs of a regenerated file stay readable. */
export function formatGolden(g: GoldenFile): string {
  const hashes = (m: Record<string, BitsHash>) =>
    Object.entries(m).map(([k, h]) => `     ${JSON.stringify(k)}: ${JSON.stringify(h)}`).join(',\n');
  const cases = g.cases.map((c) => `  {\n   "name": ${JSON.stringify(c.name)},\n   "inputs": {\n${hashes(c.inputs)}\n   },\n   "outputs": {\n${hashes(c.outputs)}\n   }\n  }`);
  return `{\n "op": ${JSON.stringify(g.op)},\n "arm": ${JSON.stringify(g.arm)},\n "arithmeticVersion": ${g.arithmeticVersion},\n "note": ${JSON.stringify(g.note)},\n "cases": [\n${cases.join(',\n')}\n ]\n}\n`;
}

export function readGolden(op: GoldenOp): GoldenFile {
  return JSON.parse(fs.readFileSync(goldenPath(op), 'utf8')) as GoldenFile;
}

/** Every difference between a committed golden file and a fresh run, as readable lines. */
export function goldenDifferences(want: GoldenFile, got: GoldenFile): string[] {
  const diffs: string[] = [];
  const byName = new Map(got.cases.map((c) => [c.name, c]));
  for (const w of want.cases) {
    const g = byName.get(w.name);
    if (!g) {
      diffs.push(`${w.name}: case missing from this run`);
      continue;
    }
    for (const [kind, wm, gm] of [['input', w.inputs, g.inputs], ['output', w.outputs, g.outputs]] as const) {
      for (const key of new Set([...Object.keys(wm), ...Object.keys(gm)])) {
        const a = wm[key];
        const b = gm[key];
        if (!a || !b) diffs.push(`${w.name}: ${kind} ${key} ${a ? 'not produced' : 'not pinned'}`);
        else if (a.dtype !== b.dtype || a.shape.join(',') !== b.shape.join(',')) diffs.push(`${w.name}: ${kind} ${key} is ${b.dtype}[${b.shape}], pinned ${a.dtype}[${a.shape}]`);
        else if (a.sha256 !== b.sha256) diffs.push(`${w.name}: ${kind} ${key} bits changed (sha256 ${b.sha256.slice(0, 12)}…, pinned ${a.sha256.slice(0, 12)}…)`);
      }
    }
  }
  const wanted = new Set(want.cases.map((c) => c.name));
  for (const g of got.cases) if (!wanted.has(g.name)) diffs.push(`${g.name}: new case, not pinned`);
  return diffs;
}
