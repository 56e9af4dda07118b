#!/usr/bin/env python3
"""PyTorch eager baselines for `gdnlab bench`, timed on the same GPU in the same run.

Reads a JSON list of cases on stdin and prints one JSON object per case on stdout:
  conv:      {"op": "conv", "C": 8192, "K": 4, "lengths": [...], "initial_state": [...]}
             depthwise F.conv1d (groups=C, padding=K-1) + SiLU per sequence, bf16, as an eager
             reference implementation runs it (one call per sequence of the varlen batch; the
             initial state is concatenated in front of a sequence that has one).
  postconv:  {"op": "postconv", "T": 2048, "Hk": 16, "Hv": 32, "Dk": 128, "Dv": 128}
             split, reshape, l2norm in f32, gating (softplus, exp, sigmoid) in eager PyTorch.
Each sample is one call of the whole op between two CUDA events, with the L2 flushed (a buffer of
twice the L2 size overwritten) before it, outside the events. Timing stops after min_samples and
min_time_s, or at max_time_s.
"""
import json
import sys
import time

import torch
import torch.nn.functional as F


def conv_case(case, dev):
    C, K = case["C"], case["K"]
    lengths = case["lengths"]
    init = case.get("initial_state") or [False] * len(lengths)
    T = sum(lengths)
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(T, C, generator=g).to(dev, torch.bfloat16)
    w = (torch.randn(C, K, generator=g) * 0.5).to(dev, torch.bfloat16)
    state = torch.randn(len(lengths), C, K - 1, generator=g).to(dev, torch.bfloat16)
    starts = [0]
    for n in lengths:
        starts.append(starts[-1] + n)
    weight = w.unsqueeze(1)  # [C, 1, K]

    def run():
        outs = []
        for s, n in enumerate(lengths):
            if n == 0:
                continue
            seq = x[starts[s]:starts[s + 1]].t().unsqueeze(0)  # [1, C, n] (a view, as eager code has it)
            if init[s]:
                seq = torch.cat([state[s:s + 1], seq], dim=-1)
                y = F.conv1d(seq, weight, groups=C)[..., :n]
            else:
                y = F.conv1d(seq, weight, padding=K - 1, groups=C)[..., :n]
            outs.append(F.silu(y).squeeze(0).t())
        return outs

    bytes_moved = 4 * T * C  # read x, write out (bf16)
    return run, bytes_moved


def postconv_case(case, dev):
    T, Hk, Hv, Dk, Dv = case["T"], case["Hk"], case["Hv"], case["Dk"], case["Dv"]
    C = 2 * Hk * Dk + Hv * Dv
    g = torch.Generator(device="cpu").manual_seed(0)
    conv = torch.randn(T, C, generator=g).to(dev, torch.bfloat16)
    ab = torch.randn(T, 2 * Hv, generator=g).to(dev, torch.bfloat16)
    A_log = torch.randn(Hv, generator=g).to(dev, torch.float32)
    dt_bias = torch.randn(Hv, generator=g).to(dev, torch.float32)

    def run():
        q, k, v = torch.split(conv, [Hk * Dk, Hk * Dk, Hv * Dv], dim=-1)
        q = q.reshape(T, Hk, Dk).float()
        k = k.reshape(T, Hk, Dk).float()
        v = v.reshape(T, Hv, Dv)
        q = q * torch.rsqrt((q * q).sum(-1, keepdim=True) + 1e-6)
        k = k * torch.rsqrt((k * k).sum(-1, keepdim=True) + 1e-6)
        b, a = ab[:, :Hv], ab[:, Hv:]
        gate = -A_log.exp() * F.softplus(a.float() + dt_bias)
        beta = b.float().sigmoid()
        return q.to(torch.bfloat16), k.to(torch.bfloat16), v.contiguous(), gate, beta

    bytes_moved = T * (C * 2 + 2 * Hv * 2 + C * 2 + 2 * Hv * 4)
    return run, bytes_moved


def measure(run, flush, min_samples, min_time_s, max_time_s):
    for _ in range(3):
        run()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    t0 = time.monotonic()
    while True:
        flush.zero_()
        start.record()
        run()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1000.0)
        elapsed = time.monotonic() - t0
        if (len(samples) >= min_samples and elapsed >= min_time_s) or elapsed >= max_time_s:
            break
    samples.sort()
    q = lambda p: samples[min(len(samples) - 1, int(p * (len(samples) - 1) + 0.5))]
    return {"n": len(samples), "median_us": q(0.5), "p10_us": q(0.1), "p90_us": q(0.9), "min_us": samples[0]}


def main():
    cases = json.load(sys.stdin)
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    flush = torch.empty(2 * max(props.L2_cache_size, 1 << 20), dtype=torch.uint8, device=dev)
    print(json.dumps({"torch": torch.__version__, "cuda": torch.version.cuda, "device": props.name}), flush=True)
    for case in cases:
        make = conv_case if case["op"] == "conv" else postconv_case
        run, bytes_moved = make(case, dev)
        r = measure(run, flush, case.get("min_samples", 50), case.get("min_time_s", 0.3), case.get("max_time_s", 3.0))
        r.update({"id": case["id"], "bytes": bytes_moved})
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
