// Arm bodies the user-arm tests define (docs/USER-ARMS.md), in the dialect a notebook cell uses.

/** The register arm with 16-token programs (the built-in reg uses 8): must equal scalar bit for bit. */
export const REG16 = `// Register window, one thread per channel; slot 7 holds the newest token, taps right-aligned.
template <class TX, class TO, class Ctx>
GDN_HD void conv_arm(const Params& p, Ctx& t) {
  const Span s = program_span(p, t.by());
  const int64_t c = t.bx() * 128 + t.tid();
  if (s.t0 >= s.t1 || c >= p.C) return;
  const int K = p.K;
  const bool init = has_initial_state(p, s.seq);
  float w[8], win[8];
  GDN_UNROLL
  for (int jj = 0; jj < 8; ++jj) {
    w[jj] = jj >= 8 - K ? w_at<TX>(p, c, jj - (8 - K)) : 0.0f;
    win[jj] = 0.0f;
  }
  GDN_UNROLL
  for (int jj = 1; jj < 8; ++jj)
    if (jj >= 8 - K + 1) win[jj] = input<TX>(p, s, init, s.t0 - (8 - jj), c);
  const float b = bias_at<TX>(p, c);
  for (int64_t tok = s.t0; tok < s.t1; ++tok) {
    GDN_UNROLL
    for (int jj = 0; jj < 7; ++jj) win[jj] = win[jj + 1];
    win[7] = x_at<TX>(p, tok, c);
    float acc = b;
    GDN_UNROLL
    for (int jj = 0; jj < 8; ++jj)
      if (jj >= 8 - K) acc = det_fma(w[jj], win[jj], acc);
    out_store<TO>(p, tok, c, gdn_silu(acc));
  }
  STATE_OWNER
  // The final state: the sequence's last K-1 inputs (old state columns for a sequence shorter than K-1).
  for (int j = 0; j < K - 1; ++j) set_state(p, s.seq, c, j, input<TX>(p, s, init, s.end - (K - 1) + j, c));
}
`;

/** Chunk 0 owns the final-state write: correct under every block order. */
export const REG16_SOURCE = REG16.replace('STATE_OWNER', 'if (!s.writes_state) return;  // chunk 0 (exact) or the whole sequence');
/** The #305 shape: the program reaching the end of the sequence writes the state. */
export const REG16_RACY_SOURCE = REG16.replace('STATE_OWNER', 'if (s.t1 != s.end) return;  // #305: whoever reaches the end writes the state');

const TILE = `// The token tile: 16 tokens per block, 4 warps of 4 tokens; lane l holds features l, l+32, l+64, l+96.
template <class TC, class TQ, class TG, class Ctx>
GDN_HD void postconv_arm(const PostParams& p, Ctx& t) {
  const postconv::TileBlock tb = tile_of(p, t);  // (head slot, 16-token tile) of this block
  const Slot s = decode_slot(p, tb.slot);
  const int64_t t0 = tb.tile * 16;
  if (s.kind == postconv::kSlotGates) {
    const int64_t left = p.T - t0;
    const int tokens = left < 16 ? (int)left : 16;
    for (int e = t.tid(); e < tokens * (int)p.Hv; e += 128) gates<TG>(p, t0 + e / p.Hv, e % p.Hv);
    return;
  }
  const int lane = t.lane();
  for (int j = 0; j < 4; ++j) {
    const int64_t tok = t0 + t.warp() * 4 + j;
    if (tok >= p.T) break;  // the same for every lane of a warp
    if (s.kind == postconv::kSlotV) {
      for (int m = 0; m < 4; ++m) head_store<TQ>(p, s, tok, lane + 32 * m, head_x<TC>(p, s, tok, lane + 32 * m));
      continue;
    }
    float x[4];
    for (int m = 0; m < 4; ++m) x[m] = head_x<TC>(p, s, tok, lane + 32 * m);
    float sum = FOLD;
    for (int off = 16; off >= 1; off /= 2) sum = sum + t.shfl_xor(sum, off);
    const float inv = l2_inv(sum);
    for (int m = 0; m < 4; ++m) head_store<TQ>(p, s, tok, lane + 32 * m, x[m] * inv);
  }
}
`;

/** The tree's fold (the tree's first two levels), then its shuffle levels: must equal tree bit for bit. */
export const TILE_TREE_SOURCE = TILE.replace('FOLD', '(square(x[0]) + square(x[2])) + (square(x[1]) + square(x[3]))');
/** A changed fold, ((x0² + x1²) + x2²) + x3²: other f32 bits, mostly hidden by bf16 rounding. */
export const TILE_SEQ_SOURCE = TILE.replace('FOLD', '((square(x[0]) + square(x[1])) + square(x[2])) + square(x[3])');

const HEAD = `template <class TX, class TO, class Ctx>
GDN_HD void conv_arm(const Params& p, Ctx& t) {
  const Span s = program_span(p, t.by());
  const int64_t c = t.bx() * 128 + t.tid();
  if (c >= p.C || s.t0 >= s.t1) return;
`;

/**
 * Planted faults: each must give an error naming the arm, and leave the next call working. The
 * out-of-bounds accesses reach 2^24 rows past the buffer, so that on CUDA (no checked mode) they leave
 * mapped memory too; `cuda` is what the CUDA backend reports when it differs from the host's message.
 */
export const FAULTS: { name: string; source: string; expect: RegExp; cuda?: RegExp }[] = [
  { name: 'fault-oob-write', source: HEAD + '  out_store<TO>(p, p.T + ((int64_t)1 << 24), c, 1.0f);\n}\n', expect: /arm 'fault-oob-write' wrote out at element \d+, outside \[0, \d+\)/, cuda: /arm 'fault-oob-write' \(conv\) on CUDA: .*(illegal|out of bounds|invalid)/i },
  { name: 'fault-oob-read', source: HEAD + '  out_store<TO>(p, s.t0, c, x_at<TX>(p, p.T + ((int64_t)1 << 24), c));\n}\n', expect: /arm 'fault-oob-read' read x at element \d+, outside \[0, \d+\)/, cuda: /arm 'fault-oob-read' \(conv\) on CUDA: .*(illegal|out of bounds|invalid)/i },
  { name: 'fault-wild-write', source: HEAD + '  static_cast<float*>(p.out)[(int64_t)1 << 40] = 1.0f;\n}\n', expect: /arm 'fault-wild-write' \(conv\): the worker was killed by SIGSEGV/, cuda: /arm 'fault-wild-write' \(conv\) on CUDA: .*(illegal|out of bounds|invalid)/i },
  // An endless loop with a store in it: a loop without side effects may be deleted (ptxas removed one).
  { name: 'fault-spin', source: HEAD + '  for (int64_t i = 0;; ++i) out_store<TO>(p, s.t0, c, (float)i);\n}\n', expect: /arm 'fault-spin'.*ran past its time limit of 1500 ms/ },
  { name: 'fault-syntax', source: HEAD + '  float y = x_at<TX>(p, s.t0, c)\n  out_store<TO>(p, s.t0, c, y);\n}\n', expect: /arm 'fault-syntax': compiling for \w+ failed[\s\S]*arm:fault-syntax[:(]7/ },
  { name: 'fault-signature', source: 'template <class TX, class TO, class Ctx>\nGDN_HD void conv_arm(const Params& p) {\n}\n', expect: /arm 'fault-signature': the body must define\s+template <class TX, class TO, class Ctx> GDN_HD void conv_arm\(const Params& p, Ctx& t\)/ },
];
