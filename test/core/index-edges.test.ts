// The package entry (lib/index.ts) is re-exports but for CONV_ARMS and POSTCONV_ARMS: getters that read libgdn's
// arm registry on every access, so an arm defined in a cell after `import * as gdn` is listed. Checked by replacing
// the ops' list functions for one read (the getters call them through the module objects).

import { strict as assert } from 'assert';
import * as gdn from '../../lib';
import * as conv from '../../lib/ops/conv';
import * as postconv from '../../lib/ops/postconv';
import { Stubs } from '../stand-ins';

describe('the package entry: arm lists read at each access', () => {
  const stubs = new Stubs();
  afterEach(() => stubs.restore());

  it('CONV_ARMS and POSTCONV_ARMS are the registry lists, listed among the exports', () => {
    assert.deepEqual(gdn.CONV_ARMS, conv.convArms());
    assert.deepEqual(gdn.POSTCONV_ARMS, postconv.postconvArms());
    assert.ok(gdn.CONV_ARMS.length > 0 && gdn.POSTCONV_ARMS.length > 0);
    const keys = Object.keys(gdn);
    assert.ok(keys.includes('CONV_ARMS') && keys.includes('POSTCONV_ARMS'), 'both are enumerable exports');
  });

  it('each access asks the registry again', () => {
    stubs.set(conv, 'convArms', () => ['only-this-conv']);
    stubs.set(postconv, 'postconvArms', () => ['only-this-postconv']);
    assert.deepEqual(gdn.CONV_ARMS, ['only-this-conv']);
    assert.deepEqual(gdn.POSTCONV_ARMS, ['only-this-postconv']);
    stubs.restore();
    assert.deepEqual(gdn.CONV_ARMS, conv.convArms());
    assert.deepEqual(gdn.POSTCONV_ARMS, postconv.postconvArms());
  });
});
