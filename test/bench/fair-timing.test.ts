// The external baselines' timing method (bench/fair_timing.py): the figure every ratio uses must not count
// the host time a baseline spends before its kernel is queued. Proven without a GPU on a simulated stream
// (a thread that runs queued work in real time): a baseline that sleeps on the host before launching does
// not get slower by the fair method, and does by the naive one (host synchronised after every sample, no
// hold), which is how the harness timed vLLM and PyTorch before. That the naive figure moves is what shows
// this test can fail: the same assertion on the naive method's numbers would.

import { strict as assert } from 'assert';
import { spawnSync } from 'child_process';
import * as path from 'path';
import { projectRoot } from '../../lib/native/gdn';
import { benchMarkdown, BenchReport } from '../../lib/bench/bench';

interface MethodFigures { fair_us: number; naive_us: number; copy_us: number; hold_us: number; retaken: number; method: string; graph: { error?: string } }
interface Selftest { kernel_us: number; host_delay_us: number; prompt: MethodFigures; delayed: MethodFigures }

/** Would a method that reports these two figures count the host's delay? (More than a quarter of it.) */
const countsHostDelay = (prompt: number, delayed: number, delay: number) => delayed - prompt > 0.25 * delay;

describe('external baselines: the fair timing method cannot count host launch time', function () {
  this.timeout(120_000);
  let r: Selftest;
  before(() => {
    const run = spawnSync(process.env.GDN_TORCH_PYTHON ?? 'python3', [path.join(projectRoot(), 'bench', 'fair_timing.py'), '--selftest'], { encoding: 'utf8', timeout: 90_000 });
    assert.equal(run.status, 0, `fair_timing.py --selftest failed: ${run.stderr}`);
    r = JSON.parse(run.stdout);
  });

  it('the naive method counts a 6 ms host delay as kernel time (what the old harness reported)', () => {
    assert.ok(countsHostDelay(r.prompt.naive_us, r.delayed.naive_us, r.host_delay_us),
      `naive: ${r.prompt.naive_us.toFixed(0)} µs prompt, ${r.delayed.naive_us.toFixed(0)} µs delayed`);
    assert.ok(r.delayed.naive_us > r.kernel_us + 0.6 * r.host_delay_us);
  });

  it('the fair method reports the kernel alone, delay or not, and is what the scripts report', () => {
    assert.equal(r.delayed.method, 'fair');
    assert.ok(!countsHostDelay(r.prompt.fair_us, r.delayed.fair_us, r.host_delay_us),
      `fair: ${r.prompt.fair_us.toFixed(0)} µs prompt, ${r.delayed.fair_us.toFixed(0)} µs delayed (kernel ${r.kernel_us} µs)`);
    for (const m of [r.prompt, r.delayed]) {
      assert.ok(m.fair_us >= r.kernel_us * 0.95 && m.fair_us < r.kernel_us + 0.25 * r.host_delay_us, `fair ${m.fair_us} µs for a ${r.kernel_us} µs kernel`);
      assert.ok(m.copy_us >= 950 && m.copy_us < 2500, `the copy beside it: ${m.copy_us} µs for a 1 ms copy`);
    }
  });

  it('the hold is checked, not assumed: samples where the host fell behind were retaken with a longer hold', () => {
    assert.equal(r.prompt.retaken, 0, 'a prompt baseline needs no retake');
    assert.ok(r.delayed.retaken > 0, 'a delayed baseline must have been caught behind');
    assert.ok(r.delayed.hold_us >= r.host_delay_us, `final hold ${r.delayed.hold_us} µs < host delay ${r.host_delay_us} µs`);
    assert.match(r.delayed.graph.error ?? '', /no capture/);
  });
});

describe('bench reports: every external baseline shows its naive figure beside the fair one', () => {
  it('the markdown table gives fair, naive, their ratio and the graph replay or why there is none', () => {
    const report: BenchReport = {
      op: 'postconv', revision: 'r', provenance: null, torch: null, rows: [], copies: [], torchRows: [], stops: [],
      baselines: [
        { baseline: 'vLLM', shape: '4B T=512', fairUs: 20, naiveUs: 80, graphUs: 20.4, holdUs: 100, retaken: 3 },
        { baseline: 'PyTorch eager', shape: '4B T=512', fairUs: 50, naiveUs: 60, graphUs: null, graphError: 'RuntimeError: capture', holdUs: 200, retaken: 5 },
      ],
    };
    const md = benchMarkdown(report, 'bench postconv');
    assert.match(md, /\| vLLM \| 4B T=512 \| 20\.0 \| 80\.0 \| 4\.00 \| 20\.4 \| 1\.02 \|/);
    assert.match(md, /\| PyTorch eager \| 4B T=512 \| 50\.0 \| 60\.0 \| 1\.20 \| – \(RuntimeError: capture\) \| – \|/);
    assert.match(md, /Final GPU-side hold 200 µs; samples retaken because the host was behind: 5/);
  });
});
