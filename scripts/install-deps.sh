#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages dlenv needs to build and test -- only the
# ones that are missing. Usage: scripts/install-deps.sh [--windows] [--package] [--fuzz] [--fleet]
#   --windows  the mingw-w64 cross compilers and Wine (./build.sh windows)
#   --package  debootstrap (the glibc 2.31 sysroot), Python's venv (the wheel and its test),
#              unzip (./build.sh package and its tests)
#   --fuzz     clang 16 and its libFuzzer runtime (scripts/fuzz.sh; ~45 MB to download)
#   --fleet    the cluster tests: promtool (prometheus), a Slurm cluster on loopback
#              (slurmctld, slurmd, slurm-client, munge), Node.js and the Kubernetes
#              manifest validator's npm packages (tests/kubernetes/, npm ci from its lock)
set -euo pipefail
pkgs=(g++ cmake make libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev
      libarchive-dev libarchive-tools pkg-config file
      # the tests written in Python: the hostile-system suite, fleet drift table, deep probe
      python3
      # the completion and man page tests: zsh -n, fish --no-execute, groff -ww
      zsh fish groff-base)
fleet=0
for arg in "$@"; do
  case "$arg" in
    --windows) pkgs+=(g++-mingw-w64-x86-64-posix g++-mingw-w64-i686-posix wine wine64 libz-mingw-w64-dev) ;;
    --package) pkgs+=(debootstrap python3 python3-venv unzip binutils) ;;
    --fuzz) pkgs+=(clang-16 libclang-rt-16-dev) ;;
    --fleet)
      fleet=1
      pkgs+=(prometheus slurmctld slurmd slurm-client munge)
      # Node.js from Debian unless a node (with its npm) is already there.
      command -v node >/dev/null && command -v npm >/dev/null || pkgs+=(nodejs npm)
      ;;
    *) echo "usage: scripts/install-deps.sh [--windows] [--package] [--fuzz] [--fleet]" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The Kubernetes manifest validator (tests/kubernetes/package-lock.json), once.
npm_packages() {
  local dir
  dir="$(cd "$(dirname "$0")/../tests/kubernetes" && pwd)"
  if ((fleet)) && [[ ! -f "$dir/node_modules/.package-lock.json" ||
    "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]]; then
    echo "dlenv: installing the Kubernetes manifest validator (npm ci in $dir)" >&2
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}
if ((${#missing[@]} == 0)); then
  npm_packages
  exit 0
fi
echo "dlenv: installing missing build packages: ${missing[*]}" >&2
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "dlenv: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
npm_packages
