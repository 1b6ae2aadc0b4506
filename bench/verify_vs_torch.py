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
# fp8 (E4M3 inputs, bf16 output, no fast accumulation), as dlenv's cuBLASLt call: "TN".
if torch.cuda.get_device_capability(0) >= (8, 9) and hasattr(torch, "_scaled_mm"):
    a8 = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn)
    b8 = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn).t()  # column-major
    one = torch.tensor(1.0, device=dev)
    ms = timed(lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                        use_fast_accum=False), 3, iters)
    out["gemm"].append({"dtype": "fp8", "n": n, "ms": ms, "tflops": 2 * n ** 3 / (ms * 1e-3) / 1e12})

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

# cuDNN: the same convolutions, activations and RNNs `dlenv verify` runs, with
# torch.backends.cudnn.benchmark on in --full (dlenv measures algorithms there too).
torch.backends.cudnn.benchmark = full
torch.backends.cudnn.allow_tf32 = True  # PyTorch's default for cuDNN convolutions
out["dnn"] = []
N = 64 if full else 16
C, H, W, K = 256, 56, 56, 256
flops = 2.0 * N * K * H * W * C * 9
conv_cases = [(t, l) for t in ("fp16", "fp32") for l in ("NHWC", "NCHW")] if full else [("fp16", "NHWC")]
for tname, layout in conv_cases:
    dtype = torch.float16 if tname == "fp16" else torch.float32
    fmt = torch.channels_last if layout == "NHWC" else torch.contiguous_format
    x = torch.randn(N, C, H, W, device=dev, dtype=dtype).to(memory_format=fmt)
    w = torch.randn(K, C, 3, 3, device=dev, dtype=dtype).to(memory_format=fmt)
    dy = torch.randn(N, K, H, W, device=dev, dtype=dtype).to(memory_format=fmt)
    f = lambda: torch.nn.functional.conv2d(x, w, padding=1)
    bd = lambda: torch.ops.aten.convolution_backward(dy, x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, False, False])
    bf = lambda: torch.ops.aten.convolution_backward(dy, x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [False, True, False])
    for op, fn in [("conv forward", f), ("conv backward-data", bd), ("conv backward-filter", bf)]:
        ms = timed(fn, 3 if full else 1, iters)
        out["dnn"].append({"op": op, "layout": layout, "dtype": tname, "ms": ms, "tflops": flops / (ms * 1e-3) / 1e12})
count = (64 << 20) if full else (16 << 20)
for tname in (("fp16", "fp32") if full else ("fp16",)):
    dtype = torch.float16 if tname == "fp16" else torch.float32
    x = torch.randn(count, device=dev, dtype=dtype)
    g = torch.randn(count, device=dev, dtype=dtype)
    es = x.element_size()
    for name, fwd, bwd in [
        ("relu", lambda: torch.relu(x), lambda y: torch.ops.aten.threshold_backward(g, x, 0)),
        ("sigmoid", lambda: torch.sigmoid(x), lambda y: torch.ops.aten.sigmoid_backward(g, y)),
        ("tanh", lambda: torch.tanh(x), lambda y: torch.ops.aten.tanh_backward(g, y)),
    ]:
        ms = timed(fwd, 1, iters)
        out["dnn"].append({"op": name + " forward", "layout": "", "dtype": tname, "ms": ms, "gbs": 2 * count * es / (ms * 1e-3) / 1e9})
        y = fwd()
        ms = timed(lambda: bwd(y), 1, iters)
        # threshold_backward reads dy and x (2 reads + 1 write); dlenv's cuDNN call reads y, dy, x.
        nbytes = (3 if name == "relu" else 3) * count * es
        out["dnn"].append({"op": name + " backward", "layout": "", "dtype": tname, "ms": ms, "gbs": nbytes / (ms * 1e-3) / 1e9})
T = 128 if full else 32
B, I, Hd, L = 64, 1024, 1024, 2
for cell, gates in (("LSTM", 4), ("GRU", 3)):
    for tname in (("fp16", "fp32") if full else ("fp16",)):
        dtype = torch.float16 if tname == "fp16" else torch.float32
        mod = (torch.nn.LSTM if cell == "LSTM" else torch.nn.GRU)(I, Hd, num_layers=L).to(dev, dtype).eval()
        xs = torch.randn(T, B, I, device=dev, dtype=dtype)
        with torch.no_grad():
            ms = timed(lambda: mod(xs), 3 if full else 1, iters)
        fl = sum(2.0 * gates * Hd * ((I if l == 0 else Hd) + Hd) * B for l in range(L)) * T
        out["dnn"].append({"op": cell + " forward", "layout": "", "dtype": tname, "ms": ms, "tflops": fl / (ms * 1e-3) / 1e12})
print(json.dumps(out, indent=2))
