// The `gdnlab` command line: facts about the backend, equivalence checks, benchmarks, notebooks.

import { Backend, activeBackend, backendChoice, buildInfo, DeviceInfo } from './backend';
import { ARITHMETIC_VERSION, revision } from './provenance';
import { checkConv, convMatrix, ConvCheckReport } from './check/conv';
import { CONV_MUTANTS } from './ops/conv';
import { arms as armTable, ARM_OPS, ArmInfo } from './ops/arms';

export interface Args {
  positional: string[];
  flags: Map<string, string | true>;
}

export function parseArgs(argv: string[]): Args {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) flags.set(a.slice(2, eq), a.slice(eq + 1));
      else if (VALUE_FLAGS.has(a.slice(2)) && i + 1 < argv.length) flags.set(a.slice(2), argv[++i]);
      else flags.set(a.slice(2), true);
    } else positional.push(a);
  }
  return { positional, flags };
}

const VALUE_FLAGS = new Set(['vllm', 'channels', 'trials', 'widen', 'backend', 'out', 'timeout', 'python', 'prefix', 'name', 'cases', 'seed', 'markdown', 'define', 'arms', 'shapes']);

const USAGE = `usage: gdnlab <command>
  info [--json]                               backend, library and device facts
  arms [--json]                               every arm of every op with its launch contract (from libgdn)
  check conv [--backend host|cuda] [--quick] [--mutants] [--json]
                                              every conv arm and mapping vs scalar, bit for bit
  check race [--backend host|cuda] [--trials N] [--widen CYCLES] [--json]
                                              #305 trials: exact and sequence never corrupted
  check postconv [--backend host|cuda] [--quick] [--mutants] [--json]
  check fused [--backend host|cuda] [--quick] [--mutants] [--json]
                                              fused conv→post-conv vs conv(scalar)→post-conv(tree), bit for bit
  check sanitize [--backend B]                one small launch of every arm (run under compute-sanitizer)
  bench conv|postconv|fused [--backend B] [--quick] [--no-torch] [--samples] [--json[=FILE]] [--markdown FILE]
                          [--vllm DIR]        (fused: vLLM's conv + post-conv from bench/pack-vllm.sh, timed beside)
                          [--arms A,B] [--shapes S,T]
                                              every arm vs a device copy of the same bytes and PyTorch eager, one run
                                              (--samples: every raw timing sample in the JSON; --arms: only these
                                              arms, or arm/mapping; --shapes: only shapes whose name contains one)
  check …, bench …, arms: --define FILE[,FILE]  user arms from .json/.js specs, as defineArm takes them
                                              (docs/USER-ARMS.md): checked, mutant-run and timed like built-ins
  bench overhead [--backend B] [--quick] [--json[=FILE]]   per-op cost from TypeScript beyond the kernel; alloc/free
  bench host [--quick] [--json[=FILE]]        host backend arms vs a memcpy of the same bytes
  bench verdict [--backend B]                 timing self-check: same arm twice = same, scalar = slower
  notebooks run [paths…] | notebooks export <notebook> [--out DIR]
  notebooks compare A.ipynb B.ipynb [-o out.html]
                                              two runs' tables and timing figures side by side (cross-run)
  kernel install [--python PY] [--user|--sys-prefix|--prefix DIR]
Environment: GDN_BACKEND=auto|cuda|host, GDN_LIBRARY=/path/to/libgdn.so`;

export class UsageError extends Error {}

/** Writes to stdout and resolves once the text is handed to the OS (the caller may exit after). */
function writeOut(text: string): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(text, (e) => (e ? reject(e) : resolve())));
}

function armFlags(a: ArmInfo): string {
  const f = [a.reference && 'reference', a.mutant && 'PLANTED MUTANT', a.barrier && 'barriers', a.shuffle && 'shuffles', a.user && 'user', a.fallbackTarget && 'fallback target'];
  return f.filter(Boolean).join(', ');
}

/** `gdnlab arms [--json]`: the registry of libgdn, every op family. */
async function armsCommand(args: Args): Promise<number> {
  const table = Object.fromEntries(ARM_OPS.map((op) => [op, armTable(op)]));
  if (args.flags.has('json')) {
    await writeOut(JSON.stringify({ library: buildInfo(), arms: table }, null, 2) + '\n');
    return 0;
  }
  const lines: string[] = [];
  for (const op of ARM_OPS) {
    lines.push(`${op}:`);
    for (const a of table[op]) {
      const shared = a.sharedBytes.perK ? `${a.sharedBytes.base} + ${a.sharedBytes.perK}·K B shared` : a.sharedBytes.base ? `${a.sharedBytes.base} B shared` : 'no shared memory';
      const per = op === 'postconv' ? `${a.perBlock} head slot(s) x ${a.tokensPerProgram} token(s) per block, layout ${a.layout}`
        : op === 'fused' ? `${a.perBlock} head slot(s) x a ${a.tokensPerProgram}-token program per block` : `${a.perBlock} channels per block`;
      const tokens = op === 'conv' ? (a.tokensPerProgram ? `, ${a.tokensPerProgram}-token programs` : ', whole sequences') : '';
      const threads = a.threadsFromD ? `max(32, pow2 >= Dk) threads (<= ${a.threadsPerBlock})` : `${a.threadsPerBlock} threads`;
      lines.push(`  ${String(a.id).padStart(2)} ${a.name.padEnd(12)} ${a.description}`);
      lines.push(`     ${threads}, ${per}${tokens}; ${shared}` +
        (op === 'conv' ? `; mappings ${a.mappings.join('/')}` : '') +
        (a.minBlocksPerSm > 1 ? `; >= ${a.minBlocksPerSm} blocks/SM` : '') +
        (a.fallbackRule ? `; ${a.fallbackRule}` : '') +
        (armFlags(a) ? ` [${armFlags(a)}]` : ''));
    }
  }
  await writeOut(lines.join('\n') + '\n');
  return 0;
}

function pickBackend(flags: Map<string, string | true>): Backend {
  const b = flags.get('backend');
  if (b === undefined) return activeBackend();
  if (b !== 'host' && b !== 'cuda') throw new UsageError(`--backend: expected host or cuda, got ${String(b)}`);
  return Backend.open(b);
}

function formatInfo(info: DeviceInfo): string[] {
  const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
  const lines = [`device:  ${info.name}`];
  if (info.backend === 'cuda') {
    lines.push(`sm:      ${info.smMajor}.${info.smMinor}, ${info.smCount} multiprocessors, L2 ${mib(info.l2Bytes)}`);
    lines.push(`memory:  ${mib(info.totalMemBytes)} total, ${mib(info.freeMemBytes)} free, bus ${info.memBusWidthBits} bits`);
    lines.push(`clocks:  SM ${info.smClockMhz} MHz (max ${info.maxSmClockMhz}), memory ${info.memClockMhz} MHz (max ${info.maxMemClockMhz}) [${info.clocksSource}]`);
    lines.push(`driver:  ${info.driverString || '?'} (CUDA driver API ${info.driverVersion}), runtime ${info.runtimeVersion}`);
  } else {
    lines.push(`cpus:    ${info.smCount} logical, last-level cache ${info.l2Bytes ? mib(info.l2Bytes) : 'unknown'}`);
    lines.push(`memory:  ${mib(info.totalMemBytes)} total`);
  }
  return lines;
}

async function info(args: Args): Promise<number> {
  const backend = pickBackend(args.flags);
  const lib = buildInfo();
  const facts = { backend: backend.kind, choice: args.flags.has('backend') ? `${backend.kind} (--backend)` : backendChoice(), library: lib, revision: revision(), arithmetic: ARITHMETIC_VERSION, device: backend.info() };
  if (args.flags.has('json')) {
    console.log(JSON.stringify(facts, null, 2));
  } else {
    console.log(`gdnlab ${revision()} (arithmetic v${ARITHMETIC_VERSION})`);
    console.log(`backend: ${facts.choice}`);
    console.log(`library: ${lib.path} (${lib.build}, ABI ${lib.abi})`);
    for (const l of formatInfo(facts.device)) console.log(l);
  }
  return 0;
}

function printConvReport(report: ConvCheckReport, label: string): void {
  const byCase = new Map<string, string[]>();
  for (const r of report.results) {
    const cell = r.maxAbsError !== undefined  // the reference arm's row: its error against float64
      ? `f64 max|err| ${r.maxAbsError?.toExponential(2)}${r.withinTolerance ? '' : ' OUT OF TOLERANCE'}${r.roundingViolations ? ` ROUNDING: ${r.roundingViolations} bf16 elements not rounded to nearest even` : ''}${r.stateMismatches ? ` STATE: ${r.stateMismatches} elements differ from the raw inputs` : ''}`
      : `${r.arm}/${r.mapping}${r.armRan !== r.arm ? `(ran ${r.armRan})` : ''} ${r.ok ? 'ok' : `MISMATCH out ${r.outMismatches} state ${r.stateMismatches}`}`;
    byCase.set(r.case, [...(byCase.get(r.case) ?? []), cell]);
  }
  for (const [name, cells] of byCase) {
    const bad = cells.filter((c) => /MISMATCH|OUT OF|ROUNDING:|STATE:/.test(c));
    console.log(`${bad.length ? 'FAIL' : 'ok  '} ${name}: ${bad.length ? bad.join('; ') : cells[0]}`);
  }
  for (const x of report.crossBackend) {
    if (!x.ok) console.log(`FAIL cuda vs host (scalar) ${x.case}: out ${x.outMismatches}, state ${x.stateMismatches} mismatching elements`);
  }
  const crossBad = report.crossBackend.filter((x) => !x.ok).length;
  console.log(`${label}: ${report.results.length} comparisons, ${report.failures.length} mismatching${report.crossBackend.length ? `; cuda==host on ${report.crossBackend.length - crossBad}/${report.crossBackend.length} cases` : ''}`);
}

async function checkConvCommand(args: Args): Promise<number> {
  const backend = pickBackend(args.flags);
  const json = args.flags.has('json');
  const cases = convMatrix({ quick: args.flags.has('quick') });
  const hostBackend = backend.kind === 'cuda' ? Backend.open('host') : undefined;
  const report = checkConv({
    backend, hostBackend, cases,
    onCase: json ? undefined : (d, n, name) => process.stderr.write(`\r[${d}/${n}] ${name}`.padEnd(70) + (d === n ? '\n' : '')),
  });
  let failed = report.failures.length + report.crossBackend.filter((x) => !x.ok).length;
  const out: Record<string, unknown> = { backend: backend.kind, revision: revision(), arithmetic: ARITHMETIC_VERSION, device: backend.info().name, equivalence: report };
  if (!json) printConvReport(report, 'equivalence');
  if (args.flags.has('mutants')) {
    const { runConvMutants } = await import('./check/mutants');
    const mutants = runConvMutants({ backend, quick: true });
    out.mutants = mutants;
    for (const m of mutants) {
      if (!json) console.log(`${m.caught ? 'caught' : 'MISSED'} ${m.plantedDefect !== undefined ? `planted defect ${m.mutant} (${m.plantedDefect})` : `mutant ${m.mutant}`}: ${m.detail}`);
      if (!m.caught) failed++;
    }
    if (!json) console.log(`mutants: ${mutants.filter((m) => m.caught).length}/${mutants.length} caught (${CONV_MUTANTS.length} planted mutants${backend.kind === 'host' ? ' + the racy mapping under reverse order' : ''}${mutants.some((m) => m.plantedDefect !== undefined) ? ` + ${mutants.filter((m) => m.plantedDefect !== undefined).length} user arms defined as planted defects` : ''})`);
  }
  if (json) console.log(JSON.stringify(out, null, 2));
  hostBackend?.close();
  return failed ? 1 : 0;
}

/** `gdnlab check race`: trials of each mapping; exits non-zero if a correct mapping is ever corrupted. */
async function checkRaceCommand(args: Args): Promise<number> {
  const { raceTrials, raceCase } = await import('./check/race');
  const backend = pickBackend(args.flags);
  const trials = Number(args.flags.get('trials') ?? (backend.kind === 'cuda' ? 1000 : 102));
  const widen = Number(args.flags.get('widen') ?? 0);
  if (!Number.isInteger(trials) || trials < 1) throw new UsageError(`--trials: expected a positive integer, got ${String(args.flags.get('trials'))}`);
  if (!Number.isInteger(widen) || widen < 0) throw new UsageError(`--widen: expected a non-negative integer, got ${String(args.flags.get('widen'))}`);
  const widths = backend.kind === 'cuda' ? [0, widen || 20000] : [0];
  const results = [];
  for (const w of widths) {
    for (const mapping of ['exact', 'sequence', 'exact-racy'] as const) {
      // On the host the block order decides: trial 0 forward, trial 1 reverse, then seeded shuffles.
      const schedule = backend.kind === 'host' ? (i: number) => (i === 0 ? 'forward' as const : i === 1 ? 'reverse' as const : { shuffle: i }) : undefined;
      const r = raceTrials({ backend, mapping, trials, widenCycles: w, schedule, case: raceCase(Number(args.flags.get('channels') ?? 4096)) });
      results.push(r);
      if (!args.flags.has('json')) {
        console.log(`${mapping.padEnd(10)} widen ${String(w).padStart(6)}: ${r.corruptedRuns}/${r.trials} runs corrupted (${(100 * r.corruptedFraction).toFixed(1)}%), state wrong in ${r.stateCorruptedRuns}` +
          (r.corruptedRuns ? `; rows hit: ${Object.entries(r.wrongRows).slice(0, 6).map(([k, n]) => `${k}×${n}`).join(', ')}` : ''));
      }
    }
  }
  const bad = results.filter((r) => r.mapping !== 'exact-racy' && r.corruptedRuns > 0).length;
  if (args.flags.has('json')) console.log(JSON.stringify({ backend: backend.kind, device: backend.info().name, revision: revision(), arithmetic: ARITHMETIC_VERSION, results }, null, 2));
  return bad ? 1 : 0;
}

/**
 * Exits with `code` once stdout and stderr have flushed everything written so far. On pipes both
 * streams are asynchronous, so a bare process.exit() after a large write truncates the output.
 */
export function exitAfterDrain(code: number, streams: NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  process.exitCode = code;
  let pending = streams.length;
  const done = () => {
    pending -= 1;
    if (pending === 0) process.exit(code);
  };
  // A write's callback runs after every earlier write on that stream has been handed to the OS.
  for (const s of streams) s.write('', done);
}

export async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  const [cmd, sub] = args.positional;
  // --help / -h anywhere prints the usage and runs nothing (a long check or benchmark must not start).
  if (args.flags.has('help') || argv.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  try {
    const defineFiles = args.flags.get('define');
    if (defineFiles !== undefined) {
      // User arms from files (docs/USER-ARMS.md, "From the command line"): defined before the command
      // reads the arm table, so every check and benchmark lists them as it lists the built-ins.
      if (cmd !== 'check' && cmd !== 'bench' && cmd !== 'arms') throw new UsageError(`--define: only check, bench and arms take arm definitions, not ${cmd ?? 'nothing'}`);
      if (defineFiles === true) throw new UsageError('--define: expected FILE[,FILE] (.json, .js or .cjs arm specs)');
      const { defineArmsFromFiles } = await import('./arms/file');
      const backend = cmd === 'bench' && sub === 'host' ? Backend.open('host') : pickBackend(args.flags);
      for (const d of defineArmsFromFiles(defineFiles, backend)) console.error(`gdnlab: ${d.summary}`);
    }
    // info, arms, check and bench take no arguments beyond their names: a stray word is refused rather
    // than ignored (`--json out.json` is a flag and an argument; the file form is --json=FILE).
    const words = cmd === 'info' || cmd === 'arms' ? 1 : cmd === 'check' || cmd === 'bench' ? 2 : Infinity;
    if (args.positional.length > words) {
      const extra = args.positional[words];
      const hint = argv[argv.indexOf(extra) - 1] === '--json' ? ` (to write the JSON to a file: --json=${extra})` : '';
      throw new UsageError(`${args.positional.slice(0, words).join(' ')}: unexpected argument '${extra}'${hint}`);
    }
    switch (cmd) {
      case 'info':
        return await info(args);
      case 'arms':
        return await armsCommand(args);
      case 'check':
        if (sub === 'conv') return await checkConvCommand(args);
        if (sub === 'race') return await checkRaceCommand(args);
        if (sub === 'sanitize') {
          const n = await (await import('./check/sanitize')).sanitizeWorkload(pickBackend(args.flags), (l) => console.log(l));
          console.log(`sanitize workload: ${n} launches completed`);
          return 0;
        }
        if (sub === 'postconv') return await (await import('./check/postconv')).postconvCommand(args, pickBackend(args.flags));
        if (sub === 'fused') return await (await import('./check/fused')).fusedCommand(args, pickBackend(args.flags));
        throw new UsageError(`check: expected conv, race, postconv or fused, got ${sub ?? 'nothing'}`);
      case 'bench':
        if (sub === 'conv' || sub === 'postconv' || sub === 'fused' || sub === 'overhead' || sub === 'host') return await (await import('./bench/cli')).benchCommand(sub, args);
        if (sub === 'verdict') {
          const v = await (await import('./bench/verdict')).verdictSelfCheck(pickBackend(args.flags));
          console.log(`${v.same}\n${v.slower}\n${v.line}`);
          return v.same.verdict === 'same' && v.slower.verdict === 'slower' ? 0 : 1;
        }
        throw new UsageError(`bench: expected conv, postconv, fused, overhead, host or verdict, got ${sub ?? 'nothing'}`);
      case 'notebooks':
        return await (await import('./notebooks/cli')).notebooksCommand(argv.slice(argv.indexOf('notebooks') + 1));
      case 'kernel': {
        if (sub !== 'install') throw new UsageError(`kernel: expected install, got ${sub ?? 'nothing'}`);
        const path = await import('path');
        const { spawnSync } = await import('child_process');
        const installer = path.join(__dirname, '..', 'kernel', 'install.js');
        const rest = argv.slice(argv.indexOf('install') + 1);
        return spawnSync(process.execPath, [installer, ...rest], { stdio: 'inherit' }).status ?? 1;
      }
      case undefined:
      case 'help':
      case '--help':
        console.log(USAGE);
        return cmd ? 0 : 2;
      default:
        throw new UsageError(`unknown command ${cmd}`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`gdnlab: ${e.message}\n${USAGE}`);
      return 2;
    }
    console.error(`gdnlab: ${(e as Error).message}`);
    return 1;
  }
}
