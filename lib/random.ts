// Seeded pseudo-random numbers: the same seed gives the same sequence on every machine.
// xoshiro128** (32-bit state words, so it runs on plain JS numbers), seeded through splitmix32.

export class Rng {
  // The four state words in a typed array: as object fields, values above 2^30 would be boxed on every step.
  private readonly s = new Int32Array(4);
  // The second value of a Box–Muller pair, when hasSpare; a number field that never holds undefined, so that
  // storing it allocates nothing.
  private spare = 0;
  private hasSpare = false;

  constructor(seed: number) {
    if (!Number.isFinite(seed)) throw new TypeError(`seed: expected a finite number, got ${seed}`);
    let z = seed >>> 0 ^ Math.floor(seed / 2 ** 32) * 0x9e3779b9;
    const next = () => {
      z = (z + 0x9e3779b9) | 0;
      let t = z ^ (z >>> 16);
      t = Math.imul(t, 0x21f0aaad);
      t ^= t >>> 15;
      t = Math.imul(t, 0x735a2d97);
      return (t ^ (t >>> 15)) >>> 0;
    };
    const s = this.s;
    for (let i = 0; i < 4; i++) s[i] = next();
    if ((s[0] | s[1] | s[2] | s[3]) === 0) s[0] = 1;
  }

  /** A uniform 32-bit unsigned integer. */
  nextU32(): number {
    const s = this.s;
    const s0 = s[0];
    const s1 = s[1];
    const s2 = s[2] ^ s0;
    const s3 = s[3] ^ s1;
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    s[0] = s0 ^ s3;
    s[1] = s1 ^ s2;
    s[2] = s2 ^ (s1 << 9);
    s[3] = rotl(s3, 11);
    return result;
  }

  /** Uniform on [0, 1) with 53 random bits. */
  uniform(): number {
    const hi = this.nextU32() >>> 5;
    const lo = this.nextU32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.uniform() * n);
  }

  /** Standard normal (Box–Muller, both values used). */
  normal(): number {
    if (this.hasSpare) {
      this.hasSpare = false;
      return this.spare;
    }
    let u = 0;
    while (u === 0) u = this.uniform();
    const v = this.uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    this.hasSpare = true;
    return r * Math.cos(2 * Math.PI * v);
  }

  /** A Fisher–Yates shuffle of 0..n-1. */
  permutation(n: number): number[] {
    const p = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [p[i], p[j]] = [p[j], p[i]];
    }
    return p;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
