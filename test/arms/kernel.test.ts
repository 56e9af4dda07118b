// A faulting user arm in a real gdnlab kernel (docs/USER-ARMS.md): the cell gets an error naming the
// arm and the fault, the kernel process survives, and the next cell runs — for a wild write (a signal
// in the worker), a run past the time limit, and a compile error.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { KernelClient, PROJECT_ROOT, ofType } from '../kernel/kernel-client';
import { FAULTS, REG16_SOURCE } from './sources';

const errorOf = (r: { outputs: { header: { msg_type: string }; content: Record<string, unknown> }[] }) => {
  const e = ofType(r.outputs as never, 'error')[0];
  assert.ok(e, `an error output, got ${r.outputs.map((m) => m.header.msg_type).join(', ')}`);
  return e.content as { ename: string; evalue: string };
};
const resultText = (r: { outputs: { header: { msg_type: string }; content: Record<string, unknown> }[] }) => {
  const res = ofType(r.outputs as never, 'execute_result')[0];
  assert.ok(res, `an execute_result, got ${r.outputs.map((m) => `${m.header.msg_type} ${JSON.stringify(m.content)}`).join('; ')}`);
  return (res.content as { data: Record<string, string> }).data['text/plain'];
};

describe('user arms in the gdnlab kernel: a fault is a cell error, the next cell works', function () {
  this.timeout(300_000);
  let k: KernelClient;
  let cache: string;
  before(async () => {
    cache = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-arm-cache-'));
    k = await KernelClient.start({ env: { GDNLAB_PACKAGE_ROOT: PROJECT_ROOT, GDN_BACKEND: 'host', GDNLAB_ARM_CACHE: cache } });
    const r = await k.execute(`import * as gdn from 'gdnlab';
const c = gdn.check.convMatrix({ quick: true })[0];
const inputs = gdn.check.makeConvInputs(c);
const ref = await gdn.conv.forward(inputs, { arm: 'scalar' });
gdn.conv.defineArm({ name: 'reg16', source: ${JSON.stringify(REG16_SOURCE)}, tokensPerProgram: 16 }).id`);
    assert.match(resultText(r), /^\d+$/);
  });
  after(async () => {
    await k?.close();
    fs.rmSync(cache, { recursive: true, force: true });
  });

  const nextCellWorks = async () => {
    const r = await k.execute(`const again = await gdn.conv.forward(inputs, { arm: 'reg16' });
gdn.countBitMismatches(again.out, ref.out) + gdn.countBitMismatches(again.convState, ref.convState)`);
    assert.equal(resultText(r), '0');
  };

  for (const name of ['fault-wild-write', 'fault-spin', 'fault-oob-read', 'fault-syntax', 'fault-signature']) {
    it(name, async () => {
      const f = FAULTS.find((x) => x.name === name)!;
      const r = await k.execute(`gdn.conv.defineArm({ name: ${JSON.stringify(f.name)}, source: ${JSON.stringify(f.source)}, timeLimitMs: 1500 });
await gdn.conv.forward(inputs, { arm: ${JSON.stringify(f.name)} });`);
      const e = errorOf(r);
      assert.match(`${e.ename}: ${e.evalue}`, f.expect);
      await nextCellWorks();
    });
  }
});
