#!/usr/bin/env bash
# The drop-in BLAS (libonegpu_blas.so) against the CPU BLAS, in one run:
# GFLOP/s of the Fortran sgemm_ (C = A B, column-major, beta = 0) including
# every copy, for the drop-in forced onto the default Vulkan device
# (ONEGPU_BLAS_FORCE=gpu; the fraction of its time spent copying and the
# tiles it ran as, from its trace), OpenBLAS (Debian's pthread build, its
# own CPU detection; from `scripts/setup.sh --peers`) and netlib's
# reference BLAS; square 512 to 2048, 4096 square for the drop-in and
# OpenBLAS only (the reference BLAS would take minutes there: "-" in its
# column), and LAPACK-like panels (M = N = 2048, K = 64 to 256: a blocked
# factorisation's trailing update). Then the drop-in's cost model, measured
# against each CPU BLAS, and where it puts the crossover (the smallest
# square and panel it would send to the GPU). Best of BLAS_REPS calls (2)
# after one untimed (library start, kernel build); host clock.
# The tuning database is OG_TUNING_DB, else the pre-tuned databases of the
# build (build/pretuned). On lavapipe the GPU path cannot win (it runs on
# the same cores); on a lent GPU the same script gives the real crossover.
# Usage: bench/blas.sh   (BLAS_SQUARES, BLAS_BIG, BLAS_PANELS: replace the shapes)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --peers
scripts/build.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=c17 -O2 -Wall -Wextra bench/blas/blas_time.c -o "$tmp/blas_time" -ldl
multiarch=$(gcc -print-multiarch)
openblas=/usr/lib/$multiarch/openblas-pthread/libblas.so.3
reference=/usr/lib/$multiarch/blas/libblas.so.3
drop=$PWD/build/libonegpu_blas.so
squares=${BLAS_SQUARES:-512 1024 2048}
big=${BLAS_BIG:-4096}
panels=${BLAS_PANELS:-64 128 256}
reps=${BLAS_REPS:-2}
if [ -z "${OG_TUNING_DB:-}" ]; then
  OG_TUNING_DB=$(ls build/pretuned/*.db 2>/dev/null | tr '\n' ':' | sed 's/:$//')
fi
export OG_TUNING_DB
device=$(build/ogtune devices --json | sed -n 's/.*"name":"\([^"]*\)".*/\1/p' | head -n1)
log=bench/logs/$(date +%Y-%m-%d)-blas-$(echo "$device" | sed 's/ (.*//' | tr -c 'a-zA-Z0-9\n' '-').txt

# Seconds of one sgemm_ of M x N x K on a library (extra environment first).
timed() {
  local lib=$1 m=$2 n=$3 k=$4
  shift 4
  env "$@" "$tmp/blas_time" "$lib" "$m" "$n" "$k" "$reps"
}
gflops() { awk -v m="$1" -v n="$2" -v k="$3" -v t="$4" 'BEGIN { printf "%.2f", 2 * m * n * k / t / 1e9 }'; }

# One row; a fourth argument "noref" skips the reference BLAS.
row() {
  local m=$1 n=$2 k=$3 ref=${4:-ref}
  rm -f "$tmp/trace"
  local t_gpu t_open t_ref
  t_gpu=$(timed "$drop" "$m" "$n" "$k" ONEGPU_BLAS_FORCE=gpu ONEGPU_BLAS_TRACE="$tmp/trace")
  t_open=$(timed "$openblas" "$m" "$n" "$k")
  if [ "$ref" = ref ]; then t_ref=$(gflops "$m" "$n" "$k" "$(timed "$reference" "$m" "$n" "$k")"); else t_ref=-; fi
  # The fastest timed call's copies and tiles: the trace line whose total is smallest.
  local copy tiles
  read -r copy tiles < <(sed -n 's/.*-> gpu: .*; \([0-9.e+-]*\) s, copies \([0-9.e+-]*\) s, \([0-9]*\) tiles*$/\1 \2 \3/p' \
    "$tmp/trace" | tail -n +2 | sort -g | head -n1 | awk '{ printf "%.1f%% %s\n", 100 * $2 / $1, $3 }') || true
  printf '%-16s %10s %10s %10s %8s %6s\n' "${m}x${n}x${k}" "$(gflops "$m" "$n" "$k" "$t_gpu")" \
    "$(gflops "$m" "$n" "$k" "$t_open")" "$t_ref" "${copy:-?}" "${tiles:-?}"
}

# The model measured against a CPU BLAS (the drop-in's first call without
# ONEGPU_BLAS_FORCE measures it), and its crossovers.
model() {
  local cpu=$1 file=$tmp/model-$(basename "$(dirname "$1")").txt
  env -u ONEGPU_BLAS_FORCE ONEGPU_BLAS_MODEL="$file" ONEGPU_BLAS_CPU_LIB="$cpu" \
    "$tmp/blas_time" "$drop" 64 64 64 0 >/dev/null
  grep -v '^#' "$file" | sed 's/^/  /'
  awk '
    $1 == "fixed_s" { f = $2 } $1 == "transfer_bytes_per_s" { x = $2 }
    $1 == "gpu_flops_per_s" { g = $2 } $1 == "cpu_flops_per_s" { c = $2 }
    function gpu_wins(m, n, k) { return f + 4 * (m * k + k * n + m * n) / x + 2 * m * n * k / g < 2 * m * n * k / c }
    END {
      sq = "none up to 65536"; for (s = 16; s <= 65536; s *= 2) if (gpu_wins(s, s, s)) { sq = s; break }
      pn = "none up to 65536"; for (s = 16; s <= 65536; s *= 2) if (gpu_wins(s, s, 128)) { pn = s; break }
      printf "  crossover: square %s; panel N x N x 128 from N = %s (gpu %.2f vs cpu %.2f GFLOP/s, fixed %.3g ms)\n",
        sq, pn, g / 1e9, c / 1e9, f * 1e3
    }' "$file"
}

{
  echo "# drop-in BLAS (libonegpu_blas.so) vs the CPU BLAS, sgemm_ column-major NN, beta 0, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(uptime | sed 's/.*load/load/')"
  echo "# device: $device; tuning database: ${OG_TUNING_DB:-none}; best of $reps after one untimed call"
  echo "# OpenBLAS: $openblas (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-its own detection}); reference: $reference"
  echo
  printf '%-16s %10s %10s %10s %8s %6s\n' "MxNxK" "gpu GF/s" "OpenBLAS" "reference" "copying" "tiles"
  for s in $squares; do row "$s" "$s" "$s"; done
  for s in $big; do row "$s" "$s" "$s" noref; done
  for k in $panels; do row 2048 2048 "$k"; done
  echo
  echo "## the cost model against OpenBLAS (the drop-in's default CPU BLAS where it is libblas.so.3)"
  model "$openblas"
  echo "## the cost model against the reference BLAS"
  model "$reference"
} | tee "$log"
echo "bench/blas.sh: log in $log"
