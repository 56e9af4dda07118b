// gdn.profile(op, inputs, { arms }): why is this arm slow? (docs/SPEC.md §14)
//
// Each named arm, built in or defined in a cell, is launched once at the given inputs in a child process
// (lib/profile/child.ts) that runs under Nsight Compute, so the notebook's own process is never the
// profiled one (the same isolation as the user-arm worker). The report comes back as CSV, is parsed
// (ncu-csv.ts) and shown as one output: a table of duration, DRAM traffic against the op's minimal
// traffic, bandwidth against the device's peak and a copy measured here, occupancy and its limiter,
// issue activity, instructions per output, the top warp stalls, registers and local-memory traffic,
// with a roofline-style chart. Without a GPU or without ncu the result says plainly what is missing and
// shows what can be known here: what each arm launches, its registers and spills from ptxas, the op's
// minimal traffic and a copy of it on this backend.

import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Backend, activeBackend, choiceOf } from '../backend';
import { describe, dtypeSize } from '../dtype';
import { Tensor } from '../tensor';
import { armNames } from '../arms/table';
import { CONV_MAPPINGS, convBytes, ConvMapping } from '../ops/conv';
import * as conv from '../ops/conv';
import * as postconv from '../ops/postconv';
import * as fused from '../ops/fused';
import { copyOp } from '../ops/copy';
import { armSpec } from '../arms/define';
import { userArm } from '../arms/registry';
import { inspectArm } from '../arms/inspect';
import { timeArms } from '../analysis/timing';
import { MIME_BUNDLE, MimeBundle, display, inKernel } from '../view/display';
import { renderTable } from '../view/table';
import { escapeXml } from '../view/format';
import { Figure } from '../analysis/plot';
import { PROFILE_OPS, ProfileJob, ProfileOp, writeInputs } from './job';
import { metricList, ncuImportArgs, ncuRecordArgs } from './metrics';
import { parseNcuCsv } from './ncu-csv';
import { ProfileAnalysis, ProfiledLaunch, analyse, rooflineFigure, tableRows } from './report';

export interface ProfileOptions {
  /** Arms to profile, in order: any arm of the op ('vec', or 'vec/exact' for a conv arm with its mapping). */
  arms: string[];
  /** Default: the active backend. Profiling needs the CUDA backend. */
  backend?: Backend;
  /** Path of Nsight Compute's ncu (default: $GDNLAB_NCU, then PATH, /usr/local/cuda/bin, /opt/nvidia/nsight-compute). */
  ncu?: string;
  /** The whole ncu run is stopped after this long (default 600000 ms). */
  timeoutMs?: number;
  /** Display the result in the kernel (default true). */
  show?: boolean;
  /** Host backend: registers and spills from ptxas for this SM (default '90'; false: none). */
  inspectSm?: string | false;
  /** Measure a copy of the op's minimal traffic on the backend (default true). */
  copy?: boolean;
  /** Every other key is an option of the op's forward (outDtype, mapping, Hk, Hv, Dk, Dv, qkvDtype, convDtype…). */
  [forwardOption: string]: unknown;
}

/** Where ncu was looked for, in order. */
export function ncuCandidates(explicit?: string): string[] {
  if (explicit) return [explicit];
  const out: string[] = [];
  if (process.env.GDNLAB_NCU) out.push(process.env.GDNLAB_NCU);
  for (const d of (process.env.PATH ?? '').split(path.delimiter)) if (d) out.push(path.join(d, 'ncu'));
  out.push('/usr/local/cuda/bin/ncu');
  const nsight = '/opt/nvidia/nsight-compute';
  try {
    for (const v of fs.readdirSync(nsight).sort().reverse()) out.push(path.join(nsight, v, 'ncu'));
  } catch {
    // not installed there
  }
  return out;
}

/** The first executable ncu of ncuCandidates, or '' when there is none. */
export function findNcu(explicit?: string): string {
  for (const f of ncuCandidates(explicit)) {
    try {
      fs.accessSync(f, fs.constants.X_OK);
      if (fs.statSync(f).isFile()) return f;
    } catch {
      // not here
    }
  }
  return '';
}

/**
 * What stops profiling here, in words (null when nothing does): the host backend has no GPU counters,
 * and ncu must be installed. Both are said when both are missing.
 */
export function unavailableReason(backendKind: 'host' | 'cuda', ncuPath: string, backendNote = ''): string | null {
  const missing: string[] = [];
  if (backendKind !== 'cuda') {
    missing.push(`profiling needs the CUDA backend on an NVIDIA GPU; this is the host backend${backendNote ? ` (${backendNote})` : ''}, which replays the kernels on the CPU and has no GPU counters`);
  }
  if (!ncuPath) {
    missing.push(`Nsight Compute's ncu was not found (looked at $GDNLAB_NCU, PATH, /usr/local/cuda/bin and /opt/nvidia/nsight-compute); install Nsight Compute or pass { ncu: '/path/to/ncu' }`);
  }
  return missing.length ? `${missing.join('; and ')}.` : null;
}

// ------------------------------------------------------------------------------------------ inputs

export interface ArmRequest {
  label: string;
  arm: string;
  mapping?: string;
}

export function expectArms(op: ProfileOp, arms: unknown): ArmRequest[] {
  if (!Array.isArray(arms) || arms.length === 0) throw new TypeError(`arms: expected a non-empty list of ${op} arm names, got ${describe(arms)}`);
  const known = armNames(op);
  return arms.map((a, i) => {
    if (typeof a !== 'string') throw new TypeError(`arms[${i}]: expected an arm name, got ${describe(a)}`);
    const [arm, mapping, extra] = a.split('/');
    if (!known.includes(arm)) throw new RangeError(`arms[${i}]: '${arm}' is not a ${op} arm (${op} arms: ${known.join(', ')})`);
    if (mapping !== undefined) {
      if (op !== 'conv') throw new RangeError(`arms[${i}]: '${a}': only conv arms take a mapping (arm/mapping)`);
      if (extra !== undefined || !(CONV_MAPPINGS as readonly string[]).includes(mapping)) throw new RangeError(`arms[${i}]: '${a}': expected arm or arm/mapping with mapping one of ${CONV_MAPPINGS.join(', ')}`);
    }
    return { label: a, arm, mapping };
  });
}

const PROFILE_KEYS = new Set(['arms', 'backend', 'ncu', 'timeoutMs', 'show', 'inspectSm', 'copy']);

function forwardOptions(opts: ProfileOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(opts)) {
    if (PROFILE_KEYS.has(k) || v === undefined) continue;
    if (k === 'arm') throw new TypeError("arm: profile takes a list of arms (arms: ['scalar', …]), not arm");
    if (v !== null && typeof v === 'object') throw new TypeError(`${k}: the profiled child process takes plain option values (numbers, strings, booleans), got ${describe(v)}`);
    out[k] = v;
  }
  return out;
}

function truthyCount(v: unknown): number {
  if (v == null) return 0;
  if (v instanceof Tensor) return Array.from(v.bits()).filter((x) => x !== 0).length;
  return Array.from(v as ArrayLike<number | boolean>).filter(Boolean).length;
}

function sequences(v: unknown): number {
  if (v instanceof Tensor) return v.numel - 1;
  return (v as ArrayLike<number>).length - 1;
}

/** The op's minimal traffic at these inputs: the bench's byte formulas (conv.convBytes, postconv.postconvBytes, fused.fusedBytes). */
export function minimalBytes(op: ProfileOp, inputs: Record<string, unknown>, fwd: Record<string, unknown>): number {
  const t = (name: string): Tensor => {
    const v = inputs[name];
    if (!(v instanceof Tensor)) throw new TypeError(`inputs.${name}: expected a Tensor, got ${describe(v)}`);
    return v;
  };
  const bytesOf = (d: unknown) => (d === 'bf16' ? 2 : 4);
  const dims = () => {
    for (const k of ['Hk', 'Hv', 'Dk', 'Dv']) if (!Number.isInteger(fwd[k]) || (fwd[k] as number) < 1) throw new TypeError(`${k}: expected a positive integer (the ${op} op's head shape), got ${describe(fwd[k])}`);
    return fwd as unknown as postconv.PostconvShape;
  };
  if (op === 'conv') {
    const x = t('x');
    return convBytes({ T: x.shape[0], C: x.shape[1], K: t('weight').shape[1], N: sequences(inputs.queryStartLoc), nInitial: truthyCount(inputs.hasInitialState), xBytes: dtypeSize(x.dtype), outBytes: bytesOf(fwd.outDtype) });
  }
  if (op === 'postconv') {
    const c = t('convOut');
    return postconv.postconvBytes(c.shape[0], dims(), dtypeSize(c.dtype), dtypeSize(t('a').dtype), bytesOf(fwd.qkvDtype));
  }
  const x = t('x');
  return fused.fusedBytes(x.shape[0], dims(), { xBytes: dtypeSize(x.dtype), qkvBytes: bytesOf(fwd.qkvDtype), gateBytes: dtypeSize(t('a').dtype), N: sequences(inputs.queryStartLoc), nInitial: truthyCount(inputs.hasInitialState), K: t('weight').shape[1] });
}

/** A copy of `bytes` timed on the backend (cold L2, as the bench times its copy), GB/s. */
async function measureCopy(bytes: number, backend: Backend): Promise<number> {
  const op = copyOp(bytes, { backend, label: 'copy' });
  try {
    const r = await timeArms([{ label: 'copy', op }], { backend, progress: false, maxTimeMs: 1500, minSamples: 20, label: 'copy of the minimal traffic' });
    const us = r.cases[0].stats.median;
    return bytes / (us * 1e3);
  } finally {
    op.release();
  }
}

// ------------------------------------------------------------------------------------------ result

export interface PlanRow {
  arm: string;
  ran: string;
  launch: string;
  registers: number | string;
  spills: string;
  occupancy: string;
}

export interface ProfileResult {
  op: ProfileOp;
  arms: string[];
  /** True when the arms ran under ncu and `analysis` holds their counters. */
  profiled: boolean;
  /** What was missing for a profile (null when profiled). */
  unavailable: string | null;
  /** The op's minimal traffic at these inputs, bytes. */
  minimalBytes: number;
  /** The copy of the minimal traffic measured on the backend, GB/s (null when not measured). */
  copyGBs: number | null;
  backend: 'host' | 'cuda';
  device: string;
  analysis: ProfileAnalysis | null;
  /** Without a profile: what each arm launches, with registers and spills from ptxas where a compiler is here. */
  plan: PlanRow[];
  figure: Figure | null;
  /** The raw CSV and the ncu report file (open it in Nsight Compute), when profiled. */
  csvFile: string | null;
  reportFile: string | null;
  text: string;
  html: string;
  [MIME_BUNDLE](): MimeBundle | null;
}

function launchText(l: Record<string, unknown>): string {
  const g = l.grid as number[] | undefined;
  const parts: string[] = [];
  if (l.threadsPerBlock !== undefined) parts.push(`${l.threadsPerBlock} threads/block`);
  if (g) parts.push(`grid ${g.filter((v, i) => i === 0 || v > 1).join('×')}`);
  if (l.sharedBytes) parts.push(`${l.sharedBytes} B shared`);
  if (l.tokensPerProgram) parts.push(`${l.tokensPerProgram} tokens/program`);
  return parts.join(', ') || 'n/a';
}

/** The launches on this backend (one each, in process) and ptxas's registers and spills, for a run without ncu. */
async function plan(op: ProfileOp, arms: ArmRequest[], inputs: Record<string, unknown>, fwd: Record<string, unknown>, backend: Backend, sm: string | false): Promise<PlanRow[]> {
  const rows: PlanRow[] = [];
  for (const a of arms) {
    let ran = a.label;
    let launch = 'n/a';
    let dtypes: string[] = [];
    if (op === 'conv') {
      const r = await conv.forward(inputs as unknown as conv.ConvInputs, { ...fwd, arm: a.arm, ...(a.mapping ? { mapping: a.mapping as ConvMapping } : {}), backend });
      ran = `${r.contract.arm}/${r.contract.mapping}`;
      launch = launchText(r.contract as unknown as Record<string, unknown>);
      dtypes = [(inputs.x as Tensor).dtype, String(fwd.outDtype ?? 'f32')];
      r.release();
    } else if (op === 'postconv') {
      const r = await postconv.forward(inputs as unknown as postconv.PostconvInputs, { ...(fwd as unknown as postconv.PostconvOptions), arm: a.arm, backend });
      ran = r.arm;
      launch = 'token-tile layout (head slot, 16-token tile)';
      r.release();
    } else {
      const r = await fused.forward(inputs as unknown as fused.FusedInputs, { ...(fwd as unknown as fused.FusedOptions), arm: a.arm, backend });
      ran = r.launch.arm;
      launch = `${r.launch.threadsPerBlock} threads/block, grid ${r.launch.grid.join('×')}, ${r.launch.tokensPerProgram} tokens/program`;
      r.release();
    }
    let registers: number | string = 'n/a';
    let spills = 'n/a';
    let occupancy = 'n/a';
    if (sm !== false && op !== 'fused') {
      const name = ran.split('/')[0];
      try {
        const ins = inspectArm(op, name, { sm, ptx: false, sass: false });
        // The entry of this call's dtypes where the names say so, else the entry with the most registers.
        const want = dtypes.length ? `_${dtypes.join('_')}` : '';
        let i = want ? ins.resources.findIndex((r) => r.entry.endsWith(want)) : -1;
        if (i < 0) i = ins.resources.reduce((b, r, j) => (r.registers > ins.resources[b].registers ? j : b), 0);
        const res = ins.resources[i];
        registers = res.registers;
        spills = `${res.spillStoreBytes}/${res.spillLoadBytes} B st/ld (sm_${sm})`;
        occupancy = `${(ins.occupancy[i].occupancy * 100).toFixed(0)}% (${ins.occupancy[i].limitedBy.join(', ')})`;
      } catch (e) {
        registers = `n/a: ${(e as Error).message.split('\n')[0].slice(0, 120)}`;
      }
    } else if (op === 'fused') {
      registers = 'n/a (inspect covers conv and post-conv arms)';
    }
    rows.push({ arm: a.label, ran, launch, registers, spills, occupancy });
  }
  return rows;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; signal: string | null; out: string; err: string; timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let timedOut = false;
    const cap = (s: string, more: Buffer) => (s.length > 1 << 24 ? s : s + more.toString('utf8'));
    child.stdout.on('data', (d: Buffer) => (out = cap(out, d)));
    child.stderr.on('data', (d: Buffer) => (err = cap(err, d)));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out, err, timedOut });
    });
  });
}

/** Metrics of `asked` that an ncu error output names (so a run can be repeated without them). */
export function metricsNamedInError(output: string, asked: readonly string[]): string[] {
  const errors = output.split('\n').filter((l) => /ERROR/.test(l));
  return asked.filter((m) => errors.some((l) => l.includes(m)));
}

/**
 * Records the arms' launches under ncu in the child process and reads the report back as CSV (exported
 * so that tests can drive it with a stand-in ncu and a host-backend child).
 */
export async function profileUnderNcu(ncu: string, op: ProfileOp, arms: ArmRequest[], inputs: Record<string, unknown>, fwd: Record<string, unknown>, timeoutMs: number, childBackend: 'cuda' | 'host' = 'cuda'): Promise<{ csv: string; csvFile: string; reportFile: string; launches: ProfiledLaunch[]; dropped: string[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-profile-'));
  const define: ProfileJob['define'] = [];
  for (const a of arms) {
    if (op === 'fused' || !userArm(op, a.arm)) continue;
    const spec = armSpec(op, a.arm);
    if (!spec) throw new Error(`arms: '${a.arm}' was defined by another process; define it in this one (defineArm) to profile it`);
    define.push({ op, spec: { ...spec } as unknown as Record<string, unknown> });
  }
  const job: ProfileJob = { op, inputs: writeInputs(inputs, dir), forward: fwd, arms, define, manifest: path.join(dir, 'launches.json'), backend: childBackend };
  const jobFile = path.join(dir, 'job.json');
  fs.writeFileSync(jobFile, JSON.stringify(job));
  const report = path.join(dir, 'profile.ncu-rep');
  const env = { ...process.env, GDN_BACKEND: childBackend };
  let metrics = metricList();
  const dropped: string[] = [];
  for (let retried = false; ; retried = true) {
    const r = await run(ncu, ncuRecordArgs(report, metrics, [process.execPath, path.join(__dirname, 'child.js'), jobFile]), env, timeoutMs);
    if (r.code === 0 && fs.existsSync(job.manifest)) break;
    const output = `${r.out}\n${r.err}`;
    const bad = metricsNamedInError(output, metrics);
    if (!retried && bad.length && bad.length < metrics.length) {
      // This ncu (or GPU) does not know some metric names: run once more without them; the table says which.
      metrics = metrics.filter((m) => !bad.includes(m));
      dropped.push(...bad);
      continue;
    }
    const tail = output.trim().split('\n').slice(-12).join('\n');
    if (r.timedOut) throw new Error(`profile: ncu did not finish within ${timeoutMs} ms (timeoutMs); its last output:\n${tail}`);
    if (/ERR_NVGPUCTRPERM/.test(output)) throw new Error('profile: ncu may not read the GPU performance counters as this user (ERR_NVGPUCTRPERM): run as root, or let all users profile (NVreg_RestrictProfilingToAdminUsers=0)');
    throw new Error(`profile: ncu exited with ${r.code ?? r.signal}${fs.existsSync(job.manifest) ? '' : ' before the child process wrote its launches'}; its last output:\n${tail}`);
  }
  const imp = await run(ncu, ncuImportArgs(report), process.env, 120000);
  if (imp.code !== 0) throw new Error(`profile: ncu --import failed (${imp.code}): ${imp.err.trim().split('\n').slice(-5).join('\n')}`);
  const csvFile = path.join(dir, 'profile.csv');
  fs.writeFileSync(csvFile, imp.out);
  const launches = JSON.parse(fs.readFileSync(job.manifest, 'utf8')) as ProfiledLaunch[];
  return { csv: imp.out, csvFile, reportFile: report, launches, dropped };
}

function render(r: Omit<ProfileResult, 'text' | 'html' | typeof MIME_BUNDLE>): { text: string; html: string } {
  const mbytes = (r.minimalBytes / 1e6).toFixed(2);
  const copy = r.copyGBs === null ? 'not measured' : `${r.copyGBs.toFixed(0)} GB/s (a copy of ${mbytes} MB on ${r.backend === 'cuda' ? r.device : 'the host backend'}, median, cold L2)`;
  const head = `gdn.profile ${r.op} on ${r.backend} (${r.device}): minimal traffic ${mbytes} MB; copy ${copy}`;
  const parts: { html: string; text: string }[] = [];
  const notes: string[] = [];
  if (r.analysis) {
    parts.push(renderTable(tableRows(r.analysis), { title: `${r.op}: one launch per arm under Nsight Compute` }));
    if (r.analysis.missing.length) notes.push(`Not in the report (shown as n/a): ${r.analysis.missing.map((m) => `${m.metric} (${m.arms.join(', ')})`).join('; ')}.`);
    notes.push('× minimal: DRAM bytes read + written over the op\'s minimal traffic; × copy time: the launch\'s time over a copy of the minimal traffic (the bench\'s ratio); inst/output: warp instructions × 32 per output element; stalls: cycles per issued instruction (ncu\'s WarpStateStats). Clocks as the GPU sets them (--clock-control none), caches flushed before every pass.');
  } else {
    parts.push(renderTable(r.plan as unknown as Record<string, unknown>[], { title: `${r.op}: what each arm launches here (not profiled)` }));
  }
  const fig = r.figure;
  let figHtml = '';
  if (fig) {
    const png = fig.pngBase64();
    figHtml = png ? `<img alt="${escapeXml(fig.title)}" src="data:image/png;base64,${png}"/>` : `<img alt="${escapeXml(fig.title)}" src="data:image/svg+xml;base64,${Buffer.from(fig.svg()).toString('base64')}"/>`;
  }
  const warn = r.unavailable ? `Not profiled: ${r.unavailable}` : '';
  const text = [head, warn, ...parts.map((p) => p.text), ...notes, r.reportFile ? `ncu report: ${r.reportFile}` : ''].filter(Boolean).join('\n');
  const html = [
    `<div class="gdnlab-profile"><p><b>${escapeXml(head)}</b></p>`,
    warn ? `<p style="color:#a33"><b>Not profiled:</b> ${escapeXml(r.unavailable ?? '')}</p>` : '',
    ...parts.map((p) => p.html), figHtml,
    ...notes.map((n) => `<p style="font-size:smaller">${escapeXml(n)}</p>`),
    r.reportFile ? `<p style="font-size:smaller">ncu report: <code>${escapeXml(r.reportFile)}</code></p>` : '',
    '</div>',
  ].join('');
  return { text, html };
}

/** Builds the result object (text, HTML, one rich output) from its parts; exported for tests. */
export function profileResult(parts: Omit<ProfileResult, 'text' | 'html' | typeof MIME_BUNDLE>, show: boolean): ProfileResult {
  const { text, html } = render(parts);
  const shown = show && inKernel();
  if (shown) display({ data: { 'text/html': html, 'text/plain': text }, metadata: {} });
  return {
    ...parts,
    text,
    html,
    [MIME_BUNDLE]: () => (shown ? null : { data: { 'text/html': html, 'text/plain': text } }),
  };
}

/**
 * Profiles each arm of `op` once at `inputs` under Nsight Compute in a child process and shows one
 * table and chart. On the host backend or without ncu it says what is missing and shows each arm's
 * launch, ptxas registers and spills, the op's minimal traffic and a copy of it on this backend.
 */
export async function profile(op: ProfileOp, inputs: Record<string, unknown>, opts: ProfileOptions): Promise<ProfileResult> {
  if (!(PROFILE_OPS as readonly string[]).includes(op)) throw new RangeError(`op: expected one of ${PROFILE_OPS.join(', ')}, got ${describe(op)}`);
  if (!inputs || typeof inputs !== 'object') throw new TypeError(`inputs: expected the op's inputs ({ x, weight, … }), got ${describe(inputs)}`);
  if (!opts || typeof opts !== 'object') throw new TypeError(`options: expected { arms: [...] }, got ${describe(opts)}`);
  const arms = expectArms(op, opts.arms);
  const fwd = forwardOptions(opts);
  const backend = opts.backend ?? activeBackend();
  const bytes = minimalBytes(op, inputs, fwd);
  const ncu = findNcu(typeof opts.ncu === 'string' ? opts.ncu : undefined);
  // The active backend's choice reads "host (GDN_BACKEND=host)": the message names the backend itself, so only the
  // reason is kept. A backend given explicitly (--backend host) has no such reason; GDN_BACKEND is not opened for it.
  const choice = backend.kind === 'host' ? choiceOf(backend) ?? '' : '';
  const unavailable = unavailableReason(backend.kind, ncu, choice.replace(/^host\s*\((.*)\)$/, '$1').replace(/^host$/, ''));
  const info = backend.info();
  const device = backend.kind === 'cuda' ? `${info.name}, sm_${info.smMajor}${info.smMinor}` : info.name || 'CPU';
  const copyGBs = opts.copy === false ? null : await measureCopy(bytes, backend);
  const show = opts.show ?? true;
  const base = { op, arms: arms.map((a) => a.label), minimalBytes: bytes, copyGBs, backend: backend.kind, device };
  if (unavailable) {
    const sm = opts.inspectSm === undefined ? '90' : opts.inspectSm;
    const rows = await plan(op, arms, inputs, fwd, backend, sm);
    return profileResult({ ...base, profiled: false, unavailable, analysis: null, plan: rows, figure: null, csvFile: null, reportFile: null }, show);
  }
  const rec = await profileUnderNcu(ncu, op, arms, inputs, fwd, opts.timeoutMs ?? 600000);
  const analysis = analyse(parseNcuCsv(rec.csv), rec.launches, bytes, copyGBs);
  for (const m of rec.dropped) if (!analysis.missing.some((x) => x.metric === m)) analysis.missing.push({ metric: m, arms: [...base.arms] });
  const figure = rooflineFigure(analysis, copyGBs, `${op}: achieved DRAM bandwidth vs the copy (${device})`);
  return profileResult({ ...base, profiled: true, unavailable: null, analysis, plan: [], figure, csvFile: rec.csvFile, reportFile: rec.reportFile }, show);
}
