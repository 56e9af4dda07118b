// Shared helpers of the model tests: the repository root, temporary directories, header builders.

import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/** The repository root (the directory holding package.json above this file, compiled or not). */
export function repoRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${__dirname}`);
    dir = up;
  }
  return dir;
}

export const FIXTURE_DIR = () => path.join(repoRoot(), 'test', 'fixtures', 'qwen35-tiny');

/** A fresh temporary directory, removed by the returned cleanup. */
export function tempDir(tag: string): { dir: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gdnlab-${tag}-`));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** The 8-byte little-endian length prefix. */
export function u64le(n: bigint | number): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n), true);
  return b;
}

export function concat(...parts: (Uint8Array | string)[]): Uint8Array {
  const bufs = parts.map((p) => (typeof p === 'string' ? new TextEncoder().encode(p) : p));
  const out = new Uint8Array(bufs.reduce((s, b) => s + b.byteLength, 0));
  let at = 0;
  for (const b of bufs) {
    out.set(b, at);
    at += b.byteLength;
  }
  return out;
}

/** A file: the length prefix of `header` (or `claimedLength`), the header bytes, then `data`. */
export function rawFile(header: string | Uint8Array, data: Uint8Array | number = 0, claimedLength?: bigint): Uint8Array {
  const h = typeof header === 'string' ? new TextEncoder().encode(header) : header;
  const d = typeof data === 'number' ? new Uint8Array(data) : data;
  return concat(u64le(claimedLength ?? BigInt(h.byteLength)), h, d);
}

/** Sign-magnitude bit patterns mapped to integers whose difference counts representable steps. */
function orderedBf16(bits: number): number {
  return bits & 0x8000 ? -(bits & 0x7fff) : bits & 0x7fff;
}
function orderedF32(bits: number): number {
  return bits & 0x80000000 ? -(bits & 0x7fffffff) : bits & 0x7fffffff;
}

export interface UlpStats {
  n: number;
  /** Elements whose bits differ. */
  mismatches: number;
  /** Largest distance in units in the last place of the format (Infinity when a NaN differs). */
  maxUlp: number;
  /** Count of elements at each distance (index = ulps, capped at the last bucket). */
  histogram: number[];
}

/** Element-wise distance in ulps between two raw bf16 or f32 bit arrays of one length. */
export function ulpStats(actual: Uint16Array | Uint32Array, expected: Uint16Array | Uint32Array, format: 'bf16' | 'f32'): UlpStats {
  if (actual.length !== expected.length) throw new RangeError(`ulpStats: lengths ${actual.length} and ${expected.length} differ`);
  const key = format === 'bf16' ? orderedBf16 : orderedF32;
  const nanMask = format === 'bf16' ? 0x7fff : 0x7fffffff;
  const inf = format === 'bf16' ? 0x7f80 : 0x7f800000;
  const histogram = [0, 0, 0, 0, 0];
  let mismatches = 0;
  let maxUlp = 0;
  for (let i = 0; i < actual.length; i++) {
    if (actual[i] === expected[i]) {
      histogram[0]++;
      continue;
    }
    mismatches++;
    const nan = (actual[i] & nanMask) > inf || (expected[i] & nanMask) > inf;
    const d = nan ? Infinity : Math.abs(key(actual[i]) - key(expected[i]));
    maxUlp = Math.max(maxUlp, d);
    histogram[Math.min(d, histogram.length - 1)]++;
  }
  return { n: actual.length, mismatches, maxUlp, histogram };
}

export function describeStats(name: string, s: UlpStats, format: string): string {
  return `${name}: ${s.mismatches}/${s.n} ${format} elements differ (${((100 * s.mismatches) / s.n).toFixed(2)}%), max ${s.maxUlp} ulp, histogram [${s.histogram.join(', ')}]`;
}
