#!/usr/bin/env bash
# The drop-in BLAS's copies on a device whose buffers are staged (a discrete
# GPU without a mappable device-local heap), in one run: this checkout's
# drop-in, whose host fills its own host buffers (og_buffer_create_host)
# while the previous tile computes and records the device's copies with the
# product, against the drop-in of BASE (default 81f09b2, before that
# change: og_buffer_write and og_buffer_read, a staging copy submitted and
# waited for each, behind the product already on the queue), both on this
# checkout's runtime; and, for scale, the same calls where the host maps the
# buffers. Staging is forced (OG_STAGING=1) and operands are cut to
# BLAS_TILE_BYTES (4 MiB) so every call runs as tiles. Column-major sgemm_,
# C = A B (beta = 0) and C = A B + C (beta = 1: C uploaded too), GFLOP/s
# including every copy, best of BLAS_REPS (3) after one untimed call.
# On lavapipe the "device" copies are memcpy on the same two cores as the
# product, so the overlap can only win what the host's own copies cost;
# on a discrete GPU the same script measures the real thing.
# Usage: bench/blas_staging.sh   (BASE, BLAS_SHAPES "MxNxK ...", BLAS_TILE_BYTES)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
base=${BASE:-81f09b2}
shapes=${BLAS_SHAPES:-1024x1024x1024 2048x2048x2048 2048x2048x256 4096x4096x128 4096x4096x64 4096x4096x16}
tile_bytes=${BLAS_TILE_BYTES:-4194304}
reps=${BLAS_REPS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=c17 -O2 -Wall -Wextra bench/blas/blas_time.c -o "$tmp/blas_time" -ldl
# BASE's drop-in, built from its sources on this checkout's public header
# (the functions it calls are unchanged), opening this checkout's runtime.
mkdir "$tmp/old"
git archive "$base" blas runtime/onegpu.h runtime/onegpu_formats.h | tar -x -C "$tmp/old"
soname=$(readelf -d build/libonegpu.so | sed -n 's/.*soname: \[\(.*\)\]/\1/p')
cc -std=c17 -O2 -shared -fPIC -fvisibility=hidden -D_POSIX_C_SOURCE=200809L -DVK_NO_PROTOTYPES \
  -DOGB_RUNTIME_SONAME="\"$soname\"" -I"$tmp/old/runtime" "$tmp/old/blas"/ogb_*.c \
  -o "$tmp/old/libonegpu_blas.so" -ldl -lpthread -lm
new=$PWD/build/libonegpu_blas.so
old=$tmp/old/libonegpu_blas.so
export ONEGPU_BLAS_RUNTIME=$PWD/build/libonegpu.so ONEGPU_BLAS_FORCE=gpu ONEGPU_BLAS_TILE_BYTES=$tile_bytes
export OG_TUNING_DB=${OG_TUNING_DB:-$(ls build/pretuned/*.db 2>/dev/null | tr '\n' ':' | sed 's/:$//')}
device=$(build/ogtune devices --json | sed -n 's/.*"name":"\([^"]*\)".*/\1/p' | head -n1)
log=bench/logs/$(date +%Y-%m-%d)-blas-staging-$(echo "$device" | sed 's/ (.*//' | tr -c 'a-zA-Z0-9\n' '-').txt

# Seconds of one call: library, staging (1/0), beta, M N K; the trace's
# tiles of the last call into $tmp/tiles.
timed() {
  local lib=$1 staging=$2 beta=$3 m=$4 n=$5 k=$6
  rm -f "$tmp/trace"
  OG_STAGING=$staging ONEGPU_BLAS_TRACE="$tmp/trace" BLAS_TIME_BETA=$beta \
    "$tmp/blas_time" "$lib" "$m" "$n" "$k" "$reps"
  sed -n 's/.*, \([0-9]*\) tiles*$/\1/p' "$tmp/trace" | tail -n1 > "$tmp/tiles"
}
gflops() { awk -v m="$1" -v n="$2" -v k="$3" -v t="$4" 'BEGIN { printf "%.2f", 2 * m * n * k / t / 1e9 }'; }

{
  echo "# drop-in BLAS through staging copies: host buffers + recorded copies (new) vs og_buffer_write/read (old, $base), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(uptime | sed 's/.*load/load/')"
  echo "# device: $device; OG_STAGING=1; operands cut to $tile_bytes bytes; best of $reps after one untimed call; GFLOP/s with every copy"
  echo
  printf '%-16s %5s %6s %10s %10s %8s %12s\n' "MxNxK" "beta" "tiles" "old GF/s" "new GF/s" "new/old" "mapped GF/s"
  for s in $shapes; do
    IFS=x read -r m n k <<<"$s"
    for beta in 0 1; do
      t_old=$(timed "$old" 1 "$beta" "$m" "$n" "$k")
      t_new=$(timed "$new" 1 "$beta" "$m" "$n" "$k")
      tiles=$(cat "$tmp/tiles")
      t_map=$(timed "$new" 0 "$beta" "$m" "$n" "$k")
      printf '%-16s %5s %6s %10s %10s %8s %12s\n' "$s" "$beta" "$tiles" "$(gflops "$m" "$n" "$k" "$t_old")" \
        "$(gflops "$m" "$n" "$k" "$t_new")" "$(awk -v a="$t_old" -v b="$t_new" 'BEGIN { printf "%.2fx", a / b }')" \
        "$(gflops "$m" "$n" "$k" "$t_map")"
    done
  done
  echo "# after: $(uptime | sed 's/.*load/load/')"
} | tee "$log"
echo "bench/blas_staging.sh: log in $log"
