// diff(), the exactness audit, located mismatches and the mismatch map at their edges, on tensors of a few
// elements whose words are given bit by bit, so that Stryker can mutate lib/analysis/{diff,audit,located,
// mismatch-map}.ts: the exact report (text, rows, HTML), every counter and its row, tolerance at its bound
// and with zero tolerances, identical Inf and NaN under tolerance, firstN, the worst element, notes, each
// argument check with its message, and the audit's verdicts, colours and checks.

import { strict as assert } from 'assert';
import { Tensor } from '../../lib/tensor';
import { checkComparable, countMismatches, diff, isClose } from '../../lib/analysis/diff';
import { auditExactness } from '../../lib/analysis/audit';
import { describeLocated, firstMismatch } from '../../lib/analysis/located';
import { MismatchMapBuilder, cellSize, mismatchFractions } from '../../lib/analysis/mismatch-map';
import { plainCoordinates } from '../../lib/analysis/coordinates';
import { MIME_BUNDLE } from '../../lib/view/display';

const f32 = (words: number[], shape: number[]) => Tensor.fromBytes(new Uint8Array(Uint32Array.from(words).buffer), shape, 'f32');
const bf16 = (words: number[], shape: number[]) => Tensor.fromBytes(new Uint8Array(Uint16Array.from(words).buffer), shape, 'bf16');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const html = (x: any): string => x[MIME_BUNDLE]().data['text/html'];
const msg = (text: string, type: Function = RangeError) => (e: unknown) => e instanceof type && (e as Error).message === text;

// actual 1, 2, 3 | 0, 5, NaN against expected 1, 2 + 1 ulp, 3 | −0, 5, 6.
const A = f32([0x3f800000, 0x40000000, 0x40400000, 0x00000000, 0x40a00000, 0x7fc00000], [2, 3]);
const B = f32([0x3f800000, 0x40000001, 0x40400000, 0x80000000, 0x40a00000, 0x40c00000], [2, 3]);

describe('diff at its edges', () => {
  it('the whole report of three kinds of mismatch with a tolerance: text, rows, listed mismatches, HTML', () => {
    const d = diff(A, B, { tolerance: { rtol: 0, atol: 0.5 }, label: 'x' });
    assert.equal(d.identical, false);
    assert.equal(d.rows, 2);
    assert.equal(d.finitePairs, 5);
    assert.equal(d.toString(), [
      'x: f32 [2, 3]: 3 of 6 elements differ (50%) in 2 of 2 rows',
      '  kinds: finite 1, ±0 1, Inf 0, NaN vs number 1, NaN payload 0',
      '  ulp over finite pairs: max 1, mean 0.2 (mean over finite mismatches 1)',
      '  error: max abs 2.384e-7, max rel 1.192e-7',
      '  tolerance rtol 0, atol 0.5: FAIL (1 not close, worst ratio 4.77e-7)',
      '  first 3 mismatches (plain indices):',
      '    (row 0, column 1): actual 2 (0x40000000) vs expected 2.00000024 (0x40000001), 1 ulp [finite]',
      '    (row 1, column 0): actual 0 (0x00000000) vs expected 0 (0x80000000), 0 ulp [signed-zero]',
      '    (row 1, column 2): actual NaN (0x7fc00000) vs expected 6 (0x40c00000) [nan]',
      '  note: 1 element(s) differ only in the sign of zero: equal values, different bits (counted as mismatches, 0 ulp).',
    ].join('\n'));
    assert.deepEqual(d.summaryRows(), [
      { measure: 'mismatching elements', value: 3 },
      { measure: '  finite (≥ 1 ulp)', value: 1 },
      { measure: '  +0 vs −0 (0 ulp)', value: 1 },
      { measure: '  ±Inf involved', value: 0 },
      { measure: '  NaN vs number', value: 1 },
      { measure: '  NaN payloads differ', value: 0 },
      { measure: 'rows with a mismatch', value: '2 of 2' },
      { measure: 'max ulp (finite pairs)', value: 1 },
      { measure: 'mean ulp (finite pairs)', value: 0.2 },
      { measure: 'mean ulp (finite mismatches)', value: 1 },
      { measure: 'max abs error', value: 2 ** -22 },
      { measure: 'max rel error', value: 2 ** -22 / (2 + 2 ** -22) },
      { measure: 'tolerance rtol 0 atol 0.5', value: 'FAIL: 1 not close, worst ratio 4.77e-7' },
    ]);
    assert.equal(d.firstAsText(), [
      'row  column  actual  expected  actual bits  expected bits  ulp  kind',
      '---  ------  ------  --------  -----------  -------------  ---  -----------',
      '  0       1       2         2  0x40000000   0x40000001     1    finite',
      '  1       0       0         0  0x00000000   0x80000000     0    signed-zero',
      '  1       2     NaN         6  0x7fc00000   0x40c00000     —    nan',
    ].join('\n'));
    const h = html(d);
    const cells = (tr: string[]) => tr.join('');
    assert.ok(h.startsWith('<div class="gdnlab-diff"><p><b>x: f32 [2, 3]: 3 of 6 elements differ (50%) in 2 of 2 rows</b></p>\n<table class="gdnlab-table"><thead><tr><th>measure</th><th>value</th></tr></thead>'), h);
    assert.ok(h.includes('<tr><td>  NaN payloads differ</td><td style="text-align:right">0</td></tr>\n<tr><td>rows with a mismatch</td><td>2 of 2</td></tr>'));
    assert.ok(h.includes('<tr><td>tolerance rtol 0 atol 0.5</td><td>FAIL: 1 not close, worst ratio 4.77e-7</td></tr>'));
    assert.ok(h.includes('\n<p>ulp histogram: 0: 4 · 1: 1 · NaN≠number: 1</p>\n'));
    assert.ok(h.includes('first 3 mismatches (plain indices)</caption><thead><tr><th>row</th><th>column</th><th>actual</th><th>expected</th><th>actual bits</th><th>expected bits</th><th>ulp</th><th>kind</th></tr></thead>'));
    assert.ok(h.includes(cells(['<tr><td style="text-align:right">0</td><td style="text-align:right">1</td><td style="text-align:right">2</td>',
      '<td style="text-align:right">2.00000024</td><td>0x40000000</td><td>0x40000001</td><td style="text-align:right">1</td><td>finite</td></tr>'])));
    assert.ok(h.includes('first elements not within tolerance</caption>'));
    assert.ok(h.includes('<td>0x7fc00000</td><td>0x40c00000</td><td>—</td><td>nan</td></tr>\n</tbody></table>\n<table'));
    assert.ok(h.endsWith('</tbody></table>\n<p><i>note:</i> 1 element(s) differ only in the sign of zero: equal values, different bits (counted as mismatches, 0 ulp).</p>\n</div>'));
    assert.equal(d[MIME_BUNDLE]().data['text/plain'], d.toString());
  });

  it('identical tensors: the headline only, no table, no notes for f32; with a tolerance its line and table', () => {
    const d = diff(A, A);
    assert.equal(d.identical, true);
    assert.equal(d.toString(), 'f32 [2, 3]: all 6 elements bit-identical');
    assert.equal(html(d), '<div class="gdnlab-diff"><p><b>f32 [2, 3]: all 6 elements bit-identical</b></p>\n</div>');
    assert.deepEqual(d.notes, []);
    assert.equal(d.worst, null);
    assert.equal(d.firstAsText(), 'actual  expected  actual bits  expected bits  ulp  kind\n------  --------  -----------  -------------  ---  ----');
    const t = diff(B, B, { tolerance: true }); // no NaN: an identical NaN is not close without equalNan
    assert.equal(t.toString(), 'f32 [2, 3]: all 6 elements bit-identical\n  tolerance rtol 1e-5, atol 1e-8: pass (0 not close, worst ratio 0)');
    assert.equal(t.tolerance!.pass, true);
    assert.equal(t.summaryRows().length, 13);
    assert.ok(html(t).includes('<table class="gdnlab-table"><thead><tr><th>measure</th>'));
    assert.ok(!html(t).includes('ulp histogram'));
    assert.equal(diff(A, A, { tolerance: false }).tolerance, null);
    assert.equal(diff(A, A).tolerance, null);
  });

  it('rows: one mismatch in the last row only, two in one row, a 1-D tensor, no columns', () => {
    const x = f32([0x3f800000, 0x40000000, 0x40400000, 0x40800000, 0x40a00000, 0x40c00000], [2, 3]); // 1 … 6
    const y1 = f32([0x3f800000, 0x40000000, 0x40400000, 0x40800000, 0x40a00000, 0x40c00001], [2, 3]);
    const d1 = diff(x, y1);
    assert.equal(d1.mismatches, 1);
    assert.equal(d1.mismatchedRows, 1);
    const y2 = f32([0x3f800000, 0x40000000, 0x40400000, 0x40800000, 0x40a00001, 0x40c00001], [2, 3]);
    assert.equal(diff(x, y2).mismatchedRows, 1);
    const d3 = diff(f32([0x3f800000, 0x40000000], [2]), f32([0x3f800001, 0x40000001], [2]));
    assert.equal(d3.rows, 1);
    assert.equal(d3.headline(), 'f32 [2]: 2 of 2 elements differ (100%) in 1 of 1 rows');
    const e = diff(f32([], [2, 0]), f32([], [2, 0]));
    assert.equal(e.rows, 0);
    assert.equal(e.headline(), 'f32 [2, 0]: all 0 elements bit-identical');
  });

  it('the worst element is the first of equal ulp distances, with its own error; relative error against 0 is Inf', () => {
    const d = diff(f32([0x3f800001, 0x40000001, 0x00000001, 0x3f800000], [4]), f32([0x3f800000, 0x40000000, 0x00000000, 0x40000000], [4]));
    assert.equal(d.maxUlp, 0x40000000 - 0x3f800000);
    assert.equal(d.worst!.index, 3);
    assert.equal(d.worst!.absError, 1);
    assert.equal(d.worst!.kind, 'finite');
    assert.equal(d.maxRelError, Infinity);
    const tie = diff(f32([0x3f800001, 0x40000001], [2]), f32([0x3f800000, 0x40000000], [2]));
    assert.equal(tie.worst!.index, 0);
    assert.equal(tie.worst!.absError, 2 ** -23);
    assert.equal(tie.worst!.ulp, 1);
    assert.equal(tie.maxAbsError, 2 ** -22);
    const rel = diff(f32([0x40400000], [1]), f32([0x40000000], [1])); // 3 against 2
    assert.equal(rel.maxRelError, 0.5);
    assert.equal(rel.maxAbsError, 1);
    // Only a signed zero differs: no finite mismatch, no worst.
    assert.equal(diff(f32([0, 0x3f800000], [2]), f32([0x80000000, 0x3f800000], [2])).worst, null);
  });

  it('tolerance: the bound itself is close, zero tolerances, Inf against a number, identical Inf and NaN, firstN', () => {
    assert.equal(isClose(1.5, 1, 0, 0.5), true);
    assert.equal(isClose(1.5000001, 1, 0, 0.5), false);
    assert.equal(isClose(3, 2, 0.5, 0), true);
    assert.equal(isClose(NaN, NaN, 0, 0, true), true);
    assert.equal(isClose(NaN, NaN, 0, 0), false);
    assert.equal(isClose(NaN, 1, 1, 1, true), false);
    assert.equal(isClose(Infinity, Infinity, 0, 0), true);
    assert.equal(isClose(Infinity, 1e38, 1, 1), false);
    const inf = 0x7f800000;
    const nan = 0x7fc00000;
    // 1 vs −1, +0 vs −0, Inf vs 1, identical Inf, identical NaN.
    const a = f32([0x3f800000, 0x00000000, inf, inf, nan], [5]);
    const b = f32([0xbf800000, 0x80000000, 0x3f800000, inf, nan], [5]);
    const z = diff(a, b, { tolerance: { rtol: 0, atol: 0 } }).tolerance!;
    assert.equal(z.worstRatio, Infinity);
    assert.equal(z.violations, 3); // 1 vs −1, Inf vs 1, NaN vs NaN
    assert.deepEqual(z.first.map((m) => [m.index, m.kind]), [[0, 'finite'], [2, 'inf'], [4, 'nan-identical']]);
    assert.equal(z.first[2].ulp, null);
    assert.ok(Number.isNaN(z.first[2].absError));
    // Without the finite pair: the signed zero has ratio 0 and Inf vs 1 is no finite pair.
    const w = diff(f32([0x00000000, inf, inf, nan], [4]), f32([0x80000000, 0x3f800000, inf, nan], [4]), { tolerance: { rtol: 0, atol: 0, equalNan: true } }).tolerance!;
    assert.equal(w.worstRatio, 0);
    assert.equal(w.violations, 1);
    assert.equal(w.equalNan, true);
    // The tolerance table prints values at 9 significant digits, as the mismatch table does.
    const zh = html(diff(A, B, { tolerance: { rtol: 0, atol: 0 } }));
    assert.ok(zh.split('first elements not within tolerance')[1].includes('<td style="text-align:right">2.00000024</td>'), zh);
    // Mismatches without a tolerance: the facts table all the same.
    assert.ok(html(diff(A, B)).includes('<tr><td>mismatching elements</td><td style="text-align:right">3</td></tr>'));
    const one = diff(a, b, { tolerance: { rtol: 0, atol: 0 }, firstN: 1 });
    assert.equal(one.tolerance!.first.length, 1);
    assert.equal(one.first.length, 1);
    assert.equal(one.tolerance!.violations, 3);
    const none = diff(a, b, { tolerance: true, firstN: 0 });
    assert.equal(none.first.length, 0);
    assert.equal(none.tolerance!.first.length, 0);
    assert.equal(none.mismatches, 3);
    // Only the identical NaN, firstN 1: it is listed.
    const n1 = diff(f32([nan, nan], [2]), f32([nan, nan], [2]), { tolerance: true, firstN: 1 }).tolerance!;
    assert.equal(n1.first.length, 1);
    assert.equal(n1.violations, 2);
    assert.equal(n1.pass, false);
  });

  it('bf16: the note for identical and differing tensors', () => {
    const same = diff(bf16([0x3f80], [1]), bf16([0x3f80], [1]));
    assert.deepEqual(same.notes, ['bf16 keeps 8 significant bits: identical bf16 values can hide differences that exist in f32 (DOMAIN §4, the bf16 trap). Compare the f32 outputs too, e.g. with auditExactness().']);
    const other = diff(bf16([0x3f80], [1]), bf16([0x3f81], [1]));
    assert.deepEqual(other.notes, ['bf16 keeps 8 significant bits: these bf16 values can hide differences that exist in f32 (DOMAIN §4, the bf16 trap). Compare the f32 outputs too, e.g. with auditExactness().']);
  });

  it('argument checks with their messages', () => {
    const x = f32([0, 0, 0, 0, 0, 0], [2, 3]);
    assert.throws(() => diff(x, f32([0, 0, 0, 0, 0, 0, 0, 0], [2, 4])), msg("expected: shape [2, 4] differs from actual's shape [2, 3]"));
    assert.throws(() => diff(x, f32([0, 0, 0, 0, 0, 0], [6])), msg("expected: shape [6] differs from actual's shape [2, 3]"));
    // One shape a prefix of the other, with as many elements: refused by the rank.
    assert.throws(() => diff(f32([0, 0], [2]), f32([0, 0], [2, 1])), msg("expected: shape [2, 1] differs from actual's shape [2]"));
    assert.throws(() => checkComparable(x, f32([0, 0, 0, 0, 0, 0], [3, 2]), ['p', 'q']), msg("q: shape [3, 2] differs from p's shape [2, 3]"));
    assert.throws(() => diff(x, x, { tolerance: 5 as never }), msg('tolerance: expected { rtol, atol, equalNan } or true, got 5', TypeError));
    assert.throws(() => diff(x, x, { tolerance: null as never }), msg('tolerance: expected { rtol, atol, equalNan } or true, got null', TypeError));
    for (const bad of [-1, NaN, Infinity, '1']) {
      assert.throws(() => diff(x, x, { tolerance: { rtol: bad as never } }), (e: unknown) => e instanceof RangeError && e.message.startsWith('tolerance.rtol: expected a finite number ≥ 0, got '));
      assert.throws(() => diff(x, x, { tolerance: { atol: bad as never } }), (e: unknown) => e instanceof RangeError && e.message.startsWith('tolerance.atol: expected a finite number ≥ 0, got '));
    }
    assert.throws(() => diff(x, x, { tolerance: { atol: -1 } }), msg('tolerance.atol: expected a finite number ≥ 0, got -1'));
    assert.equal(diff(x, x, { tolerance: { rtol: 0, atol: 0 } }).tolerance!.rtol, 0);
    assert.throws(() => diff(x, x, { coordinates: {} as never }), msg('coordinates: expected a Coordinates mapper (convCoordinates, postconvCoordinates, …), got Object', TypeError));
    assert.throws(() => diff(x, x, { coordinates: { at: 1 } as never }), (e: unknown) => e instanceof TypeError && e.message.startsWith('coordinates: expected a Coordinates mapper'));
    assert.equal(diff(x, x, { coordinates: null as never }).coordinateKind, 'plain indices');
    assert.equal(countMismatches(A, B), 3);
  });
});

describe('the exactness audit at its edges', () => {
  const w = (v: number) => new Uint32Array(new Float32Array([v]).buffer)[0];
  const pair = (a: number[], b: number[], shape = [a.length]) => {
    const a32 = f32(a.map(w), shape);
    const b32 = f32(b.map(w), shape);
    return { stored: [a32.astype('bf16'), b32.astype('bf16')] as [Tensor, Tensor], sources: [a32, b32] as [Tensor, Tensor] };
  };
  const u = 2 ** -23;

  it('verdicts, hidden elements, colours and the table', () => {
    const exact = auditExactness(pair([1, 2], [1, 2]));
    assert.equal(exact.verdict, 'exact');
    assert.equal(exact.hides, false);
    assert.equal(exact.message, 'Identical in f32 and in bf16: all 2 elements have the same bits.');
    assert.ok(html(exact).includes('<span style="color:#1a7f37">exact</span>'));
    // 1 + 2^-8 + u rounds up in bf16, 1 + u does not: f32 differs in 2, bf16 in 1.
    const partly = auditExactness(pair([1 + 2 ** -8, 1], [1 + 2 ** -8 + u, 1 + u]));
    assert.equal(partly.verdict, 'partly-hidden');
    assert.equal(partly.hides, true);
    assert.equal(partly.hiddenElements, 1);
    assert.equal(partly.message, 'The f32 results differ in 2 elements; the bf16 storage shows only 1 of them (1 rounded away). Judge exactness on f32.');
    assert.ok(html(partly).includes('<span style="color:#b42318">partly-hidden</span>'));
    const visible = auditExactness(pair([1, 2], [1.5, 2]));
    assert.equal(visible.verdict, 'visible');
    assert.equal(visible.hiddenElements, 0);
    assert.equal(visible.hides, false);
    assert.equal(visible.message, 'Every one of the 1 f32 differences is also visible in bf16.');
    assert.ok(html(visible).includes('<span style="color:#1a7f37">visible</span>'));
    const h = html(visible);
    assert.ok(h.startsWith('<div class="gdnlab-audit"><p><b>exactness audit — '), h);
    assert.ok(h.includes('<thead><tr><th>comparison</th><th>mismatches</th><th>rows with a mismatch</th><th>max ulp</th></tr></thead>'));
    assert.ok(h.includes('<tr><td>stored (bf16)</td><td style="text-align:right">1</td><td style="text-align:right">1</td><td style="text-align:right">64</td></tr>'), h);
    assert.ok(h.includes('<tr><td>sources (f32)</td><td style="text-align:right">1</td><td style="text-align:right">1</td><td style="text-align:right">4,194,304</td></tr>'), h);
    const hidden = auditExactness({ ...pair([1], [1 + u]), label: 'L' });
    assert.ok(html(hidden).includes('<span style="color:#b42318">hidden</span>'));
    assert.ok(html(hidden).startsWith('<div class="gdnlab-audit"><p><b>L: exactness audit — '));
    assert.equal(hidden.toString().split('\n')[0], 'L: exactness audit (bf16 vs f32): hidden');
  });

  it('the rounding warning only when a stored tensor is not its source rounded; the options reach both diffs', () => {
    const p = pair([1, 2], [1, 2]);
    const wrong = auditExactness({ stored: [p.stored[0], bf16([0x3f80, 0x4041], [2])], sources: p.sources });
    assert.equal(wrong.verdict, 'inconsistent');
    assert.deepEqual(wrong.roundingMismatches, [0, 1]);
    assert.equal(wrong.message, 'The bf16 results differ in 1 elements although their f32 sources are identical: the stored tensors are not the rounding of these sources. Warning: stored[0] differs from round(sources[0]) in 0 elements and stored[1] from round(sources[1]) in 1: the pairs may not belong together.');
    const q = pair([1, 2, 3, 4], [1.5, 2.5, 3.5, 4.5], [2, 2]);
    const a = auditExactness({ ...q, firstN: 1, coordinates: plainCoordinates() });
    assert.equal(a.storage.first.length, 1);
    assert.equal(a.f32.first.length, 1);
    assert.equal(a.storage.label, 'stored bf16');
    assert.equal(a.f32.label, 'f32 sources');
    assert.equal(a.storage.coordinateKind, 'plain indices');
  });

  it('argument checks with their messages', () => {
    const p = pair([1, 2], [1, 2]);
    assert.throws(() => auditExactness(null as never), msg('auditExactness: expected { stored: [a, b], sources: [a32, b32] }, got null', TypeError));
    assert.throws(() => auditExactness(5 as never), msg('auditExactness: expected { stored: [a, b], sources: [a32, b32] }, got 5', TypeError));
    assert.throws(() => auditExactness({ stored: p.stored, sources: 3 as never }), msg('sources: expected [a32, b32] (two f32 tensors), got 3', TypeError));
    assert.throws(() => auditExactness({ stored: p.stored, sources: [p.sources[0]] as never }), (e: unknown) => e instanceof TypeError && e.message.startsWith('sources: expected [a32, b32] (two f32 tensors), got '));
    assert.throws(() => auditExactness({ stored: [p.stored[0]] as never, sources: p.sources }), (e: unknown) => e instanceof TypeError && e.message.startsWith('stored: expected [a, b] (two bf16 or f16 tensors), got '));
    assert.throws(() => auditExactness({ stored: p.stored, sources: [p.sources[0], p.stored[1]] }), msg("sources[1]: dtype bf16 differs from sources[0]'s f32; compare tensors of one dtype (convert explicitly with astype)", TypeError));
    assert.throws(() => auditExactness({ stored: p.sources, sources: p.sources }), msg('stored: expected bf16 or f16 tensors, got f32', TypeError));
    assert.throws(() => auditExactness({ stored: p.stored, sources: p.stored }), msg('sources: expected f32 tensors, got bf16', TypeError));
    const s23 = pair([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6], [2, 3]);
    const s24 = pair([1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8], [2, 4]);
    assert.throws(() => auditExactness({ stored: s23.stored, sources: s24.sources }), msg("sources: shape [2, 4] differs from stored's shape [2, 3]"));
    const s2 = pair([1, 2], [1, 2], [2]);
    const s21 = pair([1, 2], [1, 2], [2, 1]);
    assert.throws(() => auditExactness({ stored: s2.stored, sources: s21.sources }), msg("sources: shape [2, 1] differs from stored's shape [2]"));
    const s6 = pair([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6]);
    assert.throws(() => auditExactness({ stored: s23.stored, sources: s6.sources }), msg("sources: shape [6] differs from stored's shape [2, 3]"));
  });
});

describe('located mismatches and the mismatch map at their edges', () => {
  it('firstMismatch: the first output that differs, undefined when none does; describeLocated', () => {
    assert.equal(firstMismatch([['out', A, A], ['state', B, B]]), undefined);
    assert.equal(firstMismatch([]), undefined);
    const m = firstMismatch([['out', A, A], ['state', A, B], ['q', B, A]])!;
    assert.deepEqual(m, { output: 'state', index: 1, coords: { row: 0, column: 1 }, actual: 2, expected: 2.000000238418579, actualBits: '0x40000000', expectedBits: '0x40000001' });
    assert.equal(describeLocated(m), 'state (row 0, column 1): 2 (0x40000000) vs 2.000000238418579 (0x40000001)');
  });

  it('MismatchMapBuilder: 1-D and empty shapes, grid checks with their messages, cell sizes and fractions', () => {
    const one = new MismatchMapBuilder([5], ['', 'index']);
    assert.equal(one.rows, 1);
    assert.equal(one.cols, 5);
    const empty = new MismatchMapBuilder([0, 4], ['r', 'c']);
    assert.equal(empty.cols, 0);
    assert.deepEqual(empty.finish().counts, [[0]]);
    assert.deepEqual(mismatchFractions(empty.finish()), [[0]]); // a cell of no elements: 0, not 0/0
    for (const key of ['maxRows', 'maxCols'] as const) {
      for (const v of [0, -1, 1.5]) {
        assert.throws(() => new MismatchMapBuilder([4, 4], ['r', 'c'], { [key]: v }), msg(`map.${key}: expected a positive integer, got ${v}`));
      }
    }
    // 5 × 3 on a 2 × 2 grid: rows [0, 3) and [3, 5), columns [0, 2) and [2, 3).
    const b = new MismatchMapBuilder([5, 3], ['r', 'c'], { maxRows: 2, maxCols: 2 });
    for (const i of [0, 1, 2, 14]) b.add(i);
    const map = b.finish();
    assert.deepEqual(map.rowEdges, [0, 3, 5]);
    assert.deepEqual(map.colEdges, [0, 2, 3]);
    assert.deepEqual(map.counts, [[2, 1], [0, 1]]);
    assert.equal(map.total, 4);
    assert.deepEqual([cellSize(map, 0, 0), cellSize(map, 0, 1), cellSize(map, 1, 0), cellSize(map, 1, 1)], [6, 3, 4, 2]);
    assert.deepEqual(mismatchFractions(map), [[2 / 6, 1 / 3], [0, 1 / 2]]);
    const grid1 = new MismatchMapBuilder([3, 3], ['r', 'c'], { maxRows: 1, maxCols: 1 });
    grid1.add(8);
    assert.deepEqual(grid1.finish().counts, [[1]]);
  });
});
