#!/usr/bin/env python3
"""vLLM's own Triton kernels for the GDN causal conv and post-conv, timed on the same GPU in the same run.

Reads the same JSON list of cases as bench/torch_reference.py on stdin and prints one JSON object per case:
  conv:      vLLM's causal_conv1d_fn (channel-last x, bf16 state pool, SiLU) with its per-batch metadata
             built once outside the timed region, as vLLM's attention metadata builder does per batch.
  postconv:  vLLM's fused_post_conv_prep (split + l2norm + gating in one kernel), bf16 in, q/k/v bf16,
             g and beta f32.
Before timing, each case's outputs are checked against float32 formulas of the same inputs within a
tolerance (vLLM is not bit-exact) and the result is reported with the times ("check").
Each case also times a device-to-device copy of the same traffic in this process, so "x copy" here is
this process's own copy. The kernels come from vLLM's wheel (bench/pack-vllm.sh) on sys.path given by
--vllm-path; nothing of vLLM is part of gdnlab. Timing: bench/fair_timing.py's fair method (CUDA events
around one call, L2 flushed outside them, a GPU-side hold so that Python's launch time cannot enter the
figure), kernel and copy interleaved; the naive figure (host synchronised after every sample) and a
CUDA-graph replay are reported beside it ("naive", "graph").
"""
import argparse
import json
import sys
import types

import torch
import torch.nn.functional as F

from fair_timing import CudaStream, FairState  # same folder
from torch_reference import time_baseline  # one timing routine for both baselines


def conv_case(case, dev, vllm):
    from vllm.model_executor.layers.mamba.ops.causal_conv1d import causal_conv1d_fn

    C, K = case["C"], case["K"]
    lengths = case["lengths"]
    init = case.get("initial_state") or [False] * len(lengths)
    N, T = len(lengths), sum(lengths)
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(T, C, generator=g).to(dev, torch.bfloat16)  # token-major, as gdnlab's x
    w = (torch.randn(C, K, generator=g) * 0.5).to(dev, torch.bfloat16)
    # vLLM's state pool is [slots, C, K-1] with the channel stride 1. Slot 0 is vLLM's null block
    # (NULL_BLOCK_ID = 0: a program whose sequence maps to it returns at once, as padding), so the
    # sequences take slots 1..N. Mapping sequence 0 to slot 0 made the kernel skip it: a single-sequence
    # case then timed an empty launch (docs/BENCHMARKS.md, "Method").
    state = torch.randn(N + 1, K - 1, C, generator=g).to(dev, torch.bfloat16).transpose(1, 2)
    state0 = state.clone()  # the initial states, for the check below (vLLM writes the final state in place)
    qsl = torch.tensor([0] + list(torch.tensor(lengths).cumsum(0).tolist()), dtype=torch.int32, device=dev)
    cache_indices = torch.arange(1, N + 1, dtype=torch.int32, device=dev)
    has_init = torch.tensor(init, dtype=torch.bool, device=dev)
    # Program list per BLOCK_M = 8 (vLLM builds it once per batch in its metadata).
    block_m = 8
    mlist, offsets = [], []
    for s, n in enumerate(lengths):
        chunks = -(-n // block_m)
        mlist += [s] * chunks
        offsets += list(range(chunks))
    batch_ptr = torch.tensor(mlist, dtype=torch.int32, device=dev)
    chunk_ptr = torch.tensor(offsets, dtype=torch.int32, device=dev)
    meta = types.SimpleNamespace(
        nums_dict={block_m: {"tot": len(mlist), "mlist": batch_ptr, "mlist_len": len(mlist), "offsetlist": chunk_ptr,
                             "batch_ptr": batch_ptr, "token_chunk_offset_ptr": chunk_ptr}},
        batch_ptr=batch_ptr, token_chunk_offset_ptr=chunk_ptr)
    xt = x.t()  # [C, T] view with channel stride 1: vLLM's channel-last layout

    def run():
        return causal_conv1d_fn(xt, w, None, state, qsl, cache_indices=cache_indices, has_initial_state=has_init,
                                activation="silu", metadata=meta)

    def check():
        # Every output against a float32 depthwise conv + SiLU of the same inputs, per sequence. vLLM is not
        # bit-exact (bf16-rounded products), so this is a tolerance check: it proves the kernel did the work.
        out = run().float()  # [C, T]
        worst, start = 0.0, 0
        wf = w.float().unsqueeze(1)  # [C, 1, K]
        for s, n in enumerate(lengths):
            hist = state0[s + 1].float() if init[s] else torch.zeros(C, K - 1, device=dev)
            ext = torch.cat([hist, xt[:, start:start + n].float()], dim=1).unsqueeze(0)  # [1, C, K-1+n]
            ref = F.silu(F.conv1d(ext, wf, groups=C)[0])  # [C, n]
            err = ((out[:, start:start + n] - ref).abs() - 0.02 * ref.abs()).max().item() if n else 0.0
            worst = max(worst, err)
            start += n
        return {"max_excess_err": worst, "tolerance": "0.05 + 0.02 |ref| (f32 reference)", "ok": worst <= 0.05}

    # Its own traffic: x read, out written, the final state written and the old state read where a sequence
    # has one, in vLLM's bf16 state (gdnlab counts its f32 state the same way: lib/ops/conv.ts convBytes).
    return run, 4 * T * C + (N + sum(1 for i in init if i)) * C * (K - 1) * 2, check


def postconv_case(case, dev, vllm):
    from vllm.third_party.flash_linear_attention.ops.fused_gdn_prefill_post_conv import fused_post_conv_prep

    T, Hk, Hv, Dk, Dv = case["T"], case["Hk"], case["Hv"], case["Dk"], case["Dv"]
    C = 2 * Hk * Dk + Hv * Dv
    g = torch.Generator(device="cpu").manual_seed(0)
    conv = torch.randn(T, C, generator=g).to(dev, torch.bfloat16)
    ab = torch.randn(T, 2 * Hv, generator=g).to(dev, torch.bfloat16)
    A_log = torch.randn(Hv, generator=g).to(dev, torch.float32)
    dt_bias = torch.randn(Hv, generator=g).to(dev, torch.float32)
    b, a = ab[:, :Hv], ab[:, Hv:]

    def run():
        return fused_post_conv_prep(conv, a, b, A_log, dt_bias, Hk, Dk, Dv)

    def check():
        # q, k (L2-normalised), v, g and beta against float32 formulas of the same inputs (tolerance: vLLM's
        # softplus is approximate and q/k are stored in bf16).
        got = [t.float().reshape(T, -1) for t in run()]
        q, k, v = torch.split(conv.float(), [Hk * Dk, Hk * Dk, Hv * Dv], dim=-1)
        norm = lambda t, d: (t.reshape(T, -1, d) * torch.rsqrt((t.reshape(T, -1, d) ** 2).sum(-1, keepdim=True) + 1e-6)).reshape(T, -1)
        want = [norm(q, Dk), norm(k, Dk), v, -A_log.exp() * F.softplus(a.float() + dt_bias), b.float().sigmoid()]
        names = ["q", "k", "v", "g", "beta"]
        if len(got) != len(want):
            return {"ok": False, "error": f"expected 5 outputs, got {len(got)}"}
        errs = {nm: ((x - y).abs() - 0.01 * y.abs()).max().item() for nm, x, y in zip(names, got, want)}
        return {"max_excess_err": errs, "tolerance": "0.01 + 0.01 |ref| (f32 reference)", "ok": all(e <= 0.01 for e in errs.values())}

    return run, T * (C * 2 + 2 * Hv * 2 + C * 2 + 2 * Hv * 4), check


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vllm-path", required=True, help="folder holding the vllm package made by bench/pack-vllm.sh")
    ap.add_argument("--launch-only", type=int, default=0, metavar="N",
                    help="check each case, then launch it N times untimed (for a profiler's kernel durations) instead of timing it")
    args = ap.parse_args()
    sys.path.insert(0, args.vllm_path)
    import triton

    cases = json.load(sys.stdin)
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    stream = CudaStream(torch, dev)
    state = FairState()
    try:
        wheel = open(f"{args.vllm_path}/VLLM_WHEEL").read().strip()
    except OSError:
        wheel = "unknown"
    print(json.dumps({"vllm": wheel, "torch": torch.__version__, "triton": triton.__version__, "device": props.name,
                      "method": "fair"}),
          flush=True)
    for case in cases:
        make = conv_case if case["op"] == "conv" else postconv_case
        run, bytes_moved, check = make(case, dev, None)
        # The outputs are checked before anything is timed: a harness that feeds the kernel wrong metadata
        # times work that is never done.
        try:
            checked = check()
        except Exception as e:  # a layout this harness does not know: reported, never silently passed
            checked = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        torch.cuda.synchronize()
        if args.launch_only:
            for _ in range(args.launch_only):
                stream.flush()  # the L2 state of a timed sample (a profiler that flushes itself makes this moot)
                run()
            torch.cuda.synchronize()
            print(json.dumps({"id": case["id"], "launches": args.launch_only, "check": checked}), flush=True)
            continue
        half = bytes_moved // 2
        src = torch.empty(half, dtype=torch.uint8, device=dev)
        dst = torch.empty_like(src)
        r = time_baseline(stream, state, run, case, copy=lambda: dst.copy_(src))
        r.update({"id": case["id"], "bytes": bytes_moved, "check": checked})
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
