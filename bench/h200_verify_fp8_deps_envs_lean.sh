#!/usr/bin/env bash
# h200_verify_fp8_deps_envs.sh cut to what a nearly spent device budget allows (~90 s):
# verify --full (fp8 and the NVML health line) with PyTorch's fp8 GEMM at the same size;
# deps on libtorch_cuda.so vs ldd and vs `dlenv which`; doctor with four environments.
# Usage: OUT=dir bench/h200_verify_fp8_deps_envs_lean.sh path/to/dlenv
set -uo pipefail
DLENV="${1:?usage: OUT=dir bench/h200_verify_fp8_deps_envs_lean.sh path/to/dlenv}"
OUT="${OUT:?set OUT}"
PY=/opt/torch/.venv/bin/python3
[[ -x "$PY" ]] || PY=python3
here="$(cd "$(dirname "$0")" && pwd)"
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
s=$(date +%s%N); "$DLENV" verify --full --json > "$OUT/verify-full.json" 2> "$OUT/verify-full.err"; echo "verify --full rc=$? wall_ms=$(ms $s)" > "$OUT/times.txt"
"$DLENV" verify --quick > "$OUT/verify-quick.txt" 2>&1; echo "verify --quick rc=$?" >> "$OUT/times.txt"
"$PY" - > "$OUT/torch-fp8.txt" 2>&1 <<'PY'
import torch
n, iters = 8192, 20
dev = "cuda"
a8 = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn)
b8 = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn).t()
one = torch.tensor(1.0, device=dev)
f = lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=False)
for _ in range(3): f()
torch.cuda.synchronize()
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
for rep in range(2):
    s.record()
    for _ in range(iters): f()
    e.record(); e.synchronize()
    ms = s.elapsed_time(e) / iters
    print(f"torch {torch.__version__} fp8 e4m3 -> bf16 {n}^3 (_scaled_mm, no fast accum): {ms:.3f} ms {2*n**3/(ms*1e-3)/1e12:.1f} TFLOP/s")
PY
site=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
lib="$site/torch/lib/libtorch_cuda.so"
{ echo "file: $lib"
  for i in 1 2 3; do
    s=$(date +%s%N); ldd "$lib" > "$OUT/ldd.txt" 2>&1; echo "ldd wall_ms=$(ms $s)"
    s=$(date +%s%N); "$DLENV" deps "$lib" --flat > "$OUT/deps-flat.txt" 2>&1; echo "dlenv deps --flat wall_ms=$(ms $s)"
  done; } > "$OUT/deps-vs-ldd-time.txt" 2>&1
"$DLENV" deps "$lib" --json > "$OUT/deps.json" 2>&1
"$DLENV" which --json -- "$PY" -c "import torch, torch.nn.functional as F; F.conv2d(torch.zeros(1,1,8,8,device='cuda'), torch.zeros(1,1,3,3,device='cuda')); torch.zeros(8,8,device='cuda') @ torch.zeros(8,8,device='cuda')" > "$OUT/which-torch.json" 2> "$OUT/which-torch.err"
"$PY" "$here/deps_vs_which.py" "$OUT/deps.json" "$OUT/which-torch.json" > "$OUT/deps-vs-which.txt" 2>&1
for v in a b c; do "$PY" -m venv --without-pip --system-site-packages "/tmp/dlenv-venv-$v" >/dev/null 2>&1; done
{ for i in 1 2 3; do
    s=$(date +%s%N)
    "$DLENV" doctor --json --python /tmp/dlenv-venv-a/bin/python --python /tmp/dlenv-venv-b/bin/python \
      --python /tmp/dlenv-venv-c/bin/python > "$OUT/doctor-4envs.json" 2>&1
    echo "doctor --json (4 environments) rc=$? wall_ms=$(ms $s)"
  done; } > "$OUT/doctor-4envs-time.txt"
"$DLENV" doctor --python /tmp/dlenv-venv-a/bin/python > "$OUT/doctor.txt" 2>&1; echo "exit $?" >> "$OUT/doctor.txt"
