// The Nsight Compute CSV reader and the profile table at their edges (lib/profile/{ncu-csv,metrics,report}.ts):
// CSV records, unit and number forms, both pages of the report, malformed reports, and the analysis of
// launches with metrics missing or zero. Pure: no ncu, no GPU, no backend. Written against the survivors of a
// StrykerJS run (docs/TESTING.md, "Mutation testing").

import { strict as assert } from 'assert';
import { NcuCsvError, NcuKernel, NcuReport, csvRecords, metricValue, parseNcuCsv, parseNcuNumber, toBaseUnit } from '../../lib/profile/ncu-csv';
import { METRICS, STALL_REASONS, metricList, ncuImportArgs, ncuRecordArgs, stallMetric, stallReasonOf } from '../../lib/profile/metrics';
import { ProfiledLaunch, analyse, occupancyLimiter, rankStalls, rooflineFigure, tableRows } from '../../lib/profile/report';

const csvError = (re: RegExp) => (e: unknown) => e instanceof NcuCsvError && re.test(e.message);

function kernel(id: number, metrics: Record<string, number | string>, kernelName = 'conv_kernel<X>'): NcuKernel {
  return { id, processId: '1', processName: 'node', kernelName, blockSize: '', gridSize: '', device: '0', cc: '9.0', metrics, units: {} };
}
const report = (kernels: NcuKernel[]): NcuReport => ({ kernels, page: 'raw', metricNames: [], messages: [] });
const launch = (label: string, outputElements = 100, ran = label): ProfiledLaunch => ({ label, ran, outputElements, launch: {}, user: false });

describe('profile: the ncu CSV reader at its edges', () => {
  describe('csvRecords', () => {
    it('skips empty lines but keeps a line of empty fields and a quoted empty field', () => {
      assert.deepEqual(csvRecords('a\n\n""\n,\n\n'), [['a'], [''], ['', '']]);
    });

    it('ends a record at CR, LF or CRLF, and at the end of the text (a trailing comma leaves an empty field)', () => {
      assert.deepEqual(csvRecords('a\rb\r\nc\nd,'), [['a'], ['b'], ['c'], ['d', '']]);
      assert.deepEqual(csvRecords('x,y'), [['x', 'y']]);
      assert.deepEqual(csvRecords('""'), [['']]);
      assert.deepEqual(csvRecords(''), []);
    });

    it('a quoted field holds line ends, commas and doubled quotes; a lone quote closes it', () => {
      assert.deepEqual(csvRecords('"a\nb","c,d","e""f",g'), [['a\nb', 'c,d', 'e"f', 'g']]);
      assert.deepEqual(csvRecords('"a"b,c'), [['ab', 'c']]);
      assert.deepEqual(csvRecords('""""'), [['"']]);
      assert.throws(() => csvRecords('a,"b'), csvError(/not closed/));
      assert.throws(() => csvRecords('"a""'), csvError(/not closed/));
    });
  });

  describe('toBaseUnit', () => {
    it('durations to ns, in both spellings, the unit trimmed', () => {
      const cases: [number, string, number][] = [[1, ' nsecond ', 1], [2, 'ns', 2], [3, 'us', 3e3], [4, 'msecond', 4e6], [5, 'ms', 5e6], [6, 'second', 6e9], [7, 's', 7e9]];
      for (const [v, u, ns] of cases) assert.deepEqual(toBaseUnit(v, u), { value: ns, unit: 'ns' }, u);
    });

    it('sizes to bytes; only ncu\'s exact spellings', () => {
      assert.deepEqual(toBaseUnit(2, 'byte'), { value: 2, unit: 'byte' });
      assert.deepEqual(toBaseUnit(2, 'Kbyte'), { value: 2e3, unit: 'byte' });
      assert.deepEqual(toBaseUnit(2, 'Mbyte'), { value: 2e6, unit: 'byte' });
      assert.deepEqual(toBaseUnit(2, 'Tbyte'), { value: 2e12, unit: 'byte' });
      for (const u of ['kbyte', 'Kbytes', 'XKbyte', 'bytes']) assert.deepEqual(toBaseUnit(2, u), { value: 2, unit: u }, u);
    });

    it('rates to per second, for each counted thing and prefix', () => {
      assert.deepEqual(toBaseUnit(2, 'Kbyte/usecond'), { value: 2e9, unit: 'byte/second' });
      assert.deepEqual(toBaseUnit(2, 'inst/msecond'), { value: 2e3, unit: 'inst/second' });
      assert.deepEqual(toBaseUnit(2, 'warp/second'), { value: 2, unit: 'warp/second' });
      assert.deepEqual(toBaseUnit(2, 'Msector/nsecond'), { value: 2e15, unit: 'sector/second' });
      assert.deepEqual(toBaseUnit(2, 'request/usecond'), { value: 2e6, unit: 'request/second' });
      // ncu 2025.3's spelling of the same units (its raw page said 'ns' for times on the H100 at c1c9891).
      assert.deepEqual(toBaseUnit(2, 'Kbyte/us'), { value: 2e9, unit: 'byte/second' });
      assert.deepEqual(toBaseUnit(2, 'cycle/s'), { value: 2, unit: 'cycle/second' });
      assert.deepEqual(toBaseUnit(2, 'byte/ns'), { value: 2e9, unit: 'byte/second' });
      assert.deepEqual(toBaseUnit(2, 'Gcycle/second'), { value: 2e9, unit: 'cycle/second' });
      for (const u of ['byte/ssecond', 'byte/second/x', 'xbyte/second', 'thread/second']) assert.deepEqual(toBaseUnit(2, u), { value: 2, unit: u }, u);
    });

    it('frequencies to cycles per second, any case; other units unchanged', () => {
      assert.deepEqual(toBaseUnit(2, 'hz'), { value: 2, unit: 'cycle/second' });
      assert.deepEqual(toBaseUnit(2, 'kHz'), { value: 2e3, unit: 'cycle/second' });
      assert.deepEqual(toBaseUnit(2, 'MHZ'), { value: 2e6, unit: 'cycle/second' });
      for (const u of ['Hz2', 'xHz', 'register/thread', '']) assert.deepEqual(toBaseUnit(2, u), { value: 2, unit: u }, u);
    });
  });

  describe('parseNcuNumber', () => {
    it('reads signs, exponents, decimals and thousands groups; trims', () => {
      assert.equal(parseNcuNumber(' 7 '), 7);
      assert.equal(parseNcuNumber('+5'), 5);
      assert.equal(parseNcuNumber('-1,000'), -1000);
      assert.equal(parseNcuNumber('1.5e+3'), 1500);
      assert.equal(parseNcuNumber('2E-2'), 0.02);
      assert.equal(parseNcuNumber('12,345,678'), 12345678);
      assert.equal(parseNcuNumber('0'), 0);
      assert.equal(parseNcuNumber('1e10'), 1e10);
      assert.equal(parseNcuNumber('2.5E-12'), 2.5e-12);
    });

    it('text is null: misplaced commas, bare dots, words, overflow', () => {
      for (const t of ['1234,567', '1,234,56', ',123', '1,', '.5', '5.', 'x5', '5x', '1e', 'nan', 'inf', '1e999', '--1', '1 2']) assert.equal(parseNcuNumber(t), null, t);
    });
  });

  describe('parseNcuCsv', () => {
    const RAW_HEADER = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","m.a","m.b"';
    const RAW_UNITS = '"","","","","","","","","","","","","nsecond","Kbyte"';
    const rawRow = (id: string, pid = '7', a = '1', b = '2') => `"${id}","${pid}","node","h","conv_kernel","1","7","(1, 1, 1)","(2, 1, 1)","0","9.0","s","${a}","${b}"`;

    it('refuses anything but text', () => {
      assert.throws(() => parseNcuCsv(undefined as unknown as string), (e: unknown) => e instanceof TypeError && /got undefined/.test((e as Error).message));
    });

    it('without a header: quotes the first non-blank line (at most 120 characters)', () => {
      assert.throws(() => parseNcuCsv('\n  \nfirst line\nsecond'), csvError(/the text starts "first line"$/));
      assert.throws(() => parseNcuCsv(''), csvError(/the text starts ""$/));
      assert.throws(() => parseNcuCsv(`${'x'.repeat(130)}\n`), csvError(new RegExp(`starts "${'x'.repeat(120)}"$`)));
      // "ID" must open the line.
      assert.throws(() => parseNcuCsv(`x"ID","a"\n`), csvError(/no header line/));
    });

    it('raw: launch columns out of the metrics, values converted, messages kept without blank lines, kernels by id', () => {
      const r = parseNcuCsv(['==PROF== one', '', '==PROF== two', RAW_HEADER, RAW_UNITS, rawRow('5', '7', '3', '1,500'), rawRow('2', '7', 'n/a', '4'), ''].join('\n'));
      assert.equal(r.page, 'raw');
      assert.deepEqual(r.messages, ['==PROF== one', '==PROF== two']);
      assert.deepEqual(r.metricNames, ['m.a', 'm.b']);
      assert.deepEqual(r.kernels.map((k) => k.id), [2, 5]);
      const [k2, k5] = r.kernels;
      assert.deepEqual(k5.metrics, { 'm.a': 3, 'm.b': 1.5e6 });
      assert.deepEqual(k5.units, { 'm.a': 'ns', 'm.b': 'byte' });
      assert.deepEqual(k2.metrics, { 'm.a': 'n/a', 'm.b': 4000 });
      assert.equal(k2.units['m.a'], 'nsecond');
      assert.deepEqual([k5.processId, k5.processName, k5.kernelName, k5.blockSize, k5.gridSize, k5.device, k5.cc], ['7', 'node', 'conv_kernel', '(1, 1, 1)', '(2, 1, 1)', '0', '9.0']);
      assert.equal(metricValue(k2, 'm.a'), null);
      assert.equal(metricValue(k2, 'm.b'), 4000);
      assert.equal(metricValue(k2, 'm.none'), null);
    });

    it('text values and their units are kept trimmed; blank message lines are dropped', () => {
      const r = parseNcuCsv('==PROF== a\n   \n\t\n"ID","m.a","m.b"\n"","  x/y  "," ns "\n"0"," n/a ","5"\n');
      assert.deepEqual(r.messages, ['==PROF== a']);
      assert.deepEqual([r.kernels[0].metrics, r.kernels[0].units], [{ 'm.a': 'n/a', 'm.b': 5 }, { 'm.a': 'x/y', 'm.b': 'ns' }]);
    });

    it('raw: the same launch id in two processes is two kernels; launch columns that are absent read as empty', () => {
      const r = parseNcuCsv([RAW_HEADER, RAW_UNITS, rawRow('0', '7'), rawRow('0', '8')].join('\n'));
      assert.equal(r.kernels.length, 2);
      assert.deepEqual(r.kernels.map((k) => k.processId).sort(), ['7', '8']);
      const bare = parseNcuCsv('"ID","m.a"\n"","ns"\n"3","9"\n');
      assert.deepEqual(bare.kernels.map((k) => [k.id, k.processId, k.kernelName, k.cc, k.metrics['m.a']]), [[3, '', '', '', 9]]);
    });

    it('raw: a header with no units line, a units line with an ID, rows of the wrong width, an id that is no number', () => {
      assert.throws(() => parseNcuCsv(RAW_HEADER), csvError(/header but no units line/));
      assert.throws(() => parseNcuCsv(`${RAW_HEADER}\n"","x"`), csvError(/^ncu CSV: line 2 has 2 fields, the header has 14$/));
      assert.throws(() => parseNcuCsv(`${RAW_HEADER}\n${rawRow('0')}`), csvError(/line 2 should be the units line \(an empty "ID"\), got ID "0"/));
      assert.throws(() => parseNcuCsv(`${RAW_HEADER}\n${RAW_UNITS}\n${rawRow('0')}\n"1"`), csvError(/^ncu CSV: line 4 has 1 fields, the header has 14$/));
      assert.throws(() => parseNcuCsv(`${RAW_HEADER}\n${RAW_UNITS}\n${rawRow('zero')}`), csvError(/launch id "zero" is not a number/));
      // A units line alone: a report of no launches.
      assert.deepEqual(parseNcuCsv(`${RAW_HEADER}\n${RAW_UNITS}\n`).kernels, []);
    });

    const DETAILS_HEADER = '"ID","Process ID","Kernel Name","Metric Name","Metric Unit","Metric Value"';
    it('details: rows by (launch, process), names listed once, rows without a name skipped, kernels by id', () => {
      const r = parseNcuCsv([DETAILS_HEADER,
        '"4","7","fused_kernel","m.a","usecond","2"',
        '"1","7","fused_kernel","m.a","nsecond","3"',
        '"4","7","fused_kernel","m.b","","n/a"',
        '"4","8","fused_kernel","m.a","second","1"',
        '"1","7","fused_kernel","","","9"',
      ].join('\n'));
      assert.equal(r.page, 'details');
      assert.deepEqual(r.metricNames, ['m.a', 'm.b']);
      assert.deepEqual(r.kernels.map((k) => `${k.id}/${k.processId}`), ['1/7', '4/7', '4/8']);
      assert.deepEqual(r.kernels[1].metrics, { 'm.a': 2000, 'm.b': 'n/a' });
      assert.deepEqual(r.kernels[1].units, { 'm.a': 'ns', 'm.b': '' });
      assert.deepEqual(r.kernels[0].metrics, { 'm.a': 3 });
      assert.equal(r.kernels[2].metrics['m.a'], 1e9);
      assert.equal(r.kernels[0].kernelName, 'fused_kernel');
    });

    it('details: without a unit column the values stay as printed; a short row is named by its line', () => {
      const r = parseNcuCsv('"ID","Metric Name","Metric Value"\n"0","m.a","1,024"\n');
      assert.equal(r.page, 'details');
      assert.deepEqual([r.kernels[0].metrics, r.kernels[0].units], [{ 'm.a': 1024 }, { 'm.a': '' }]);
      assert.throws(() => parseNcuCsv(`${DETAILS_HEADER}\n"0","7","k","m.a","ns","1"\n"0","7"`), csvError(/^ncu CSV: line 3 has 2 fields, the header has 6$/));
      // A "Metric Name" column without "Metric Value" is not the details page.
      assert.throws(() => parseNcuCsv('"ID","Metric Name"\n"0","x"\n'), csvError(/line 2 should be the units line/));
      assert.equal(parseNcuCsv('"ID","Metric Value"\n"","ns"\n"0","5"\n').page, 'raw');
    });
  });

  describe('metrics', () => {
    it('stall metric names round-trip; other names are not stall metrics', () => {
      assert.equal(stallReasonOf('smsp__average_warps_issue_stalled_a_b_per_issue_active.ratio'), 'a_b');
      for (const m of ['xsmsp__average_warps_issue_stalled_wait_per_issue_active.ratio', 'smsp__average_warps_issue_stalled_wait_per_issue_active.ratiox', 'smsp__average_warps_issue_stalled__per_issue_active.ratio', 'smsp__average_warps_issue_stalled_wait_per_issue_activeXratio']) {
        assert.equal(stallReasonOf(m), null, m);
      }
      assert.deepEqual(metricList(), [...Object.values(METRICS), ...STALL_REASONS.map(stallMetric)]);
    });

    it('the record and import command lines carry every documented flag and its value', () => {
      const rec = ncuRecordArgs('/r.ncu-rep', ['a', 'b'], ['node', 'c.js']);
      assert.deepEqual(rec, ['--metrics', 'a,b', '--clock-control', 'none', '--cache-control', 'all', '--target-processes', 'all', '--replay-mode', 'kernel', '--kernel-name-base', 'function', '--kernel-name', 'regex:conv_kernel|postconv_kernel|fused_kernel|gdn_arm_', '--export', '/r.ncu-rep', '--force-overwrite', 'node', 'c.js']);
      assert.deepEqual(ncuImportArgs('/r'), ['--import', '/r', '--csv', '--page', 'raw', '--print-units', 'base', '--print-kernel-base', 'demangled']);
    });
  });

  describe('the analysis', () => {
    const d = METRICS;
    const full = (ns: number, rd: number, wr: number, extra: Record<string, number | string> = {}) => ({ [d.duration]: ns, [d.dramRead]: rd, [d.dramWrite]: wr, ...extra });

    it('stalls: zero and text left out, "selected" never a stall, ties by name', () => {
      const k = kernel(0, { [stallMetric('wait')]: 2, [stallMetric('barrier')]: 2, [stallMetric('drain')]: 0, [stallMetric('misc')]: 'n/a', [stallMetric('selected')]: 9, [stallMetric('sleeping')]: 0.5 });
      assert.deepEqual(rankStalls(k), [{ reason: 'barrier', cyclesPerIssue: 2 }, { reason: 'wait', cyclesPerIssue: 2 }, { reason: 'sleeping', cyclesPerIssue: 0.5 }]);
      assert.deepEqual(rankStalls(kernel(0, { [stallMetric('misc')]: 1, [stallMetric('wait')]: 3 })).map((s) => s.reason), ['wait', 'misc']);
      assert.deepEqual(rankStalls(kernel(0, {})), []);
    });

    it('occupancy limiter: the lowest, ties joined, absent limits ignored, none at all null', () => {
      assert.equal(occupancyLimiter(kernel(0, {})), null);
      assert.equal(occupancyLimiter(kernel(0, { [d.limitBlocks]: 'n/a' })), null);
      assert.equal(occupancyLimiter(kernel(0, { [d.limitWarps]: 8, [d.limitBlocks]: 32 })), 'warps (threads per block) (8 blocks/SM)');
      assert.equal(occupancyLimiter(kernel(0, { [d.limitRegisters]: 0, [d.limitSharedMem]: 0, [d.limitBlocks]: 1 })), 'registers and shared memory (0 blocks/SM)');
    });

    it('one launch against two kernels: the message in the singular and plural, naming every launch of the report', () => {
      const two = report([kernel(3, {}, 'conv_kernel<A>'), kernel(4, {}, 'fill_ranges'), kernel(5, {}, 'gdn_arm_x')]);
      assert.throws(() => analyse(two, [launch('a')], 1, null), (e: Error) => e.message === 'profile: 1 arm launch made (a), but the ncu report has 2 arm kernels (launches in the report: 3: conv_kernel<A>; 4: fill_ranges; 5: gdn_arm_x)');
      const one = report([kernel(3, {}, 'postconv_kernel')]);
      assert.throws(() => analyse(one, [launch('a'), launch('b')], 1, null), (e: Error) => /^profile: 2 arm launches made \(a, b\), but the ncu report has 1 arm kernel \(/.test(e.message));
      assert.throws(() => analyse(report([]), [launch('a')], 1, null), (e: Error) => /has 0 arm kernels \(launches in the report: none\)$/.test(e.message));
      assert.deepEqual(analyse(report([]), [], 1, null), { rows: [], missing: [], peakGBs: null });
    });

    it('derived columns are null, not made up, when a number is missing or zero', () => {
      const kernels = [
        kernel(0, full(1000, 3000, 1000, { [d.warpInstructions]: 10 }), 'fused_kernel'),
        kernel(1, { [d.duration]: 0, [d.dramRead]: 5 }, 'conv_kernel'),
        kernel(2, full(2000, 1000, 1000, { [d.dramPeakPerCycle]: 100, [d.dramCyclesPerSecond]: 1e9, [d.warpInstructions]: 6 }), 'gdn_arm_a'),
        kernel(3, full(500, 0, 0, { [d.dramPeakPerCycle]: 1, [d.dramCyclesPerSecond]: 1e9, [d.warpInstructions]: 4 }), 'gdn_arm_b'),
      ];
      const a = analyse(report(kernels), [launch('x'), launch('y'), launch('z', 0), launch('w', 8)], 2000, 4);
      const [x, y, z, w] = a.rows;
      assert.equal(x.durationUs, 1);
      assert.equal(x.achievedGBs, 4);
      assert.equal(x.effectiveGBs, 2);
      assert.equal(x.trafficVsMinimal, 2);
      assert.equal(x.dramPctOfCopy, 100);
      assert.equal(x.timeVsCopy, 2);
      assert.equal(x.instPerOutput, 3.2);
      // Duration 0: no rate; write missing: no traffic.
      assert.equal(y.durationUs, 0);
      assert.deepEqual([y.achievedGBs, y.effectiveGBs, y.trafficVsMinimal, y.dramPctOfCopy, y.timeVsCopy, y.instPerOutput], [null, null, null, null, null, null]);
      assert.equal(y.dramReadBytes, 5);
      assert.equal(y.dramWriteBytes, null);
      // No output elements: no instructions per output.
      assert.equal(z.instPerOutput, null);
      // The peak comes from the first launch that reports both halves.
      assert.equal(a.peakGBs, 100);
      assert.equal(w.instPerOutput, 16);
      assert.equal(w.achievedGBs, 0);
      assert.equal(w.trafficVsMinimal, 0);
      const noCopy = analyse(report(kernels), [launch('x'), launch('y'), launch('z'), launch('w')], 0, null);
      assert.deepEqual([noCopy.rows[0].dramPctOfCopy, noCopy.rows[0].timeVsCopy, noCopy.rows[0].trafficVsMinimal], [null, null, null]);
      const missing = Object.fromEntries(a.missing.map((m) => [m.metric, m.arms]));
      assert.deepEqual(missing[d.dramWrite], ['y']);
      assert.deepEqual(missing[d.duration], undefined);
      assert.deepEqual(missing[d.warpInstructions], ['y']);
      assert.deepEqual(missing[stallMetric('wait')], ['x', 'y', 'z', 'w']);
      const none = analyse(report([kernel(0, full(1, 1, 1, { [d.dramPeakPerCycle]: 1 }))]), [launch('x')], 1, null);
      assert.equal(none.peakGBs, null);
      const noPerCycle = analyse(report([kernel(0, full(1, 1, 1, { [d.dramCyclesPerSecond]: 1e9 }))]), [launch('x')], 1, null);
      assert.equal(noPerCycle.peakGBs, null);
      // The read missing, the write known: no traffic either.
      const noRead = analyse(report([kernel(0, { [d.duration]: 10, [d.dramWrite]: 7 })]), [launch('x')], 7, 1);
      assert.deepEqual([noRead.rows[0].trafficVsMinimal, noRead.rows[0].achievedGBs, noRead.rows[0].dramPctOfCopy, noRead.rows[0].effectiveGBs], [null, null, null, 0.7]);
    });

    it('the table: "ran" when it differs, n/a for every missing number, the stalls shown, local traffic half known', () => {
      const k = kernel(0, full(1500, 2e6, 1e6, { [d.registers]: 40, [d.localLoadBytes]: 8, [stallMetric('wait')]: 1, [stallMetric('barrier')]: 2, [stallMetric('drain')]: 3 }));
      const a = analyse(report([k, kernel(1, {}, 'conv_kernel')]), [launch('vec/exact', 1, 'tree'), launch('scalar')], 3e6, null);
      const [one, two] = tableRows(a, 2);
      assert.equal(one.arm, 'vec/exact (ran tree)');
      assert.equal(one['time µs'], '1.50');
      assert.equal(one['DRAM rd/wr MB'], '2.00 / 1.00');
      assert.equal(one['top stalls (cycles/issue)'], 'drain 3.00, barrier 2.00');
      assert.equal(one['local ld/st B'], '8 / n/a');
      assert.equal(one.registers, 40);
      assert.equal(one['% copy'], 'n/a');
      assert.equal(two.arm, 'scalar');
      for (const col of ['time µs', '× minimal', 'DRAM GB/s', '% peak', '× copy time', 'limited by', 'issue active %', 'inst/output', 'top stalls (cycles/issue)', 'registers', 'local ld/st B']) assert.equal(two[col], 'n/a', col);
      assert.equal(two['DRAM rd/wr MB'], 'n/a / n/a');
      assert.equal(two['occupancy %'], 'n/a of n/a');
      assert.equal(tableRows(a)[0]['top stalls (cycles/issue)'], 'drain 3.00, barrier 2.00, wait 1.00');
      const storeOnly = analyse(report([kernel(0, { [d.localStoreBytes]: 4 })]), [launch('s')], 1, null);
      assert.equal(tableRows(storeOnly)[0]['local ld/st B'], 'n/a / 4');
    });

    it('the figure: the copy and the peak only when known, missing rates drawn as 0', () => {
      const a = analyse(report([kernel(0, { [d.dramRead]: 1 }), kernel(1, full(1000, 1000, 1000, { [d.dramPeakPerCycle]: 2, [d.dramCyclesPerSecond]: 1e9 }))]), [launch('p'), launch('q')], 1000, null);
      const none = rooflineFigure({ ...a, peakGBs: null }, null, 't');
      assert.deepEqual(none.layout, { title: { text: 't' }, xaxis: { title: { text: 'arm' } }, yaxis: { title: { text: 'GB/s' } }, barmode: 'group', width: 760, height: 380 });
      assert.deepEqual(none.data.map((t) => (t as { marker: unknown }).marker), [{ color: '#1f77b4' }, { color: '#ff7f0e' }]);
      assert.deepEqual(none.data.map((t) => [t.type, t.name, (t as { x: string[] }).x]), [['bar', 'DRAM bytes moved / time', ['p', 'q']], ['bar', 'minimal traffic / time', ['p', 'q']]]);
      assert.deepEqual((rooflineFigure(a, 1, 't').data[2] as { marker: unknown }).marker, { color: '#7f7f7f' });
      assert.equal(none.data.length, 2);
      assert.deepEqual((none.data[0] as { y: number[] }).y, [0, 2]);
      assert.deepEqual((none.data[1] as { y: number[] }).y, [0, 1]);
      const peak = rooflineFigure(a, null, 't').data[2] as { x: string[]; y: number[] };
      assert.deepEqual([peak.x, peak.y], [['DRAM peak'], [2]]);
      const copy = rooflineFigure({ ...a, peakGBs: null }, 5, 't').data[2] as { x: string[]; y: number[] };
      assert.deepEqual([copy.x, copy.y], [['copy (measured)'], [5]]);
    });
  });
});
