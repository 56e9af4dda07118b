import { strict as assert } from 'assert';
import { table, renderTable, toDataFrame } from '../../lib/view/table';
import { MIME_BUNDLE } from '../../lib/view/display';
import { formatDuration, formatNumber, formatPercent } from '../../lib/view/format';
import { withKernel } from './fake-kernel';
import { freshRequire } from '../stand-ins';

const rows = [
  { arm: 'reg', 'median µs': 81.23456, n: 1200, identical: true },
  { arm: 'reg-k4', 'median µs': 76.5, n: 1200, identical: true, note: 'K = 4 fixed' },
  { arm: 'reg-k4x2', 'median µs': 1.23e-7, n: 12345678, identical: false },
];

describe('tables', function () {
  this.timeout(30000); // danfojs-node loads TensorFlow.js on first use

  it('returns a danfojs DataFrame over every column', () => {
    const df = table(rows, { show: false });
    assert.deepEqual(df.shape, [3, 5]);
    assert.deepEqual(df.columns, ['arm', 'median µs', 'n', 'identical', 'note']);
    assert.equal((df.values[1] as unknown[])[0], 'reg-k4');
    assert.equal((df.values[0] as unknown[])[4], null);
  });

  it('shows an HTML table (display_data text/html + text/plain) in a kernel, once', async () => {
    const { value: df, outputs } = await withKernel(() => table(rows, { title: 'conv arms', columns: ['arm', 'median µs', 'n'], format: { 'median µs': 3 } }));
    assert.equal(outputs.length, 1);
    const html = String(outputs[0].data['text/html']);
    assert.match(html, /<caption[^>]*>conv arms<\/caption>/);
    assert.match(html, /<th>median µs<\/th>/);
    assert.match(html, /<td style="text-align:right">81\.2<\/td>/);
    assert.match(html, /1\.23e-7/);
    assert.match(html, /12,345,678/);
    assert.ok(!/identical/.test(html));
    assert.match(String(outputs[0].data['text/plain']), /arm\s+median µs\s+n/);
    assert.deepEqual(df.columns, ['arm', 'median µs', 'n']);
    // The returned DataFrame as a cell's last value adds nothing (null: no execute_result, no second table).
    const last = (df as unknown as Record<symbol, () => unknown>)[MIME_BUNDLE]();
    assert.equal(last, null);
  });

  it('formats cells by function, escapes HTML, and copes with odd values', () => {
    const { html, text } = renderTable([{ a: '<b>x</b>', b: [1, 2, 3], c: { k: 1 }, d: NaN, e: -Infinity }], { format: { a: (v) => `«${v}»` } });
    assert.match(html, /&lt;b&gt;x&lt;\/b&gt;/);
    assert.match(html, /\[1, 2, 3\]/);
    assert.match(html, /\{&quot;k&quot;:1\}/);
    assert.match(html, /NaN/);
    assert.match(text, /-Inf/);
    const df = toDataFrame([{ a: [1, 2], b: { k: 1 } }]);
    assert.deepEqual(df.values, [['[1, 2]', '{"k":1}']]);
  });

  it('every kind of cell value as the DataFrame holds it: missing as null, bigint as a number, arrays and typed arrays, dates, objects as JSON, the rest as text', () => {
    class Named { toString(): string { return 'named'; } }
    const df = toDataFrame([
      { a: undefined, b: null, c: 7n, d: new Float32Array([0.5, 2]), e: new Date(Date.UTC(2026, 11, 6, 1, 2, 3)), f: { k: [1] }, g: new Named(), h: false, i: '[object Object]', n: 1.5 },
    ], ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'n', 'j']);
    // A string is kept as it is, even one that reads like an object's default text; a number stays a number.
    assert.deepEqual(df.values, [[null, null, 7, '[0.5, 2]', '2026-12-06T01:02:03.000Z', '{"k":[1]}', 'named', false, '[object Object]', 1.5, null]]);
    assert.equal(typeof (df.values[0] as unknown[])[2], 'number');
    // Without columns: every key, in order of first appearance over the rows.
    assert.deepEqual(toDataFrame([{ b: 1 }, { a: 2, b: 3 }]).columns, ['b', 'a']);
    assert.deepEqual(toDataFrame([], ['p', 'q']).shape, [0, 2]);
  });

  it('danfojs is loaded on the first call of a fresh module, and once', () => {
    const fresh = freshRequire<typeof import('../../lib/view/table')>(require.resolve('../../lib/view/table'));
    const df = fresh.toDataFrame([{ a: 1 }]);
    assert.deepEqual(df.values, [[1]]);
    assert.equal(df.constructor, toDataFrame([{ a: 2 }]).constructor, 'both modules build the one danfojs DataFrame');
  });

  it('outside a kernel (or with show: false) nothing is displayed, and the DataFrame as a last value shows the table once', async () => {
    const df = table(rows, { columns: ['arm', 'n'] });
    const bundle = (df as unknown as Record<symbol, () => { data: Record<string, string> } | null>)[MIME_BUNDLE]();
    assert.ok(bundle, 'outside a kernel the DataFrame carries its table');
    assert.match(bundle.data['text/html'], /<th>arm<\/th><th>n<\/th><\/tr>/);
    assert.equal(bundle.data['text/plain'].split('\n')[0].trim().split(/\s+/).join(' '), 'arm n');
    // The bundle is a hidden, replaceable property: not copied by a spread, not listed with the frame's own fields.
    const descriptor = Object.getOwnPropertyDescriptor(df, MIME_BUNDLE);
    assert.deepEqual([descriptor?.enumerable, descriptor?.configurable], [false, true]);
    assert.equal(MIME_BUNDLE in { ...df }, false);
    const { value: quiet, outputs } = await withKernel(() => table(rows, { show: false }));
    assert.equal(outputs.length, 0, 'show: false displays nothing in a kernel');
    const last = (quiet as unknown as Record<symbol, () => { data: Record<string, string> } | null>)[MIME_BUNDLE]();
    assert.ok(last && /reg-k4x2/.test(last.data['text/html']));
  });

  it('refuses rows that are not objects and unknown columns, naming the argument', () => {
    assert.throws(() => table('x' as never), /rows: expected an array of objects/);
    assert.throws(() => table([1] as never), /rows\[0\]: expected an object/);
    assert.throws(() => table(rows, { columns: ['arm', 'speed'], show: false }), /columns: 'speed' not in the rows/);
    assert.throws(() => table(rows, { format: { n: 0 }, show: false }), /format.n: expected significant digits/);
    assert.deepEqual(table([], { show: false, columns: ['a'] }).shape, [0, 1]);
  });

  it('number formatting: integers grouped, 4 significant digits, exponents outside [1e-3, 1e6)', () => {
    assert.equal(formatNumber(1234567), '1,234,567');
    assert.equal(formatNumber(1234), '1234');
    assert.equal(formatNumber(3.14159265), '3.142');
    assert.equal(formatNumber(0.5), '0.5');
    assert.equal(formatNumber(2.5e-7), '2.5e-7');
    assert.equal(formatNumber(1.5e9 + 0.5), '1.5e9');
    assert.equal(formatNumber(-0.00012346), '-1.235e-4');
    // Never exponent notation between 0.001 and 10^9 (the issue saw "1.770e+4 µs").
    assert.equal(formatNumber(17702.4), '17,702');
    assert.equal(formatNumber(1234567.8), '1,234,568');
    assert.equal(formatNumber(0.001234), '0.001234');
    assert.equal(formatNumber(999.94), '999.9');
    for (const x of [0.0011, 0.5, 7.25, 1e4 + 0.5, 3.3e5 + 0.1, 9.99e8 + 0.5]) assert.doesNotMatch(formatNumber(x), /e/, String(x));
    assert.equal(formatDuration(0.81234), '0.8123 µs');
    assert.equal(formatDuration(412.34), '412.3 µs');
    assert.equal(formatDuration(17702), '17.70 ms');
    assert.equal(formatDuration(2_345_000), '2.345 s');
    assert.equal(formatPercent(97.345), '97.3%');
    assert.equal(formatPercent(112.44), '112.4%');
    assert.equal(formatNumber(NaN), 'NaN');
    assert.equal(formatNumber(Infinity), 'Inf');
  });
});
