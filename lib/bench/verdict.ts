// A self-check of the timing verdicts on real hardware, in one run: the same op timed twice as two
// cases must come out 'same', and an op that is genuinely slower must come out 'slower' with its
// confidence interval. Run by `gdnlab bench verdict`.

import { Backend } from '../backend';
import { Tensor } from '../tensor';
import * as conv from '../ops/conv';
import { Comparison } from '../analysis/timing';
import { timeArms } from '../check/timed';

export async function verdictSelfCheck(backend: Backend): Promise<{ same: Comparison; slower: Comparison; line: string }> {
  const C = 8192;
  const T = backend.kind === 'cuda' ? 8192 : 64;
  const K = 4;
  const inputs = {
    x: Tensor.random([T, C], 'bf16', { seed: 1 }).to(backend),
    weight: Tensor.random([C, K], 'bf16', { seed: 2 }).to(backend),
    queryStartLoc: [0, T],
    convState: Tensor.zeros([1, C, K - 1]).to(backend),
  };
  // The same arm twice (two separately prepared launches), and the scalar arm, which is much slower.
  const a = conv.prepareTimed(inputs, { arm: 'reg-k4', mapping: 'exact', outDtype: 'bf16', backend }, 'reg-k4 (1st)');
  const b = conv.prepareTimed(inputs, { arm: 'reg-k4', mapping: 'exact', outDtype: 'bf16', backend }, 'reg-k4 (2nd)');
  const s = conv.prepareTimed(inputs, { arm: 'scalar', outDtype: 'bf16', backend }, 'scalar');
  try {
    const r = await timeArms([a, b, s].map((op) => ({ label: op.label!, op })), { backend, maxTimeMs: 8000, progress: false });
    const same = r.compare('reg-k4 (1st)', 'reg-k4 (2nd)');
    const slower = r.compare('scalar', 'reg-k4 (1st)');
    return { same, slower, line: r.provenanceLine() };
  } finally {
    for (const op of [a, b, s]) op.release();
    inputs.x.release();
    inputs.weight.release();
    inputs.convState.release();
  }
}
