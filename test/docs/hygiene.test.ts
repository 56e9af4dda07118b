// The repository speaks of the product, and every document it cites exists (docs/MAINTAINING.md, issue 33).
// Two checks over every tracked text file (`git ls-files`):
//   - no lab-diary wording: a numbered working session, the tool or place machines were borrowed from, a GPU
//     on loan; a comment that needs a reference cites a docs/SPEC.md section, a docs/CHANGELOG.md entry
//     (its date heading, and the revision named must be in that date's entries) or a commit hash;
//   - every cited document exists: `docs/….md` paths and any other docs/ path (records included), bare
//     `NAME.md` names, a quoted section of a docs/*.md file ('docs/X.md, "Heading"'), CHANGELOG dates.
// The scanners are plain functions, tested on planted text first, so a scanner that finds nothing cannot pass
// as a clean repository.

import { strict as assert } from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SELF = 'test/docs/hygiene.test.ts';

export interface Finding { file: string; line: number; text: string; why: string }

// Spelled in pieces so that this file does not match its own patterns.
const DIARY: Array<[RegExp, string]> = [
  [new RegExp('\\bsess' + 'ions?[- ]#?\\d', 'i'), 'a numbered working session'],
  [new RegExp('\\bdevice ' + 'tool', 'i'), 'the tool machines were borrowed through'],
  [new RegExp('\\bwork' + 'place\\b', 'i'), 'the place the work was done'],
  [new RegExp('\\bl' + 'ent\\b', 'i'), 'a machine on loan'],
  [new RegExp('\\bl' + 'end(s|ing)?\\b[^.\\n]{0,40}\\b(gpu|device|machine)|\\b(gpu|device|machine)s?\\b[^.\\n]{0,40}\\bl' + 'end(s|ing)?\\b', 'i'), 'a machine on loan'],
];

/** Lines of `text` that speak of how the work was done rather than of the product. */
export function diaryFindings(file: string, text: string): Finding[] {
  const out: Finding[] = [];
  text.split('\n').forEach((line, i) => {
    for (const [re, why] of DIARY) if (re.test(line)) out.push({ file, line: i + 1, text: line.trim().slice(0, 160), why });
  });
  return out;
}

/** What the citation check needs to know about the tree. */
export interface Tree {
  files: Set<string>;
  dirs: Set<string>;
  /** Markdown headings (text after the #s) of each docs/*.md file and README.md. */
  headings: Map<string, string[]>;
  /** CHANGELOG: date → the text of that date's entries. */
  changelog: Map<string, string>;
}

export function treeOf(files: string[], read: (f: string) => string): Tree {
  const dirs = new Set<string>();
  for (const f of files) for (let d = path.posix.dirname(f); d !== '.'; d = path.posix.dirname(d)) dirs.add(d);
  const headings = new Map<string, string[]>();
  for (const f of files) {
    if (/^(docs\/[^/]+|README)\.md$/.test(f) || /^docs\/[^/]+\.md$/.test(f)) {
      headings.set(f, read(f).split('\n').filter((l) => /^#{1,6} /.test(l)).map((l) => l.replace(/^#+ /, '').trim()));
    }
  }
  const changelog = new Map<string, string>();
  if (files.includes('docs/CHANGELOG.md')) {
    let date = '';
    for (const l of read('docs/CHANGELOG.md').split('\n')) {
      const m = /^## (\d{4}-\d{2}-\d{2})\b/.exec(l);
      if (m) { date = m[1]; changelog.set(date, ''); } else if (date) changelog.set(date, changelog.get(date) + l + '\n');
    }
  }
  return { files: new Set(files), dirs, headings, changelog };
}

/** A heading or a quoted section as compared: without its number ("7. ", "3.2 "), arrows spelled one way. */
function sectionTitle(h: string): string {
  return h.replace(/^§?\d+(\.\d+)*\.? /, '').replace(/->/g, '→').trim();
}

function expandBraces(p: string): string[] {
  const m = /\{([^{}]*)\}/.exec(p);
  if (!m) return [p];
  return m[1].split(',').flatMap((alt) => expandBraces(p.slice(0, m.index) + alt + p.slice(m.index + m[0].length)));
}

/** Citations in `text` (a file at `file`) of documents, doc paths, sections or CHANGELOG entries that do not exist. */
export function citationFindings(file: string, text: string, tree: Tree): Finding[] {
  const out: Finding[] = [];
  const dir = path.posix.dirname(file);
  const push = (i: number, line: string, why: string) => out.push({ file, line: i + 1, text: line.trim().slice(0, 160), why });
  text.split('\n').forEach((line, i) => {
    // Any docs/ path: a file or a folder of the tree. Placeholders (<date>) and git object paths (rev:docs/…) are not citations.
    for (const m of line.matchAll(/(^|[^\w:./-])((?:\.\.\/)*(?:shared\/)?docs\/[\w.{},/-]*)/g)) {
      let p = m[2];
      if (/[<>*]/.test(line.slice(m.index! + m[1].length, m.index! + m[0].length + 1))) continue;
      p = p.replace(/[.,:;)]+$/, '').replace(/\/$/, '');
      if (p === 'docs') continue;
      for (const q of expandBraces(p)) {
        const norm = q.replace(/^(\.\.\/)+/, '');
        if (!tree.files.has(norm) && !tree.dirs.has(norm)) push(i, line, `cites ${q}, which is not in the repository`);
      }
    }
    // A bare NAME.md (SPEC.md, DOMAIN.md …): in docs/, at the root, or beside the citing file.
    for (const m of line.matchAll(/(^|[^\w./-])([A-Z][A-Z0-9_-]*\.md)\b/g)) {
      const n = m[2];
      if (![`docs/${n}`, n, path.posix.join(dir, n)].some((c) => tree.files.has(c))) push(i, line, `cites ${n}, which is not in the repository`);
    }
    // A quoted section of a document: docs/X.md, "Heading" (or docs/X.md "Heading", `docs/X.md`, "Heading").
    for (const m of line.matchAll(/((?:docs\/)?[\w-]+\.md)`?,? "([^"]+)"/g)) {
      const doc = tree.files.has(`docs/${m[1].replace(/^docs\//, '')}`) ? `docs/${m[1].replace(/^docs\//, '')}` : m[1];
      const hs = tree.headings.get(doc)?.map(sectionTitle);
      const want = sectionTitle(m[2]);
      if (hs && !hs.some((h) => h === want || h.startsWith(want))) push(i, line, `cites section "${m[2]}" of ${doc}, which has no such heading`);
    }
    // A CHANGELOG entry: its date heading, and the revision named must be among that date's entries.
    for (const m of line.matchAll(/CHANGELOG(?:\.md)?`?,? (\d{4}-\d{2}-\d{2})(?:,? \(?([0-9a-f]{7,40})\b)?/g)) {
      const entries = tree.changelog.get(m[1]);
      if (entries === undefined) push(i, line, `cites CHANGELOG ${m[1]}, which has no such date`);
      else if (m[2] && !entries.includes(m[2].slice(0, 7))) push(i, line, `cites CHANGELOG ${m[1]}, ${m[2]}, which is not among that date's entries`);
    }
  });
  return out;
}

function trackedNames(): string[] {
  return execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 }).split('\0').filter(Boolean);
}

function trackedTextFiles(names: string[]): Array<{ file: string; text: string }> {
  const out: Array<{ file: string; text: string }> = [];
  for (const file of names) {
    const full = path.join(ROOT, file);
    if (!fs.existsSync(full) || !fs.statSync(full).isFile()) continue;  // deleted in the working tree
    const buf = fs.readFileSync(full);
    if (buf.includes(0)) continue;                                       // binary
    out.push({ file, text: buf.toString('utf8') });
  }
  return out;
}

const show = (fs: Finding[]) => fs.map((f) => `${f.file}:${f.line}: ${f.why}: ${f.text}`).join('\n');

describe('docs hygiene: the product speaks of itself, and cites only what exists', function () {
  this.timeout(60000);

  const tree: Tree = treeOf(
    ['docs/SPEC.md', 'docs/CHANGELOG.md', 'docs/records/2026-12-04-22a9d49/bench-conv.md', 'docs/records/x/a-1.md', 'docs/records/x/a-2.md', 'README.md', 'kernel/README.md'],
    (f) => ({
      'docs/SPEC.md': '# Spec\n## 3. Causal conv, prefill\n## 7. Fused conv → post-conv\n### 9.2 A shortcut\n',
      'docs/CHANGELOG.md': '# Changelog\n## 2026-12-04\n- **22a9d49** — the copy counts the state.\n## 2026-12-03\n- **a5cc6a3** — ring first.\n',
      'README.md': '# gdnlab\n## What has been proven where\n',
    } as Record<string, string>)[f] ?? '');

  it('the diary scanner finds planted wording and leaves ordinary words alone', () => {
    const planted = ['// Set 12 (sess' + 'ion 18): program order', 'Sess' + 'ions 3 and 4 measured', 'the sess' + 'ion-2 survivors',
      'no GPU l' + 'ent this time', 'the device ' + 'tool answered', 'the work' + 'place machine', 'a GPU they l' + 'end to us'];
    for (const p of planted) assert.equal(diaryFindings('x.ts', p).length >= 1, true, p);
    const fine = ['the Jupyter session id of every header', 'readonly session = 1;', 'an excellent talent for silent code',
      'bash bench/gpu-session.sh env build', 'history session number', '"session": "7f3a"'];
    for (const f of fine) assert.deepEqual(diaryFindings('x.ts', f), [], f);
  });

  it('the citation scanner finds missing documents, sections and CHANGELOG entries, and accepts real ones', () => {
    const bad = [
      '// see DOMAIN.md §3', '(docs/TIMING.md\'s rule)', '`shared/docs/DOMAIN.md` §4', 'raw JSON in `docs/gpu/s17-x.md`',
      'docs/records/2026-12-04-22a9d49/bench-fused.md', 'docs/records/x/a-{1,3}.md', '(docs/SPEC.md, "Sess' + 'ion 17")',
      '`docs/SPEC.md` "Causal conv: the tile arm"', 'CHANGELOG 2026-12-05', 'CHANGELOG 2026-12-04, a5cc6a3',
    ];
    for (const b of bad) assert.equal(citationFindings('lib/x.ts', b, tree).length >= 1, true, b);
    const good = [
      '(docs/SPEC.md §3)', 'SPEC.md §9.2', 'docs/records/2026-12-04-22a9d49/bench-conv.md', 'docs/records/x/a-{1,2}.md.',
      '`docs/records/2026-12-04-22a9d49/`', '(docs/SPEC.md, "Causal conv, prefill")', 'README.md', 'see README.md',
      'CHANGELOG 2026-12-04, 22a9d49', '(docs/CHANGELOG.md 2026-12-03, a5cc6a3)', 'docs/records/<date>-<revision>/',
      '`git show ddbdee8^:docs/gpu/<file>`', 'the docs/ folder', '(docs/SPEC.md, "Fused conv -> post-conv")', 'SPEC.md, "3. Causal conv, prefill"',
    ];
    for (const g of good) assert.deepEqual(citationFindings('lib/x.ts', g, tree), [], g);
    assert.deepEqual(citationFindings('kernel/notes.ts', 'see README.md', tree), []);
  });

  describe('every tracked file', () => {
    const names = trackedNames();
    const files = trackedTextFiles(names);
    const all = treeOf(names, (f) => files.find((x) => x.file === f)?.text ?? '');

    it('is found by git ls-files (the scan covers the repository)', () => {
      assert.ok(files.length > 200, `only ${files.length} tracked text files`);
      assert.ok(all.files.has('docs/SPEC.md') && all.changelog.size > 0);
    });

    it('has no lab-diary wording', () => {
      const found = files.filter((f) => f.file !== SELF).flatMap((f) => diaryFindings(f.file, f.text));
      assert.deepEqual(found, [], `diary wording (cite a SPEC section, a CHANGELOG entry or a commit instead):\n${show(found)}`);
    });

    it('cites only documents, records, sections and CHANGELOG entries that exist', () => {
      // Raw records are output, not prose; the records' README is prose and is checked.
      const found = files
        .filter((f) => f.file !== SELF && !(f.file.startsWith('docs/records/') && f.file !== 'docs/records/README.md'))
        .flatMap((f) => citationFindings(f.file, f.text, all));
      assert.deepEqual(found, [], `citations of what does not exist:\n${show(found)}`);
    });
  });
});
