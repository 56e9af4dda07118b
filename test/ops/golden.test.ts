// Pinned reference bits (docs/TESTING.md): the reference arm of every op, run over the seeded golden
// inputs on each test backend, must reproduce the committed SHA-256 of every output's raw bits.
// A change of the shared arithmetic fails here until it is made on purpose (test/golden/golden.ts).

import { strict as assert } from 'assert';
import { ARITHMETIC_VERSION } from '../../lib/provenance';
import { GOLDEN_OPS, computeGolden, goldenDifferences, readGolden } from '../golden/golden';
import { forEachBackend } from '../backends';

describe('pinned reference bits: the golden files', () => {
  for (const op of GOLDEN_OPS) {
    it(`${op}: pinned for the current arithmetic version, every dtype combination present`, () => {
      const g = readGolden(op);
      assert.equal(g.op, op);
      assert.equal(g.arithmeticVersion, ARITHMETIC_VERSION,
        `test/golden/${op}.json pins arithmetic version ${g.arithmeticVersion}, lib/provenance.ts says ${ARITHMETIC_VERSION}: regenerate the goldens with the new version`);
      assert.ok(g.cases.length >= 4);
      // Every output is a float tensor: collect the dtype combination of each case.
      const combos = new Set(g.cases.map((c) => Object.values(c.inputs).map((h) => h.dtype).join('/') + '->' + Object.values(c.outputs).map((h) => h.dtype).join('/')));
      const need = { conv: 4, update: 8, postconv: 8, matmul: 4 }[op];
      assert.ok(combos.size >= need, `${op}: only ${combos.size} dtype combinations pinned, expected ${need}`);
      for (const c of g.cases) for (const h of [...Object.values(c.inputs), ...Object.values(c.outputs)]) assert.match(h.sha256, /^[0-9a-f]{64}$/);
    });
  }

  it('a changed, missing or extra hash is reported (the comparison can fail)', () => {
    const want = readGolden('matmul');
    const got = JSON.parse(JSON.stringify(want)) as typeof want;
    assert.deepEqual(goldenDifferences(want, got), []);
    const h = got.cases[1].outputs.out;
    h.sha256 = (h.sha256[0] === '0' ? '1' : '0') + h.sha256.slice(1);
    got.cases[2].inputs.a.dtype = 'f16';
    delete got.cases[3].outputs.out;
    got.cases.push({ ...got.cases[0], name: 'extra' });
    const d = goldenDifferences(want, got);
    assert.equal(d.length, 4, d.join('\n'));
    assert.match(d[0], /output out bits changed/);
    assert.match(d[1], /input a is f16/);
    assert.match(d[2], /output out not produced/);
    assert.match(d[3], /extra: new case/);
  });
});

forEachBackend((backend) => {
  describe('pinned reference bits: reference arms reproduce the committed hashes', function () {
    this.timeout(120000);
    for (const op of GOLDEN_OPS) {
      it(`${op}: every input and output hash matches test/golden/${op}.json`, async () => {
        const want = readGolden(op);
        const got = await computeGolden(op, backend());
        const diffs = goldenDifferences(want, got);
        assert.deepEqual(diffs, [], `the reference bits moved (a change of the shared arithmetic must come with a new ARITHMETIC_VERSION and regenerated goldens):\n${diffs.join('\n')}`);
        assert.equal(got.cases.length, want.cases.length);
      });
    }
  });
});
