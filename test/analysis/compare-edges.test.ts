// compare() and Comparison at their edges: refusals of things that are not timed cases, the band
// range, the too-few-samples note at exactly MIN_COMPARE_SAMPLES, pairing, the verdict exactly on
// the band and on 1, and the exact wording of sentence(), toString() and the HTML.
//
// Constant samples make every bootstrap resample give the same ratio, so the CI is that ratio and
// the expected text can be written out in full.

import { strict as assert } from 'assert';
import { summarize } from '../../lib/analysis/stats';
import type { RatioCI } from '../../lib/analysis/stats';
import { CaseTiming, Comparison, MIN_COMPARE_SAMPLES, compare } from '../../lib/analysis/timing';
import { MIME_BUNDLE } from '../../lib/view/display';
import { escapeXml } from '../../lib/view/format';

function timed(label: string, samples: number[], runId = 'run-1'): CaseTiming {
  return {
    label,
    runId,
    opKind: 'copy',
    meta: {},
    samples,
    stats: summarize(samples),
    noise: 0,
    measuredMs: 0,
    provenance: { label, marker: `prov-${label}` } as never,
  };
}

const constant = (v: number, n: number) => new Array<number>(n).fill(v);

/** Asserts fn throws an error of this class whose message is exactly `message`. */
function refuses(fn: () => unknown, type: ErrorConstructor | RangeErrorConstructor | TypeErrorConstructor, message: string | RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof type, `expected a ${type.name}, got ${String(e)}`);
    if (typeof message === 'string') assert.equal(e.message, message);
    else assert.match(e.message, message);
    return true;
  });
}

const ok = timed('ok', constant(4, 12));

describe('compare: refusals', () => {
  it('refuses non-cases for a and for b with a TypeError naming the argument', () => {
    const msg = (what: string, got: string) => `${what}: expected a timed case (an entry of timeArms(...).cases), got ${got}`;
    refuses(() => compare(null as never, ok), TypeError, msg('a', 'null'));
    refuses(() => compare(ok, undefined as never), TypeError, msg('b', 'undefined'));
    refuses(() => compare(42 as never, ok), TypeError, msg('a', '42'));
    refuses(() => compare(ok, { runId: 'run-1', samples: 'abc', label: 'x' } as never), TypeError, msg('b', 'Object'));
    refuses(() => compare({ runId: 5, samples: [1, 2], label: 'x' } as never, ok), TypeError, msg('a', 'Object'));
    refuses(() => compare({ samples: [1, 2], label: 'x' } as never, ok), TypeError, msg('a', 'Object'));
  });

  it('refuses a function that carries samples and a runId: it is not an object of timeArms', () => {
    const fn = Object.assign(() => 0, { samples: constant(4, 12), runId: 'run-1', stats: summarize(constant(4, 12)) });
    refuses(() => compare(fn as never, ok), TypeError, /^a: expected a timed case \(an entry of timeArms\(\.\.\.\)\.cases\), got /);
  });

  it('refuses a case without samples, naming it', () => {
    refuses(() => compare(timed('empty', []), ok), RangeError, "a: case 'empty' has no samples");
    refuses(() => compare(ok, timed('nothing', [])), RangeError, "b: case 'nothing' has no samples");
  });

  it('band must lie strictly inside (0, 1)', () => {
    for (const band of [0, 1, 1.5, -0.1, NaN]) {
      refuses(() => compare(ok, ok, { band }), RangeError, `band: expected a number in (0, 1), got ${band}`);
    }
    assert.deepEqual(compare(ok, ok, { band: 0.5, resamples: 20 }).band, [1 / 1.5, 1.5]);
    assert.deepEqual(compare(ok, ok, { band: 0.999, resamples: 20 }).band, [1 / 1.999, 1.999]);
  });
});

describe('compare: samples, pairing and the note', () => {
  it(`the note names the smaller case and appears below ${MIN_COMPARE_SAMPLES} samples only`, () => {
    const few = compare(timed('few', constant(3, 5)), timed('many', constant(4, 20)), { resamples: 20 });
    assert.equal(few.note, `only 5 samples in 'few': too few for a confidence interval (need ${MIN_COMPARE_SAMPLES})`);
    assert.equal(few.verdict, 'unclear');
    const fewB = compare(timed('many', constant(3, 20)), timed('few', constant(4, 9)), { resamples: 20 });
    assert.equal(fewB.note, `only 9 samples in 'few': too few for a confidence interval (need ${MIN_COMPARE_SAMPLES})`);
    const one = compare(timed('one', [3]), timed('many', constant(4, 20)), { resamples: 20 });
    assert.equal(one.note, `only 1 sample in 'one': too few for a confidence interval (need ${MIN_COMPARE_SAMPLES})`);
    const enough = compare(timed('a', constant(3, MIN_COMPARE_SAMPLES)), timed('b', constant(4, 40)), { resamples: 20 });
    assert.equal(enough.note, undefined);
    assert.equal(enough.verdict, 'faster');
  });

  it('pairs only equal-length cases of one run', () => {
    assert.equal(compare(timed('a', constant(3, 12)), timed('b', constant(4, 15)), { resamples: 20 }).paired, false);
    assert.equal(compare(timed('a', constant(3, 12)), timed('b', constant(4, 12)), { resamples: 20 }).paired, true);
    const across = compare(timed('a', constant(3, 12), 'r1'), timed('b', constant(4, 12), 'r2'), { resamples: 20, acrossRuns: true });
    assert.equal(across.paired, false);
    assert.equal(across.scope, 'across runs');
  });

  it('keeps both cases\' provenance objects', () => {
    const a = timed('a', constant(3, 12));
    const b = timed('b', constant(4, 12));
    const c = compare(a, b, { resamples: 20 });
    assert.equal(c.provenance.a, a.provenance);
    assert.equal(c.provenance.b, b.provenance);
    assert.deepEqual(c.medians, [3, 4]);
  });
});

describe('compare: verdict exactly on the edges', () => {
  const r = (lo: number, hi: number): RatioCI => ({ ratio: (lo + hi) / 2, lo, hi, confidence: 0.95, resamples: 100, seed: 1, paired: true });
  const a = timed('a', constant(3, 12));
  const b = timed('b', constant(4, 12));
  const verdict = (lo: number, hi: number, band = 0.25) => new Comparison(a, b, r(lo, hi), band, 'within run').verdict;

  it("a CI touching either end of the band is still 'same' (the band is closed)", () => {
    // 1/(1 + 0.25) and 1 + 0.25 are both exact doubles (0.8 and 1.25).
    assert.equal(verdict(0.8, 1.25), 'same');
    assert.equal(verdict(0.8, 0.8), 'same');
    assert.equal(verdict(1.25, 1.25), 'same');
    assert.equal(verdict(0.79, 1), 'unclear');
    assert.equal(verdict(1, 1.26), 'unclear');
  });

  it("a CI ending exactly at 1 is neither 'faster' nor 'slower'", () => {
    assert.equal(verdict(0.5, 1), 'unclear');
    assert.equal(verdict(1, 2), 'unclear');
    assert.equal(verdict(0.5, 0.999), 'faster');
    assert.equal(verdict(1.001, 2), 'slower');
  });

  it('the same edges through compare() with constant samples', () => {
    assert.equal(compare(timed('a', constant(4, 12)), timed('b', constant(5, 12)), { band: 0.25, resamples: 20 }).verdict, 'same');
    assert.equal(compare(timed('a', constant(5, 12)), timed('b', constant(4, 12)), { band: 0.25, resamples: 20 }).verdict, 'same');
    assert.equal(compare(timed('a', constant(5, 12)), timed('b', constant(4, 12)), { band: 0.2, resamples: 20 }).verdict, 'slower');
  });
});

describe('compare: wording', () => {
  const within = (x: number, y: number) => compare(timed('a', constant(x, 12)), timed('b', constant(y, 12)), { resamples: 20 });

  it('sentence: less time below 1, more time above, 0% more time at exactly 1', () => {
    assert.equal(within(3, 4).sentence(), 'a vs b: median ratio 0.7500 (95% CI 0.7500–0.7500; 25% less time) → faster [within run]');
    assert.equal(within(5, 4).sentence(), 'a vs b: median ratio 1.2500 (95% CI 1.2500–1.2500; 25% more time) → slower [within run]');
    assert.equal(within(4, 4).sentence(), 'a vs b: median ratio 1.0000 (95% CI 1.0000–1.0000; 0% more time) → same [within run]');
  });

  it('toString: the sentence and the details line, nothing else within a run with enough samples', () => {
    const c = within(3, 4);
    assert.equal(c.toString(), [c.sentence(), "  medians 3.000 µs vs 4.000 µs; 'same' band 0.9804–1.0200; 20 paired bootstrap resamples, seed 1"].join('\n'));
  });

  it('toString: the note line when there are too few samples', () => {
    const c = compare(timed('a', constant(3, 4)), timed('b', constant(4, 12)), { resamples: 20 });
    assert.deepEqual(c.toString().split('\n').slice(1), [
      "  medians 3.000 µs vs 4.000 µs; 'same' band 0.9804–1.0200; 20 bootstrap resamples, seed 1",
      `  only 4 samples in 'a': too few for a confidence interval (need ${MIN_COMPARE_SAMPLES})`,
    ]);
  });

  it('toString: the across-runs warning line, naming both runs', () => {
    const c = compare(timed('a', constant(3, 12), 'r1'), timed('b', constant(4, 12), 'r2'), { resamples: 20, acrossRuns: true });
    assert.deepEqual(c.toString().split('\n'), [
      'a vs b: median ratio 0.7500 (95% CI 0.7500–0.7500; 25% less time) → faster [across runs]',
      "  medians 3.000 µs vs 4.000 µs; 'same' band 0.9804–1.0200; 20 bootstrap resamples, seed 1",
      '  across runs: r1 vs r2 — clocks, temperature and load may differ between them',
    ]);
  });

  it('HTML: the verdict in its colour, the warning only across runs', () => {
    const html = (c: Comparison) => String(c[MIME_BUNDLE]().data['text/html']);
    const faster = within(3, 4);
    assert.equal(html(faster), `<div class="gdnlab-compare"><p><b>a</b> vs <b>b</b>: <b style="color:#1a7f37">faster</b></p><pre>${escapeXml(faster.toString())}</pre></div>`);
    assert.equal(faster[MIME_BUNDLE]().data['text/plain'], faster.toString());
    assert.match(html(within(5, 4)), /<b style="color:#b42318">slower<\/b>/);
    assert.match(html(within(4, 4)), /<b style="color:#555">same<\/b>/);
    const across = compare(timed('a', constant(4, 12), 'r1'), timed('b', constant(4, 12), 'r2'), { resamples: 20, acrossRuns: true });
    assert.match(html(across), /<\/p><p style="color:#9a6700"><b>Across runs<\/b> \(r1 vs r2\): clocks, temperature and load may differ\.<\/p><pre>/);
    const few = compare(timed('a', constant(3, 4)), timed('b', constant(4, 12)), { resamples: 20 });
    assert.match(html(few), /<b style="color:#9a6700">unclear<\/b><\/p><pre>/);
  });
});
