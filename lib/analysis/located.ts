// Where a check's comparison first failed: the output, the element's coordinates in the op's terms (the
// coordinates an op's result carries, Tensor.coordinates) and the two values, so a failing row of
// checkConv / checkPostconv / checkFused can be looked at without rebuilding its case by hand.

import { Tensor } from '../tensor';
import { diff, Mismatch } from './diff';

/** The first differing element of a check's outputs: diff's Mismatch (the arm's value is `actual`), and which output. */
export interface LocatedMismatch extends Pick<Mismatch, 'index' | 'coords' | 'actual' | 'expected' | 'actualBits' | 'expectedBits'> {
  /** Which output, e.g. 'out', 'convState', 'q'. */
  output: string;
}

/**
 * The first differing element of the first output (in the order given) whose bits differ, or undefined
 * when all are identical. Called only for failing rows: a passing row costs nothing.
 */
export function firstMismatch(pairs: readonly (readonly [string, Tensor, Tensor])[]): LocatedMismatch | undefined {
  for (const [output, actual, expected] of pairs) {
    const d = diff(actual, expected, { firstN: 1, map: false });
    const m = d.first[0];
    if (m) return { output, index: m.index, coords: m.coords, actual: m.actual, expected: m.expected, actualBits: m.actualBits, expectedBits: m.expectedBits };
  }
  return undefined;
}

/** e.g. "out (sequence 2, token 7, channel 130): 0.5 (0x3f00) vs 0.4999 (0x3eff)". */
export function describeLocated(m: LocatedMismatch): string {
  const where = Object.entries(m.coords).map(([k, v]) => `${k} ${v}`).join(', ');
  return `${m.output} (${where}): ${m.actual} (${m.actualBits}) vs ${m.expected} (${m.expectedBits})`;
}
