#!/usr/bin/env bash
# tests/scripts/output_safety.sh DLENV: what the real binary does with broken outputs and
# hostile inputs (issue 20, items 2-5), as a user's shell sees it:
#   - a failed write is exit 3 with a message: stdout on /dev/full, stdout closed;
#   - a reader that goes away (| head -1) ends it quietly (SIGPIPE: 141, or 0 when all
#     was written before the reader left), nothing on stderr;
#   - --env-file /dev/zero stops at the limit with a message (a usage error: exit 2);
#   - a FIFO on LD_LIBRARY_PATH never hangs deps (load's dlopen of it is the live-probe
#     isolation's part: the ELF pre-check and the child with a timeout);
#   - bytes that are not UTF-8 in PATH / LD_LIBRARY_PATH give valid JSON whose strings
#     give the original bytes back (Python's surrogateescape);
#   - an escape sequence in a file name is shown as \e in text, never written raw.
# Run by ctest (tests/CMakeLists.txt: cli_output_safety); exits 1 on the first failure.
set -uo pipefail
dlenv=${1:?usage: output_safety.sh PATH/TO/dlenv}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
ok() { echo "ok: $*"; }
root=$tmp/root
mkdir -p "$root"

# 1. Write errors.
"$dlenv" doctor --root "$root" --os linux >/dev/full 2>"$tmp/err"
rc=$?
if [[ $rc == 3 ]] && grep -q "error writing to stdout: No space left on device" "$tmp/err"; then
  ok "doctor >/dev/full: exit 3, $(cat "$tmp/err")"
else
  fail "doctor >/dev/full: exit $rc, stderr: $(cat "$tmp/err")"
fi
"$dlenv" doctor --root "$root" --os linux >&- 2>"$tmp/err"
rc=$?
if [[ $rc == 3 ]] && grep -q "error writing to stdout: Bad file descriptor" "$tmp/err"; then
  ok "doctor >&-: exit 3, $(cat "$tmp/err")"
else
  fail "doctor >&-: exit $rc, stderr: $(cat "$tmp/err")"
fi
"$dlenv" explain --all --markdown >/dev/full 2>"$tmp/err"
rc=$?
[[ $rc == 3 ]] && ok "explain --all --markdown >/dev/full: exit 3" ||
  fail "explain >/dev/full: exit $rc"
"$dlenv" explain --all --markdown 2>"$tmp/err" | head -1 >/dev/null
rc=${PIPESTATUS[0]}
if [[ $rc == 141 && ! -s $tmp/err ]]; then
  ok "explain --all --markdown | head -1: killed by SIGPIPE (141), quiet"
else
  fail "explain | head -1: exit $rc, stderr: $(cat "$tmp/err")"
fi
"$dlenv" doctor --root "$root" --os linux 2>"$tmp/err" | head -1 >/dev/null
rc=${PIPESTATUS[0]}
if [[ ($rc == 0 || $rc == 141) && ! -s $tmp/err ]]; then
  ok "doctor | head -1: exit $rc, quiet"
else
  fail "doctor | head -1: exit $rc, stderr: $(cat "$tmp/err")"
fi

# 2. Bounded reads: an endless env file.
timeout 10 "$dlenv" doctor --root "$root" --os linux --env-file /dev/zero >/dev/null 2>"$tmp/err"
rc=$?
if [[ $rc == 2 ]] && grep -q "longer than 8388608 bytes" "$tmp/err"; then
  ok "--env-file /dev/zero: exit 2, $(cat "$tmp/err")"
else
  fail "--env-file /dev/zero: exit $rc, stderr: $(cat "$tmp/err")"
fi

# 3. A FIFO where a library is expected.
mkdir -p "$tmp/fifo"
mkfifo "$tmp/fifo/libcudnn.so.9"
for cmd in deps; do
  LD_LIBRARY_PATH=$tmp/fifo timeout 10 "$dlenv" "$cmd" libcudnn.so.9 >"$tmp/out" 2>&1
  rc=$?
  if ((rc <= 3)); then
    ok "$cmd with a FIFO on LD_LIBRARY_PATH: exit $rc, no hang"
  else
    fail "$cmd with a FIFO on LD_LIBRARY_PATH: exit $rc (124: hung): $(head -5 "$tmp/out")"
  fi
done
timeout 10 "$dlenv" deps "$tmp/fifo/libcudnn.so.9" >"$tmp/out" 2>&1
rc=$?
if ((rc <= 3)) && grep -q "FIFO" "$tmp/out"; then
  ok "deps FIFO: exit $rc, $(grep -m1 FIFO "$tmp/out")"
else
  fail "deps FIFO: exit $rc: $(head -5 "$tmp/out")"
fi

# 4. Bytes that are not UTF-8, and escape sequences: every --json command gives valid JSON
# whose strings give the bytes back; its text form shows them escaped, never raw.
bad=$(printf '%s/lib\xff\xfe\x1b[31m' "$tmp")
mkdir -p "$bad"
printf 'not an ELF file' >"$bad/libnot-elf.so"
cp "$(type -P true)" "$bad/prog"  # a real ELF executable, for deps and which
mkdir -p "$bad/include"
printf '#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n' \
  >"$bad/include/cudnn_version.h"
with_bad_path() { LD_LIBRARY_PATH=$bad PATH="$bad:$PATH" timeout 10 "$dlenv" "$@"; }
check_bytes() {  # NAME: the JSON in $tmp/out.json holds $bad's bytes, exactly
  if ! command -v python3 >/dev/null; then
    echo "skipped: $1 (no python3 to decode the JSON)"
    return
  fi
  if python3 - "$tmp/out.json" "$bad" <<'PY'; then
import json, os, sys
text = open(sys.argv[1], "rb").read().decode("utf-8")  # JSON text is UTF-8
doc = json.loads(text)
want = os.fsencode(sys.argv[2])
found = []
def walk(v):
    if isinstance(v, dict):
        for k, x in v.items(): walk(k); walk(x)
    elif isinstance(v, list):
        for x in v: walk(x)
    elif isinstance(v, str):
        b = v.encode("utf-8", "surrogateescape")
        if want in b: found.append(b)
walk(doc)
sys.exit(0 if found else 1)
PY
    ok "$1 --json with \\xff\\xfe ESC in a path: exit $rc, valid JSON, bytes recovered"
  else
    fail "$1 --json with bad bytes: exit $rc, stderr $(head -3 "$tmp/err"), out $(head -c 300 "$tmp/out.json")"
  fi
}
check_text() {  # NAME: the text in $tmp/out shows $bad escaped, with no ESC byte
  if grep -q $'\x1b' "$tmp/out"; then
    fail "$1 printed an ESC byte raw: $(od -c "$tmp/out" | head -3)"
  elif grep -qF 'lib\xff\xfe\e[31m' "$tmp/out"; then
    ok "$1 (text): exit $rc, the path shown as $(grep -m1 -oF 'lib\xff\xfe\e[31m' "$tmp/out")"
  else
    fail "$1 (text): exit $rc, path not shown: $(head -3 "$tmp/out")"
  fi
}
for cmd in "doctor" "deps" "load" "which" "cudnn-inspect"; do
  case $cmd in
    doctor) args=(doctor --no-live) ;;
    deps) args=(deps "$bad/prog") ;;
    load) args=(load "$bad/libnot-elf.so") ;;
    which) args=(which -- "$bad/prog") ;;
    cudnn-inspect) args=(cudnn inspect "$bad") ;;
  esac
  # --json before the positionals (which's command takes the rest of the line).
  n=$((${#args[@]} - 1))
  [[ $cmd == doctor ]] && n=${#args[@]}
  [[ $cmd == which ]] && n=1
  with_bad_path "${args[@]:0:n}" --json "${args[@]:n}" >"$tmp/out.json" 2>"$tmp/err"
  rc=$?
  if ((rc > 3)); then
    fail "$cmd --json with bad bytes: exit $rc: $(head -3 "$tmp/err")"
  else
    check_bytes "$cmd"
  fi
  with_bad_path "${args[@]}" >"$tmp/out" 2>&1
  rc=$?
  if ((rc > 3)); then
    fail "$cmd with bad bytes: exit $rc: $(head -3 "$tmp/out")"
  else
    check_text "$cmd"
  fi
done
esc=$(printf '%s/esc\x1b]0;pwned\x07\x1b[31m.so' "$tmp")
printf 'not an ELF file' >"$esc"
"$dlenv" deps "$esc" >"$tmp/out" 2>&1
if grep -q $'\x1b' "$tmp/out" || grep -q $'\x07' "$tmp/out"; then
  fail "deps on a file named with ESC/BEL printed them raw: $(od -c "$tmp/out" | head -5)"
elif grep -qF 'esc\e]0;pwned\a\e[31m.so' "$tmp/out"; then
  ok "deps on a file named with ESC/BEL: shown as $(grep -m1 -oF 'esc\e]0;pwned\a\e[31m.so' "$tmp/out")"
else
  fail "deps on a file named with ESC/BEL: name not shown: $(head -3 "$tmp/out")"
fi

((failures == 0)) || { echo "$failures failure(s)"; exit 1; }
echo "all passed"
