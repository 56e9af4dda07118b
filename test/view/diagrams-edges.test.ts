// The teaching diagrams, element by element: the chunk-mapping figure's geometry (9 px per token,
// rows 34 px apart, programs from x = 150), its state boxes and arrows for each mapping (the racy end
// program, a one-chunk sequence, an empty sequence), the colour cycle, and the fold figure's boxes,
// labels and connecting lines.

import { strict as assert } from 'assert';
import { chunkMappingSvg, reductionFoldSvg } from '../../lib/view/diagrams';
import { parseXml } from './xml';

type El = Record<string, string>;
const pick = (els: El[], name: string, keys: string[]) => els.filter((e) => e['#name'] === name).map((e) => keys.map((k) => e[k] ?? '-').join(' '));

describe('diagrams: edges', () => {
  it('chunk mapping (racy): sizes, labels, state boxes, chunk cells and the end program\'s write', () => {
    const x = parseXml(chunkMappingSvg([20, 0, 5], { initialState: [true, true, false], mapping: 'racy' }));
    assert.deepEqual([x.rootAttributes.width, x.rootAttributes.height, x.rootAttributes.viewBox], ['480', '172', '0 0 480 172']);
    assert.deepEqual(x.texts, ['exact-chunk programs (8 tokens each)', 'seq 0 (20 tok)', 'state', '(0,0)', '(0,1)', '(0,2)', 'chunk 2 writes state', 'seq 1 (0 tok)', 'state', 'seq 2 (5 tok)', '(2,0)']);
    assert.deepEqual(pick(x.attributes, 'rect', ['x', 'y', 'width', 'height', 'fill']), [
      '- - 100% 100% white',
      '116 40 28 18 #ddd',
      '150 40 71 18 #4e79a7',
      '222 40 71 18 #f28e2b',
      '294 40 35 18 #59a14f',
      '116 74 28 18 #ddd',
      '150 108 44 18 #e15759',
    ]);
    assert.deepEqual(pick(x.attributes, 'text', ['x', 'y', 'font-size', 'fill']), [
      '10 20 13 -',
      '10 54 11 -',
      '119 53 9 -',
      '152 69 8 -',
      '224 69 8 -',
      '296 69 8 -',
      '338 53 10 #b42318',
      '10 88 11 -',
      '119 87 9 -',
      '10 122 11 -',
      '152 137 8 -',
    ]);
    assert.deepEqual(pick(x.attributes, 'path', ['d', 'stroke', 'stroke-dasharray', 'marker-end', 'fill']), [
      'M0,0 L6,3 L0,6 z - - - #1a7f37',
      'M0,0 L6,3 L0,6 z - - - #b42318',
      'M 130 58 Q 140 70 154 59 #1a7f37 - url(#arrow-g) none',
      'M 312 40 Q 221 28 130 40 #b42318 4 2 url(#arrow-r) none',
    ]);
    assert.deepEqual(pick(x.attributes, 'marker', ['id', 'markerWidth', 'refX', 'refY']), ['arrow-g 8 6 3', 'arrow-r 8 6 3']);
  });

  it('chunk mapping (exact, the default): chunk 0 writes the state, in green, without dashes', () => {
    for (const mapping of ['exact', undefined] as const) {
      const x = parseXml(chunkMappingSvg([20], { initialState: [true], mapping }));
      assert.ok(x.texts.includes('chunk 0 reads, then writes'));
      assert.deepEqual(pick(x.attributes, 'path', ['d', 'stroke', 'stroke-dasharray', 'marker-end']).slice(2), [
        'M 130 58 Q 140 70 154 59 #1a7f37 - url(#arrow-g)',
        'M 168 40 Q 149 28 130 40 #1a7f37  url(#arrow-g)',
      ]);
      assert.deepEqual(pick(x.attributes, 'text', ['x', 'fill']).slice(-1), ['338 #1a7f37']);
    }
  });

  it('chunk mapping (racy) of a one-chunk sequence: chunk 0 reads and writes, in green', () => {
    const x = parseXml(chunkMappingSvg([5, 3], { initialState: [true], mapping: 'racy', chunk: 4 }));
    assert.deepEqual(x.texts, ['exact-chunk programs (4 tokens each)', 'seq 0 (5 tok)', 'state', '(0,0)', '(0,1)', 'chunk 1 writes state', 'seq 1 (3 tok)', '(1,0)']);
    const y = parseXml(chunkMappingSvg([3], { initialState: [true], mapping: 'racy', chunk: 4 }));
    assert.ok(y.texts.includes('chunk 0 reads & writes'));
    assert.deepEqual(pick(y.attributes, 'path', ['d', 'stroke', 'stroke-dasharray', 'marker-end']).slice(3), ['M 168 40 Q 149 28 130 40 #1a7f37  url(#arrow-g)']);
    assert.deepEqual(pick(y.attributes, 'text', ['x', 'y', 'fill']).slice(-1), ['185 53 #1a7f37']);
    // Chunk 4: the second program of seq 0 starts at token 4, one token wide; the racy writer sits 2 tokens into it.
    assert.deepEqual(pick(x.attributes, 'rect', ['x', 'width']).slice(2, 5), ['150 35', '186 8', '150 26']);
    assert.equal(pick(x.attributes, 'path', ['d'])[3], 'M 204 40 Q 167 28 130 40');
  });

  it('chunk mapping: eight colours in turn across sequences, a title, no sequences', () => {
    const x = parseXml(chunkMappingSvg([40, 40], { chunk: 8, title: 'T<' }));
    assert.equal(x.texts[0], 'T<');
    const fills = pick(x.attributes, 'rect', ['fill']).slice(1);
    assert.deepEqual(fills, ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#4e79a7', '#f28e2b']);
    assert.equal(pick(x.attributes, 'path', ['d']).length, 2, 'no state: no arrows');
    const e = parseXml(chunkMappingSvg([]));
    assert.deepEqual([e.rootAttributes.width, e.rootAttributes.height], ['309', '70']);
    assert.equal(e.counts.rect, 1);
  });

  it('reduction fold: every label centred in its box, every line from a box\'s bottom centre to a box\'s top edge', () => {
    const svg = reductionFoldSvg();
    const x = parseXml(svg);
    assert.deepEqual([x.rootAttributes.width, x.rootAttributes.height, x.rootAttributes.viewBox], ['760', '300', '0 0 760 300']);
    const els = x.attributes;
    const boxes = els.filter((e) => e['#name'] === 'rect' && e.rx === '4').map((e) => ({ x: +e.x, y: +e.y, w: +e.width, h: +e.height }));
    assert.equal(boxes.length, 15);
    for (let i = 0; i < els.length; i++) {
      if (els[i]['#name'] !== 'rect' || els[i].rx !== '4') continue;
      const label = els[i + 1];
      assert.equal(label['#name'], 'text');
      assert.equal(+label.x, +els[i].x + +els[i].width / 2);
      assert.equal(+label.y, +els[i].y + 17);
      assert.equal(els[i].height, '26');
    }
    const lines = els.filter((e) => e['#name'] === 'line');
    assert.equal(lines.length, 13);
    for (const l of lines) {
      assert.ok(boxes.some((b) => +l.x1 === b.x + b.w / 2 && +l.y1 === b.y + b.h), `line from ${l.x1},${l.y1}`);
      assert.ok(boxes.some((b) => +l.y2 === b.y && +l.x2 > b.x && +l.x2 < b.x + b.w), `line to ${l.x2},${l.y2}`);
    }
    // The leaves: the tree's order (x0, x2, x1, x3) 85 px apart, the sequential fold's 75 px apart.
    assert.deepEqual(boxes.filter((b) => b.y === 40).map((b) => `${b.x}/${b.w}`), ['30/70', '115/70', '200/70', '285/70', '440/62', '515/62', '590/62', '665/62']);
    assert.deepEqual(x.texts.slice(1, 5), ['x0²', 'x2²', 'x1²', 'x3²']);
    assert.deepEqual(x.texts.slice(11, 18), ['x0²', 'x1²', 'x2²', 'x3²', 'x0² + x1²', '(·) + x2²', '(·) + x3²']);
    assert.deepEqual(boxes.filter((b) => b.y !== 40).map((b) => `${b.x},${b.y}/${b.w}`), ['55,100/110', '225,100/110', '120,160/150', '95,220/200', '450,100/110', '500,150/120', '550,200/120']);
    // The free texts: the two titles, the tree's caption and the two lines under the fold.
    const free = els.filter((e, k) => e['#name'] === 'text' && !(els[k - 1]?.rx === '4'));
    assert.deepEqual(free.map((e) => `${e.x} ${e.y} ${e['font-size']} ${e.fill ?? '-'}`), ['20 22 13 -', '20 280 11 -', '440 22 13 #b42318', '440 250 11 #b42318', '440 265 11 #b42318']);
  });
});
