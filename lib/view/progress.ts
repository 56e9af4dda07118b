// Live progress for long sweeps (equivalence matrices, benchmarks, race trials).
//
// In the gdnlab kernel: one display_data output with a display id, replaced in place by
// update_display_data at most 10 times a second (throttled), ending with a summary line.
// Outside a kernel: a single line on stderr rewritten with \r at most 4 times a second when stderr
// is a terminal, and nothing at all when it is not (logs stay clean).

import { describe } from '../dtype';
import { display, inKernel, newDisplayId } from './display';
import { escapeXml, formatNumber } from './format';

export interface ProgressOptions {
  label?: string;
  /** Minimum time between in-place updates in a kernel (default 100 ms: ≤ 10 updates/s). */
  minIntervalMs?: number;
  /** Where terminal progress goes outside a kernel (default process.stderr). */
  stream?: { write(text: string): unknown; isTTY?: boolean };
  /** Clock in ms (tests). */
  clock?: () => number;
}

export interface Progress {
  /** Adds n (default 1) to the count; note replaces the status text. */
  tick(n?: number, note?: string): void;
  /** Ends the display with a summary line (default: count and elapsed time). */
  done(summary?: string): void;
  readonly count: number;
  /** In-place updates sent so far (kernel) or lines written (terminal). */
  readonly updates: number;
}

const BAR = 24;

function bar(fraction: number): string {
  const filled = Math.round(Math.min(Math.max(fraction, 0), 1) * BAR);
  return '█'.repeat(filled) + '░'.repeat(BAR - filled);
}

function seconds(ms: number): string {
  return ms < 10000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

/** A live progress display for `total` steps. */
export function progress(total: number, opts: ProgressOptions = {}): Progress {
  if (typeof total !== 'number' || !Number.isFinite(total) || total < 0) throw new RangeError(`total: expected a finite number ≥ 0, got ${describe(total)}`);
  const label = opts.label ?? 'progress';
  const minInterval = opts.minIntervalMs ?? 100;
  if (!(minInterval >= 0)) throw new RangeError(`minIntervalMs: expected a number ≥ 0, got ${describe(opts.minIntervalMs)}`);
  const clock = opts.clock ?? (() => performance.now());
  const stream = opts.stream ?? process.stderr;
  const start = clock();
  const displayId = newDisplayId('gdnlab-progress');
  let count = 0;
  let note = '';
  let updates = 0;
  let last = -Infinity;
  let finished = false;
  const kernel = inKernel();

  const line = () => {
    const frac = total > 0 ? count / total : 1;
    const pct = formatNumber(Math.min(100, Math.floor(frac * 1000) / 10), 3);
    return `${label} ${bar(frac)} ${formatNumber(count)}/${formatNumber(total)} (${pct}%) ${seconds(clock() - start)}${note ? `  ${note}` : ''}`;
  };
  const html = (text: string, fraction: number | null) => {
    const meter = fraction === null ? '' : `<progress value="${Math.min(fraction, 1).toFixed(4)}" max="1" style="width:16em;vertical-align:middle"></progress> `;
    return `<div class="gdnlab-progress" style="font-family:monospace">${meter}${escapeXml(text)}</div>`;
  };
  const send = (text: string, fraction: number | null, update: boolean) => {
    display({ data: { 'text/plain': text, 'text/html': html(text, fraction) }, metadata: {} }, { displayId, update });
    updates++;
  };

  if (kernel) {
    send(line(), total > 0 ? 0 : 1, false);
    last = clock();
  }

  const writeTerminal = (text: string, final: boolean) => {
    if (!stream.isTTY) return;
    stream.write(`\r${text}\x1b[K${final ? '\n' : ''}`);
    updates++;
  };

  return {
    get count() {
      return count;
    },
    get updates() {
      return updates;
    },
    tick(n = 1, newNote?: string) {
      if (finished) return;
      if (typeof n !== 'number' || !Number.isFinite(n)) throw new RangeError(`n: expected a finite number, got ${describe(n)}`);
      count += n;
      if (newNote !== undefined) note = newNote;
      const now = clock();
      if (kernel) {
        if (now - last >= minInterval) {
          send(line(), total > 0 ? count / total : 1, true);
          last = now;
        }
      } else if (now - last >= Math.max(minInterval, 250)) {
        writeTerminal(line(), false);
        last = now;
      }
    },
    done(summary?: string) {
      if (finished) return;
      finished = true;
      const text = `${label}: ${summary ?? `${formatNumber(count)} of ${formatNumber(total)} done`} (${seconds(clock() - start)})`;
      if (kernel) send(text, null, true);
      else writeTerminal(text, true);
    },
  };
}
