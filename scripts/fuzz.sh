#!/usr/bin/env bash
# scripts/fuzz.sh [SECONDS]: builds the libFuzzer targets (the binary readers elf_fuzz,
# pe_fuzz, ldcache_fuzz; the text parsers cudnn_header_fuzz, version_json_fuzz,
# dist_metadata_fuzz, env_file_fuzz, tar_listing_fuzz; see the end of
# tests/CMakeLists.txt) with clang and runs each for SECONDS (default 300), one after
# the other, starting from a copy of the checked-in seed corpus tests/fuzz/corpus/<target>/.
# The long scheduled campaign is `nice -n 19 scripts/fuzz.sh 3600`.
#
# Needs clang 16 or newer with its libFuzzer runtime (Debian: clang-16
# libclang-rt-16-dev); clang 14 cannot compile libstdc++'s <expected>.
# Environment: DLENV_FUZZ_BUILD (build dir, default build/fuzz),
# DLENV_FUZZ_WORK (work dir, default $DLENV_FUZZ_BUILD/fuzz-work),
# DLENV_FUZZ_TARGETS (default: all eight), CXX (clang++ to use).
# Per target it leaves under the work dir: corpus/ (the grown corpus), log
# (libFuzzer's output) and any crash-*/leak-*/timeout-*/oom-* reproducer.
# Exit status: 0 when no target found anything, 1 otherwise, 2 on setup errors.
#
# scripts/fuzz.sh --smoke [SECONDS]: the short run CI does after the tests (.ci/run):
# SECONDS (default 60) shared out among the targets (at least 5 s each: 7 s each for
# eight), failing on any crash, leak, timeout or OOM. Where
# no usable clang (16 or newer, with its libFuzzer runtime) is installed it says so and
# exits 0 (scripts/install-deps.sh --fuzz installs one). Its own build dir
# (build/fuzz-smoke unless DLENV_FUZZ_BUILD is set).
#
# scripts/fuzz.sh --campaign [SECONDS]: the long campaign on a machine with many cores:
# every target at once, each with several libFuzzer processes sharing its corpus
# (DLENV_FUZZ_WORKERS, e.g. "elf=5 pe=3", default: the cores shared out, the slow binary
# readers getting more), SECONDS each (default 3600). Prints per target the processes, the
# executions (summed over them), exec/s, the last coverage line and the grown corpus. With
# DLENV_FUZZ_PREBUILT=1 it runs the binaries already in $DLENV_FUZZ_BUILD/tests without
# building (carried to a machine without clang).
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
if [[ ${1:-} == --smoke ]]; then mode=smoke; shift; fi
if [[ ${1:-} == --campaign ]]; then mode=campaign; shift; fi
secs=${1:-$(case $mode in smoke) echo 60 ;; campaign) echo 3600 ;; *) echo 300 ;; esac)}
[[ $secs =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a whole number" >&2; exit 2; }
build=${DLENV_FUZZ_BUILD:-$root/build/$([[ $mode == smoke ]] && echo fuzz-smoke || echo fuzz)}
work=${DLENV_FUZZ_WORK:-$build/fuzz-work}
targets=${DLENV_FUZZ_TARGETS:-elf pe ldcache cudnn_header version_json dist_metadata env_file tar_listing}
# The source each target fuzzes (for the coverage report).
parser_source() {
  case $1 in
    elf | pe | ldcache) echo "src/binfmt/$1.cc" ;;
    cudnn_header | version_json | dist_metadata) echo src/probe/text_formats.cc ;;
    env_file) echo src/platform/env.cc ;;
    tar_listing) echo src/actions/tar_listing.cc ;;
  esac
}
if [[ $mode == smoke ]]; then
  # The whole smoke budget shared out among the targets, so that CI's time stays the same
  # whatever their number.
  ntargets=$(wc -w <<<"$targets")
  secs=$((secs / ntargets))
  ((secs >= 5)) || secs=5
fi

if [[ $mode == campaign && ${DLENV_FUZZ_PREBUILT:-0} == 1 ]]; then
  skip_build=1
else
  skip_build=0
fi

# No usable clang: a setup error (exit 2), except for --smoke, which says why and skips.
no_clang() {
  if [[ $mode == smoke ]]; then
    echo "fuzz.sh --smoke: SKIPPED, $1 (scripts/install-deps.sh --fuzz installs clang-16 and" \
      "libclang-rt-16-dev)"
    exit 0
  fi
  echo "fuzz.sh: $1 (apt-get install clang-16 libclang-rt-16-dev)" >&2
  exit 2
}
# Finds clang and builds the targets (the variables cxx, cc, major and flags are used
# by the coverage mode below).
build_targets() {
  cxx=${CXX:-}
  if [[ -z $cxx ]]; then
    for c in clang++-19 clang++-18 clang++-17 clang++-16 clang++; do
      if command -v "$c" >/dev/null; then cxx=$c; break; fi
    done
  fi
  [[ -n $cxx ]] || no_clang "no clang++ found"
  command -v "$cxx" >/dev/null || no_clang "$cxx not found"
  cc=${cxx/clang++/clang}
  major=$("$cxx" -dumpversion | cut -d. -f1)
  ((major >= 16)) || no_clang "$cxx is clang $major; libstdc++'s <expected> needs clang 16 or newer"
  # The libFuzzer runtime (libclang-rt-N-dev) is a package of its own.
  probe=$(mktemp -d)
  trap 'rm -rf "$probe"' EXIT
  echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' \
    >"$probe/t.cc"
  "$cxx" -fsanitize=fuzzer,address "$probe/t.cc" -o "$probe/t" 2>/dev/null ||
    no_clang "$cxx cannot link -fsanitize=fuzzer (no libFuzzer runtime: libclang-rt-$major-dev)"
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
  # The compiler's output goes to a log, shown when the build fails.
  # shellcheck disable=SC2086
  if ! cmake --build "$build" -j"${DLENV_FUZZ_JOBS:-2}" --target $(printf '%s_fuzz ' $targets) \
    >"$build/fuzz-build.log" 2>&1; then
    tail -40 "$build/fuzz-build.log" >&2
    echo "fuzz.sh: building the fuzz targets failed (the whole log: $build/fuzz-build.log)" >&2
    exit 2
  fi
}
if ((skip_build == 0)); then
  build_targets
else
  echo "fuzz.sh: the binaries already built in $build/tests, $secs s per target"
fi

if [[ $mode == coverage ]]; then
  bin=$("$cxx" -print-prog-name=clang | xargs dirname 2>/dev/null || true)
  llvm_cov=$(command -v llvm-cov-"$major" || command -v "$bin/llvm-cov" || command -v llvm-cov || true)
  profdata=$(command -v llvm-profdata-"$major" || command -v "$bin/llvm-profdata" || command -v llvm-profdata || true)
  [[ -n $llvm_cov && -n $profdata ]] || { echo "fuzz.sh: llvm-cov/llvm-profdata not found (apt-get install llvm-$major)" >&2; exit 2; }
  # The coverage build: every target rebuilt with source-based coverage (and without
  # ASan) in a build dir of its own; each run once over the checked-in corpus (-runs=0).
  cov=$build/fuzz-coverage
  CXX=$cxx CC=$cc cmake -S "$root" -B "$cov" -DDLENV_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS=$flags -fprofile-instr-generate -fcoverage-mapping" >/dev/null
  # shellcheck disable=SC2086
  cmake --build "$cov" -j"${DLENV_FUZZ_JOBS:-2}" --target $(printf '%s_fuzz ' $targets) \
    >"$cov/coverage-build.log" 2>&1 || { tail -40 "$cov/coverage-build.log" >&2; exit 2; }
  for t in $targets; do
    LLVM_PROFILE_FILE="$cov/$t.profraw" "$cov/tests/${t}_fuzz" -runs=0 "$root/tests/fuzz/corpus/$t" \
      >"$cov/$t.log" 2>&1
    "$profdata" merge -o "$cov/$t.profdata" "$cov/$t.profraw"
    echo "== ${t}_fuzz over tests/fuzz/corpus/$t ($(ls "$root/tests/fuzz/corpus/$t" | wc -l) files)"
    "$llvm_cov" report "$cov/tests/${t}_fuzz" -instr-profile="$cov/$t.profdata" \
      "$root/$(parser_source "$t")" | tail -1
  done
  echo "(columns: regions, missed, cover, functions, missed, executed, lines, missed, cover," \
    "branches, missed, cover; uncovered lines: $llvm_cov show $cov/tests/TARGET_fuzz" \
    "-instr-profile=$cov/TARGET.profdata SOURCE)"
  exit 0
fi

if [[ $mode == campaign ]]; then
  # Processes per target: DLENV_FUZZ_WORKERS ("elf=5 pe=3 ..."), else the cores shared out,
  # the binary readers (slowest per execution) first.
  declare -A workers
  cores=$(nproc)
  for t in $targets; do workers[$t]=1; done
  spare=$((cores - $(wc -w <<<"$targets")))
  while ((spare > 0)); do
    for t in elf pe elf cudnn_header version_json elf pe dist_metadata tar_listing env_file ldcache; do
      ((spare > 0)) || break
      [[ -n ${workers[$t]:-} ]] || continue
      workers[$t]=$((workers[$t] + 1))
      spare=$((spare - 1))
    done
  done
  for kv in ${DLENV_FUZZ_WORKERS:-}; do workers[${kv%%=*}]=${kv#*=}; done
  for t in $targets; do
    dir=$work/$t
    mkdir -p "$dir/corpus"
    cp -n "$root/tests/fuzz/corpus/$t/"* "$dir/corpus/" 2>/dev/null || true
    for ((i = 1; i <= workers[$t]; i++)); do
      "$build/tests/${t}_fuzz" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$dir/" "$dir/corpus" >"$dir/log.$i" 2>&1 &
    done
  done
  echo "fuzz.sh --campaign: $(date -u +%FT%TZ), $cores cores, $secs s, processes:" \
    "$(for t in $targets; do printf '%s=%s ' "$t" "${workers[$t]}"; done)"
  wait || true
  printf '%-14s %9s %14s %10s %-28s %8s  %s\n' target processes executions exec/s \
    "last status" corpus result
  found=0
  for t in $targets; do
    dir=$work/$t
    execs=$(cat "$dir"/log.* | sed -n 's/^stat::number_of_executed_units: *//p' |
      awk '{s += $1} END {print s + 0}')
    rate=$(cat "$dir"/log.* | sed -n 's/^stat::average_exec_per_sec: *//p' |
      awk '{s += $1} END {print s + 0}')
    last=$(grep -h -E '^#[0-9]+' "$dir/log.1" | tail -1 | grep -o -E 'cov: [0-9]+ ft: [0-9]+' || true)
    result="no crash, leak, timeout or OOM"
    if compgen -G "$dir/crash-*" >/dev/null || compgen -G "$dir/leak-*" >/dev/null ||
      compgen -G "$dir/timeout-*" >/dev/null || compgen -G "$dir/oom-*" >/dev/null ||
      grep -q -E '^==[0-9]+==ERROR|deadly signal' "$dir"/log.*; then
      result="FOUND A PROBLEM: see $dir/log.* and the reproducer in $dir/"
      found=1
    fi
    printf '%-14s %9s %14s %10s %-28s %8s  %s\n' "$t" "${workers[$t]}" "$execs" "$rate" \
      "$last" "$(ls "$dir/corpus" | wc -l)" "$result"
  done
  exit $found
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
  # The seed (to rerun the same inputs: -seed=N), the last status line (cov:, ft:,
  # corp:, exec/s:) and the final stats.
  grep -m1 -E '^INFO: Seed:' "$dir/log" || true
  grep -E '^#[0-9]+' "$dir/log" | tail -1 || true
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$dir/log" || true
  if ((rc != 0)) || compgen -G "$dir/crash-*" >/dev/null || compgen -G "$dir/leak-*" >/dev/null ||
    compgen -G "$dir/timeout-*" >/dev/null || compgen -G "$dir/oom-*" >/dev/null; then
    echo "$t: FOUND A PROBLEM (exit $rc); see $dir/log and the reproducer in $dir/"
    # What libFuzzer and the sanitizer said (the log stays in the work dir).
    grep -E -A12 '^==[0-9]+==ERROR|^SUMMARY|deadly signal|ALARM|out-of-memory' "$dir/log" |
      head -40 || true
    found=1
  else
    echo "$t: no crash, leak, timeout or OOM"
  fi
done
exit $found
