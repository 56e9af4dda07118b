// lib/ imports only downward: no file of lib/ reaches itself through its imports. Every import counts — type-only
// imports, re-exports, require() and import() too — since a cycle of types is still two files that cannot be
// understood (or moved) one without the other. Read with TypeScript's own pre-processor, so no file is compiled.

import { strict as assert } from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as ts from 'typescript';
import { projectRoot } from '../../lib/paths';

/** Every .ts file under `dir` (declaration files excluded). */
function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** The file a relative specifier names, as Node and tsc resolve it (x.ts before x/index.ts); undefined for packages. */
function resolve(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), spec);
  return [`${base}.ts`, path.join(base, 'index.ts'), base].find((p) => p.endsWith('.ts') && fs.existsSync(p));
}

/** file -> the files of the same tree it imports. */
function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(root)) {
    const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    const targets = info.importedFiles.map((f) => resolve(file, f.fileName)).filter((t): t is string => t !== undefined && t.startsWith(root + path.sep));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The strongly connected components with more than one file, or one file importing itself (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** A cycle as the edges that close it: a.ts -> b.ts -> a.ts (relative to root). */
function cycleText(root: string, scc: string[], graph: Map<string, string[]>): string {
  const inside = new Set(scc);
  const edges = scc.flatMap((f) => (graph.get(f) ?? []).filter((t) => inside.has(t)).map((t) => `${path.relative(root, f)} -> ${path.relative(root, t)}`));
  return `{ ${edges.join(', ')} }`;
}

describe('lib/ import graph', () => {
  it('finds a cycle closed by a type-only import, and none in a tree that only imports downward', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdnlab-cycles-'));
    try {
      fs.mkdirSync(path.join(dir, 'sub'));
      fs.writeFileSync(path.join(dir, 'top.ts'), "import { b } from './sub/b';\nexport const a = b + 1;\nexport interface Args { x: number }\n");
      fs.writeFileSync(path.join(dir, 'sub', 'b.ts'), "import * as fs from 'fs';\nexport const b = 1;\nexport const size = fs.statSync;\n");
      assert.deepEqual(cycles(importGraph(dir)), []);
      fs.writeFileSync(path.join(dir, 'sub', 'c.ts'), "export async function load() { return import('./b'); }\n");
      assert.deepEqual(cycles(importGraph(dir)), [], 'import() of a lower file is downward');
      fs.appendFileSync(path.join(dir, 'sub', 'b.ts'), "import type { Args } from '../top';\nexport let last: Args | undefined;\n");
      const found = cycles(importGraph(dir));
      assert.equal(found.length, 1);
      assert.equal(cycleText(dir, found[0], importGraph(dir)), '{ sub/b.ts -> top.ts, top.ts -> sub/b.ts }');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has no cycle in lib/ (type-only imports, re-exports and import() included)', () => {
    const root = path.join(projectRoot(), 'lib');
    const graph = importGraph(root);
    assert.ok(graph.size > 50, `read ${graph.size} files of lib/`);
    assert.ok([...graph.values()].some((t) => t.length > 0), 'the graph has edges');
    const found = cycles(graph);
    assert.equal(found.length, 0, `import cycles in lib/:\n${found.map((c) => cycleText(root, c, graph)).join('\n')}`);
  });
});
