// Edges of the kernel's pure helpers: is_complete's end-of-text rule (leading whitespace and
// unterminated strings at the very end), nextIndent's choice of line and bracket, and cursor
// conversion at U+FFFF (the last one-unit code point) and past the end of the text.

import { strict as assert } from 'assert';
import { codePointToUtf16, utf16ToCodePoint } from '../../kernel/code-points';
import { isComplete, nextIndent } from '../../kernel/is-complete';

describe('kernel units: edges', () => {
  describe('is_complete', () => {
    it('an error before the end is invalid even when the cell starts with whitespace', () => {
      // The error sits past the length of the trimmed-at-start text but before the end.
      assert.deepEqual(isComplete('    a b'), { status: 'invalid' });
      assert.deepEqual(isComplete('   )'), { status: 'invalid' });
    });

    it('a quoted string left open at the very end is invalid (a newline cannot continue it)', () => {
      assert.deepEqual(isComplete("const s = 'abc"), { status: 'invalid' });
      assert.deepEqual(isComplete('const s = "abc\n'), { status: 'invalid' });
      // A template literal can continue.
      assert.deepEqual(isComplete('const s = `abc'), { status: 'incomplete', indent: '' });
    });

    it('trailing blank lines and whitespace-only lines do not set the indent', () => {
      assert.deepEqual(isComplete('foo(\n   '), { status: 'incomplete', indent: '  ' });
      assert.equal(nextIndent('foo(\n   '), '  ');
      assert.equal(nextIndent('  if (x) {\n\t\n      \n'), '    ');
    });

    it('only a bracket at the end of the line opens a level', () => {
      assert.equal(nextIndent('foo(a)'), '');
      assert.equal(nextIndent('  x = [1, 2]'), '  ');
      assert.equal(nextIndent('  x = {a: (1)} // done'), '  ');
      assert.equal(nextIndent('  x = ['), '    ');
      assert.equal(nextIndent('if (a) {'), '  ');
    });

    it('CRLF cells: the comment ends at the line end, not at the \\r, so an open bracket before it still indents', () => {
      assert.equal(nextIndent('foo( // c\r'), '  ');
      assert.equal(nextIndent('  a = [\r\n'), '    ');
      assert.equal(nextIndent('x\r\n  y // z\r\n'), '  ');
    });
  });

  describe('cursor conversion', () => {
    it('U+FFFF is one code unit and one code point', () => {
      const s = '\uffffx';
      assert.equal(codePointToUtf16(s, 1), 1);
      assert.equal(codePointToUtf16(s, 2), 2);
      assert.equal(utf16ToCodePoint(s, 1), 1);
      assert.equal(utf16ToCodePoint(s, 2), 2);
    });

    it('BMP characters count one each, astral ones two units', () => {
      assert.equal(utf16ToCodePoint('abc', 2), 2);
      assert.equal(utf16ToCodePoint('abc', 1), 1);
      assert.equal(utf16ToCodePoint('\u{1f600}a', 2), 1);
      assert.equal(utf16ToCodePoint('\u{1f600}a', 3), 2);
      assert.equal(codePointToUtf16('\u{10000}a', 1), 2);
    });

    it('offsets past the end clamp to the text', () => {
      assert.equal(utf16ToCodePoint('ab', 5), 2);
      assert.equal(utf16ToCodePoint('', 3), 0);
      assert.equal(codePointToUtf16('ab', 5), 2);
    });
  });
});
