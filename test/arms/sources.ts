// Arm bodies the user-arm tests define (docs/USER-ARMS.md), in the dialect a notebook cell uses.

import * as fs from 'fs';
import * as path from 'path';
import { projectRoot } from '../../lib/native/gdn';

const example = (file: string) => fs.readFileSync(path.join(projectRoot(), 'examples', 'arms', file), 'utf8');
/** Replaces the one occurrence of `from` (a stale edit fails loudly instead of voiding the variant). */
function variant(text: string, from: string, to: string): string {
  if (text.split(from).length !== 2) throw new Error(`test/arms/sources.ts: '${from}' must occur once in the example`);
  return text.replace(from, to);
}

/**
 * The register arm with 16-token programs (the built-in reg uses 8), examples/arms/reg16.cuh: chunk 0
 * owns the final-state write, so it must equal scalar bit for bit under every block order.
 */
export const REG16_SOURCE = example('reg16.cuh');
/** The #305 shape: the program reaching the end of the sequence writes the state. */
export const REG16_RACY_SOURCE = variant(REG16_SOURCE, 'if (!s.writes_state) return;', 'if (s.t1 != s.end) return;');

/**
 * The token tile as a user arm, examples/arms/tile16.cuh: the tree's fold (its first two levels), then
 * its shuffle levels; must equal tree bit for bit.
 */
export const TILE_TREE_SOURCE = example('tile16.cuh');
/** A changed fold, ((x0² + x1²) + x2²) + x3²: other f32 bits, mostly hidden by bf16 rounding. */
export const TILE_SEQ_SOURCE = variant(TILE_TREE_SOURCE, '(square(x[0]) + square(x[2])) + (square(x[1]) + square(x[3]))', '((square(x[0]) + square(x[1])) + square(x[2])) + square(x[3])');

/** tile16 with its token loop (from `const int lane` to the end) replaced: the block decoding and gate slot kept. */
function tileWithLoop(loop: string): string {
  const at = TILE_TREE_SOURCE.indexOf('  const int lane = t.lane();');
  if (at < 0) throw new Error("test/arms/sources.ts: tile16.cuh no longer has 'const int lane = t.lane();'");
  return TILE_TREE_SOURCE.slice(0, at) + loop;
}

/**
 * The token tile taking a warp's tokens two at a time: each butterfly level exchanges both tokens' sums in one
 * step (t.shfl_xor_each, docs/SPEC.md §13: one wait on the host instead of two); the same tree, so it must
 * equal tree bit for bit.
 */
export const TILE_PAIRS_SOURCE = tileWithLoop(`  const int lane = t.lane();
  for (int j = 0; j < 4; j += 2) {
    const int64_t tok = t0 + t.warp() * 4 + j;
    if (tok >= p.T) break;  // the same for every lane of a warp
    const int rows = tok + 1 < p.T ? 2 : 1;
    if (s.kind == postconv::kSlotV) {
      for (int r = 0; r < rows; ++r)
        for (int m = 0; m < 4; ++m) head_store<TQ>(p, s, tok + r, lane + 32 * m, head_x<TC>(p, s, tok + r, lane + 32 * m));
      continue;
    }
    float x[2][4], sum[2];
    for (int r = 0; r < 2; ++r) {
      for (int m = 0; m < 4; ++m) x[r][m] = r < rows ? head_x<TC>(p, s, tok + r, lane + 32 * m) : 0.0f;
      sum[r] = (square(x[r][0]) + square(x[r][2])) + (square(x[r][1]) + square(x[r][3]));
    }
    for (int off = 16; off >= 1; off /= 2) {
      const int masks[2] = {off, off};
      t.shfl_xor_each(masks, [&](int r) { return sum[r]; }, [&](int r, float got) { sum[r] = sum[r] + got; });
    }
    for (int r = 0; r < rows; ++r) {
      const float inv = l2_inv(sum[r]);
      for (int m = 0; m < 4; ++m) head_store<TQ>(p, s, tok + r, lane + 32 * m, x[r][m] * inv);
    }
  }
}
`);

const HEAD = `template <class TX, class TO, class Ctx>
GDN_HD void conv_arm(const Params& p, Ctx& t) {
  const Span s = program_span(p, t.by());
  const int64_t c = t.bx() * 128 + t.tid();
  if (c >= p.C || s.t0 >= s.t1) return;
`;

/**
 * Planted faults: each must give an error naming the arm, and leave the next call working. The
 * out-of-bounds accesses reach 2^24 rows past the buffer, so that on CUDA (no checked mode) they leave
 * mapped memory too; `cuda` is what the CUDA backend reports when it differs from the host's message.
 */
export const FAULTS: { name: string; source: string; expect: RegExp; cuda?: RegExp }[] = [
  { name: 'fault-oob-write', source: HEAD + '  out_store<TO>(p, p.T + ((int64_t)1 << 24), c, 1.0f);\n}\n', expect: /arm 'fault-oob-write' wrote out at element \d+, outside \[0, \d+\)/, cuda: /arm 'fault-oob-write' \(conv\) on CUDA: .*(illegal|out of bounds|invalid)/i },
  { name: 'fault-oob-read', source: HEAD + '  out_store<TO>(p, s.t0, c, x_at<TX>(p, p.T + ((int64_t)1 << 24), c));\n}\n', expect: /arm 'fault-oob-read' read x at element \d+, outside \[0, \d+\)/, cuda: /arm 'fault-oob-read' \(conv\) on CUDA: .*(illegal|out of bounds|invalid)/i },
  { name: 'fault-wild-write', source: HEAD + '  static_cast<float*>(p.out)[(int64_t)1 << 40] = 1.0f;\n}\n', expect: /arm 'fault-wild-write' \(conv\): the worker was killed by SIGSEGV/, cuda: /arm 'fault-wild-write' \(conv\) on CUDA: .*(illegal|out of bounds|invalid)/i },
  // An endless loop with a store in it: a loop without side effects may be deleted (ptxas removed one).
  { name: 'fault-spin', source: HEAD + '  for (int64_t i = 0;; ++i) out_store<TO>(p, s.t0, c, (float)i);\n}\n', expect: /arm 'fault-spin'.*ran past its time limit of 1500 ms/ },
  { name: 'fault-syntax', source: HEAD + '  float y = x_at<TX>(p, s.t0, c)\n  out_store<TO>(p, s.t0, c, y);\n}\n', expect: /arm 'fault-syntax': compiling for \w+ failed[\s\S]*arm:fault-syntax[:(]7/ },
  { name: 'fault-signature', source: 'template <class TX, class TO, class Ctx>\nGDN_HD void conv_arm(const Params& p) {\n}\n', expect: /arm 'fault-signature': the body must define\s+template <class TX, class TO, class Ctx> GDN_HD void conv_arm\(const Params& p, Ctx& t\)/ },
];
