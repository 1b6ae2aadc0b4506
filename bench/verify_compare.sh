#!/usr/bin/env bash
# One run on a GPU machine: `dlenv verify` and PyTorch doing the same work through
# the same CUDA libraries; prints both and the ratio per operation.
# Usage: bench/verify_compare.sh path/to/dlenv [--full] [python]
set -uo pipefail
DLENV="${1:?usage: bench/verify_compare.sh path/to/dlenv [--full] [python]}"
MODE="${2:---quick}"
PY="${3:-python3}"
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
"$DLENV" verify "$MODE" --json > "$tmp/dlenv.json"; echo "dlenv verify exit: $?"
# The text form costs a second run: only when asked (VERIFY_TEXT_TOO=1).
[[ -n "${VERIFY_TEXT_TOO:-}" ]] && "$DLENV" verify "$MODE" > "$tmp/dlenv.txt" 2>&1
"$PY" "$here/verify_vs_torch.py" $([[ "$MODE" == --full ]] && echo --full) > "$tmp/torch.json"
[[ -f "$tmp/dlenv.txt" ]] && cat "$tmp/dlenv.txt"
"$PY" - "$tmp/dlenv.json" "$tmp/torch.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1])); t = json.load(open(sys.argv[2]))
print(f"\nPyTorch {t['torch']} (CUDA {t['cuda']}, cuDNN {t['cudnn']}) on {t['gpu']}")
dev = d["devices"][0]
print(f"{'operation':32} {'dlenv':>12} {'torch':>12} {'ratio':>7}")
for g in dev["gemm"]:
    tg = next((x for x in t["gemm"] if x["dtype"] == g["dtype"]), None)
    if g.get("skipped") or g.get("error") or tg is None:
        print(f"GEMM {g['dtype']}: {g.get('skipped') or g.get('error') or 'no PyTorch number'}")
        continue
    print(f"GEMM {g['dtype']} {g['m']}^3{'':17} {g['tflops']:9.1f} TF {tg['tflops']:9.1f} TF {g['tflops']/tg['tflops']*100:6.1f}%")
for b in dev["bandwidth"]:
    tb = next(x for x in t["bandwidth"] if x["name"] == b["name"])
    print(f"{b['name']:32} {b['gbs']:8.1f} GB/s {tb['gbs']:7.1f} GB/s {b['gbs']/tb['gbs']*100:6.1f}%")
for n in dev.get("dnn", []):
    tn = next((x for x in t.get("dnn", []) if x["op"] == n["op"] and x["layout"] == n["layout"] and x["dtype"] == n["dtype"]), None)
    label = f"{n['op']} {n['layout']} {n['dtype']}".replace("  ", " ")
    if n.get("error"):
        print(f"{label:32} FAILED: {n['error']}")
        continue
    if tn is None:
        continue
    if n["gbs"] > 0:
        # Elementwise: cuDNN's backward reads y, dy and x where PyTorch's reads two of them,
        # so compare time (torch ms / dlenv ms), not GB/s.
        print(f"{label:32} {n['ms']:8.3f} ms   {tn['ms']:7.3f} ms   {tn['ms']/n['ms']*100:6.1f}% (time)")
    else:
        print(f"{label:32} {n['tflops']:9.1f} TF {tn['tflops']:9.1f} TF {n['tflops']/tn['tflops']*100:6.1f}%  ({n['algo']})")
PYEOF
cp "$tmp"/* "${OUT:-$tmp}/" 2>/dev/null || true
