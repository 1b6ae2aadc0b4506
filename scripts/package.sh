#!/usr/bin/env bash
# Writes the release files to dist/ from two finished builds (./build.sh package makes both):
#   build/dist   the Linux binary against the glibc 2.31 sysroot (cmake --preset dist)
#   build/mingw  dlenv.exe and its zip (cmake --preset mingw)
#
#   dlenv-<ver>-linux-x86_64.tar.gz            bin/dlenv, man page, completions, LICENSE, README.md
#   dlenv_<ver>_amd64.deb                      CPack: /usr/bin/dlenv, man page, completions
#   dlenv-<ver>-windows-x86_64.zip             dlenv.exe, LICENSE, README.md, dlenv.ps1
#   dlenv-<ver>-py3-none-manylinux_2_31_x86_64.whl, dlenv-<ver>-py3-none-win_amd64.whl
#   SHA256SUMS                                 over all of them
#
# The version is CMake's project() version (CMAKE_PROJECT_VERSION in the build's cache).
# The tarball and the wheels are reproducible: owner root, entries sorted, mtimes
# SOURCE_DATE_EPOCH (default: the last commit's time); the zip's mtimes are fixed
# (1980-01-02, CMakeLists.txt); the .deb carries CPack's build-time mtimes.
set -euo pipefail
cd "$(dirname "$0")/.."
linux_build="${1:-build/dist}"
win_build="${2:-build/mingw}"
out="${3:-dist}"

die() { echo "package: $*" >&2; exit 1; }
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$linux_build/CMakeCache.txt" 2>/dev/null || true)
[[ -n "$version" ]] || die "$linux_build is not a configured build (cmake --preset dist)"
[[ -x "$linux_build/dlenv" ]] || die "$linux_build/dlenv is missing (cmake --build --preset dist)"
win_zip="$win_build/dlenv-$version-windows-x86_64.zip"
[[ -f "$win_build/dlenv.exe" && -f "$win_zip" ]] ||
  die "$win_build has no dlenv.exe and $(basename "$win_zip") (cmake --build --preset mingw)"
if [[ -z "${SOURCE_DATE_EPOCH:-}" ]]; then
  SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 315532800)
fi
export SOURCE_DATE_EPOCH

rm -rf "$out"
mkdir -p "$out"
stage="$linux_build/package-stage"
rm -rf "$stage"

# The tarball: the install tree (the same files `cmake --install` puts under a prefix)
# with LICENSE and README.md also at its top.
top="dlenv-$version-linux-x86_64"
cmake --install "$linux_build" --prefix "$stage/$top" >/dev/null
cp LICENSE README.md "$stage/$top/"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
  -C "$stage" -cf - "$top" | gzip -9n >"$out/$top.tar.gz"

# The .deb (CPack's DEB generator: Depends libc6 (>= 2.31), Suggests libarchive13).
(cd "$linux_build" && cpack -G DEB -B "$PWD/cpack" >/dev/null) || die "cpack -G DEB failed"
cp "$linux_build/cpack/dlenv_${version}_amd64.deb" "$out/"

# The Windows zip, built with dlenv.exe (CMakeLists.txt, target dlenv_zip).
cp "$win_zip" "$out/"

# The wheels: the native binary as the `dlenv` command.
python3 scripts/make-wheel.py --binary "$linux_build/dlenv" --version "$version" \
  --platform manylinux_2_31_x86_64 --license LICENSE --readme README.md --out "$out" >/dev/null
python3 scripts/make-wheel.py --binary "$win_build/dlenv.exe" --version "$version" \
  --platform win_amd64 --license LICENSE --readme README.md --out "$out" >/dev/null

(cd "$out" && sha256sum -- *.tar.gz *.deb *.zip *.whl >SHA256SUMS)
rm -rf "$stage"
echo "package: $out/"
(cd "$out" && ls -l --time-style=+ | sed 1d | awk '{printf "  %10d  %s\n", $5, $NF}')
