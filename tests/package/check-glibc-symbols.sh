#!/usr/bin/env bash
# Fails when BINARY needs a glibc symbol version newer than BASELINE, naming each symbol:
#   check-glibc-symbols.sh BINARY 2.31
# Reads the dynamic symbol table (objdump -T: every undefined symbol with the version the
# loader will ask for) and the version requirements (.gnu.version_r, objdump -p), so a
# version needed without a symbol (a weak reference) is caught too.
set -euo pipefail
bin="$1" baseline="$2"
[[ -f "$bin" ]] || { echo "check-glibc-symbols: $bin: no such file" >&2; exit 1; }
dynsyms=$(objdump -T "$bin") || { echo "check-glibc-symbols: $bin: not a dynamic ELF file" >&2; exit 1; }
needs=$(objdump -p "$bin")
newer() { [[ "$1" != "$2" && "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n1)" == "$1" ]]; }
bad=0 newest=0
while read -r version symbol; do
  v="${version#GLIBC_}"
  if [[ "$newest" == 0 ]] || newer "$v" "$newest"; then newest="$v"; fi
  if newer "$v" "$baseline"; then
    echo "check-glibc-symbols: $bin needs $symbol from GLIBC_$v (newer than $baseline)" >&2
    bad=1
  fi
done < <(printf '%s\n' "$dynsyms" | awk '/\(GLIBC_[0-9.]+\)/ { for (i = 1; i <= NF; i++)
           if ($i ~ /^\(GLIBC_/) { v = $i; gsub(/[()]/, "", v); print v, $NF } }')
while read -r v; do
  if newer "$v" "$baseline"; then
    echo "check-glibc-symbols: $bin requires version GLIBC_$v (newer than $baseline)" >&2
    bad=1
  fi
done < <(printf '%s\n' "$needs" | sed -n 's/.*GLIBC_\([0-9.]*\)$/\1/p' | sort -uV)
if ((bad)); then exit 1; fi
if [[ "$newest" == 0 ]]; then
  echo "check-glibc-symbols: $bin asks glibc for no versioned symbol: not what was built" >&2
  exit 1
fi
echo "check-glibc-symbols: $bin needs glibc <= $baseline (newest symbol version: GLIBC_$newest)"
