// Regenerates the pinned reference bits (test/golden/*.json) on purpose. Without --write it only
// prints what differs. With --write it rewrites the files, but refuses when bits changed while
// ARITHMETIC_VERSION (lib/provenance.ts) did not: a change of the reference's bits is a new
// arithmetic version, stated in docs/TESTING.md and recorded in every result's provenance.
//
//   node dist/test/golden/regenerate.js [--write] [--backend host|cuda]

import * as fs from 'fs';
import { Backend, BackendKind } from '../../lib/backend';
import { ARITHMETIC_VERSION } from '../../lib/provenance';
import { GOLDEN_OPS, computeGolden, formatGolden, goldenDifferences, goldenPath, readGolden, GoldenFile } from './golden';

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const write = args.includes('--write');
  const bi = args.indexOf('--backend');
  const kind = (bi >= 0 ? args[bi + 1] : 'host') as BackendKind;
  const backend = Backend.open(kind);
  let changed = 0;
  const fresh: GoldenFile[] = [];
  for (const op of GOLDEN_OPS) {
    const got = await computeGolden(op, backend);
    fresh.push(got);
    let want: GoldenFile | null = null;
    try {
      want = readGolden(op);
    } catch {
      console.log(`${op}: no committed golden file (${goldenPath(op)})`);
    }
    const diffs = want ? goldenDifferences(want, got) : ['(new file)'];
    const versionMoved = want !== null && want.arithmeticVersion !== ARITHMETIC_VERSION;
    if (diffs.length === 0 && !versionMoved) {
      console.log(`${op}: ${got.cases.length} cases, bits unchanged (arithmetic version ${ARITHMETIC_VERSION})`);
      continue;
    }
    changed++;
    console.log(`${op}: ${diffs.length} differences${versionMoved ? `, arithmetic version ${want!.arithmeticVersion} -> ${ARITHMETIC_VERSION}` : ''}`);
    for (const d of diffs) console.log(`  ${d}`);
    // New cases may be added under the same version; pinned bits that moved may not.
    const moved = diffs.filter((d) => !/: new case, not pinned$/.test(d));
    if (want && moved.length > 0 && !versionMoved && write) {
      console.error(`${op}: the reference bits changed but ARITHMETIC_VERSION is still ${ARITHMETIC_VERSION}; bump it in lib/provenance.ts (and docs/TESTING.md) first`);
      return 2;
    }
  }
  if (write) {
    for (const g of fresh) fs.writeFileSync(goldenPath(g.op), formatGolden(g));
    console.log(`wrote ${fresh.length} golden files (arithmetic version ${ARITHMETIC_VERSION}, ${kind} backend)`);
  } else if (changed > 0) {
    console.log('dry run: nothing written (pass --write to rewrite test/golden/*.json)');
  }
  backend.close();
  return 0;
}

main().then(
  (code) => { process.exitCode = code; },
  (e) => { console.error(e instanceof Error ? e.stack : e); process.exitCode = 1; },
);
