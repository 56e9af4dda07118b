// Hand-drawn teaching figures as SVG (no JavaScript needed to see them): the exact-chunk mapping
// of a varlen batch, and who reads and writes each sequence's conv_state.

import { escapeXml } from './format';

export interface ChunkDiagramOptions {
  chunk?: number;
  /** Which sequences carry initial state (drawn with a state box in front). */
  initialState?: boolean[];
  /** 'racy': the end program writes the state; 'exact': chunk 0 writes it. */
  mapping?: 'exact' | 'racy';
  title?: string;
}

/** Sequences as rows of token cells, grouped into chunk programs; arrows for the state read and write. */
export function chunkMappingSvg(lengths: number[], opts: ChunkDiagramOptions = {}): string {
  const chunk = opts.chunk ?? 8;
  const cell = 9;
  const rowH = 34;
  const left = 150;
  const maxLen = Math.max(1, ...lengths);
  const width = left + maxLen * cell + 150;
  const height = 40 + lengths.length * rowH + 30;
  const parts: string[] = [];
  const colors = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7'];
  parts.push(`<text x="10" y="20" font-size="13" font-weight="bold">${escapeXml(opts.title ?? `exact-chunk programs (${chunk} tokens each)`)}</text>`);
  let program = 0;
  lengths.forEach((len, s) => {
    const y = 40 + s * rowH;
    const hasState = opts.initialState?.[s] ?? false;
    parts.push(`<text x="10" y="${y + 14}" font-size="11">seq ${s} (${len} tok)</text>`);
    if (hasState) {
      parts.push(`<rect x="${left - 34}" y="${y}" width="28" height="18" fill="#ddd" stroke="#555"/>`);
      parts.push(`<text x="${left - 31}" y="${y + 13}" font-size="9">state</text>`);
    }
    const chunks = Math.ceil(len / chunk);
    for (let c = 0; c < chunks; c++) {
      const from = c * chunk;
      const to = Math.min(len, from + chunk);
      const color = colors[program % colors.length];
      parts.push(`<rect x="${left + from * cell}" y="${y}" width="${(to - from) * cell - 1}" height="18" fill="${color}" fill-opacity="0.75" stroke="#333"/>`);
      parts.push(`<text x="${left + from * cell + 2}" y="${y + 29}" font-size="8">(${s},${c})</text>`);
      program++;
    }
    if (hasState && len > 0) {
      const endProgram = chunks - 1;
      const reader = left + 4;
      parts.push(`<path d="M ${left - 20} ${y + 18} Q ${left - 10} ${y + 30} ${reader} ${y + 19}" fill="none" stroke="#1a7f37" stroke-width="1.5" marker-end="url(#arrow-g)"/>`);
      const writerX = opts.mapping === 'racy' ? left + (endProgram * chunk + 2) * cell : left + 2 * cell;
      const label = opts.mapping === 'racy' ? (endProgram > 0 ? `chunk ${endProgram} writes state` : 'chunk 0 reads & writes') : 'chunk 0 reads, then writes';
      parts.push(`<path d="M ${writerX} ${y} Q ${(writerX + left - 20) / 2} ${y - 12} ${left - 20} ${y}" fill="none" stroke="${opts.mapping === 'racy' && endProgram > 0 ? '#b42318' : '#1a7f37'}" stroke-width="1.5" stroke-dasharray="${opts.mapping === 'racy' && endProgram > 0 ? '4 2' : ''}" marker-end="url(#arrow-${opts.mapping === 'racy' && endProgram > 0 ? 'r' : 'g'})"/>`);
      parts.push(`<text x="${left + len * cell + 8}" y="${y + 13}" font-size="10" fill="${opts.mapping === 'racy' && endProgram > 0 ? '#b42318' : '#1a7f37'}">${escapeXml(label)}</text>`);
    }
  });
  const defs = `<defs>${['g', 'r'].map((k) => `<marker id="arrow-${k}" markerWidth="8" markerHeight="8" refX="6" refY="3" orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="${k === 'g' ? '#1a7f37' : '#b42318'}"/></marker>`).join('')}</defs>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">${defs}<rect width="100%" height="100%" fill="white"/>${parts.join('')}</svg>`;
}

/**
 * The post-conv sum of squares for one lane ℓ of a 128-feature head: the reference tree's first two
 * levels (which the token tile's lane fold reproduces exactly) beside seq4's sequential fold.
 */
export function reductionFoldSvg(): string {
  const W = 760;
  const H = 300;
  const box = (x: number, y: number, w: number, label: string, fill: string) =>
    `<rect x="${x}" y="${y}" width="${w}" height="26" rx="4" fill="${fill}" stroke="#333"/><text x="${x + w / 2}" y="${y + 17}" font-size="11" text-anchor="middle">${escapeXml(label)}</text>`;
  const line = (x1: number, y1: number, x2: number, y2: number) => `<line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" stroke="#555"/>`;
  const parts: string[] = [];
  parts.push(`<text x="20" y="22" font-size="13" font-weight="bold">tree / token-tile (lane ℓ holds x0 = x[ℓ], x1 = x[ℓ+32], x2 = x[ℓ+64], x3 = x[ℓ+96])</text>`);
  const leaves = ['x0²', 'x2²', 'x1²', 'x3²'];
  leaves.forEach((l, i) => parts.push(box(30 + i * 85, 40, 70, l, '#e8f0fe')));
  parts.push(box(55, 100, 110, 'level 64: x0² + x2²', '#cfe2ff'), box(225, 100, 110, 'level 64: x1² + x3²', '#cfe2ff'));
  parts.push(line(65, 66, 110, 100), line(150, 66, 110, 100), line(235, 66, 280, 100), line(320, 66, 280, 100));
  parts.push(box(120, 160, 150, 'level 32: (·) + (·)', '#9ec5fe'), line(110, 126, 195, 160), line(280, 126, 195, 160));
  parts.push(box(95, 220, 200, 'levels 16, 8, 4, 2, 1: shuffles', '#6ea8fe'), line(195, 186, 195, 220));
  parts.push(`<text x="20" y="280" font-size="11">The tree pairs feature i with i+64, then i+32 with i+96 — exactly the lane fold (x0² + x2²) + (x1² + x3²).</text>`);
  parts.push(`<text x="440" y="22" font-size="13" font-weight="bold" fill="#b42318">seq4 (planted mutant)</text>`);
  ['x0²', 'x1²', 'x2²', 'x3²'].forEach((l, i) => parts.push(box(440 + i * 75, 40, 62, l, '#fde2e1')));
  parts.push(box(450, 100, 110, 'x0² + x1²', '#f8c9c6'), line(471, 66, 505, 100), line(546, 66, 505, 100));
  parts.push(box(500, 150, 120, '(·) + x2²', '#f4a7a1'), line(505, 126, 560, 150), line(621, 66, 600, 150));
  parts.push(box(550, 200, 120, '(·) + x3²', '#ef857c'), line(560, 176, 610, 200), line(696, 66, 650, 200));
  parts.push(`<text x="440" y="250" font-size="11" fill="#b42318">Same terms, different order: f32 rounding differs,</text>`);
  parts.push(`<text x="440" y="265" font-size="11" fill="#b42318">so sumsq — and 1/sqrt(sumsq + 1e-6) — move by an ulp.</text>`);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>${parts.join('')}</svg>`;
}
