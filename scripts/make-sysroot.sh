#!/usr/bin/env bash
# Makes the glibc 2.31 sysroot the Linux release binary is built against: Debian bullseye
# (glibc 2.31, the oldest glibc dlenv supports: Ubuntu 20.04 has 2.31, 22.04 2.35,
# RHEL/Rocky 8 2.28 is below it) bootstrapped with debootstrap into build/sysroot/bullseye.
#
#   scripts/make-sysroot.sh [DIR]     default DIR: build/sysroot/bullseye
#
# Cached: a finished sysroot has DIR/.dlenv-sysroot-ok and is left as it is. The packages
# debootstrap fetched are kept in ${DLENV_CACHE:-$HOME/.cache/dlenv}/bullseye-debs.tgz so a
# second sysroot (a fresh clone, CI) needs no download. The Debian mirror is the first one
# this machine's apt is configured with (DLENV_DEBIAN_MIRROR overrides it).
#
# Besides libc6 the sysroot holds libc6-dev and linux-libc-dev (headers, crt files, libc.so)
# for the build, and is a root a test can chroot into to run the binary on glibc 2.31.
# Absolute symlinks under lib/ and usr/lib/ are made relative, so the linker finds their
# targets inside the sysroot rather than on this machine (libc.so names /lib64/ld-linux...).
# Needs root (debootstrap).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build/sysroot/bullseye}"
stamp="$dir/.dlenv-sysroot-ok"
if [[ -f "$stamp" ]]; then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "make-sysroot: debootstrap needs root; run as root (or sudo $0)" >&2
  exit 1
fi
if ! command -v debootstrap >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

mirror="${DLENV_DEBIAN_MIRROR:-}"
if [[ -z "$mirror" ]]; then
  # The Debian archive apt uses: deb822 sources (URIs:) or one-line ones (deb [opts] URL
  # suite ...), preferring a debian.org host and never the security archive.
  mirror=$( { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}'
              grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
                sed -E 's/^deb +(\[[^]]*\] +)?//' | awk '{print $1}'; } |
            grep -v security | sort -u | awk '/debian\.org/ {print 0, $0; next} {print 1, $0}' |
            sort | head -n1 | cut -d' ' -f2 || true)
fi
if [[ -z "$mirror" ]]; then
  echo "make-sysroot: no Debian mirror found in /etc/apt; set DLENV_DEBIAN_MIRROR" >&2
  exit 1
fi

cache="${DLENV_CACHE:-${HOME:-/root}/.cache/dlenv}"
tarball="$cache/bullseye-debs.tgz"
mkdir -p "$cache"
include="libc6-dev,linux-libc-dev"
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
tmp="$dir.tmp"
rm -rf "$tmp"
if [[ ! -s "$tarball" ]]; then
  echo "make-sysroot: fetching Debian bullseye packages from $mirror" >&2
  # Bullseye's LTS ended in 2026: when the mirror no longer carries it, Debian's archive
  # of old releases does (DLENV_DEBIAN_ARCHIVE: its URL).
  if ! debootstrap --variant=minbase --include="$include" --arch=amd64 \
      --make-tarball="$tarball.part" bullseye "$tmp" "$mirror" >"$cache/debootstrap.log" 2>&1; then
    if [[ -z "${DLENV_DEBIAN_ARCHIVE:-}" ]]; then
      tail -n 20 "$cache/debootstrap.log" >&2
      echo "make-sysroot: $mirror has no bullseye; set DLENV_DEBIAN_ARCHIVE to Debian's archive of old releases" >&2
      exit 1
    fi
    mirror="$DLENV_DEBIAN_ARCHIVE"
    echo "make-sysroot: not on that mirror; trying $mirror" >&2
    rm -rf "$tmp"
    debootstrap --variant=minbase --include="$include" --arch=amd64 \
      --make-tarball="$tarball.part" bullseye "$tmp" "$mirror" >"$cache/debootstrap.log" 2>&1 || {
      tail -n 20 "$cache/debootstrap.log" >&2
      exit 1
    }
  fi
  mv "$tarball.part" "$tarball"
  rm -rf "$tmp"
fi
echo "make-sysroot: bootstrapping Debian bullseye (glibc 2.31) into $dir" >&2
debootstrap --variant=minbase --include="$include" --arch=amd64 \
  --unpack-tarball="$(realpath "$tarball")" bullseye "$tmp" "$mirror" >"$cache/debootstrap.log" 2>&1 || {
  tail -n 20 "$cache/debootstrap.log" >&2
  exit 1
}

# Absolute links (lib64/ld-linux-x86-64.so.2 -> /lib/x86_64-linux-gnu/ld-2.31.so, the
# libfoo.so -> /lib/... development links) made relative to where they stand. The list is
# made first (bullseye has lib -> usr/lib: the same link can be listed twice).
root="$(realpath "$tmp")"
mapfile -d '' links < <(find "$root/usr/lib" "$root/usr/lib64" "$root/lib" "$root/lib64" \
  -type l -lname '/*' -print0 2>/dev/null | sort -zu)
for link in "${links[@]}"; do
  target="$(readlink "$link")"
  [[ "$target" == /* ]] || continue
  ln -sfn "$(realpath -m -s --relative-to="$(dirname "$link")" "$root$target")" "$link"
done

shopt -s nullglob
libc=("$root"/usr/lib/x86_64-linux-gnu/libc-*.so)
glibc=""
if ((${#libc[@]} == 1)); then glibc="${libc[0]##*/libc-}"; glibc="${glibc%.so}"; fi
if [[ "$glibc" != "2.31" ]]; then
  echo "make-sysroot: expected glibc 2.31 in the sysroot, found '${glibc:-none}'" >&2
  exit 1
fi
echo "glibc $glibc (Debian bullseye) from $mirror" >"$tmp/.dlenv-sysroot-ok"
mv "$tmp" "$dir"
echo "make-sysroot: $dir ready (glibc $glibc)" >&2
