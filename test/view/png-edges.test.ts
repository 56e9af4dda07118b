// PNG output at its edges: sizes and the scale bounds with the real resvg; the exact options handed to
// resvg (white background, zoom, $GDNLAB_FONT_DIR split on ':' with missing folders dropped) and one
// load of the module, seen through a stand-in; and a process where resvg cannot be loaded (a bare
// machine), where svgToPng names the reason and showDiagram still shows the SVG and the text.

import { strict as assert } from 'assert';
import * as os from 'os';
import { pngUnavailable, showDiagram, svgToPng } from '../../lib/view/png';
import { withKernel } from './fake-kernel';

type PngModule = typeof import('../../lib/view/png');
interface Loader {
  _load(request: string, parent: unknown, isMain: boolean): unknown;
}

const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="30" height="20"><rect x="0" y="0" width="10" height="20" fill="#ff0000"/></svg>';
const PNG_SIGNATURE = '89504e470d0a1a0a';

/** A fresh copy of png.ts whose require('@resvg/resvg-js') is answered by `answer` (counted). */
async function withStandIn(answer: () => unknown, fn: (png: PngModule, requests: () => number) => void | Promise<void>): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const loader = require('module') as Loader;
  const original = loader._load;
  let requests = 0;
  loader._load = function (request: string, parent: unknown, isMain: boolean) {
    if (request === '@resvg/resvg-js') {
      requests++;
      return answer();
    }
    return original.call(this, request, parent, isMain);
  };
  const path = require.resolve('../../lib/view/png');
  const cached = require.cache[path];
  delete require.cache[path];
  try {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    await fn(require(path) as PngModule, () => requests);
  } finally {
    loader._load = original;
    if (cached) require.cache[path] = cached;
    else delete require.cache[path];
  }
}

describe('png: edges', () => {
  it('svgToPng (resvg): the SVG\'s size times the scale, a PNG', () => {
    assert.equal(pngUnavailable(), undefined);
    for (const [scale, w, h] of [[undefined, 30, 20], [2, 60, 40], [4, 120, 80], [0.5, 15, 10]] as const) {
      const img = svgToPng(SVG, scale);
      assert.deepEqual([img.width, img.height], [w, h], String(scale));
      assert.equal(img.png.subarray(0, 8).toString('hex'), PNG_SIGNATURE);
    }
  });

  it('svgToPng refuses what is not an SVG document and a scale outside (0, 4]', () => {
    for (const bad of [undefined, 42, '<html></html>', '']) assert.throws(() => svgToPng(bad as never), { name: 'TypeError', message: 'svg: expected an SVG document as a string' });
    for (const s of [0, -1, 4.0001, NaN, Infinity]) assert.throws(() => svgToPng(SVG, s), { name: 'RangeError', message: `scale: expected a number in (0, 4], got ${String(s)}` });
  });

  it('hands resvg a white background, the zoom, the fonts (existing $GDNLAB_FONT_DIR folders only), and loads it once', async () => {
    const seen: { svg: string; opts: Record<string, unknown> }[] = [];
    class Resvg {
      constructor(svg: string, opts: Record<string, unknown>) {
        seen.push({ svg, opts });
      }
      render() {
        return { asPng: () => Buffer.from('png'), width: 7, height: 5 };
      }
    }
    const saved = process.env.GDNLAB_FONT_DIR;
    const tmp = os.tmpdir();
    try {
      await withStandIn(() => ({ Resvg }), (png, requests) => {
        process.env.GDNLAB_FONT_DIR = `${tmp}::/no/such/font/dir:${__dirname}`;
        assert.equal(png.pngUnavailable(), undefined);
        assert.deepEqual(png.svgToPng(SVG, 3), { png: Buffer.from('png'), width: 7, height: 5 });
        delete process.env.GDNLAB_FONT_DIR;
        png.svgToPng(SVG);
        assert.equal(requests(), 1);
      });
    } finally {
      if (saved === undefined) delete process.env.GDNLAB_FONT_DIR;
      else process.env.GDNLAB_FONT_DIR = saved;
    }
    const font = (dirs: string[]) => ({ loadSystemFonts: true, fontDirs: dirs, sansSerifFamily: 'Liberation Sans', defaultFontFamily: 'Liberation Sans' });
    assert.deepEqual(seen, [
      { svg: SVG, opts: { background: '#ffffff', fitTo: { mode: 'zoom', value: 3 }, font: font([tmp, __dirname]), logLevel: 'off' } },
      { svg: SVG, opts: { background: '#ffffff', fitTo: { mode: 'zoom', value: 1 }, font: font([]), logLevel: 'off' } },
    ]);
  });

  it('without resvg: the reason (first line of the error), once; svgToPng throws it; showDiagram shows SVG and text', async () => {
    await withStandIn(() => {
      throw new Error('no binary for this platform\nstack line');
    }, async (png, requests) => {
      const why = '@resvg/resvg-js could not be loaded (no binary for this platform)';
      assert.equal(png.pngUnavailable(), why);
      assert.equal(png.pngUnavailable(), why);
      assert.throws(() => png.svgToPng(SVG), { name: 'Error', message: `svgToPng: ${why}` });
      assert.equal(requests(), 1);
      const { value, outputs } = await withKernel(() => png.showDiagram(SVG, 'a red bar'));
      assert.equal(value, true);
      assert.deepEqual(outputs, [{ data: { 'image/svg+xml': SVG, 'text/plain': 'a red bar' }, metadata: {}, options: undefined }]);
    });
  });

  it('showDiagram: PNG (base64, with its size), SVG and text in one output; false outside a kernel; text required', async () => {
    const { value, outputs } = await withKernel(() => showDiagram(SVG, 'a red bar'));
    assert.equal(value, true);
    assert.equal(outputs.length, 1);
    const { data, metadata } = outputs[0];
    assert.deepEqual(Object.keys(data), ['image/png', 'image/svg+xml', 'text/plain']);
    assert.equal(Buffer.from(String(data['image/png']), 'base64').subarray(0, 8).toString('hex'), PNG_SIGNATURE);
    assert.equal(data['image/png'], svgToPng(SVG).png.toString('base64'));
    assert.equal(data['image/svg+xml'], SVG);
    assert.equal(data['text/plain'], 'a red bar');
    assert.deepEqual(metadata, { 'image/png': { width: 30, height: 20 } });
    assert.equal(showDiagram(SVG, 'outside'), false);
    for (const t of ['', undefined, 3]) assert.throws(() => showDiagram(SVG, t as never), { name: 'TypeError', message: 'text: expected a non-empty description of the diagram' });
  });
});
