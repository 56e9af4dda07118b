// is_complete_request: would this cell run as it is, does it need more lines, or can no amount
// of extra text fix it?
//
// The cell is parsed (not type-checked) with tslab's TypeScript. No parse errors: complete. Every
// parse error sits at the very end of the text ("'}' expected.", "Expression expected." after a
// trailing operator, an unterminated template literal or block comment): incomplete, and more
// lines can finish it. Any parse error before the end (an unbalanced `}` or `)`, two adjacent
// identifiers, a single-quoted string broken by a newline): invalid.

import * as ts from '@tslab/typescript-for-tslab';

export type IsCompleteReply = { status: 'complete' } | { status: 'incomplete'; indent: string } | { status: 'invalid' };

/** "Unterminated string literal": a '…' or "…" string cannot continue on the next line. */
const UNTERMINATED_STRING = 1002;

export function isComplete(code: string): IsCompleteReply {
  if (code.trim() === '') return { status: 'complete' };
  const source = ts.createSourceFile('cell.ts', code, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const diagnostics = (source as unknown as { parseDiagnostics: readonly ts.DiagnosticWithLocation[] }).parseDiagnostics;
  if (diagnostics.length === 0) return { status: 'complete' };
  const end = code.trimEnd().length;
  for (const d of diagnostics) {
    if (d.start < end || d.code === UNTERMINATED_STRING) return { status: 'invalid' };
  }
  return { status: 'incomplete', indent: nextIndent(code) };
}

/** The indentation for the next line: that of the last non-blank line, one level deeper after an opening bracket. */
export function nextIndent(code: string): string {
  // CRLF cells (pasted from Windows editors): a line comment must not stop at the \r, or `foo( // c\r`
  // would keep its bracket hidden behind the comment.
  const lines = code.split(/\r?\n/);
  let last = '';
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i].trim() !== '') {
      last = lines[i];
      break;
    }
  }
  const indent = /^[ \t]*/.exec(last)![0];
  const body = last.replace(/\/\/.*/, '').trimEnd();
  return /[{([]$/.test(body) ? `${indent}  ` : indent;
}
