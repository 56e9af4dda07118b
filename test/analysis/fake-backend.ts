// A deterministic stand-in for a Backend's timing surface: sample streams from a function, a
// virtual clock that advances by the time the samples claim (plus a per-call overhead).

import type { DeviceInfo, NativeOp } from '../../lib/backend';

export interface FakeCall {
  rounds: number;
  flushL2: boolean;
  rotateOrder: boolean;
  graphLaunches: number;
  labels: (string | undefined)[];
}

export class FakeTimingBackend {
  readonly kind = 'cuda' as const;
  now = 0;
  readonly calls: FakeCall[] = [];
  private counts: number[] = [];
  /** Called after every timeOps call (e.g. to abort). */
  onCall: ((callIndex: number) => void) | undefined;
  smClock = 1980;
  /** Samples of a call without the L2 flush are multiplied by this (a warm cache is faster). */
  warmFactor = 1;

  /** sample(caseIndex, k): the k-th sample (µs) of that case, counting warm-up. */
  constructor(private readonly sample: (caseIndex: number, k: number) => number, private readonly overheadMs = 0.05) {}

  info(): DeviceInfo {
    return {
      backend: 'cuda',
      deviceOrdinal: 0,
      name: 'Fake H200',
      smMajor: 9,
      smMinor: 0,
      smCount: 132,
      l2Bytes: 60 * 2 ** 20,
      totalMemBytes: 141e9,
      freeMemBytes: 140e9,
      smClockMhz: this.smClock,
      memClockMhz: 3201,
      maxSmClockMhz: 1980,
      maxMemClockMhz: 3201,
      memBusWidthBits: 6144,
      driverVersion: 13000,
      runtimeVersion: 13000,
      driverString: '580.00.00',
      clocksSource: 'nvml',
    };
  }

  async timeOps(ops: NativeOp[], cfg: { rounds: number; flushL2: boolean; rotateOrder?: boolean; graphLaunches?: number }): Promise<Float32Array> {
    const n = ops.length;
    while (this.counts.length < n) this.counts.push(0);
    this.calls.push({ rounds: cfg.rounds, flushL2: cfg.flushL2, rotateOrder: !!cfg.rotateOrder, graphLaunches: cfg.graphLaunches ?? 0, labels: ops.map((o) => o.label) });
    const out = new Float32Array(cfg.rounds * n);
    let sum = 0;
    for (let r = 0; r < cfg.rounds; r++) {
      for (let i = 0; i < n; i++) {
        const v = this.sample(i, this.counts[i]++) * (cfg.flushL2 ? 1 : this.warmFactor);
        out[r * n + i] = v;
        sum += v;
      }
    }
    this.now += sum / 1000 + this.overheadMs;
    this.onCall?.(this.calls.length - 1);
    return out;
  }

  clock = (): number => this.now;
}

/** A NativeOp placeholder (the fake backend never reads args). */
export function fakeOp(label: string): NativeOp {
  return { kind: 'copy', args: { dst: 0, src: 0, bytes: 0 }, label };
}
