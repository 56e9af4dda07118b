// Coordinates: map a flat element index of a compared tensor back to what it means for the op.
//
//   plainCoordinates()          indices along the tensor's own dimensions (the default)
//   namedCoordinates(kind, ...) indices along the dimensions under the op's names, e.g. state (sequence, channel, tap)
//   convCoordinates(qsl)        conv x/out [T, C]: (sequence, token in the sequence, channel)
//   postconvCoordinates(...)    post-conv q/k/v [T, H, D] (or [T, H·D]): (token, head, feature)
//
// A mapper also names the two axes of the mismatch map (rows × columns of the tensor viewed as
// [shape[0], rest]), e.g. token × channel.

import { describe } from '../dtype';
import { Coordinates, Tensor } from '../tensor';

// The interface lives with Tensor (an op's result carries its coordinates: Tensor.coordinates).
export type { Coordinates } from '../tensor';

/** Indices along the tensor's dimensions. */
export function plainCoordinates(): Coordinates {
  return {
    kind: 'plain indices',
    names(shape) {
      if (shape.length === 1) return ['index'];
      if (shape.length === 2) return ['row', 'column'];
      return shape.map((_, d) => `i${d}`);
    },
    mapAxes(shape) {
      return shape.length === 2 ? ['row', 'column'] : shape.length <= 1 ? ['', 'index'] : ['i0', `i1…i${shape.length - 1}`];
    },
    check() {},
    at(index, shape) {
      const out = new Array<number>(shape.length);
      let rest = index;
      for (let d = shape.length - 1; d >= 0; d--) {
        out[d] = rest % shape[d];
        rest = Math.floor(rest / shape[d]);
      }
      return out;
    },
  };
}

/**
 * Indices along the tensor's dimensions under the op's names: e.g. the conv state [N, C, K-1] as
 * (sequence, channel, tap), the gates g, beta [T, Hv] as (token, head).
 */
export function namedCoordinates(kind: string, names: readonly string[]): Coordinates {
  if (typeof kind !== 'string' || kind === '') throw new TypeError(`kind: expected a non-empty string, got ${describe(kind)}`);
  if (!Array.isArray(names) || names.length === 0 || !names.every((n) => typeof n === 'string' && n !== '')) {
    throw new TypeError(`names: expected a non-empty array of dimension names, got ${describe(names)}`);
  }
  const plain = plainCoordinates();
  return {
    kind: `${kind} (${names.join(', ')})`,
    names: () => [...names],
    mapAxes: () => (names.length === 2 ? [names[0], names[1]] : [names[0], names.slice(1).join('·')]) as [string, string],
    check(shape) {
      if (shape.length !== names.length) throw new RangeError(`coordinates: ${kind} has ${names.length} dimensions (${names.join(', ')}), got shape [${shape}]`);
    },
    at: plain.at,
  };
}

/**
 * The conv's token-major tensors [T, C]: sequence s holds rows [qsl[s], qsl[s+1]).
 * queryStartLoc: the op's query_start_loc ([N+1] i32 tensor or numbers), starting at 0, non-decreasing.
 */
export function convCoordinates(queryStartLoc: Tensor | ArrayLike<number>): Coordinates {
  const qsl = Array.from(queryStartLoc instanceof Tensor ? queryStartLoc.toFloat32() : queryStartLoc);
  if (qsl.length < 1) throw new RangeError('queryStartLoc: expected at least one entry (N+1 offsets), got none');
  qsl.forEach((v, i) => {
    if (!Number.isInteger(v) || v < 0) throw new RangeError(`queryStartLoc[${i}]: expected a non-negative integer, got ${describe(v)}`);
    if (i === 0 && v !== 0) throw new RangeError(`queryStartLoc[0]: expected 0, got ${v}`);
    if (i > 0 && v < qsl[i - 1]) throw new RangeError(`queryStartLoc[${i}] = ${v} is below queryStartLoc[${i - 1}] = ${qsl[i - 1]}: offsets must not decrease`);
  });
  const total = qsl[qsl.length - 1];
  return {
    kind: `conv (sequence, token, channel) over ${qsl.length - 1} sequences`,
    names: () => ['sequence', 'token', 'channel'],
    mapAxes: () => ['token', 'channel'],
    check(shape) {
      if (shape.length !== 2) throw new RangeError(`coordinates: conv coordinates need a [T, C] tensor, got shape [${shape}]`);
      if (shape[0] !== total) throw new RangeError(`coordinates: queryStartLoc ends at ${total} tokens but the tensor has T = ${shape[0]} rows`);
    },
    at(index, shape) {
      const c = index % shape[1];
      const t = Math.floor(index / shape[1]);
      // Largest s with qsl[s] <= t < qsl[s+1] (empty sequences are skipped by the strict upper bound).
      let lo = 0;
      let hi = qsl.length - 2;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (qsl[mid] <= t) lo = mid;
        else hi = mid - 1;
      }
      return [lo, t - qsl[lo], c];
    },
  };
}

export interface PostconvCoordinateOptions {
  /** Heads per token (Hk for q/k, Hv for v); inferred from a [T, H, D] shape. */
  heads?: number;
  /** Features per head (Dk or Dv); inferred from a [T, H, D] shape or from heads. */
  dim?: number;
}

/** The post-conv outputs q, k [T, Hk, Dk] and v [T, Hv, Dv] (also accepted flattened as [T, H·D]). */
export function postconvCoordinates(opts: PostconvCoordinateOptions = {}): Coordinates {
  for (const key of ['heads', 'dim'] as const) {
    const v = opts[key];
    if (v !== undefined && (!Number.isInteger(v) || v <= 0)) throw new RangeError(`${key}: expected a positive integer, got ${describe(v)}`);
  }
  const layout = (shape: readonly number[]): [number, number] => {
    if (shape.length === 3) {
      if (opts.heads !== undefined && opts.heads !== shape[1]) throw new RangeError(`coordinates: heads = ${opts.heads} but the tensor has shape [${shape}]`);
      if (opts.dim !== undefined && opts.dim !== shape[2]) throw new RangeError(`coordinates: dim = ${opts.dim} but the tensor has shape [${shape}]`);
      return [shape[1], shape[2]];
    }
    if (shape.length === 2) {
      const heads = opts.heads ?? (opts.dim ? shape[1] / opts.dim : undefined);
      const dim = opts.dim ?? (heads ? shape[1] / heads : undefined);
      if (heads === undefined || dim === undefined) throw new RangeError(`coordinates: a [T, H·D] tensor (shape [${shape}]) needs heads or dim`);
      if (!Number.isInteger(heads) || !Number.isInteger(dim) || heads * dim !== shape[1]) {
        throw new RangeError(`coordinates: heads = ${heads} × dim = ${dim} does not make the row length ${shape[1]}`);
      }
      return [heads, dim];
    }
    throw new RangeError(`coordinates: post-conv coordinates need [T, H, D] or [T, H·D], got shape [${shape}]`);
  };
  return {
    kind: 'post-conv (token, head, feature)',
    names: () => ['token', 'head', 'feature'],
    mapAxes: () => ['token', 'head·feature'],
    check(shape) {
      layout(shape);
    },
    at(index, shape) {
      const [heads, dim] = layout(shape);
      const feature = index % dim;
      const rest = Math.floor(index / dim);
      return [Math.floor(rest / heads), rest % heads, feature];
    },
  };
}
