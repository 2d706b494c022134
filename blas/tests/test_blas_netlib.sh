#!/bin/sh
# netlib's own SGEMM tests (Debian's libblas-test) against the preloaded
# drop-in: xblat3s (the Fortran sgemm_) with sblat3.in and xscblat3
# (cblas_sgemm, column- and row-major) with sin3, only SGEMM switched on,
# N in 0 1 2 16 33 65, error exits included. The programs exit 0 when tests
# fail, so their summaries are read: five PASSED lines (error exits and the
# computational tests of each, row- and column-major for CBLAS), no FAIL,
# FATAL or SUSPECT; and the trace must show calls on the GPU when
# ONEGPU_BLAS_FORCE=gpu (CTest sets it).
# Usage: test_blas_netlib.sh PRELOAD DATA_DIR (PRELOAD: the LD_PRELOAD list,
# the drop-in after the sanitizer runtime in a sanitizer build)
set -eu
preload=$1 data=$2
bin=/usr/lib/$(gcc -print-multiarch)/blas
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
for p in xblat3s xscblat3; do
  [ -x "$bin/$p" ] || { echo "test_blas_netlib: $bin/$p is missing (scripts/setup.sh --tests installs libblas-test)" >&2; exit 1; }
done
# The programs use netlib's libblas.so.3 (xscblat3 needs its CBLAS globals,
# which OpenBLAS lacks) for everything but SGEMM, and the drop-in opens it
# as its CPU BLAS.
run() {
  LD_LIBRARY_PATH=$bin LD_PRELOAD=$preload ONEGPU_BLAS_TRACE=$tmp/trace.txt "$@"
}
run "$bin/xblat3s" <"$data/sblat3.in" >xblat3s.log 2>&1
run "$bin/xscblat3" <"$data/sin3" >sblat3c.out 2>&1
cat sblat3.out sblat3c.out >summary.txt
passed=$(grep -c PASSED summary.txt || true)
if [ "$passed" -ne 5 ] || grep -E 'FAIL|FATAL|SUSPECT' summary.txt >/dev/null; then
  cat summary.txt xblat3s.log
  echo "test_blas_netlib: expected 5 PASSED lines and no FAIL/FATAL/SUSPECT, got $passed" >&2
  exit 1
fi
cat summary.txt | grep -E 'PASSED'
gpu=$(grep -c -- '-> gpu:' trace.txt || true)
fallback=$(grep -c 'gpu failed' trace.txt || true)
echo "test_blas_netlib: $gpu calls on the GPU, $fallback fell back to the CPU"
if [ "${ONEGPU_BLAS_FORCE:-}" = gpu ]; then
  # 2 x 7776 computational calls per program, a third with alpha = 0 and a
  # sixth with a zero dimension: 6750 products in all.
  [ "$gpu" -ge 6750 ] && [ "$fallback" -eq 0 ] ||
    { echo "test_blas_netlib: expected 6750 products on the GPU and no fallback" >&2; exit 1; }
fi
