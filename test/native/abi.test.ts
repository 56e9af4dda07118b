// The ABI cannot drift silently: every struct that lib/native/gdn.ts declares to koffi has the size,
// alignment and field offsets that the C compiler gives the same struct of cuda/include/gdn.h. A tiny
// C++ program is generated at test time (in a temporary folder, never in the tree), compiled with the
// host compiler against gdn.h, and prints sizeof/alignof/offsetof as JSON, and the value of every status code
// that lib/native/gdn.ts names (lib/ tells failures apart by those codes, never by their messages).

import { strict as assert } from 'assert';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import koffi from 'koffi';
import { ABI_STRUCTS, ABI_VERSION, STATUS, gdnLib, projectRoot } from '../../lib/native/gdn';

interface Layout {
  size: number;
  align: number;
  offsets: Record<string, number>;
}

function koffiLayout(t: unknown): Layout {
  const info = koffi.type(t as never) as unknown as { size: number; alignment: number; members: Record<string, { offset: number }> };
  const offsets: Record<string, number> = {};
  for (const [name, m] of Object.entries(info.members)) offsets[name] = m.offset;
  return { size: info.size, align: info.alignment, offsets };
}

function compiler(): string | null {
  for (const c of [process.env.CXX, 'c++', 'g++', 'clang++']) {
    if (c && spawnSync(c, ['--version'], { encoding: 'utf8' }).status === 0) return c;
  }
  return null;
}

describe('ABI: koffi structs match the C compiler (sizeof, alignof, offsetof)', function () {
  this.timeout(120000);
  let cLayouts: Record<string, Layout> = {};
  let abiVersion = -1;
  let cStatus: Record<string, number> = {};
  const names = Object.keys(ABI_STRUCTS);

  before(function () {
    const cxx = compiler();
    assert.ok(cxx, 'no C++ compiler (c++, g++ or clang++) found: the ABI test needs one (set CXX)');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdn-abi-'));
    try {
      const lines = ['#include "gdn.h"', '#include <cstddef>', '#include <cstdio>', 'int main() {', '  std::printf("{\\"abi\\": %d, \\"structs\\": {", GDN_ABI_VERSION);'];
      names.forEach((name, i) => {
        const fields = Object.keys(koffiLayout(ABI_STRUCTS[name]).offsets);
        const offs = fields.map((f) => `\\"${f}\\": %zu`).join(', ');
        const args = fields.map((f) => `offsetof(${name}, ${f})`).join(', ');
        lines.push(`  std::printf("${i ? ', ' : ''}\\"${name}\\": {\\"size\\": %zu, \\"align\\": %zu, \\"offsets\\": {${offs}}}", sizeof(${name}), alignof(${name}), ${args});`);
      });
      const statuses = Object.keys(STATUS).map((s) => `\\"${s}\\": %d`).join(', ');
      lines.push(`  std::printf("}, \\"status\\": {${statuses}}", ${Object.keys(STATUS).map((s) => `(int)${s}`).join(', ')});`);
      lines.push('  std::printf("}\\n");', '  return 0;', '}');
      const src = path.join(dir, 'abi.cpp');
      const exe = path.join(dir, 'abi');
      fs.writeFileSync(src, lines.join('\n') + '\n');
      const cc = spawnSync(cxx!, ['-std=c++17', '-I', path.join(projectRoot(), 'cuda', 'include'), src, '-o', exe], { encoding: 'utf8' });
      assert.equal(cc.status, 0, `compiling the ABI probe failed:\n${cc.stderr}`);
      const run = spawnSync(exe, [], { encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      const parsed = JSON.parse(run.stdout) as { abi: number; structs: Record<string, Layout>; status: Record<string, number> };
      cLayouts = parsed.structs;
      abiVersion = parsed.abi;
      cStatus = parsed.status;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gdn.h and gdn_user.h compile as C11, C++17 and C++20 with every warning an error (a C ABI header for any caller)', function () {
    this.timeout(60_000);
    const cxx = compiler()!;
    const cc = [process.env.CC, 'cc', 'gcc', 'clang'].find((c) => c && spawnSync(c, ['--version'], { encoding: 'utf8' }).status === 0);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gdn-header-'));
    try {
      const inc = path.join(projectRoot(), 'cuda', 'include');
      const runs: [string, string, string[]][] = [
        [cxx, 'probe.cpp', ['-std=c++17']],
        [cxx, 'probe.cpp', ['-std=c++20', '-Wc++20-compat']],
      ];
      if (cc) runs.push([cc, 'probe.c', ['-std=c11']]);
      for (const [tool, file, std] of runs) {
        const src = path.join(dir, file);
        fs.writeFileSync(src, '#include "gdn.h"\n#include "gdn_user.h"\nint main(void) { return GDN_ABI_VERSION > 0 ? 0 : 1; }\n');
        const r = spawnSync(tool, [...std, '-Wall', '-Wextra', '-Werror', '-pedantic', '-I', inc, '-c', src, '-o', path.join(dir, 'probe.o')], { encoding: 'utf8' });
        assert.equal(r.status, 0, `${tool} ${std.join(' ')} ${file}:\n${r.stderr}`);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('declares every struct of gdn.h that crosses the ABI', () => {
    const header = fs.readFileSync(path.join(projectRoot(), 'cuda', 'include', 'gdn.h'), 'utf8');
    const declared = [...header.matchAll(/typedef struct (gdn_\w+) \{/g)].map((m) => m[1]);
    assert.deepEqual([...declared].sort(), [...names].sort(), 'every struct typedef of gdn.h has a koffi declaration in ABI_STRUCTS');
  });

  it('STATUS of lib/native/gdn.ts names every gdn_status of gdn.h with its value, and gdn_status_name each name', () => {
    const header = fs.readFileSync(path.join(projectRoot(), 'cuda', 'include', 'gdn.h'), 'utf8');
    const body = /typedef enum gdn_status \{([\s\S]*?)\} gdn_status;/.exec(header);
    assert.ok(body, 'gdn.h declares typedef enum gdn_status');
    const enumerators = [...body[1].replace(/\/\*[\s\S]*?\*\//g, '').matchAll(/\b(GDN_\w+)\s*=/g)].map((m) => m[1]);
    assert.deepEqual(Object.keys(STATUS), enumerators, 'the same codes in the same order');
    assert.deepEqual(cStatus, { ...STATUS }, 'the values the C compiler gives them');
    for (const [name, value] of Object.entries(STATUS)) assert.equal(gdnLib().statusName(value) as string, name);
    assert.equal(gdnLib().statusName(Math.max(...Object.values(STATUS)) + 1) as string, 'GDN_ERR_UNKNOWN_STATUS');
  });

  it('GDN_ABI_VERSION of gdn.h, the library and lib/native/gdn.ts agree', () => {
    assert.equal(abiVersion, ABI_VERSION);
    assert.equal(gdnLib().abiVersion() as number, ABI_VERSION);
    // The build string (provenance of every result) carries the same number, read from gdn.h by CMake.
    assert.match(gdnLib().buildInfo() as string, new RegExp(`; abi=${ABI_VERSION}(;|$)`));
  });

  for (const name of names) {
    it(`${name}: size, alignment and every field offset`, () => {
      const k = koffiLayout(ABI_STRUCTS[name]);
      const c = cLayouts[name];
      assert.ok(c, `${name} missing from the compiled probe`);
      assert.deepEqual(k.offsets, c.offsets, `${name}: field offsets (koffi vs C)`);
      assert.equal(k.size, c.size, `${name}: sizeof (koffi ${k.size}, C ${c.size})`);
      assert.equal(k.align, c.align, `${name}: alignof (koffi ${k.align}, C ${c.align})`);
    });
  }

  it('the comparison can fail: a shifted field is noticed', () => {
    const k = koffiLayout(ABI_STRUCTS.gdn_conv_args);
    const shifted = { ...k.offsets, arm: k.offsets.arm + 4 };
    assert.notDeepEqual(shifted, cLayouts.gdn_conv_args.offsets);
  });
});
