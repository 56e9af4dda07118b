// Source rewrites that make a cell run under tslab's converter as it reads.
//
// tslab turns every reference to an earlier cell's declaration into `exports.name` (its
// `wrapPrevIdentifier` transform asks the type checker which declaration an identifier means).
// Some positions slip through, and the cell then fails or does something else:
//
// 1. Shorthand properties. For `{ x }` the checker answers with the *property* `x`, so the value
//    stays a bare `x`: `ReferenceError: x is not defined`, and as a destructuring assignment target
//    (`({ x } = o)`) it silently assigns a global `x` instead of the notebook's. We write
//    `{ x: x }`, whose value `x` tslab rewrites, for every shorthand whose name the cell does not
//    declare around it (same meaning in JavaScript either way; `{ x = 1 }` only as an assignment
//    target, elsewhere it is an error TypeScript reports).
// 2. `export { x }` naming an earlier cell's `x` compiles to `exports.x = void 0`, which wipes the
//    value out; naming the cell's own `x` fails with "Duplicate identifier", since tslab adds an
//    `export { … }` of every top-level name itself. Such specifiers are blanked: every top-level
//    name is kept for later cells anyway. (`export { local as other }` is left to tslab.)
// 3. An `export` modifier (`export const z = 1`) fails with "Cannot redeclare exported variable"
//    for the same reason; the keyword is blanked (not in `export default`).
//
// Blanking replaces text with spaces of the same length, so positions do not move. Inserting
// `: x` moves later columns of that line; `originalLineColumn` maps a diagnostic's position back
// to the user's text. Only execution uses the rewritten text; completion and inspection see the
// cell as typed.

import * as ts from '@tslab/typescript-for-tslab';
import { CellScopes } from './cell-scopes';

export interface RewrittenCell {
  /** The text to hand to tslab's executor. */
  code: string;
  /** Maps a 1-based line and column in `code` to the same place in the cell as typed. */
  originalLineColumn(line: number, column: number): { line: number; column: number };
}

interface Insertion {
  /** Offset in the original text where `text` goes. */
  at: number;
  text: string;
  /** Original offset that positions inside the inserted text map back to. */
  origin: number;
}

interface Range {
  start: number;
  end: number;
}

export function rewriteCell(code: string): RewrittenCell {
  const source = ts.createSourceFile('cell.ts', code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const parseErrors = (source as unknown as { parseDiagnostics: readonly ts.Diagnostic[] }).parseDiagnostics;
  if (parseErrors.length > 0) return asTyped(code); // TypeScript reports them; error recovery trees are no base for edits
  const scopes = new CellScopes(source);
  const insertions: Insertion[] = [];
  const blanks: Range[] = [];

  const visit = (node: ts.Node): void => {
    if (ts.isShorthandPropertyAssignment(node)) {
      const name = node.name;
      const rewrite = !scopes.declaresAround(name.text, node) && (!node.objectAssignmentInitializer || isAssignmentPattern(node.parent));
      if (rewrite) insertions.push({ at: name.end, text: `: ${name.getText(source)}`, origin: name.getStart(source) });
    } else if (ts.isExportDeclaration(node)) {
      blanks.push(...redundantExportSpecifiers(node, scopes, source));
    } else if (ts.canHaveModifiers(node) && node.parent === source) {
      const modifiers = ts.getModifiers(node) ?? [];
      const exportKeyword = modifiers.find((m) => m.kind === ts.SyntaxKind.ExportKeyword);
      if (exportKeyword && !modifiers.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword)) {
        blanks.push({ start: exportKeyword.getStart(source), end: exportKeyword.end });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (insertions.length === 0 && blanks.length === 0) return asTyped(code);
  return applied(code, source, insertions, blanks);
}

/** The cell run as typed. */
export function asTyped(code: string): RewrittenCell {
  return { code, originalLineColumn: (line, column) => ({ line, column }) };
}

/**
 * The specifiers of `export { a, b }` (no `from`, not type-only) that only repeat what tslab
 * does itself or would overwrite an earlier cell's value: names the cell does not declare at its
 * top level, and unrenamed names it does. Each range includes the comma after the specifier.
 */
function redundantExportSpecifiers(node: ts.ExportDeclaration, scopes: CellScopes, source: ts.SourceFile): Range[] {
  if (node.moduleSpecifier || node.isTypeOnly || !node.exportClause || !ts.isNamedExports(node.exportClause)) return [];
  const ranges: Range[] = [];
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, source.text);
  for (const specifier of node.exportClause.elements) {
    if (specifier.isTypeOnly) continue;
    const local = (specifier.propertyName ?? specifier.name).text;
    const renamed = specifier.propertyName !== undefined && specifier.propertyName.text !== specifier.name.text;
    if (renamed && scopes.declaresAtTopLevel(local)) continue;
    scanner.setTextPos(specifier.end);
    const end = scanner.scan() === ts.SyntaxKind.CommaToken ? scanner.getTextPos() : specifier.end;
    ranges.push({ start: specifier.getStart(source), end });
  }
  return ranges;
}

/** Whether an object literal is (part of) the left side of a destructuring assignment. */
function isAssignmentPattern(literal: ts.Node): boolean {
  let node = literal;
  for (;;) {
    const parent = node.parent;
    if (ts.isBinaryExpression(parent)) return parent.operatorToken.kind === ts.SyntaxKind.EqualsToken && parent.left === node;
    if (ts.isForOfStatement(parent) || ts.isForInStatement(parent)) return parent.initializer === node;
    if (ts.isPropertyAssignment(parent) && parent.initializer === node) {
      node = parent.parent;
    } else if (ts.isSpreadAssignment(parent) || ts.isSpreadElement(parent)) {
      node = parent.parent;
    } else if (ts.isArrayLiteralExpression(parent)) {
      node = parent;
    } else {
      return false;
    }
  }
}

/** The characters TypeScript counts as ending a line (CR LF counts once). */
const LINE_BREAKS = new Set(['\n', '\r', '\u2028', '\u2029']);

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    if (!LINE_BREAKS.has(text[i])) continue;
    if (text[i] === '\r' && text[i + 1] === '\n') i++;
    starts.push(i + 1);
  }
  return starts;
}

function applied(code: string, source: ts.SourceFile, insertions: Insertion[], blanks: Range[]): RewrittenCell {
  const chars = code.split('');
  for (const { start, end } of blanks) {
    for (let i = start; i < end; i++) {
      if (!LINE_BREAKS.has(chars[i])) chars[i] = ' ';
    }
  }
  const sorted = [...insertions].sort((a, b) => a.at - b.at);
  let text = '';
  let from = 0;
  for (const insertion of sorted) {
    text += chars.slice(from, insertion.at).join('') + insertion.text;
    from = insertion.at;
  }
  text += chars.slice(from).join('');
  const rewrittenLineStarts = lineStarts(text);

  const originalOffset = (offset: number): number => {
    let shift = 0;
    for (const insertion of sorted) {
      const start = insertion.at + shift;
      if (offset < start) break;
      if (offset < start + insertion.text.length) return insertion.origin;
      shift += insertion.text.length;
    }
    return offset - shift;
  };

  return {
    code: text,
    originalLineColumn(line, column) {
      // Insertions hold no line breaks, so a line of `text` is the same line of `code`.
      if (line < 1 || line > rewrittenLineStarts.length) return { line, column };
      const offset = originalOffset(rewrittenLineStarts[line - 1] + column - 1);
      const position = source.getLineAndCharacterOfPosition(Math.min(offset, code.length));
      return { line: position.line + 1, column: position.character + 1 };
    },
  };
}
