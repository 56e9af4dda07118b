// The token tile: 16 tokens per block, 4 warps of 4 tokens; lane l holds features l, l+32, l+64, l+96.
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
    float sum = (square(x[0]) + square(x[2])) + (square(x[1]) + square(x[3]));
    for (int off = 16; off >= 1; off /= 2) sum = sum + t.shfl_xor(sum, off);
    const float inv = l2_inv(sum);
    for (int m = 0; m < 4; ++m) head_store<TQ>(p, s, tok, lane + 32 * m, x[m] * inv);
  }
}
