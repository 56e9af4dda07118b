// gdn.profile (docs/SPEC.md §14): the ncu CSV parser against the recorded reports in
// test/fixtures/ncu/, the analysis (values in the right columns, missing metrics, the stall ranking),
// the table, and what a run without a GPU or without ncu says.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { NcuCsvError, csvRecords, parseNcuCsv, parseNcuNumber, toBaseUnit } from '../../lib/profile/ncu-csv';
import { METRICS, STALL_REASONS, metricList, ncuImportArgs, ncuRecordArgs, stallMetric, stallReasonOf } from '../../lib/profile/metrics';
import { ProfiledLaunch, analyse, rankStalls, rooflineFigure, tableRows } from '../../lib/profile/report';
import { expectArms, findNcu, metricsNamedInError, minimalBytes, profile, profileUnderNcu, unavailableReason } from '../../lib/profile/profile';
import { Backend } from '../../lib/backend';
import { Tensor } from '../../lib/tensor';
import { MIME_BUNDLE } from '../../lib/view/display';
import { withKernel } from '../view/fake-kernel';
import { spawnSync } from 'child_process';

const FIXTURES = path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'ncu');
const SYNTHETIC = path.join(FIXTURES, 'synthetic-conv-raw.csv');

interface Sidecar {
  op: string;
  minimalBytes: number;
  launches: ProfiledLaunch[];
  /** Recorded reports: the table's rows (arm, kernel, duration, DRAM bytes, occupancy, issue, stalls) as parsed where they were made. */
  rowsAsParsedThere?: Record<string, unknown>[];
}
const sidecar = (csv: string): Sidecar => JSON.parse(fs.readFileSync(csv.replace(/\.csv$/, '.json'), 'utf8')) as Sidecar;

describe('profile: the ncu CSV parser', () => {
  it('reads the raw page: one kernel per launch, numbers in base units, thousands separators removed', () => {
    const r = parseNcuCsv(fs.readFileSync(SYNTHETIC, 'utf8'));
    assert.equal(r.page, 'raw');
    assert.equal(r.kernels.length, 3);
    assert.deepEqual(r.kernels.map((k) => k.id), [0, 1, 2]);
    assert.match(r.messages[0], /^==SYNTHETIC==/);
    const [scalar, vec, mufu] = r.kernels;
    assert.match(scalar.kernelName, /ArmScalar/);
    assert.match(mufu.kernelName, /ArmStreamMufu/);
    assert.equal(scalar.metrics['dram__bytes_read.sum'], 134546432);
    assert.equal(scalar.units['dram__bytes_read.sum'], 'byte');
    assert.equal(scalar.metrics['gpu__time_duration.sum'], 195140);
    assert.equal(scalar.units['gpu__time_duration.sum'], 'ns');
    assert.equal(mufu.metrics['launch__registers_per_thread'], 72);
    assert.equal(mufu.blockSize, '(256, 1, 1)');
    assert.equal(mufu.cc, '9.0');
    // ncu's "n/a" stays text (so the analysis can call it missing), not 0.
    assert.equal(vec.metrics['l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum'], 'n/a');
    assert.ok(!r.metricNames.includes('l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum'));
  });

  it('reads the details page (one row per metric) into the same kernels', () => {
    const text = [
      '==PROF== Connected to process 7',
      '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"',
      '"0","7","node","h","fused_kernel","1","7","(128, 1, 1)","(49, 64, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","12.50"',
      '"0","7","node","h","fused_kernel","1","7","(128, 1, 1)","(49, 64, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","Mbyte","1,024.50"',
      '"1","7","node","h","fused_kernel","1","7","(128, 1, 1)","(49, 64, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","9,000"',
    ].join('\n');
    const r = parseNcuCsv(text);
    assert.equal(r.page, 'details');
    assert.equal(r.kernels.length, 2);
    assert.equal(r.kernels[0].metrics['gpu__time_duration.sum'], 12500);
    assert.equal(r.kernels[0].metrics['dram__bytes_read.sum'], 1024.5e6);
    assert.equal(r.kernels[1].metrics['gpu__time_duration.sum'], 9000);
    assert.deepEqual(r.messages, ['==PROF== Connected to process 7']);
  });

  it('refuses text that is not ncu CSV, naming what it found', () => {
    assert.throws(() => parseNcuCsv('==ERROR== ERR_NVGPUCTRPERM - no permission\n'), (e: Error) => e instanceof NcuCsvError && /no header line starting "ID"/.test(e.message) && /ERR_NVGPUCTRPERM/.test(e.message));
    assert.throws(() => parseNcuCsv('"ID","Kernel Name","gpu__time_duration.sum"\n"0","k","5"\n'), /line 2 should be the units line/);
    assert.throws(() => parseNcuCsv('"ID","Kernel Name","gpu__time_duration.sum"\n"","","nsecond"\n"0","k"\n'), /line 3 has 2 fields, the header has 3/);
    assert.throws(() => csvRecords('"a,b'), /not closed/);
  });

  it('keeps quoted commas, doubled quotes and CRLF line ends', () => {
    assert.deepEqual(csvRecords('"a, b","say ""hi""",c\r\n"(1, 2, 3)",,x\r\n'), [['a, b', 'say "hi"', 'c'], ['(1, 2, 3)', '', 'x']]);
  });

  it('converts units and numbers as ncu prints them', () => {
    assert.deepEqual(toBaseUnit(2, 'usecond'), { value: 2000, unit: 'ns' });
    assert.deepEqual(toBaseUnit(1.5, 'Gbyte'), { value: 1.5e9, unit: 'byte' });
    assert.deepEqual(toBaseUnit(3, 'Tbyte/second'), { value: 3e12, unit: 'byte/second' });
    assert.deepEqual(toBaseUnit(2, 'cycle/nsecond'), { value: 2e9, unit: 'cycle/second' });
    assert.deepEqual(toBaseUnit(1.98, 'GHz'), { value: 1.98e9, unit: 'cycle/second' });
    assert.deepEqual(toBaseUnit(42, '%'), { value: 42, unit: '%' });
    assert.equal(parseNcuNumber('1,234,567.25'), 1234567.25);
    assert.equal(parseNcuNumber('-3e2'), -300);
    assert.equal(parseNcuNumber('n/a'), null);
    assert.equal(parseNcuNumber('1,23'), null);  // not a thousands grouping: text, not 123
    assert.equal(parseNcuNumber(''), null);
  });

  it('names the stall metrics it asks for and reads them back', () => {
    assert.equal(stallMetric('long_scoreboard'), 'smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio');
    for (const r of STALL_REASONS) assert.equal(stallReasonOf(stallMetric(r)), r);
    assert.equal(stallReasonOf(METRICS.duration), null);
    const list = metricList();
    assert.equal(new Set(list).size, list.length);
    assert.ok(list.includes('dram__throughput.avg.pct_of_peak_sustained_elapsed'));
  });

  it('records with the documented flags and imports the raw page in base units', () => {
    const rec = ncuRecordArgs('/tmp/r.ncu-rep', ['gpu__time_duration.sum'], ['node', 'child.js', 'job.json']);
    const flag = (f: string) => rec[rec.indexOf(f) + 1];
    assert.equal(flag('--clock-control'), 'none');
    assert.equal(flag('--cache-control'), 'all');
    assert.equal(flag('--target-processes'), 'all');
    assert.equal(flag('--metrics'), 'gpu__time_duration.sum');
    assert.match(flag('--kernel-name'), /^regex:.*conv_kernel.*gdn_arm_/);
    assert.deepEqual(rec.slice(-3), ['node', 'child.js', 'job.json']);
    const imp = ncuImportArgs('/tmp/r.ncu-rep');
    assert.deepEqual(imp.slice(0, 5), ['--import', '/tmp/r.ncu-rep', '--csv', '--page', 'raw']);
    assert.equal(imp[imp.indexOf('--print-units') + 1], 'base');
  });

  it('finds the metric names an ncu error output rejects', () => {
    const out = '==PROF== Connected\n==ERROR== Failed to find metric smsp__average_warps_issue_stalled_misc_per_issue_active.ratio\n';
    assert.deepEqual(metricsNamedInError(out, metricList()), ['smsp__average_warps_issue_stalled_misc_per_issue_active.ratio']);
    assert.deepEqual(metricsNamedInError('gpu__time_duration.sum printed, no error', metricList()), []);
  });
});

describe('profile: the analysis of a report', () => {
  const csv = fs.readFileSync(SYNTHETIC, 'utf8');
  const side = sidecar(SYNTHETIC);
  const copyGBs = 4000;
  const a = analyse(parseNcuCsv(csv), side.launches, side.minimalBytes, copyGBs);
  const [scalar, vec, mufu] = a.rows;

  it('puts each metric in its column, per arm in launch order', () => {
    assert.deepEqual(a.rows.map((r) => r.arm), ['scalar', 'vec', 'stream-mufu']);
    assert.equal(scalar.durationUs, 195.14);
    assert.equal(vec.dramReadBytes, 134611968);
    assert.equal(vec.dramWriteBytes, 134250496);
    assert.equal(mufu.dramPctOfPeak, 81.7);
    assert.equal(mufu.achievedOccupancyPct, 70.9);
    assert.equal(mufu.theoreticalOccupancyPct, 75);
    assert.equal(vec.issueActivePct, 58);
    assert.equal(scalar.smThroughputPct, 68.2);
    assert.equal(mufu.registers, 72);
    assert.equal(scalar.localLoadBytes, 0);
    // Derived columns: bytes per ns are GB/s; the copy ratios follow the bench's definitions.
    assert.equal(mufu.achievedGBs, (134381568 + 134348800) / 75020);
    assert.equal(mufu.effectiveGBs, side.minimalBytes / 75020);
    assert.equal(mufu.trafficVsMinimal, (134381568 + 134348800) / side.minimalBytes);
    assert.equal(mufu.dramPctOfCopy, (100 * mufu.achievedGBs!) / copyGBs);
    assert.equal(mufu.timeVsCopy, copyGBs / mufu.effectiveGBs!);
    assert.equal(scalar.instPerOutput, (184549376 * 32) / 67108864);
    assert.equal(a.peakGBs, (256 * 18.75e9) / 1e9);
  });

  it('names the occupancy limiter (ties together)', () => {
    assert.equal(mufu.occupancyLimiter, 'registers (3 blocks/SM)');
    assert.equal(vec.occupancyLimiter, 'registers (6 blocks/SM)');
    assert.equal(scalar.occupancyLimiter, 'registers and warps (threads per block) (16 blocks/SM)');
  });

  it('ranks the warp stalls, largest first, leaving out "selected"', () => {
    assert.deepEqual(mufu.stalls.slice(0, 3).map((s) => s.reason), ['long_scoreboard', 'barrier', 'wait']);
    assert.deepEqual(vec.stalls.slice(0, 3).map((s) => s.reason), ['long_scoreboard', 'lg_throttle', 'wait']);
    assert.ok(a.rows.every((r) => r.stalls.every((s) => s.reason !== 'selected' && s.cyclesPerIssue > 0)));
    const k = parseNcuCsv(csv).kernels[0];
    const tied = { ...k, metrics: { ...k.metrics, [stallMetric('wait')]: 3.12 } };
    assert.deepEqual(rankStalls(tied).slice(0, 2).map((s) => s.reason), ['long_scoreboard', 'wait']);  // a tie: by name
  });

  it('reports the metrics the report has no number for, with the arms', () => {
    const byMetric = Object.fromEntries(a.missing.map((m) => [m.metric, m.arms]));
    assert.deepEqual(byMetric['l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum'], ['scalar', 'vec', 'stream-mufu']);
    assert.deepEqual(byMetric['l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum'], ['vec']);
    assert.equal(a.missing.length, 2);
    assert.equal(vec.localLoadBytes, null);
  });

  it('refuses a report whose arm kernels do not match the launches, listing both', () => {
    assert.throws(() => analyse(parseNcuCsv(csv), side.launches.slice(0, 2), side.minimalBytes, null),
      (e: Error) => /2 arm launches made \(scalar, vec\), but the ncu report has 3 arm kernels/.test(e.message) && /2: void conv_kernel<gdn::conv::ArmStreamMufu/.test(e.message));
  });

  it('ignores launches that are not arm kernels (output fills)', () => {
    const lines = csv.split('\n');
    const fill = lines[3].replace(/void conv_kernel<[^"]*>\(gdn::conv::Params\)/, 'fill_ranges_kernel(FillRanges)').replace(/^"0"/, '"9"');
    const r = analyse(parseNcuCsv([...lines.slice(0, 4), fill, ...lines.slice(4)].join('\n')), side.launches, side.minimalBytes, null);
    assert.deepEqual(r.rows.map((x) => x.durationUs), [195.14, 108.21, 75.02]);
    assert.equal(r.rows[0].dramPctOfCopy, null);  // no copy measured: no ratio, not a made-up one
  });

  it('shows a table with every column the question needs', () => {
    const rows = tableRows(a);
    assert.deepEqual(Object.keys(rows[0]), ['arm', 'time µs', 'DRAM rd/wr MB', '× minimal', 'DRAM GB/s', '% peak', '% copy', '× copy time', 'occupancy %', 'limited by', 'issue active %', 'inst/output', 'top stalls (cycles/issue)', 'registers', 'local ld/st B']);
    assert.equal(rows[2]['time µs'], '75.02');
    assert.equal(rows[2]['DRAM rd/wr MB'], '134.38 / 134.35');
    assert.equal(rows[2]['% peak'], '81.7');
    assert.equal(rows[2]['occupancy %'], '70.9 of 75.0');
    assert.equal(rows[2]['top stalls (cycles/issue)'], 'long_scoreboard 7.95, barrier 1.22, wait 0.71');
    assert.equal(rows[1]['local ld/st B'], 'n/a');  // neither local metric has a number for vec
    assert.equal(rows[2].registers, 72);
    assert.equal(rows[0]['× copy time'], (copyGBs / scalar.effectiveGBs!).toFixed(2));
  });

  it('draws achieved and effective bandwidth beside the copy and the peak', () => {
    const f = rooflineFigure(a, copyGBs, 'conv');
    const names = f.data.map((t) => t.name);
    assert.deepEqual(names, ['DRAM bytes moved / time', 'minimal traffic / time', 'copy and peak']);
    const ref = f.data[2] as { x: string[]; y: number[] };
    assert.deepEqual(ref.x, ['copy (measured)', 'DRAM peak']);
    assert.deepEqual(ref.y, [4000, 4800]);
    assert.match(f.svg(), /<svg/);
  });

  // Every recorded report committed beside the synthetic one (test/fixtures/ncu/README.md) is read the same way.
  for (const file of fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.csv')).sort()) {
    it(`reads ${file} with its launches`, () => {
      const full = path.join(FIXTURES, file);
      const s = sidecar(full);
      const r = analyse(parseNcuCsv(fs.readFileSync(full, 'utf8')), s.launches, s.minimalBytes, null);
      assert.equal(r.rows.length, s.launches.length);
      for (const row of r.rows) {
        assert.ok(row.durationUs !== null && row.durationUs > 0, `${file} ${row.arm}: a duration`);
        assert.ok(row.achievedGBs !== null && row.achievedGBs > 0, `${file} ${row.arm}: DRAM traffic`);
        assert.ok(row.stalls.length > 0, `${file} ${row.arm}: stall reasons`);
      }
      // A recorded report has every metric the table reads (the synthetic one leaves two out on purpose), and gives
      // the rows the GPU machine parsed from it when it was made (rowsAsParsedThere): the parser reads it the same here.
      if (!file.startsWith('synthetic-')) {
        assert.deepEqual(r.missing, []);
        assert.ok(s.rowsAsParsedThere && s.rowsAsParsedThere.length === r.rows.length, `${file}: the rows parsed where it was recorded`);
        for (const [i, there] of s.rowsAsParsedThere.entries()) {
          const here = r.rows[i] as unknown as Record<string, unknown>;
          for (const [k, v] of Object.entries(there)) assert.deepEqual(here[k], v, `${file} row ${i} (${String(there.arm)}): ${k}`);
        }
      }
    });
  }
});

describe('profile: without a GPU or without ncu', function () {
  this.timeout(120000);

  it('says what is missing', () => {
    assert.equal(unavailableReason('cuda', '/usr/bin/ncu'), null);
    const host = unavailableReason('host', '/usr/bin/ncu', 'GDN_BACKEND=host')!;
    assert.match(host, /needs the CUDA backend on an NVIDIA GPU; this is the host backend \(GDN_BACKEND=host\)/);
    assert.doesNotMatch(host, /ncu was not found/);
    const noNcu = unavailableReason('cuda', '')!;
    assert.match(noNcu, /Nsight Compute's ncu was not found/);
    assert.match(noNcu, /pass \{ ncu: '\/path\/to\/ncu' \}/);
    assert.doesNotMatch(noNcu, /host backend/);
    const both = unavailableReason('host', '')!;
    assert.match(both, /host backend.*; and Nsight Compute's ncu was not found/);
  });

  it('finds ncu where it is told, and nothing where there is none', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-ncu-'));
    const fake = path.join(dir, 'ncu');
    fs.writeFileSync(fake, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    assert.equal(findNcu(fake), fake);
    assert.equal(findNcu(path.join(dir, 'absent')), '');
    fs.writeFileSync(path.join(dir, 'not-executable'), '', { mode: 0o644 });
    assert.equal(findNcu(path.join(dir, 'not-executable')), '');
  });

  it('computes the op\'s minimal traffic with the bench\'s formulas', () => {
    const x = Tensor.zeros([64, 256], 'bf16');
    const inputs = { x, weight: Tensor.zeros([256, 4], 'bf16'), queryStartLoc: [0, 40, 64], hasInitialState: [true, false], convState: Tensor.zeros([2, 256, 3], 'f32') };
    // x read (2 B) + out written (2 B) per element, 2 final states written and 1 initial state read (f32).
    assert.equal(minimalBytes('conv', inputs, { outDtype: 'bf16' }), 64 * 256 * 4 + 3 * 256 * 3 * 4);
    assert.equal(minimalBytes('conv', inputs, {}), 64 * 256 * 6 + 3 * 256 * 3 * 4);
    assert.throws(() => minimalBytes('postconv', { convOut: x, a: x }, { Hk: 1 }), /Hv: expected a positive integer/);
  });

  it('on the host backend: says profiling needs a GPU, and shows each arm\'s launch and the minimal traffic in one output', async () => {
    const host = Backend.open('host');
    const inputs = {
      x: Tensor.random([48, 256], 'bf16', { seed: 1 }), weight: Tensor.random([256, 4], 'bf16', { seed: 2 }),
      queryStartLoc: [0, 20, 48], hasInitialState: [true, false], convState: Tensor.random([2, 256, 3], 'f32', { seed: 3 }),
    };
    const { value: r, outputs } = await withKernel(() => profile('conv', inputs, { arms: ['scalar', 'vec/exact', 'stream-mufu'], outDtype: 'bf16', backend: host, inspectSm: false, copy: false }));
    assert.equal(outputs.length, 1);
    assert.equal(r.profiled, false);
    assert.equal(r.analysis, null);
    assert.match(r.unavailable!, /needs the CUDA backend on an NVIDIA GPU; this is the host backend/);
    assert.match(String(outputs[0].data['text/html']), /Not profiled:/);
    assert.match(String(outputs[0].data['text/plain']), /minimal traffic 0\.\d+ MB/);
    assert.deepEqual(r.plan.map((p) => p.arm), ['scalar', 'vec/exact', 'stream-mufu']);
    assert.deepEqual(r.plan.map((p) => p.ran), ['scalar/sequence', 'vec/exact', 'stream-mufu/exact']);
    assert.match(r.plan[2].launch, /threads\/block, grid/);
    assert.equal(r.minimalBytes, 48 * 256 * 4 + 3 * 256 * 3 * 4);
    assert.equal(r[MIME_BUNDLE](), null);  // shown once: no second output as the cell's value
  });

  it('refuses bad arms and options, naming them', async () => {
    const host = Backend.open('host');
    const inputs = { x: Tensor.zeros([8, 64], 'f32'), weight: Tensor.zeros([64, 4], 'f32'), queryStartLoc: [0, 8], convState: Tensor.zeros([1, 64, 3], 'f32') };
    await assert.rejects(profile('conv', inputs, { arms: [], backend: host }), /arms: expected a non-empty list of conv arm names/);
    await assert.rejects(profile('conv', inputs, { arms: ['nope'], backend: host }), /arms\[0\]: 'nope' is not a conv arm/);
    await assert.rejects(profile('conv', inputs, { arms: ['vec/diagonal'], backend: host }), /arms\[0\]: 'vec\/diagonal': expected arm or arm\/mapping/);
    await assert.rejects(profile('postconv', inputs, { arms: ['tree/exact'], backend: host }), /only conv arms take a mapping/);
    await assert.rejects(profile('matmul' as never, inputs, { arms: ['scalar'], backend: host }), /op: expected one of conv, postconv, fused/);
    await assert.rejects(profile('conv', inputs, { arms: ['scalar'], arm: 'vec', backend: host }), /arm: profile takes a list of arms/);
  });
});

// A stand-in for ncu: `--export R … CMD` runs CMD (the real child process, on the host backend) and stores the
// synthetic report as R; `--import R` prints it. FAKE_NCU_REJECT=METRIC makes a run that asks for METRIC fail as
// ncu does for a metric it does not know; FAKE_NCU_LOG records every invocation.
const FAKE_NCU = `#!/usr/bin/env bash
echo "$*" >> "$FAKE_NCU_LOG"
if [ "$1" = --import ]; then cat "$2"; exit 0; fi
report=""; metrics=""; cmd=()
while [ $# -gt 0 ]; do
  case "$1" in
    --export) report=$2; shift 2 ;;
    --metrics) metrics=$2; shift 2 ;;
    --force-overwrite) shift ;;
    --*) shift 2 ;;
    *) cmd=("$@"); break ;;
  esac
done
if [ -n "\${FAKE_NCU_REJECT:-}" ] && [[ ",$metrics," == *",$FAKE_NCU_REJECT,"* ]]; then
  echo "==ERROR== Failed to find metric $FAKE_NCU_REJECT" >&2; exit 1
fi
"\${cmd[@]}" || exit $?
cp "$FAKE_NCU_CSV" "$report"
`;

describe('profile: the child process under (a stand-in) ncu', function () {
  this.timeout(120000);
  let dir: string;
  let ncu: string;
  const saved = { ...process.env };
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-fake-ncu-'));
    ncu = path.join(dir, 'ncu');
    fs.writeFileSync(ncu, FAKE_NCU, { mode: 0o755 });
    process.env.FAKE_NCU_LOG = path.join(dir, 'calls.log');
    process.env.FAKE_NCU_CSV = SYNTHETIC;
  });
  after(() => {
    for (const k of ['FAKE_NCU_LOG', 'FAKE_NCU_CSV', 'FAKE_NCU_REJECT']) if (saved[k] === undefined) delete process.env[k];
  });
  const inputs = () => ({
    x: Tensor.random([40, 256], 'bf16', { seed: 4 }), weight: Tensor.random([256, 4], 'bf16', { seed: 5 }),
    queryStartLoc: [0, 40], hasInitialState: [false], convState: Tensor.zeros([1, 256, 3], 'f32'),
  });

  it('launches each arm once in the child, in order, and reads the report back', async () => {
    const arms = expectArms('conv', ['scalar', 'vec', 'stream-mufu']);
    const rec = await profileUnderNcu(ncu, 'conv', arms, inputs(), { outDtype: 'bf16' }, 60000, 'host');
    assert.deepEqual(rec.launches.map((l) => [l.label, l.ran]), [['scalar', 'scalar/sequence'], ['vec', 'vec/exact'], ['stream-mufu', 'stream-mufu/exact']]);
    assert.ok(rec.launches.every((l) => l.outputElements === 40 * 256 && !l.user));
    assert.equal(fs.readFileSync(rec.csvFile, 'utf8'), fs.readFileSync(SYNTHETIC, 'utf8'));
    assert.deepEqual(rec.dropped, []);
    const calls = fs.readFileSync(process.env.FAKE_NCU_LOG!, 'utf8').trim().split('\n');
    assert.match(calls[calls.length - 2], /--clock-control none --cache-control all --target-processes all/);
    assert.match(calls[calls.length - 1], /^--import .*profile\.ncu-rep --csv --page raw --print-units base/);
    const a = analyse(parseNcuCsv(rec.csv), rec.launches, 1e6, null);
    assert.equal(a.rows[2].registers, 72);
  });

  it('runs again without a metric this ncu does not know, and lists it as missing', async () => {
    const bad = stallMetric('misc');
    process.env.FAKE_NCU_REJECT = bad;
    try {
      const rec = await profileUnderNcu(ncu, 'conv', expectArms('conv', ['scalar', 'vec', 'stream-mufu']), inputs(), {}, 60000, 'host');
      assert.deepEqual(rec.dropped, [bad]);
      const calls = fs.readFileSync(process.env.FAKE_NCU_LOG!, 'utf8').trim().split('\n');
      assert.ok(calls[calls.length - 2].includes(bad) === false && calls[calls.length - 3].includes(bad));
    } finally {
      delete process.env.FAKE_NCU_REJECT;
    }
  });

  it('reports a failing child with ncu\'s last output', async () => {
    // An arm the child cannot run at these inputs: the output dtype is refused inside the child.
    await assert.rejects(profileUnderNcu(ncu, 'conv', expectArms('conv', ['scalar']), inputs(), { outDtype: 'f16' }, 60000, 'host'),
      (e: Error) => /ncu exited with 1 before the child process wrote its launches/.test(e.message) && /outDtype/.test(e.message));
  });
});

describe('profile: the command line', function () {
  this.timeout(120000);
  const gdnlab = path.join(__dirname, '..', '..', '..', 'bin', 'gdnlab.js');
  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => spawnSync(process.execPath, [gdnlab, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });

  it('on the host backend: exit 3, saying profiling needs a GPU and ncu, with each arm\'s launch', () => {
    // An empty PATH and no GDNLAB_NCU: this is what a machine without Nsight Compute (CI) shows.
    const r = cli(['profile', 'conv', '--backend', 'host', '--arms', 'scalar,vec', '--tokens', '64'], { PATH: '/nonexistent', GDNLAB_NCU: '' });
    assert.equal(r.status, 3, r.stderr);
    assert.match(r.stdout, /Not profiled: profiling needs the CUDA backend on an NVIDIA GPU; this is the host backend/);
    assert.match(r.stdout, /Nsight Compute's ncu was not found/);
    assert.match(r.stdout, /vec\/exact +128 threads\/block/);
    const j = cli(['profile', 'postconv', '--backend', 'host', '--arms', 'tree,vec-tile', '--tokens', '32', '--json'], { PATH: '/nonexistent' });
    assert.equal(j.status, 3, j.stderr);
    const parsed = JSON.parse(j.stdout);
    assert.equal(parsed.profiled, false);
    assert.deepEqual(parsed.plan.map((p: { arm: string }) => p.arm), ['tree', 'vec-tile']);
    assert.equal(parsed.minimalBytes, 32 * (8192 * 2 + 2 * 32 * 2 + 8192 * 2 + 2 * 32 * 4));
  });

  it('refuses an unknown flag and a missing --arms (exit 2)', () => {
    const r = cli(['profile', 'conv', '--arms', 'scalar', '--quik']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /unknown flag --quik/);
    const m = cli(['profile', 'fused', '--backend', 'host']);
    assert.equal(m.status, 2);
    assert.match(m.stderr, /--arms: expected the arms to profile/);
  });
});
