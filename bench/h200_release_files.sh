#!/usr/bin/env bash
# The release files of ./build.sh package, run on the GPU machine (Ubuntu 24.04, driver 580):
# the tarball's binary (built for glibc 2.31) and the wheel installed into a fresh venv with
# no index. Writes what each printed to $OUT.
#   OUT=dir bench/h200_release_files.sh [DIST]
set -uo pipefail
dist="${1:-dist}"
out="${OUT:?set OUT}"
source "$(dirname "$0")/h200_common.sh"
ver=$(sed -n 's/.*dlenv-\(.*\)-linux-x86_64.tar.gz$/\1/p' <(ls "$dist"))
work=$(mktemp -d)
(cd "$dist" && sha256sum -c SHA256SUMS) >"$out/sha256sums.txt" 2>&1
tar -xzf "$dist/dlenv-$ver-linux-x86_64.tar.gz" -C "$work"
bin="$work/dlenv-$ver-linux-x86_64/bin/dlenv"
{ ldd --version | head -n1; uname -r; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$out/machine.txt" 2>&1
"$bin" --version >"$out/version.txt" 2>&1
"$bin" doctor --python "$PY" >"$out/doctor.txt" 2>&1; echo "exit $?" >>"$out/doctor.txt"
"$bin" doctor --json --python "$PY" >"$out/doctor.json" 2>"$out/doctor.err"; echo "exit $?" >>"$out/doctor.err"
"$bin" verify --quick >"$out/verify.txt" 2>&1; echo "exit $?" >>"$out/verify.txt"
"$PY" -m venv "$work/venv" >"$out/wheel.txt" 2>&1
"$work/venv/bin/python" -m pip install --no-index -q "$dist/dlenv-$ver-py3-none-manylinux_2_31_x86_64.whl" >>"$out/wheel.txt" 2>&1
echo "exit $?" >>"$out/wheel.txt"
{ ls -l "$work/venv/bin/dlenv"; "$work/venv/bin/dlenv" --version; "$work/venv/bin/dlenv" doctor | tail -n 3; } >>"$out/wheel.txt" 2>&1
rm -rf "$work"
