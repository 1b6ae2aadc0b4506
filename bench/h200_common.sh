# Sourced by the bench/h200_*.sh scripts: the GPU machine's Python (PyTorch's
# venv when present) and its site-packages, and a millisecond clock.
# `ms START_NS` prints the milliseconds since START_NS (from `date +%s%N`), 0.1 ms resolution.
PY=/opt/torch/.venv/bin/python3
[[ -x "$PY" ]] || PY=python3
site=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
ms() { local us=$(( ($(date +%s%N) - $1) / 1000 )); printf '%d.%d' $((us / 1000)) $(((us % 1000) / 100)); }
