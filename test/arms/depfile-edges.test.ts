// The make-rule reader that keys a user arm's module by the headers its compile read (lib/arms/compile.ts,
// parseDepFile, for `-MD -MF` output of g++ and nvcc): continuations, escaped spaces, phony rules, colons in
// paths. Pure: no compiler runs. Written against the survivors of a StrykerJS run (docs/TESTING.md, "Mutation testing").

import { strict as assert } from 'assert';
import { parseDepFile } from '../../lib/arms/compile';

describe('user arms: the make-rule reader (parseDepFile)', () => {
  it('reads the first rule\'s prerequisites across LF and CRLF continuations, ignoring the phony rules after it', () => {
    assert.deepEqual(parseDepFile('/t/a.o: /t/a.cpp \\\r\n  /x/b.h \\\n /x/c.h\r\n/x/b.h:\r\n\r\n/x/c.h:\n'), ['/t/a.cpp', '/x/b.h', '/x/c.h']);
    assert.deepEqual(parseDepFile('a.o: x.h\ny.h: z.h\n'), ['x.h']);
  });

  it('leading, trailing and repeated blanks make no empty paths', () => {
    assert.deepEqual(parseDepFile('a.o:   x.h \t  y.h   \n'), ['x.h', 'y.h']);
    assert.deepEqual(parseDepFile('a.o: \\\n \\\n x.h'), ['x.h']);
  });

  it('"\\ " is a space inside a path, every one of them', () => {
    assert.deepEqual(parseDepFile('a.o: /p/a\\ b\\ c.h /q/d.h\n'), ['/p/a b c.h', '/q/d.h']);
  });

  it('the rule\'s colon is the one followed by a blank: a colon inside a path is part of it', () => {
    assert.deepEqual(parseDepFile('c:/t/a.o: c:/x/y.h\n'), ['c:/x/y.h']);
    assert.deepEqual(parseDepFile(': x.h\n'), ['x.h']);
    assert.deepEqual(parseDepFile('a.o:\n'), []);
    assert.deepEqual(parseDepFile('a.o:'), []);
  });

  it('text without a rule, or an empty one, lists nothing', () => {
    assert.deepEqual(parseDepFile(''), []);
    assert.deepEqual(parseDepFile('no rule here\n'), []);
    assert.deepEqual(parseDepFile('c:/only/a/path\n'), []);
  });
});
