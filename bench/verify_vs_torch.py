#!/usr/bin/env python3
"""PyTorch doing what `dlenv verify` does, through the same CUDA libraries, timed the
same way (CUDA events around N back-to-back ops after warm-up). Prints JSON.
Usage: python3 bench/verify_vs_torch.py [--full]"""
import json
import sys

import torch

full = "--full" in sys.argv
n = 8192 if full else 4096
iters = 20 if full else 5
copy_bytes = (1 << 30) if full else (256 << 20)
dev = torch.device("cuda")


def timed(fn, warmup, iterations):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iterations):
        fn()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / iterations


out = {"torch": torch.__version__, "cuda": torch.version.cuda,
       "cudnn": torch.backends.cudnn.version(), "gpu": torch.cuda.get_device_name(0),
       "gemm": [], "bandwidth": []}
for name, dtype, tf32 in [("fp32", torch.float32, False), ("tf32", torch.float32, True),
                          ("fp16", torch.float16, False), ("bf16", torch.bfloat16, False)]:
    torch.backends.cuda.matmul.allow_tf32 = tf32
    a = torch.randn(n, n, device=dev, dtype=dtype)
    b = torch.randn(n, n, device=dev, dtype=dtype)
    c = torch.empty(n, n, device=dev, dtype=dtype)
    ms = timed(lambda: torch.matmul(a, b, out=c), 3, iters)
    out["gemm"].append({"dtype": name, "n": n, "ms": ms, "tflops": 2 * n ** 3 / (ms * 1e-3) / 1e12})
torch.backends.cuda.matmul.allow_tf32 = False

elems = copy_bytes // 4
d1 = torch.empty(elems, device=dev, dtype=torch.float32)
d2 = torch.empty(elems, device=dev, dtype=torch.float32)
pinned = torch.empty(elems, dtype=torch.float32).pin_memory()
pageable = torch.empty(elems, dtype=torch.float32)
for name, fn, warm in [
    ("device-to-device", lambda: d2.copy_(d1), 2),
    ("host-to-device pinned", lambda: d1.copy_(pinned, non_blocking=True), 1),
    ("device-to-host pinned", lambda: pinned.copy_(d1, non_blocking=True), 1),
    ("host-to-device pageable", lambda: d1.copy_(pageable), 1),
    ("device-to-host pageable", lambda: pageable.copy_(d1), 1),
]:
    ms = timed(fn, warm, iters)
    out["bandwidth"].append({"name": name, "bytes": copy_bytes, "ms": ms, "gbs": copy_bytes / (ms * 1e-3) / 1e9})
print(json.dumps(out, indent=2))
