// The user-arm worker and interrupts (docs/USER-ARMS.md, "Isolation"): a process that survives SIGINT, as the
// Jupyter kernel does, is interrupted the way Jupyter interrupts a kernel — SIGINT to its whole process group,
// the worker included. While idle the worker ignores it and the next user-arm call works; during a user-arm call
// it stops that call (an error naming the interrupt, long before the arm's time limit) and the next call works.
// That error carries a status of its own, GDN_ERR_INTERRUPTED, which is what makes GdnError.interrupted true (and
// the kernel report KeyboardInterrupt); the message, which names the arm, is for the reader only.

import { strict as assert } from 'assert';
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { GdnError } from '../../lib/backend';
import { STATUS } from '../../lib/native/gdn';
import { projectRoot } from '../../lib/paths';
import { FAULTS, REG16_SOURCE } from './sources';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A host process for user arms that answers one command per stdin line: `good` (reg16 vs scalar), `spin` (endless). */
const HOST_SCRIPT = `
const gdn = require(process.argv[2]);
const { reg16, spin } = JSON.parse(process.argv[3]);
process.on('SIGINT', () => console.log('host: SIGINT seen'));  // the host survives, as the kernel does
const c = gdn.check.convMatrix({ quick: true })[0];
const inputs = gdn.check.makeConvInputs(c);
let ref;
const say = (l) => process.stdout.write(l + '\\n');
(async () => {
  ref = await gdn.conv.forward(inputs, { arm: 'scalar' });
  gdn.conv.defineArm({ name: 'reg16', source: reg16, tokensPerProgram: 16 });
  gdn.conv.defineArm({ name: 'fault-spin', source: spin, timeLimitMs: 60000 });
  say('ready');
  let chain = Promise.resolve();
  require('readline').createInterface({ input: process.stdin }).on('line', (cmd) => {
    chain = chain.then(async () => {
      const t0 = Date.now();
      try {
        if (cmd === 'good') {
          const r = await gdn.conv.forward(inputs, { arm: 'reg16' });
          say('good ok ' + (gdn.countBitMismatches(r.out, ref.out) + gdn.countBitMismatches(r.convState, ref.convState)));
        } else if (cmd === 'spin') {
          say('spin started');
          await gdn.conv.forward(inputs, { arm: 'fault-spin' });
          say('spin ok');
        }
      } catch (e) {
        say(cmd + ' error after ' + (Date.now() - t0) + ' ms: [' + e.status + ' ' + e.statusName + ' interrupted=' + e.interrupted + '] ' + e.message.replace(/\\n/g, ' '));
      }
    });
  });
})().catch((e) => { say('host failed: ' + e.message); process.exit(1); });
`;

class ArmHost {
  private out = '';
  private constructor(readonly proc: ChildProcess) {
    proc.stdout!.on('data', (d) => (this.out += d));
    proc.stderr!.on('data', (d) => (this.out += d));
  }

  static async start(dir: string): Promise<ArmHost> {
    const script = path.join(dir, 'arm-host.js');
    fs.writeFileSync(script, HOST_SCRIPT);
    const spinSource = FAULTS.find((f) => f.name === 'fault-spin')!.source;
    // detached: the host leads a process group of its own, as the kernel does under Jupyter.
    const proc = spawn(process.execPath, [script, path.join(projectRoot(), 'dist', 'lib', 'index.js'), JSON.stringify({ reg16: REG16_SOURCE, spin: spinSource })], {
      detached: true, stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, GDN_BACKEND: 'host', GDNLAB_ARM_CACHE: path.join(dir, 'cache') },
    });
    const host = new ArmHost(proc);
    await host.waitFor(/^ready$/m, 240000);
    return host;
  }

  /** Waits until the output holds a line matching `re` after `from` characters; returns that line. */
  async waitFor(re: RegExp, timeoutMs: number, from = 0): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = this.out.slice(from).split('\n').find((l) => re.test(l));
      if (line !== undefined) return line;
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) throw new Error(`the host ended (${this.proc.exitCode ?? this.proc.signalCode}):\n${this.out}`);
      if (Date.now() > deadline) throw new Error(`no ${re} within ${timeoutMs} ms; output:\n${this.out}`);
      await sleep(50);
    }
  }

  /** Sends a command; resolves to its result line. */
  async command(cmd: 'good' | 'spin', timeoutMs = 60000, onStarted?: () => Promise<void>): Promise<string> {
    const from = this.out.length;
    this.proc.stdin!.write(cmd + '\n');
    if (onStarted) {
      await this.waitFor(/^spin started$/m, timeoutMs, from);
      await onStarted();
    }
    return this.waitFor(new RegExp(`^${cmd} (ok|error).*$`, 'm'), timeoutMs, from);
  }

  /** SIGINT to the host's whole process group: what Jupyter's interrupt does to a kernel. */
  interruptGroup(): void {
    process.kill(-this.proc.pid!, 'SIGINT');
  }

  /** The live user-arm workers among the host's children (a worker killed but not yet reaped is a zombie, not live). */
  workers(): number[] {
    return fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return state !== 'Z' && Number(ppid) === this.proc.pid && fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'gdn_user_worker';
      } catch {
        return false;
      }
    });
  }

  async close(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      try {
        process.kill(-this.proc.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

describe('user-arm worker: interrupts of the process group', function () {
  this.timeout(300000);
  let dir: string;
  let host: ArmHost;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-worker-interrupt-'));
    host = await ArmHost.start(dir);
  });
  after(async () => {
    await host?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('an interrupt while idle leaves the worker alone: the next user-arm call succeeds in the same worker', async () => {
    assert.equal(await host.command('good'), 'good ok 0');
    const before = host.workers();
    assert.equal(before.length, 1, `one worker, got ${before.join(', ')}`);
    for (let i = 0; i < 3; i++) {
      host.interruptGroup();
      await sleep(200);
    }
    assert.deepEqual(host.workers(), before, 'the idle worker survived three interrupts');
    assert.equal(await host.command('good'), 'good ok 0');
    // The same worker served that call: a worker killed while idle would have been replaced before it, silently.
    assert.deepEqual(host.workers(), before, 'the call after the interrupts ran in the same worker');
    // And after a second request, too: the worker goes back to ignoring interrupts after every request, not only
    // after its start.
    for (let i = 0; i < 3; i++) {
      host.interruptGroup();
      await sleep(200);
    }
    assert.deepEqual(host.workers(), before, 'the worker survived interrupts after serving requests');
  });

  it('an interrupt during a user-arm call stops that call with an error naming the interrupt; the next call works', async () => {
    const line = await host.command('spin', 60000, async () => {
      await sleep(700);  // the arm is spinning in the worker now
      host.interruptGroup();
    });
    const m = line.match(/^spin error after (\d+) ms: \[(\d+) (\w+) interrupted=(\w+)\] (.*)$/);
    assert.ok(m, line);
    assert.equal(Number(m[2]), STATUS.GDN_ERR_INTERRUPTED, line);
    assert.equal(m[3], 'GDN_ERR_INTERRUPTED', 'gdn_status_name knows the code');
    assert.equal(m[4], 'true', 'GdnError.interrupted, what the kernel reads to report KeyboardInterrupt');
    assert.match(m[5], /arm 'fault-spin' \(conv\): interrupted \(SIGINT\) while it ran/);
    assert.match(m[5], /the next call starts a fresh worker/);
    assert.ok(Number(m[1]) < 20000, `stopped after ${m[1]} ms, far below the arm's 60 s limit`);
    assert.equal(await host.command('good'), 'good ok 0');
  });

  it('a worker killed while idle is replaced before the next call, not reported', async () => {
    assert.equal(await host.command('good'), 'good ok 0');
    const [pid] = host.workers();
    process.kill(pid, 'SIGKILL');
    await sleep(200);
    assert.equal(await host.command('good'), 'good ok 0');
    const now = host.workers();
    assert.equal(now.length, 1);
    assert.notEqual(now[0], pid, 'a fresh worker');
  });
});

describe('GdnError.interrupted: the status decides, not the message', () => {
  const message = "conv.forward: arm 'fault-spin' (conv): interrupted (SIGINT) while it ran: the interrupt stopped its worker";

  it('is true for GDN_ERR_INTERRUPTED whatever the message says', () => {
    assert.equal(new GdnError(STATUS.GDN_ERR_INTERRUPTED, 'GDN_ERR_INTERRUPTED', message).interrupted, true);
    assert.equal(new GdnError(STATUS.GDN_ERR_INTERRUPTED, 'GDN_ERR_INTERRUPTED', 'conv.forward: reworded').interrupted, true);
  });

  it("is false for any other status, even with the interrupt's own words in the message", () => {
    for (const [name, status] of Object.entries(STATUS)) {
      if (status === STATUS.GDN_ERR_INTERRUPTED) continue;
      assert.equal(new GdnError(status, name, message).interrupted, false, name);
    }
  });
});
