#!/usr/bin/env bash
# Builds the fuzz targets (fuzz/README.md) with clang, under AddressSanitizer
# and UndefinedBehaviorSanitizer, into build-fuzz/ (or $OG_FUZZ_BUILD_DIR)
# and runs each for SECONDS (default 30), as many at a time as there are
# cores, from its committed corpus fuzz/corpus/<target>. A crash, a sanitizer report or a
# failed property stops it with a non-zero exit, the input kept in
# <build>/crashes/. What a run adds goes to <build>/corpus/<target>;
# --merge then adds the inputs among them that reach new coverage to the
# committed corpus (libFuzzer's -merge=1), to commit.
#
#     scripts/fuzz.sh [--merge] [SECONDS] [TARGET...]
#
# TARGET: import, params, db, gemm_check, int8gemm_check, conv_check (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
merge=0
if [ "${1:-}" = "--merge" ]; then
  merge=1
  shift
fi
seconds=${1:-30}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(import params db gemm_check int8gemm_check conv_check)
dir=${OG_FUZZ_BUILD_DIR:-build-fuzz}

CC=clang-14 cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOG_FUZZ=ON -DOG_TESTS=OFF >/dev/null
cmake --build "$dir" -j"$(nproc)" --target "${targets[@]/#/fuzz_}" >/dev/null

# The import and db targets write an SQLite file per input, which SQLite's
# syncs make about 50 times slower on a disk: scratch files go to memory
# where there is /dev/shm (unless TMPDIR says otherwise), in a directory of
# this run's that goes when it ends, however it ends: a target that passes,
# fails or crashes (a crashing target cannot clean up), or an interrupt or
# kill of this script (the targets running then are stopped first, so nothing
# writes into the directory after it goes).
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
  export TMPDIR=/dev/shm
fi
scratch=$(mktemp -d "${TMPDIR:-/tmp}/og-fuzz-run-XXXXXX")
running=()
cleanup() {
  if [ ${#running[@]} -gt 0 ]; then
    kill "${running[@]}" 2>/dev/null || true
    wait "${running[@]}" 2>/dev/null || true
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
export TMPDIR=$scratch
export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p "$dir/crashes"
# A target's result, once it has stopped: its summary, or its log's tail and a failure.
report() {
  local t=$1 log=$dir/fuzz-$1.log
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  echo "fuzz: $t: $runs inputs in ${seconds} s, no failure;" \
       "corpus $(ls "fuzz/corpus/$t" | wc -l) committed + $(ls "$dir/corpus/$t" | wc -l) new"
  if [ "$merge" = 1 ]; then
    "$dir/fuzz/fuzz_$t" -merge=1 "fuzz/corpus/$t" "$dir/corpus/$t" >>"$log" 2>&1
    echo "fuzz: $t: corpus now $(ls "fuzz/corpus/$t" | wc -l) files," \
         "$(du -cb fuzz/corpus/"$t"/* | tail -n 1 | cut -f1) bytes"
  fi
}
# The targets run nproc at a time (each fuzzer is one process on one core).
batch=$(nproc)
for ((first = 0; first < ${#targets[@]}; first += batch)); do
  names=("${targets[@]:first:batch}")
  running=()
  for t in "${names[@]}"; do
    mkdir -p "$dir/corpus/$t"
    # -timeout: an input that takes longer than 20 s is a hang, and fails.
    # OG_FUZZ_SEED fixes libFuzzer's random seed (CI: the same mutations on
    # every run of a commit, so a red run can be replayed); unset, each run
    # explores anew.
    # In the background, so a signal to this script is handled at once
    # (bash defers traps while a foreground command runs).
    "$dir/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=20 -print_final_stats=1 \
        ${OG_FUZZ_SEED:+-seed="$OG_FUZZ_SEED"} \
        -artifact_prefix="$dir/crashes/$t-" "$dir/corpus/$t" "fuzz/corpus/$t" >"$dir/fuzz-$t.log" 2>&1 &
    running+=($!)
  done
  failed=
  for i in "${!names[@]}"; do
    if wait "${running[$i]}"; then
      report "${names[$i]}"
    else
      tail -n 60 "$dir/fuzz-${names[$i]}.log"
      echo "fuzz: ${names[$i]} failed (log $dir/fuzz-${names[$i]}.log, input in $dir/crashes/)" >&2
      failed=1
    fi
  done
  running=()
  [ -z "$failed" ] || exit 1
done
