// Edge cases of the coordinate mappers: the names and map axes of every rank, and each argument
// and shape check with its exact message (a check that throws the wrong message, or a later
// crash that happens to throw too, must not pass for the right refusal).

import { strict as assert } from 'assert';
import { convCoordinates, namedCoordinates, plainCoordinates, postconvCoordinates } from '../../lib/analysis/coordinates';

/** Asserts fn throws a RangeError with exactly this message. */
function refuses(fn: () => unknown, message: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof RangeError, `expected a RangeError, got ${String(e)}`);
    assert.equal(e.message, message);
    return true;
  });
}

describe('coordinates: plain indices at every rank', () => {
  const c = plainCoordinates();

  it('names: index for 1-D, row/column for 2-D, i0… for higher ranks', () => {
    assert.deepEqual(c.names([7]), ['index']);
    assert.deepEqual(c.names([2, 3]), ['row', 'column']);
    assert.deepEqual(c.names([2, 3, 4]), ['i0', 'i1', 'i2']);
    assert.deepEqual(c.names([1, 1, 1, 1]), ['i0', 'i1', 'i2', 'i3']);
  });

  it('mapAxes: the map of a 0-D or 1-D tensor is a single row; 3-D and up fold the trailing axes', () => {
    assert.deepEqual(c.mapAxes([]), ['', 'index']);
    assert.deepEqual(c.mapAxes([5]), ['', 'index']);
    assert.deepEqual(c.mapAxes([2, 3]), ['row', 'column']);
    assert.deepEqual(c.mapAxes([2, 3, 4]), ['i0', 'i1…i2']);
    assert.deepEqual(c.mapAxes([2, 3, 4, 5]), ['i0', 'i1…i3']);
  });

  it('at: row-major digits of the index, none for a scalar', () => {
    assert.deepEqual(c.at(0, []), []);
    assert.deepEqual(c.at(4, [5]), [4]);
    assert.deepEqual(c.at(5, [2, 3]), [1, 2]);
    assert.deepEqual(c.at(23, [2, 3, 4]), [1, 2, 3]);
    assert.doesNotThrow(() => c.check([3, 0, 2]));
  });
});

describe('coordinates: conv queryStartLoc checks', () => {
  it('refuses an empty queryStartLoc, but accepts [0] (no sequences, no tokens)', () => {
    refuses(() => convCoordinates([]), 'queryStartLoc: expected at least one entry (N+1 offsets), got none');
    const none = convCoordinates([0]);
    assert.equal(none.kind, 'conv (sequence, token, channel) over 0 sequences');
    assert.doesNotThrow(() => none.check([0, 4]));
  });

  it('kind counts N = entries − 1 sequences', () => {
    assert.equal(convCoordinates([0, 2, 5]).kind, 'conv (sequence, token, channel) over 2 sequences');
    assert.equal(convCoordinates([0, 3]).kind, 'conv (sequence, token, channel) over 1 sequences');
  });

  it('refuses non-integer, negative and NaN offsets with the non-negative-integer message', () => {
    refuses(() => convCoordinates([0, 1.5]), 'queryStartLoc[1]: expected a non-negative integer, got 1.5');
    refuses(() => convCoordinates([0, -2]), 'queryStartLoc[1]: expected a non-negative integer, got -2');
    refuses(() => convCoordinates([0, NaN]), 'queryStartLoc[1]: expected a non-negative integer, got NaN');
    // At index 0 a negative value must be named as negative, not as "expected 0".
    refuses(() => convCoordinates([-1, 3]), 'queryStartLoc[0]: expected a non-negative integer, got -1');
  });

  it('refuses a decrease, naming both neighbours; equal neighbours (empty sequences) are fine', () => {
    refuses(() => convCoordinates([0, 3, 2]), 'queryStartLoc[2] = 2 is below queryStartLoc[1] = 3: offsets must not decrease');
    refuses(() => convCoordinates([0, 4, 6, 5, 9]), 'queryStartLoc[3] = 5 is below queryStartLoc[2] = 6: offsets must not decrease');
    const c = convCoordinates([0, 4, 4, 6]);
    assert.deepEqual(c.at(4 * 3, [6, 3]), [2, 0, 0], 'token 4 is the first of sequence 2 (sequence 1 is empty)');
  });

  it('check refuses any rank but 2, even when the first dimension matches', () => {
    const c = convCoordinates([0, 6]);
    refuses(() => c.check([6]), 'coordinates: conv coordinates need a [T, C] tensor, got shape [6]');
    refuses(() => c.check([6, 2, 1]), 'coordinates: conv coordinates need a [T, C] tensor, got shape [6,2,1]');
    refuses(() => c.check([5, 2]), 'coordinates: queryStartLoc ends at 6 tokens but the tensor has T = 5 rows');
    assert.doesNotThrow(() => c.check([6, 2]));
  });
});

describe('coordinates: post-conv options and layouts', () => {
  it('refuses heads/dim that are not positive integers, at construction', () => {
    refuses(() => postconvCoordinates({ heads: 0 }), 'heads: expected a positive integer, got 0');
    refuses(() => postconvCoordinates({ heads: -2 }), 'heads: expected a positive integer, got -2');
    refuses(() => postconvCoordinates({ dim: 1.5 }), 'dim: expected a positive integer, got 1.5');
    refuses(() => postconvCoordinates({ dim: NaN }), 'dim: expected a positive integer, got NaN');
    assert.doesNotThrow(() => postconvCoordinates({ heads: undefined, dim: undefined }));
  });

  it('[T, H, D]: options that agree with the shape are accepted, and the coordinates follow the shape', () => {
    for (const opts of [{}, { heads: 2 }, { dim: 3 }, { heads: 2, dim: 3 }]) {
      const c = postconvCoordinates(opts);
      assert.doesNotThrow(() => c.check([4, 2, 3]), JSON.stringify(opts));
      // 17 = ((2·2) + 1)·3 + 2: token 2, head 1, feature 2.
      assert.deepEqual(c.at(17, [4, 2, 3]), [2, 1, 2], JSON.stringify(opts));
    }
  });

  it('[T, H, D]: options that disagree with the shape are refused, naming the option', () => {
    refuses(() => postconvCoordinates({ heads: 3 }).check([4, 2, 3]), 'coordinates: heads = 3 but the tensor has shape [4,2,3]');
    refuses(() => postconvCoordinates({ dim: 4 }).check([4, 2, 3]), 'coordinates: dim = 4 but the tensor has shape [4,2,3]');
    refuses(() => postconvCoordinates({ heads: 2, dim: 4 }).at(0, [4, 2, 3]), 'coordinates: dim = 4 but the tensor has shape [4,2,3]');
  });

  it('[T, H·D]: heads inferred from dim and dim from heads', () => {
    const byDim = postconvCoordinates({ dim: 4 });
    assert.doesNotThrow(() => byDim.check([2, 8]));
    // 13 = (1·2 + 1)·4 + 1 with 2 heads of 4 features.
    assert.deepEqual(byDim.at(13, [2, 8]), [1, 1, 1]);
    assert.deepEqual(postconvCoordinates({ heads: 4 }).at(13, [2, 8]), [1, 2, 1]);
  });

  it('[T, H·D]: without heads or dim, or when they do not make the row length, a clear refusal', () => {
    refuses(() => postconvCoordinates().check([2, 8]), 'coordinates: a [T, H·D] tensor (shape [2,8]) needs heads or dim');
    refuses(() => postconvCoordinates({ dim: 3 }).check([2, 8]), 'coordinates: heads = 2.6666666666666665 × dim = 3 does not make the row length 8');
    refuses(() => postconvCoordinates({ heads: 3 }).check([2, 8]), 'coordinates: heads = 3 × dim = 2.6666666666666665 does not make the row length 8');
    refuses(() => postconvCoordinates({ heads: 2, dim: 3 }).check([2, 8]), 'coordinates: heads = 2 × dim = 3 does not make the row length 8');
  });

  it('any other rank is refused as such, with or without options', () => {
    refuses(() => postconvCoordinates().check([6]), 'coordinates: post-conv coordinates need [T, H, D] or [T, H·D], got shape [6]');
    refuses(() => postconvCoordinates({ heads: 2 }).check([6]), 'coordinates: post-conv coordinates need [T, H, D] or [T, H·D], got shape [6]');
    refuses(() => postconvCoordinates({ dim: 2 }).check([2, 2, 2, 2]), 'coordinates: post-conv coordinates need [T, H, D] or [T, H·D], got shape [2,2,2,2]');
  });
});

describe('coordinates: named dimensions (namedCoordinates)', () => {
  it('names each dimension, maps 2-D as is and higher ranks as first × the rest, indexes like plain', () => {
    const state = namedCoordinates('conv state', ['sequence', 'channel', 'tap']);
    assert.equal(state.kind, 'conv state (sequence, channel, tap)');
    const names = state.names([2, 3, 4]);
    assert.deepEqual(names, ['sequence', 'channel', 'tap']);
    names.push('changed');
    assert.deepEqual(state.names([2, 3, 4]), ['sequence', 'channel', 'tap']);
    assert.deepEqual(state.mapAxes([2, 3, 4]), ['sequence', 'channel·tap']);
    assert.deepEqual(namedCoordinates('g', ['token', 'head']).mapAxes([5, 2]), ['token', 'head']);
    assert.deepEqual(state.at(5, [2, 3, 4]), plainCoordinates().at(5, [2, 3, 4]));
    state.check([2, 3, 4]);
  });

  it('refuses a shape of another rank, and bad kinds and names', () => {
    refuses(() => namedCoordinates('g', ['token', 'head']).check([2, 3, 4]), 'coordinates: g has 2 dimensions (token, head), got shape [2,3,4]');
    refuses(() => namedCoordinates('g', ['token', 'head']).check([6]), 'coordinates: g has 2 dimensions (token, head), got shape [6]');
    for (const bad of [[], ['a', ''], ['a', 3], 'ab']) {
      assert.throws(() => namedCoordinates('g', bad as string[]), (e: unknown) => e instanceof TypeError && /^names: expected a non-empty array of dimension names/.test(e.message), JSON.stringify(bad));
    }
    for (const kind of ['', 5, undefined]) {
      assert.throws(() => namedCoordinates(kind as string, ['a']), (e: unknown) => e instanceof TypeError && /^kind: expected a non-empty string/.test(e.message), String(kind));
    }
  });
});
