// bench/crosscheck.ts, the table that sets the profiler's kernel durations beside the bench's fair event medians.
// Its inputs here are shaped as Nsight Compute 2025.3 wrote them on the H100 at c1c9891: the raw page's units row
// says 'ns' (older versions said 'nsecond'), values carry thousands separators, and a process ncu could not
// profile leaves a CSV that is only ncu's error text.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { crosscheckReport, kernelDurations } from '../../bench/crosscheck';

const HEAD = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","gpu__time_duration.sum"';
const csv = (unit: string, rows: [string, string][]) =>
  [HEAD, `"","","","","","","","${unit}"`, ...rows.map(([k, v], i) => `"${i}","1","python3","h","${k}","1","7","${v}"`)].join('\n') + '\n';

describe('crosscheck table (bench/crosscheck.ts)', function () {
  it("reads durations in 'ns' with thousands separators, and in 'usecond'", function () {
    const ns = kernelDurations(csv('ns', [['_causal_conv1d_fwd_kernel', '123,616'], ['_causal_conv1d_fwd_kernel', '121,000']]));
    assert.deepEqual(ns.get('_causal_conv1d_fwd_kernel'), [123.616, 121]);
    const us = kernelDurations(csv('usecond', [['postconv_kernel', '95.5']]));
    assert.deepEqual(us.get('postconv_kernel'), [95.5]);
  });

  it('refuses a duration column whose unit is not a time', function () {
    assert.throws(() => kernelDurations(csv('byte', [['k', '1']])), /'byte' is not a unit of time/);
  });

  it("prints the side that was profiled, and says why the other side has no figure", function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-xc-'));
    try {
      fs.writeFileSync(path.join(dir, 'xc-ours.csv'), "==ERROR== Could not open report file '/out/xc-ours.ncu-rep'.\n");
      fs.writeFileSync(path.join(dir, 'xc-vllm.csv'), csv('ns', [['_causal_conv1d_fwd_kernel', '122,112'], ['_fused_post_conv_kernel', '95,680']]));
      fs.writeFileSync(path.join(dir, 'xc-bench-conv.json'), JSON.stringify({ rows: [{ arm: 'stream-mufu', medianUs: 106.9 }, { arm: 'vLLM (Triton)', medianUs: 127.2 }] }));
      const table = crosscheckReport(dir);
      assert.match(table, /\| conv \| vLLM \(Triton\) \| 127\.2 \| 122\.1 \(1\) \| 1\.042 \|/);
      assert.match(table, /\| conv \| ours: stream-mufu \| 106\.9 \| – \(none\) \| – \|/);
      assert.match(table, /No profiler figure for ours: xc-ours\.csv holds no profile/);
      assert.match(table, /\| postconv \| – \| xc-bench-postconv\.json missing/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
