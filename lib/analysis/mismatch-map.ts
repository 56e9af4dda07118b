// Mismatch map: where the mismatching elements are, over (row, column) of the tensor viewed as
// [shape[0], numel / shape[0]] — (token, channel) for the conv, (token, head·feature) for the
// post-conv — coarsened to a grid of at most maxRows × maxCols cells for heat maps.
//
// Grid cell (i, j) covers rows [rowEdges[i], rowEdges[i+1]) and columns [colEdges[j], colEdges[j+1]);
// element (r, c) falls in cell (floor(r·gridRows/rows), floor(c·gridCols/cols)).

export interface MismatchMap {
  /** Axis names, e.g. ['token', 'channel']. */
  axes: [string, string];
  rows: number;
  cols: number;
  rowEdges: number[];
  colEdges: number[];
  /** counts[i][j]: mismatching elements in cell (i, j). */
  counts: number[][];
  /** Total mismatches on the map. */
  total: number;
}

export interface MapGrid {
  maxRows?: number;
  maxCols?: number;
}

export const DEFAULT_MAP_GRID = { maxRows: 64, maxCols: 128 };

function edges(n: number, cells: number): number[] {
  return Array.from({ length: cells + 1 }, (_, i) => Math.ceil((i * n) / cells));
}

export class MismatchMapBuilder {
  readonly rows: number;
  readonly cols: number;
  private readonly gridRows: number;
  private readonly gridCols: number;
  private readonly cells: Float64Array;
  private total = 0;

  constructor(shape: readonly number[], readonly axes: [string, string], grid: MapGrid = {}) {
    const numel = shape.reduce((a, b) => a * b, 1);
    this.rows = shape.length >= 2 ? shape[0] : 1;
    this.cols = this.rows > 0 ? numel / this.rows : 0;
    for (const key of ['maxRows', 'maxCols'] as const) {
      const v = grid[key];
      if (v !== undefined && (!Number.isInteger(v) || v < 1)) throw new RangeError(`map.${key}: expected a positive integer, got ${v}`);
    }
    this.gridRows = Math.max(1, Math.min(this.rows, grid.maxRows ?? DEFAULT_MAP_GRID.maxRows));
    this.gridCols = Math.max(1, Math.min(this.cols, grid.maxCols ?? DEFAULT_MAP_GRID.maxCols));
    this.cells = new Float64Array(this.gridRows * this.gridCols);
  }

  /** Records a mismatch at flat element index i. */
  add(index: number): void {
    const r = Math.floor(index / this.cols);
    const c = index - r * this.cols;
    const gi = Math.floor((r * this.gridRows) / this.rows);
    const gj = Math.floor((c * this.gridCols) / this.cols);
    this.cells[gi * this.gridCols + gj] += 1;
    this.total += 1;
  }

  finish(): MismatchMap {
    const counts: number[][] = [];
    for (let i = 0; i < this.gridRows; i++) counts.push(Array.from(this.cells.subarray(i * this.gridCols, (i + 1) * this.gridCols)));
    return {
      axes: this.axes,
      rows: this.rows,
      cols: this.cols,
      rowEdges: edges(this.rows, this.gridRows),
      colEdges: edges(this.cols, this.gridCols),
      counts,
      total: this.total,
    };
  }
}

/** Elements in grid cell (i, j). */
export function cellSize(map: MismatchMap, i: number, j: number): number {
  return (map.rowEdges[i + 1] - map.rowEdges[i]) * (map.colEdges[j + 1] - map.colEdges[j]);
}

/** Fractions of mismatching elements per cell (0..1). */
export function mismatchFractions(map: MismatchMap): number[][] {
  return map.counts.map((row, i) => row.map((n, j) => (n === 0 ? 0 : n / cellSize(map, i, j))));
}
