// Register window, one thread per channel; slot 7 holds the newest token, taps right-aligned.
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
  if (!s.writes_state) return;  // chunk 0 (exact) or the whole sequence
  // The final state: the sequence's last K-1 inputs (old state columns for a sequence shorter than K-1).
  for (int j = 0; j < K - 1; ++j) set_state(p, s.seq, c, j, input<TX>(p, s, init, s.end - (K - 1) + j, c));
}
