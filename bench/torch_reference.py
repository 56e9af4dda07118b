#!/usr/bin/env python3
"""PyTorch eager baselines for `gdnlab bench`, timed on the same GPU in the same run.

Reads a JSON list of cases on stdin and prints one JSON object per case on stdout:
  conv:      {"op": "conv", "C": 8192, "K": 4, "lengths": [...], "initial_state": [...]}
             depthwise F.conv1d (groups=C) + SiLU, bf16, batched over the whole varlen batch in ONE
             conv call: every sequence is preceded by its K-1 history rows (its initial state, or
             zeros), the rows are gathered into one token-major tensor with one index_select, one
             conv1d without padding runs over it, and the outputs of the real tokens are gathered
             back (index tensors built once, outside the timed region, as serving code builds its
             per-batch metadata). No Python loop over sequences.
  postconv:  {"op": "postconv", "T": 2048, "Hk": 16, "Hv": 32, "Dk": 128, "Dv": 128}
             split, reshape, l2norm in f32, gating (softplus, exp, sigmoid) in eager PyTorch.
Timing (bench/fair_timing.py): each sample is one call of the whole op between two CUDA events, the L2
flushed (twice its size overwritten) before it outside the events, and a GPU-side hold queued before the
start event so that the host has queued the whole call before the GPU reaches it: PyTorch's own host
time per call cannot enter the figure, as libgdn's timing keeps ours out (the fair method). The naive
figure (host synchronised after every sample, no hold) and a CUDA-graph replay of the call are reported
beside it. Timing stops after min_samples and min_time_s, or at max_time_s.
"""
import json
import sys

import torch
import torch.nn.functional as F

import fair_timing  # same folder
from fair_timing import CudaStream, FairState, graph_of


def conv_case(case, dev):
    C, K = case["C"], case["K"]
    lengths = case["lengths"]
    init = case.get("initial_state") or [False] * len(lengths)
    N, T = len(lengths), sum(lengths)
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(T, C, generator=g).to(dev, torch.bfloat16)
    w = (torch.randn(C, K, generator=g) * 0.5).to(dev, torch.bfloat16)
    state = torch.randn(N, C, K - 1, generator=g).to(dev, torch.bfloat16)
    weight = w.unsqueeze(1)  # [C, 1, K]
    # Rows of src = [x (T rows) | every sequence's K-1 history rows | one zero row].
    hist = state.transpose(1, 2).reshape(N * (K - 1), C)
    zero_row = T + N * (K - 1)
    gather, keep = [], []
    start = 0
    for s, n in enumerate(lengths):
        for j in range(K - 1):
            gather.append(T + s * (K - 1) + j if init[s] else zero_row)
        base = len(gather)
        gather.extend(range(start, start + n))
        # conv1d without padding: output i uses ext rows i .. i+K-1, so token t of this sequence is output
        # base + t - (K-1).
        keep.extend(range(base - (K - 1), base - (K - 1) + n))
        start += n
    gather_idx = torch.tensor(gather, dtype=torch.long, device=dev)
    keep_idx = torch.tensor(keep, dtype=torch.long, device=dev)
    zero = torch.zeros(1, C, dtype=torch.bfloat16, device=dev)

    def run():
        src = torch.cat([x, hist, zero])
        ext = src.index_select(0, gather_idx)                   # [T + N(K-1), C]
        y = F.conv1d(ext.t().unsqueeze(0), weight, groups=C)   # [1, C, T + N(K-1) - (K-1)]
        return F.silu(y.squeeze(0).index_select(1, keep_idx)).t()

    bytes_moved = 4 * T * C  # read x, write out (bf16); this formulation computes no final state, so none is counted
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


def time_baseline(stream, state, run, case, copy=None):
    """bench/fair_timing.py's time_baseline with this case's limits and torch's CUDA-graph capture."""
    limits = dict(min_samples=case.get("min_samples", 50), min_time_s=case.get("min_time_s", 0.3), max_time_s=case.get("max_time_s", 3.0))
    return fair_timing.time_baseline(stream, state, run, limits, copy=copy, capture=lambda fn: graph_of(torch, fn))


def main():
    cases = json.load(sys.stdin)
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    stream = CudaStream(torch, dev)
    state = FairState()
    print(json.dumps({"torch": torch.__version__, "cuda": torch.version.cuda, "device": props.name, "method": "fair"}), flush=True)
    for case in cases:
        make = conv_case if case["op"] == "conv" else postconv_case
        run, bytes_moved = make(case, dev)
        r = time_baseline(stream, state, run, case)
        r.update({"id": case["id"], "bytes": bytes_moved})
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
