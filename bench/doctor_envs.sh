#!/usr/bin/env bash
# Sets up four venvs in /tmp (one with a torch 2.5.1+cu124 dist-info) and times
# `dlenv doctor --json` with them given by --python, plus whatever PATH and pyenv hold.
# Usage: bench/doctor_envs.sh path/to/dlenv [runs]
set -uo pipefail
for v in a b c d; do [[ -x /tmp/dlenv-venv-$v/bin/python ]] || python3 -m venv --without-pip /tmp/dlenv-venv-$v; done
sp=$(echo /tmp/dlenv-venv-a/lib/python3*/site-packages)
mkdir -p "$sp/torch-2.5.1+cu124.dist-info" "$sp/torch"
printf 'Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1+cu124\nRequires-Dist: nvidia-cudnn-cu12 (==9.1.0.70)\n' > "$sp/torch-2.5.1+cu124.dist-info/METADATA"
echo pip > "$sp/torch-2.5.1+cu124.dist-info/INSTALLER"
printf "__version__ = '2.5.1+cu124'\ncuda = '12.4'\n" > "$sp/torch/version.py"
D="$1"; N="${2:-21}"
args=(--python /tmp/dlenv-venv-a/bin/python --python /tmp/dlenv-venv-b/bin/python --python /tmp/dlenv-venv-c/bin/python --python /tmp/dlenv-venv-d/bin/python)
"$D" doctor --json "${args[@]}" > /tmp/doctor-envs.json
python3 - <<'PY'
import json; j=json.load(open('/tmp/doctor-envs.json'))
envs=j.get('python',{}).get('interpreters') or j.get('python',{}).get('environments') or []
print('environments in the report:', len(envs)); print('timing_ms:', j.get('timing_ms'))
PY
for i in $(seq "$N"); do s=$(date +%s%N); "$D" doctor --json "${args[@]}" > /dev/null; echo $(( ($(date +%s%N)-s)/1000 )); done | sort -n | awk '{a[NR]=$1} END {printf "runs %d  min %.1f ms  median %.1f ms  max %.1f ms\n", NR, a[1]/1000, a[int((NR+1)/2)]/1000, a[NR]/1000}'
