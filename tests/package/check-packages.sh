#!/usr/bin/env bash
# One check of the release files in $DIST (scripts/package.sh), named by $1; run by ctest
# (tests/package/CMakeLists.txt) with DIST, VERSION, SYSROOT, BUILD, SOURCE and WORK set.
# Exit 0 passed, 1 failed (the reason on stderr), 77 skipped (the reason on stdout).
set -euo pipefail
check="$1"
: "${DIST:?}" "${VERSION:?}" "${BUILD:?}" "${SOURCE:?}" "${WORK:?}"
work="$WORK/$check"
rm -rf "$work"
mkdir -p "$work"

fail() { echo "FAIL $check: $*" >&2; exit 1; }
need_file() { [[ -f "$1" ]] || fail "$1 is missing (./build.sh package writes it)"; }

tarball="$DIST/dlenv-$VERSION-linux-x86_64.tar.gz"
deb="$DIST/dlenv_${VERSION}_amd64.deb"
zip="$DIST/dlenv-$VERSION-windows-x86_64.zip"
wheel_linux="$DIST/dlenv-$VERSION-py3-none-manylinux_2_31_x86_64.whl"
wheel_windows="$DIST/dlenv-$VERSION-py3-none-win_amd64.whl"

# The files every Linux package carries, relative to its prefix.
linux_files=(
  bin/dlenv
  share/man/man1/dlenv.1
  share/bash-completion/completions/dlenv
  share/zsh/vendor-completions/_dlenv
  share/fish/vendor_completions.d/dlenv.fish
  share/doc/dlenv/LICENSE
  share/doc/dlenv/README.md
)

# A doctor report as JSON: exit 0 or 1 (findings), schema dlenv.report/1, the version.
check_report() {  # FILE RC WHERE
  local file="$1" rc="$2" where="$3"
  [[ "$rc" == 0 || "$rc" == 1 ]] || fail "$where: dlenv doctor --json exited $rc"
  python3 - "$file" "$VERSION" "$where" <<'EOF' || exit 1
import json, sys
path, version, where = sys.argv[1:]
try:
    r = json.load(open(path, encoding="utf-8"))
except ValueError as e:
    sys.exit(f"FAIL: {where}: the report is not JSON: {e}")
if r.get("schema") != "dlenv.report/1":
    sys.exit(f"FAIL: {where}: schema is {r.get('schema')!r}")
if r.get("tool", {}).get("version") != version:
    sys.exit(f"FAIL: {where}: tool.version is {r.get('tool', {}).get('version')!r}, not {version}")
print(f"{where}: valid dlenv.report/1, {len(r.get('findings', []))} finding(s)")
EOF
}

# A wheel: the binary at dlenv-VER.data/scripts/EXE (its first bytes MAGIC, executable),
# the tag, and every RECORD hash and size right.
check_wheel() {  # WHEEL EXE TAG MAGIC
  python3 - "$1" "$VERSION" "$2" "$3" "$4" <<'EOF' || exit 1
import base64, hashlib, sys, zipfile
path, version, exe, tag, magic = sys.argv[1:]
z = zipfile.ZipFile(path)
names = z.namelist()
want = f"dlenv-{version}.data/scripts/{exe}"
if want not in names:
    sys.exit(f"FAIL: {path} lacks {want}")
if not z.read(want).startswith(magic.encode("latin-1")):
    sys.exit(f"FAIL: {want} does not start with {magic!r}")
if (z.getinfo(want).external_attr >> 16) & 0o111 == 0:
    sys.exit(f"FAIL: {want} is not executable in the zip")
info = f"dlenv-{version}.dist-info"
if f"Tag: py3-none-{tag}" not in z.read(f"{info}/WHEEL").decode():
    sys.exit(f"FAIL: WHEEL has no py3-none-{tag} tag")
for line in z.read(f"{info}/RECORD").decode().splitlines():
    name, digest, size = line.rsplit(",", 2)
    if not digest:
        continue
    data = z.read(name)
    got = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    if got != digest or int(size) != len(data):
        sys.exit(f"FAIL: RECORD does not match {name}")
print(f"{tag} wheel: {len(names)} entries, RECORD verified")
EOF
}

case "$check" in
  tarball_in_bullseye_root)
    need_file "$tarball"
    : "${SYSROOT:?}"
    [[ -f "$SYSROOT/.dlenv-sysroot-ok" ]] || fail "no sysroot at $SYSROOT (scripts/make-sysroot.sh)"
    top="dlenv-$VERSION-linux-x86_64"
    listing=$(tar -tzf "$tarball")
    for f in "${linux_files[@]}" LICENSE README.md; do
      grep -qx "$top/$f" <<<"$listing" || fail "$(basename "$tarball") lacks $top/$f"
    done
    owners=$(tar -tvzf "$tarball" | awk '{print $2}' | sort -u)
    [[ "$owners" == "0/0" ]] || fail "tarball entries owned by $owners (want 0/0)"
    tar -xzf "$tarball" -C "$work"
    bin="$work/$top/bin/dlenv"
    glibc_so="$SYSROOT/lib/x86_64-linux-gnu/libc.so.6"
    # The version string inside libc.so.6 (running it would use this machine's loader).
    glibc_seen=$(grep -a -o -m1 'release version 2\.[0-9]*' "$glibc_so" | head -n1 || true)
    [[ "$glibc_seen" == "release version 2.31" ]] || fail "the sysroot's glibc is '$glibc_seen', not 2.31"

    # 1. The bullseye root's own loader and libraries, this machine's /proc and /sys.
    ld="$SYSROOT/lib64/ld-linux-x86-64.so.2"
    lp="$SYSROOT/lib/x86_64-linux-gnu"
    "$ld" --library-path "$lp" "$bin" --version >"$work/version.txt"
    grep -q "glibc >= 2.31" "$work/version.txt" || fail "--version: $(cat "$work/version.txt")"
    rc=0
    "$ld" --library-path "$lp" "$bin" doctor --json >"$work/ldso.json" 2>"$work/ldso.err" || rc=$?
    check_report "$work/ldso.json" "$rc" "glibc 2.31 ld.so"
    # A usage error is a C++ exception: unwinding must work without glibc's _dl_find_object.
    rc=0
    "$ld" --library-path "$lp" "$bin" doctor --no-such-flag >/dev/null 2>"$work/usage.err" || rc=$?
    [[ "$rc" == 2 ]] || fail "usage error exited $rc under glibc 2.31: $(cat "$work/usage.err")"

    # 2. Inside the bullseye root (chroot: needs root).
    if [[ $(id -u) -ne 0 ]] || ! command -v chroot >/dev/null; then
      echo "chroot skipped: not root (the glibc 2.31 loader run above passed)"
      exit 77
    fi
    inside="/opt/dlenv-package-check"
    rm -rf "$SYSROOT$inside"
    mkdir -p "$SYSROOT$inside"
    trap 'rm -rf "$SYSROOT$inside"' EXIT
    cp -a "$work/$top" "$SYSROOT$inside/"
    rc=0
    chroot "$SYSROOT" "$inside/$top/bin/dlenv" doctor --json >"$work/chroot.json" \
      2>"$work/chroot.err" || rc=$?
    check_report "$work/chroot.json" "$rc" "chroot into the bullseye root"
    chroot "$SYSROOT" "$inside/$top/bin/dlenv" --version | head -n1

    # 3. A cuDNN whose cudnnGetVersion dlopens a sub-library that is not there, as cuDNN 9
    #    does: on glibc < 2.34 such a failed dlopen inside a dlmopen namespace ended the
    #    process (exit 127) instead of failing the call. Built against the sysroot's glibc.
    mkdir -p "$SYSROOT$inside/cudnn/lib64"
    cat >"$work/fake_cudnn.c" <<'EOF'
#include <dlfcn.h>
#include <stddef.h>
size_t cudnnGetVersion(void) {
  void* sub = dlopen("libcudnn_graph.so.9.99.0", RTLD_NOW);
  if (sub) dlclose(sub);
  return 90900;
}
EOF
    multiarch="$SYSROOT/usr/lib/x86_64-linux-gnu"
    ${CC:-gcc} --sysroot="$SYSROOT" -B"$multiarch" -L"$multiarch" -shared -fPIC \
      -o "$SYSROOT$inside/cudnn/lib64/libcudnn.so.9" "$work/fake_cudnn.c" -ldl ||
      fail "cannot build the fake cuDNN against the sysroot"
    rc=0
    chroot "$SYSROOT" /usr/bin/env CUDNN_HOME="$inside/cudnn" "$inside/$top/bin/dlenv" doctor \
      --json >"$work/cudnn.json" 2>"$work/cudnn.err" || rc=$?
    check_report "$work/cudnn.json" "$rc" "bullseye root with a cuDNN that dlopens a missing sub-library"
    python3 - "$work/cudnn.json" <<'EOF' || exit 1
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
live = [c.get("live_version", {}) for c in r.get("cudnn", [])]
if not any(v.get("value") == "9.9.0" for v in live):
    sys.exit(f"FAIL: the fake cuDNN's cudnnGetVersion (9.9.0) was not read: {live}")
print("cuDNN loaded live on glibc 2.31: 9.9.0")
EOF
    ;;

  wheel_in_fresh_venv)
    need_file "$wheel_linux"
    check_wheel "$wheel_linux" dlenv manylinux_2_31_x86_64 $'\x7fELF'
    python3 -m venv "$work/venv" || fail "python3 -m venv failed (Debian: python3-venv)"
    "$work/venv/bin/python" -m pip install --no-index --disable-pip-version-check -q \
      "$wheel_linux" || fail "pip install --no-index of $(basename "$wheel_linux") failed"
    [[ -x "$work/venv/bin/dlenv" ]] || fail "the venv has no bin/dlenv after the install"
    "$work/venv/bin/dlenv" --version | head -n1 | grep -qx "dlenv $VERSION" ||
      fail "venv dlenv --version: $("$work/venv/bin/dlenv" --version | head -n1)"
    rc=0
    "$work/venv/bin/dlenv" doctor --json >"$work/venv.json" 2>/dev/null || rc=$?
    check_report "$work/venv.json" "$rc" "pip-installed wheel"
    "$work/venv/bin/python" -m pip uninstall -y -q dlenv || fail "pip uninstall failed"
    [[ ! -e "$work/venv/bin/dlenv" ]] || fail "pip uninstall left bin/dlenv"
    if command -v uv >/dev/null; then
      uv venv -q "$work/uv-venv"
      VIRTUAL_ENV="$work/uv-venv" uv pip install -q --offline --no-index "$wheel_linux"
      "$work/uv-venv/bin/dlenv" --version | head -n1 | grep -qx "dlenv $VERSION" ||
        fail "uv-installed dlenv --version"
      echo "uv pip install: works"
    else
      echo "uv pip install: not checked (uv is not installed here)"
    fi
    ;;

  deb_contents)
    need_file "$deb"
    info=$(dpkg-deb --info "$deb")
    for want in "Package: dlenv" "Version: $VERSION" "Architecture: amd64" \
                "Depends: libc6 (>= 2.31)" "Suggests: libarchive13 | libarchive13t64"; do
      grep -qF " $want" <<<"$info" || fail "dpkg-deb --info lacks '$want'"
    done
    deps=$(sed -n 's/^ Depends: //p' <<<"$info")
    [[ "$deps" == "libc6 (>= 2.31)" ]] || fail "Depends is '$deps' (want libc6 (>= 2.31) only)"
    contents=$(dpkg-deb --contents "$deb")
    for f in "${linux_files[@]}"; do
      grep -q " \./usr/$f\$" <<<"$contents" || fail "the .deb lacks /usr/$f"
    done
    grep -qE '^-rwxr-xr-x root/root .* \./usr/bin/dlenv$' <<<"$contents" ||
      fail "/usr/bin/dlenv is not root-owned 0755"
    outside=$(awk '{print $NF}' <<<"$contents" | grep -vE '^\./(usr/)?$|^\./usr/' || true)
    [[ -z "$outside" ]] || fail "files outside /usr: $outside"
    dpkg-deb -x "$deb" "$work/root"
    "$work/root/usr/bin/dlenv" --version | head -n1 | grep -qx "dlenv $VERSION" ||
      fail "the .deb's dlenv --version"
    echo "$(basename "$deb"): Depends: $deps; $(wc -l <<<"$contents") entries"
    ;;

  windows_zip)
    need_file "$zip"
    need_file "$wheel_windows"
    listing=$(unzip -Z1 "$zip")
    for f in dlenv.exe LICENSE README.md dlenv.ps1; do
      grep -qx "$f" <<<"$listing" || fail "$(basename "$zip") lacks $f"
    done
    check_wheel "$wheel_windows" dlenv.exe win_amd64 MZ
    echo "$(basename "$zip"): $(tr '\n' ' ' <<<"$listing")"
    ;;

  cmake_install_prefix)
    need_file "$tarball"
    cmake --install "$BUILD" --prefix "$work/prefix" >/dev/null
    for f in "${linux_files[@]}"; do
      [[ -f "$work/prefix/$f" ]] || fail "cmake --install put no $f under the prefix"
    done
    installed=$(cd "$work/prefix" && find . -type f | sed 's|^\./||' | sort)
    top="dlenv-$VERSION-linux-x86_64"
    packaged=$(tar -tzf "$tarball" | grep -v '/$' | sed "s|^$top/||" |
               grep -vxE 'LICENSE|README.md' | sort)
    [[ "$installed" == "$packaged" ]] ||
      fail "cmake --install and the tarball differ: $(diff <(echo "$installed") <(echo "$packaged") | tr '\n' ' ')"
    echo "cmake --install: the tarball's $(wc -l <<<"$installed") files"
    ;;

  sha256sums)
    need_file "$DIST/SHA256SUMS"
    (cd "$DIST" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not verify"
    listed=$(awk '{print $2}' "$DIST/SHA256SUMS" | sort)
    present=$(cd "$DIST" && ls | grep -vx SHA256SUMS | sort)
    [[ "$listed" == "$present" ]] || fail "SHA256SUMS lists '$listed' but dist/ has '$present'"
    [[ $(wc -l <<<"$listed") == 5 ]] || fail "expected 5 release files, SHA256SUMS lists $(wc -l <<<"$listed")"
    echo "SHA256SUMS: $(tr '\n' ' ' <<<"$listed")"
    ;;

  *)
    echo "check-packages.sh: unknown check '$check'" >&2
    exit 2
    ;;
esac
