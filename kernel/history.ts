// history_request over the cells run in this kernel process (nothing is kept on disk).
// Entries are [session, line, input] or, with output: true, [session, line, [input, output]],
// where output is the text/plain of the cell's execute_result (null when it had none).

export type HistoryItem = [number, number, string] | [number, number, [string, string | null]];

interface Entry {
  line: number;
  input: string;
  output: string | null;
}

/** fnmatch-style glob (*, ?, [...]) to a RegExp matching the whole input. */
export function globToRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') re += '[\\s\\S]*';
    else if (c === '?') re += '[\\s\\S]';
    else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close < 0) {
        re += '\\[';
      } else {
        let set = pattern.slice(i + 1, close).replace(/\\/g, '\\\\');
        if (set.startsWith('!')) set = `^${set.slice(1)}`;
        re += `[${set}]`;
        i = close;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

export class History {
  /** This process's history session number (there are no earlier sessions to query). */
  readonly session = 1;
  private readonly entries: Entry[] = [];

  add(line: number, input: string): void {
    this.entries.push({ line, input, output: null });
  }

  setOutput(line: number, output: string): void {
    const e = this.entries.find((x) => x.line === line);
    if (e) e.output = output;
  }

  /** Answers the content of a history_request. Unknown access types give an empty history. */
  query(request: Record<string, unknown>): HistoryItem[] {
    const withOutput = request.output === true;
    const n = typeof request.n === 'number' && request.n >= 0 ? Math.floor(request.n) : undefined;
    let selected: Entry[];
    switch (request.hist_access_type) {
      case 'tail':
        selected = n === undefined ? this.entries.slice() : this.entries.slice(Math.max(0, this.entries.length - n));
        break;
      case 'range': {
        const session = typeof request.session === 'number' ? request.session : 0;
        if (session !== 0 && session !== this.session) return [];
        const start = typeof request.start === 'number' ? request.start : 0;
        const stop = typeof request.stop === 'number' && request.stop > 0 ? request.stop : Infinity;
        selected = this.entries.filter((e) => e.line >= start && e.line < stop);
        break;
      }
      case 'search': {
        const pattern = globToRegExp(typeof request.pattern === 'string' ? request.pattern : '*');
        let matches = this.entries.filter((e) => pattern.test(e.input));
        if (request.unique === true) {
          const seen = new Set<string>();
          matches = matches.reverse().filter((e) => !seen.has(e.input) && seen.add(e.input) !== undefined).reverse();
        }
        selected = n === undefined ? matches : matches.slice(Math.max(0, matches.length - n));
        break;
      }
      default:
        return [];
    }
    return selected.map((e): HistoryItem => (withOutput ? [this.session, e.line, [e.input, e.output]] : [this.session, e.line, e.input]));
  }
}
