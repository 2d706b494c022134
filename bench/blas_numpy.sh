#!/usr/bin/env bash
# "Do no harm": numpy's float32 products with the drop-in BLAS preloaded and
# default settings (its cost model decides each call) against plain numpy
# on the same CPU BLAS (libblas.so.3: OpenBLAS where Debian's alternative
# points there), in one run. On lavapipe the model sends every call to the
# CPU BLAS, so what the preload costs is its own: the routing decision, the
# call's indirection, the library's start. Printed:
#  - the process start (`import numpy`, best of 5), plain and preloaded;
#  - the first product in a process, plain, preloaded with the model's file
#    in place, and preloaded before the model exists (it is measured then:
#    seconds, once a device and CPU BLAS; best of 3, each with a new file);
#  - seconds a call of `a @ b` at squares 8 to 2048 and two panels, the best
#    of BLAS_NUMPY_REPS batches (5) in each of BLAS_NUMPY_ROUNDS processes
#    (3) run alternately plain and preloaded, with the ratio
#    preloaded / plain (1.00 is no harm);
#  - where the calls went (one more preloaded pass with the trace on).
# Usage: bench/blas_numpy.sh   (BLAS_NUMPY_SHAPES replaces the shapes)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests   # numpy and OpenBLAS
scripts/build.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
drop=$PWD/build/libonegpu_blas.so
# Debian's Python and numpy (python3-numpy), whatever python3 comes first in PATH.
python=/usr/bin/python3
shapes=${BLAS_NUMPY_SHAPES:-8x8x8 32x32x32 64x64x64 128x128x128 256x256x256 512x512x512 1024x1024x1024 2048x2048x2048 2048x2048x64 2048x2048x256}
rounds=${BLAS_NUMPY_ROUNDS:-3}
reps=${BLAS_NUMPY_REPS:-5}
if [ -z "${OG_TUNING_DB:-}" ]; then
  OG_TUNING_DB=$(ls build/pretuned/*.db 2>/dev/null | tr '\n' ':' | sed 's/:$//')
fi
export OG_TUNING_DB ONEGPU_BLAS_MODEL=$tmp/blas-model.txt
unset ONEGPU_BLAS_FORCE ONEGPU_BLAS_TRACE
device=$(build/ogtune devices --json | sed -n 's/.*"name":"\([^"]*\)".*/\1/p' | head -n1)
cpu_blas=$(readlink -f "/usr/lib/$(gcc -print-multiarch)/libblas.so.3")
log=bench/logs/$(date +%Y-%m-%d)-blas-numpy-$(echo "$device" | sed 's/ (.*//' | tr -c 'a-zA-Z0-9\n' '-').txt

# Best of 5 wall-clock seconds of a Python snippet (extra environment first).
best_of_5() {
  local code=$1
  shift
  for _ in 1 2 3 4 5; do
    env "$@" "$python" -c "import time; t = time.perf_counter(); $code; print(time.perf_counter() - t)"
  done | sort -g | head -n1
}
first_product='import numpy as np; a = np.ones((64, 64), np.float32); a @ a'
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

{
  echo "# numpy float32 a @ b: plain vs the drop-in preloaded, default settings, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(uptime | sed 's/.*load/load/')"
  echo "# device: $device; tuning database: ${OG_TUNING_DB:-none}; CPU BLAS (libblas.so.3): $cpu_blas"
  echo "# numpy $("$python" -c 'import numpy; print(numpy.__version__)'); best of $reps batches in each of $rounds processes a side"
  echo
  # The first preloaded product measures the model (no file yet), the later ones read it.
  unmeasured=$(for i in 1 2 3; do
    env LD_PRELOAD="$drop" ONEGPU_BLAS_MODEL="$tmp/unmeasured-$i.txt" "$python" -c \
      "import time; t = time.perf_counter(); $first_product; print(time.perf_counter() - t)"
  done | sort -g | head -n1)
  env LD_PRELOAD="$drop" "$python" -c "$first_product"
  printf '%-34s %10s %10s %6s\n' "" "plain s" "preload s" "ratio"
  plain=$(best_of_5 'import numpy')
  pre=$(best_of_5 'import numpy' LD_PRELOAD="$drop")
  printf '%-34s %10.4f %10.4f %6s\n' "process start (import numpy)" "$plain" "$pre" "$(ratio "$pre" "$plain")"
  plain=$(best_of_5 "$first_product")
  pre=$(best_of_5 "$first_product" LD_PRELOAD="$drop")
  printf '%-34s %10.4f %10.4f %6s\n' "first product, model on file" "$plain" "$pre" "$(ratio "$pre" "$plain")"
  printf '%-34s %10.4f %10.4f %6s\n' "first product, model not measured" "$plain" "$unmeasured" "$(ratio "$unmeasured" "$plain")"
  echo
  for r in $(seq "$rounds"); do
    "$python" bench/blas/numpy_time.py "$reps" $shapes | sed 's/^/plain /' >>"$tmp/times"
    LD_PRELOAD=$drop "$python" bench/blas/numpy_time.py "$reps" $shapes | sed 's/^/preload /' >>"$tmp/times"
  done
  printf '%-16s %12s %12s %8s %10s\n' "MxNxK" "plain s" "preload s" "ratio" "GFLOP/s"
  for s in $shapes; do
    p=$(awk -v s="$s" '$1 == "plain" && $2 == s { print $3 }' "$tmp/times" | sort -g | head -n1)
    q=$(awk -v s="$s" '$1 == "preload" && $2 == s { print $3 }' "$tmp/times" | sort -g | head -n1)
    gf=$(echo "$s" | awk -F x -v t="$p" '{ printf "%.2f", 2 * $1 * $2 * $3 / t / 1e9 }')
    printf '%-16s %12.4g %12.4g %8s %10s\n' "$s" "$p" "$q" "$(ratio "$q" "$p")" "$gf"
  done
  echo
  ONEGPU_BLAS_TRACE=$tmp/trace LD_PRELOAD=$drop "$python" bench/blas/numpy_time.py 1 $shapes >/dev/null
  echo "where the preloaded calls went (one more pass, traced): $(sed -n 's/.*-> \([a-z]*\).*/\1/p' "$tmp/trace" | sort | uniq -c | awk '{ printf "%s%s %s", sep, $1, $2; sep = ", " }')"
  echo "the model ($ONEGPU_BLAS_MODEL):"
  grep -v '^#' "$ONEGPU_BLAS_MODEL" | sed 's/^/  /'
  echo "# $(uptime | sed 's/.*load/load/') at the end"
} | tee "$log"
echo "bench/blas_numpy.sh: log in $log"
