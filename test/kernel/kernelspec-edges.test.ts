// kernel/kernelspec.ts: the kernel.json the installer writes and the kernel names it accepts. Pure.

import { strict as assert } from 'assert';
import { checkKernelName, DEFAULT_KERNEL_NAME, DISPLAY_NAME, kernelSpec } from '../../kernel/kernelspec';

describe('kernelspec: edges', () => {
  it('checkKernelName: letters, digits, ".", "_" and "-" only, one or more, the whole name', () => {
    for (const ok of ['gdnlab', 'Ab9._-z', 'x', '0', 'A.B', 'a_b', 'a-b', 'Z']) assert.equal(checkKernelName(ok), ok);
    for (const bad of ['', 'bad name', ' a', 'a ', 'a/b', 'a\nb', 'a\n', 'é', 'a:b', '[a]']) {
      assert.throws(() => checkKernelName(bad), (e: Error) => e.message === `--name: expected letters, digits, '.', '_' or '-', got ${JSON.stringify(bad)}`, bad);
    }
  });

  it('kernelSpec: node and main.js by path, signal interrupts, NODE_PATH with the extra environment after it', () => {
    assert.equal(DEFAULT_KERNEL_NAME, 'gdnlab');
    assert.deepEqual(kernelSpec({ node: '/n/node', mainJs: '/k/main.js', nodePathDir: '/np' }), {
      argv: ['/n/node', '/k/main.js', '--connection-file', '{connection_file}'],
      display_name: DISPLAY_NAME,
      language: 'typescript',
      interrupt_mode: 'signal',
      env: { NODE_PATH: '/np' },
      metadata: { debugger: false },
    });
    const s = kernelSpec({ node: 'n', mainJs: 'm', nodePathDir: '/np', displayName: 'Mine', env: { A: '1', NODE_PATH: '/mine' } });
    assert.equal(s.display_name, 'Mine');
    assert.deepEqual(s.env, { NODE_PATH: '/mine', A: '1' });
  });
});
