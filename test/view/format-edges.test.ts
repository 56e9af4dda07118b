// Number and table formatting at its edges: where formatNumber switches between grouped whole
// numbers, significant digits and exponent notation (1e-3, 10^digits, 1e9, 1e15), negative values on
// every path, the unit steps of formatDuration (1 ms, 1 s, 10^4 s), the exact HTML and text tables
// (captions, the "more rows" line, alignment, trailing blanks) and the cell values of formatValue.

import { strict as assert } from 'assert';
import { escapeXml, formatCell, formatDuration, formatNumber, formatPercent, formatValue, htmlTable, roundSig, textTable } from '../../lib/view/format';

describe('format: edges', () => {
  it('escapeXml replaces each of the five characters and nothing else', () => {
    assert.equal(escapeXml(`<a href="x">&'b'</a>`), '&lt;a href=&quot;x&quot;&gt;&amp;&#39;b&#39;&lt;/a&gt;');
    assert.equal(escapeXml('plain µs text'), 'plain µs text');
  });

  it('formatNumber: whole numbers in full below 1e15, grouped from 5 digits, with their sign', () => {
    assert.equal(formatNumber(0), '0');
    assert.equal(formatNumber(-0), '0');
    assert.equal(formatNumber(1234), '1234');
    assert.equal(formatNumber(-1234), '-1234');
    assert.equal(formatNumber(12345), '12,345');
    assert.equal(formatNumber(-12345), '-12,345');
    assert.equal(formatNumber(123456), '123,456');
    assert.equal(formatNumber(1234567), '1,234,567');
    assert.equal(formatNumber(999999999999999), '999,999,999,999,999');
    assert.equal(formatNumber(1e15), '1e15');
    assert.equal(formatNumber(-1e15), '-1e15');
    assert.equal(formatNumber(1.5e16), '1.5e16');
  });

  it('formatNumber: exponent notation below 0.001 and from 1e9, with digits − 1 decimals', () => {
    assert.equal(formatNumber(0.001), '0.001');
    assert.equal(formatNumber(0.00099), '9.9e-4');
    assert.equal(formatNumber(-0.0005), '-5e-4');
    assert.equal(formatNumber(0.00012346), '1.235e-4');
    assert.equal(formatNumber(0.00012346, 2), '1.2e-4');
    assert.equal(formatNumber(2.6e-7), '2.6e-7');
    assert.equal(formatNumber(2.6e-7, 1), '3e-7');
    assert.equal(formatNumber(1e9 + 0.5), '1e9');
    assert.equal(formatNumber(1.25e9 + 0.5), '1.25e9');
    assert.equal(formatNumber(-1.25e9 - 0.5), '-1.25e9');
  });

  it('formatNumber: from 10^digits on, rounded to a whole number and grouped', () => {
    assert.equal(formatNumber(10000.5), '10,001');
    assert.equal(formatNumber(12345.6), '12,346');
    assert.equal(formatNumber(-12345.6), '-12,346');
    assert.equal(formatNumber(123.45, 2), '123');
    assert.equal(formatNumber(-123.45, 2), '-123');
  });

  it('formatNumber and formatDuration: rounding that carries to 10^digits gives a whole number, not "1.000e+4"', () => {
    // toPrecision(4) of 9999.5 is "1.000e+4"; these were printed so before the fix.
    assert.equal(formatNumber(9999.5), '10,000');
    assert.equal(formatNumber(-9999.5), '-10,000');
    assert.equal(formatNumber(99.5, 2), '100');
    assert.equal(formatNumber(9999.4), '9999');
    assert.equal(formatDuration(9_999_600_000), '10,000 s');
    assert.equal(formatDuration(99.96, 2), '100 µs');
    assert.equal(formatDuration(99.94, 3), '99.9 µs');
  });

  it('formatNumber: significant digits with trailing zeros, and then a bare point, dropped', () => {
    assert.equal(formatNumber(0.5), '0.5');
    assert.equal(formatNumber(1.05), '1.05');
    assert.equal(formatNumber(1.04, 2), '1');
    assert.equal(formatNumber(100.04), '100');
    assert.equal(formatNumber(120.25), '120.3');
    assert.equal(formatNumber(3.14159, 2), '3.1');
    assert.equal(formatNumber(-2.5), '-2.5');
    assert.equal(formatNumber(0.0015), '0.0015');
  });

  it('formatDuration: µs below 1000, ms below 1e6, s above; whole grouped seconds from 10^4 s', () => {
    assert.equal(formatDuration(0), '0 µs');
    assert.equal(formatDuration(999.94), '999.9 µs');
    assert.equal(formatDuration(1000), '1.000 ms');
    assert.equal(formatDuration(1000, 2), '1.0 ms');
    assert.equal(formatDuration(-1500), '-1.500 ms');
    assert.equal(formatDuration(999_940), '999.9 ms');
    assert.equal(formatDuration(1e6), '1.000 s');
    assert.equal(formatDuration(-2_345_000), '-2.345 s');
    assert.equal(formatDuration(9_999_000_000), '9999 s');
    assert.equal(formatDuration(1e10), '10,000 s');
    assert.equal(formatDuration(1.2345e10), '12,345 s');
    assert.equal(formatDuration(-1.2345e10), '-12,345 s');
    assert.equal(formatDuration(412.34, 2), '412 µs');
    assert.equal(formatDuration(-5), '-5.000 µs');
    assert.equal(formatDuration(0.81234), '0.8123 µs');
  });

  it('formatDuration: tiny values in exponent notation below 0.001 of the unit, words for non-finite', () => {
    assert.equal(formatDuration(0.0005), '5e-4 µs');
    assert.equal(formatDuration(-0.0005), '-5e-4 µs');
    assert.equal(formatDuration(0.001), '0.001000 µs');
    assert.equal(formatDuration(0.00012346, 2), '1.2e-4 µs');
    assert.equal(formatDuration(Infinity), 'Inf');
    assert.equal(formatDuration(-Infinity), '-Inf');
    assert.equal(formatDuration(NaN), 'NaN');
  });

  it('formatPercent: 3 significant digits below 100 (either sign), 4 from 100, words for non-finite', () => {
    assert.equal(formatPercent(0.5123), '0.512%');
    assert.equal(formatPercent(97.345), '97.3%');
    assert.equal(formatPercent(-97.345), '-97.3%');
    assert.equal(formatPercent(100), '100%');
    assert.equal(formatPercent(100.56), '100.6%');
    assert.equal(formatPercent(-112.44), '-112.4%');
    assert.equal(formatPercent(NaN), 'NaN');
    assert.equal(formatPercent(Infinity), 'Inf');
  });

  it('roundSig: non-integers to significant digits; integers, zero and non-finite values unchanged', () => {
    assert.equal(roundSig(1.23456), 1.235);
    assert.equal(roundSig(-1.23456, 2), -1.2);
    assert.equal(roundSig(12345), 12345);
    assert.equal(roundSig(123456789), 123456789);
    assert.equal(roundSig(12345.678), 12350);
    assert.equal(roundSig(0), 0);
    assert.equal(roundSig(Infinity), Infinity);
    assert.ok(Number.isNaN(roundSig(NaN)));
  });

  it('formatValue: every kind of cell value', () => {
    assert.equal(formatValue(null), '');
    assert.equal(formatValue(undefined), '');
    assert.equal(formatValue(3.14159), '3.142');
    assert.equal(formatValue(3.14159, 2), '3.1');
    assert.equal(formatValue(12345678901234567890n), '12345678901234567890');
    assert.equal(formatValue('a,b'), 'a,b');
    assert.equal(formatValue(true), 'yes');
    assert.equal(formatValue(false), 'no');
    assert.equal(formatValue(new Date(Date.UTC(2024, 0, 2, 3, 4, 5))), '2024-01-02T03:04:05.000Z');
    assert.equal(formatValue(Symbol('s')), 'Symbol(s)');
  });

  it('formatValue: up to 8 numbers listed with the digits, more counted, other items each formatted', () => {
    assert.equal(formatValue([1, 2.5, 12345]), '[1, 2.5, 12,345]');
    assert.equal(formatValue([3.14159, 2.71828], 2), '[3.1, 2.7]');
    assert.equal(formatValue([1, 2, 3, 4, 5, 6, 7, 8]), '[1, 2, 3, 4, 5, 6, 7, 8]');
    assert.equal(formatValue([1, 2, 3, 4, 5, 6, 7, 8, 9]), '[9 items]');
    assert.equal(formatValue(new Float32Array([0.5, 1, 1.25])), '[0.5, 1, 1.25]');
    assert.equal(formatValue(new Float32Array(9)), '[9 items]');
    assert.equal(formatValue([]), '[]');
    assert.equal(formatValue(['x', 3.14159, null, true], 2), '[x, 3.1, , yes]');
    assert.equal(formatValue(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']), '[a, b, c, d, e, f, g, h]');
    assert.equal(formatValue(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']), '[9 items]');
    assert.equal(formatValue([[1, 2], [3]]), '[[1, 2], [3]]');
  });

  it('formatValue: objects by their own toString, else as compact JSON, else [object]', () => {
    assert.equal(formatValue({ k: 1, s: 'x' }), '{"k":1,"s":"x"}');
    assert.equal(formatValue(new Map()), '[object Map]');
    assert.equal(formatValue(new Error('bad')), 'Error: bad');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.equal(formatValue(cyclic), '[object]');
  });

  it('formatCell: a function formats the cell, a number sets the digits, none means 4', () => {
    assert.equal(formatCell(1.5, (v) => `<${String(v)}>`), '<1.5>');
    assert.equal(formatCell(3.14159), '3.142');
    assert.equal(formatCell(3.14159, 2), '3.1');
  });

  it('htmlTable: the exact markup, with caption, right-aligned numbers, escaped cells and the rows left out', () => {
    const html = htmlTable(['a', 'b<'], [{ a: 1.5, 'b<': '<x>' }, { a: 2, 'b<': null }, { a: 3 }], { caption: 'c&', maxRows: 2, format: { a: 2 } });
    assert.equal(
      html,
      '<table class="gdnlab-table"><caption style="caption-side:top;text-align:left;font-weight:bold">c&amp;</caption>' +
        '<thead><tr><th>a</th><th>b&lt;</th></tr></thead>\n<tbody>\n' +
        '<tr><td style="text-align:right">1.5</td><td>&lt;x&gt;</td></tr>\n' +
        '<tr><td style="text-align:right">2</td><td></td></tr>\n' +
        '<tr><td colspan="2">… 1 more rows</td></tr>\n</tbody></table>',
    );
    assert.equal(htmlTable(['n'], [{ n: 3.14159 }], { format: { n: 2 } }), '<table class="gdnlab-table"><thead><tr><th>n</th></tr></thead>\n<tbody>\n<tr><td style="text-align:right">3.1</td></tr>\n</tbody></table>');
    assert.equal(htmlTable(['n'], []), '<table class="gdnlab-table"><thead><tr><th>n</th></tr></thead>\n<tbody>\n\n</tbody></table>');
  });

  it('htmlTable and textTable show 200 rows unless told otherwise', () => {
    const rows = Array.from({ length: 201 }, (_, i) => ({ i }));
    const html = htmlTable(['i'], rows);
    assert.equal(html.match(/<tr>/g)?.length, 1 + 200 + 1);
    assert.ok(html.includes('<td style="text-align:right">199</td>') && !html.includes('>200</td>'));
    assert.ok(html.endsWith('<tr><td colspan="1">… 1 more rows</td></tr>\n</tbody></table>'));
    const text = textTable(['i'], rows).split('\n');
    assert.equal(text.length, 2 + 200 + 1);
    assert.equal(text[text.length - 2], '199');
    assert.equal(text[text.length - 1], '… 1 more rows');
    assert.ok(!htmlTable(['i'], rows.slice(0, 200)).includes('more rows'));
    assert.ok(!textTable(['i'], rows.slice(0, 200)).includes('more rows'));
  });

  it('textTable: the exact lines, numbers right-aligned (nulls allowed), text left-aligned, no trailing blanks', () => {
    const rows = [
      { a: 1.5, bb: 'x', c: null },
      { a: 12345, bb: 'long text', c: 2 },
      { a: -7, bb: 'y' },
    ];
    assert.equal(textTable(['a', 'bb', 'c'], rows), ['     a  bb         c', '------  ---------  -', '   1.5  x', '12,345  long text  2', '    -7  y'].join('\n'));
    assert.equal(textTable(['a', 'bb', 'c'], rows, { caption: 'cap', maxRows: 1, format: { a: (v) => `[${String(v)}]` } }), ['cap', '    a  bb  c', '-----  --  -', '[1.5]  x', '… 2 more rows'].join('\n'));
    // Missing and null cells keep a number column right-aligned (in a column that is not the last).
    assert.equal(textTable(['n', 't'], [{ n: 12345, t: 'a' }, { t: 'b' }]), ['     n  t', '------  -', '12,345  a', '        b'].join('\n'));
    assert.equal(textTable(['n', 't'], [{ n: 12345, t: 'a' }, { n: null, t: 'b' }, { n: 1, t: 'c' }]), ['     n  t', '------  -', '12,345  a', '        b', '     1  c'].join('\n'));
    // A column mixing numbers and text is left-aligned.
    assert.equal(textTable(['m'], [{ m: 1 }, { m: 'wide' }]), ['m', '----', '1', 'wide'].join('\n'));
    assert.equal(textTable(['long', 'b'], []), ['long  b', '----  -'].join('\n'));
  });
});
