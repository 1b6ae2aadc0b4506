#!/usr/bin/env bash
# scripts/fuzz.sh [SECONDS]: builds the libFuzzer targets of the binary readers
# (elf_fuzz, pe_fuzz, ldcache_fuzz; see the end of tests/CMakeLists.txt) with
# clang and runs each for SECONDS (default 300), one after the other, starting
# from a copy of the checked-in seed corpus tests/fuzz/corpus/<target>/.
#
# Needs clang 16 or newer with its libFuzzer runtime (Debian: clang-16
# libclang-rt-16-dev); clang 14 cannot compile libstdc++'s <expected>.
# Environment: DLENV_FUZZ_BUILD (build dir, default build/fuzz),
# DLENV_FUZZ_WORK (work dir, default $DLENV_FUZZ_BUILD/fuzz-work),
# DLENV_FUZZ_TARGETS (default "elf pe ldcache"), CXX (clang++ to use).
# Per target it leaves under the work dir: corpus/ (the grown corpus), log
# (libFuzzer's output) and any crash-*/leak-*/timeout-*/oom-* reproducer.
# Exit status: 0 when no target found anything, 1 otherwise, 2 on setup errors.
#
# scripts/fuzz.sh coverage: instead of fuzzing, builds each target with
# clang's source-based coverage, runs it once over the checked-in corpus
# (-runs=0) and prints llvm-cov's report for its reader (needs llvm-16 or the
# llvm-cov/llvm-profdata of the clang used).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mode=fuzz
if [[ ${1:-} == coverage ]]; then mode=coverage; shift; fi
secs=${1:-300}
[[ $secs =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a whole number" >&2; exit 2; }
build=${DLENV_FUZZ_BUILD:-$root/build/fuzz}
work=${DLENV_FUZZ_WORK:-$build/fuzz-work}
targets=${DLENV_FUZZ_TARGETS:-elf pe ldcache}

cxx=${CXX:-}
if [[ -z $cxx ]]; then
  for c in clang++-19 clang++-18 clang++-17 clang++-16 clang++; do
    if command -v "$c" >/dev/null; then cxx=$c; break; fi
  done
fi
[[ -n $cxx ]] || { echo "fuzz.sh: no clang++ found (apt-get install clang-16 libclang-rt-16-dev)" >&2; exit 2; }
cc=${cxx/clang++/clang}
major=$("$cxx" -dumpversion | cut -d. -f1)
if ((major < 16)); then
  echo "fuzz.sh: $cxx is clang $major; libstdc++'s <expected> needs clang 16 or newer" \
    "(apt-get install clang-16 libclang-rt-16-dev)" >&2
  exit 2
fi
# libstdc++ 12 hides <expected> unless __cpp_concepts >= 202002L, which clang
# (16-18) implements but does not announce.
flags=""
if ! echo '#include <expected>
std::expected<int, int> e;' | "$cxx" -std=c++2b -x c++ -fsyntax-only - 2>/dev/null; then
  flags="-U__cpp_concepts -D__cpp_concepts=202002L"
fi

echo "fuzz.sh: $cxx (clang $major), build $build, $secs s per target"
CXX=$cxx CC=$cc cmake -S "$root" -B "$build" -DDLENV_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS=$flags" >/dev/null
# shellcheck disable=SC2086
cmake --build "$build" -j"${DLENV_FUZZ_JOBS:-2}" --target $(printf '%s_fuzz ' $targets) >/dev/null

if [[ $mode == coverage ]]; then
  bin=$("$cxx" -print-prog-name=clang | xargs dirname 2>/dev/null || true)
  llvm_cov=$(command -v llvm-cov-"$major" || command -v "$bin/llvm-cov" || command -v llvm-cov || true)
  profdata=$(command -v llvm-profdata-"$major" || command -v "$bin/llvm-profdata" || command -v llvm-profdata || true)
  [[ -n $llvm_cov && -n $profdata ]] || { echo "fuzz.sh: llvm-cov/llvm-profdata not found (apt-get install llvm-$major)" >&2; exit 2; }
  cov=$build/fuzz-coverage
  mkdir -p "$cov"
  # shellcheck disable=SC2206
  cflags=(-std=c++2b -O1 -g $flags -DFMT_HEADER_ONLY=1 -I"$build/layers/binfmt" -I"$build/layers/util"
    -fprofile-instr-generate -fcoverage-mapping)
  for f in elf pe ldcache; do
    "$cxx" "${cflags[@]}" -fsanitize=fuzzer-no-link -c "$root/src/binfmt/$f.cc" -o "$cov/$f.o"
  done
  for t in $targets; do
    "$cxx" "${cflags[@]}" -fsanitize=fuzzer "$root/src/binfmt/${t}_fuzz.cc" "$cov/elf.o" "$cov/pe.o" \
      "$cov/ldcache.o" "$build/libdlenv_util.a" -o "$cov/${t}_cov"
    LLVM_PROFILE_FILE="$cov/$t.profraw" "$cov/${t}_cov" -runs=0 "$root/tests/fuzz/corpus/$t" >"$cov/$t.log" 2>&1
    "$profdata" merge -o "$cov/$t.profdata" "$cov/$t.profraw"
    echo "== ${t}_fuzz over tests/fuzz/corpus/$t ($(ls "$root/tests/fuzz/corpus/$t" | wc -l) files)"
    "$llvm_cov" report "$cov/${t}_cov" -instr-profile="$cov/$t.profdata" "$root/src/binfmt/$t.cc" | tail -1
    echo "   (columns: regions, missed, cover, functions, missed, executed, lines, missed, cover," \
      "branches, missed, cover; uncovered lines: $llvm_cov show $cov/${t}_cov" \
      "-instr-profile=$cov/$t.profdata $root/src/binfmt/$t.cc)"
  done
  exit 0
fi

found=0
for t in $targets; do
  dir=$work/$t
  rm -rf "$dir"
  mkdir -p "$dir/corpus"
  cp "$root/tests/fuzz/corpus/$t/"* "$dir/corpus/"
  echo "== $t: $(ls "$dir/corpus" | wc -l) seeds, $secs s"
  rc=0
  "$build/tests/${t}_fuzz" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$dir/" "$dir/corpus" >"$dir/log" 2>&1 || rc=$?
  # The last status line (cov:, ft:, corp:, exec/s:) and the final stats.
  grep -E '^#[0-9]+' "$dir/log" | tail -1 || true
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$dir/log" || true
  if ((rc != 0)) || compgen -G "$dir/crash-*" >/dev/null || compgen -G "$dir/leak-*" >/dev/null ||
    compgen -G "$dir/timeout-*" >/dev/null || compgen -G "$dir/oom-*" >/dev/null; then
    echo "$t: FOUND A PROBLEM (exit $rc); see $dir/log and the reproducer in $dir/"
    found=1
  else
    echo "$t: no crash, leak, timeout or OOM"
  fi
done
exit $found
