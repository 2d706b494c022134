#!/bin/sh
# numpy's own tests (Debian's python3-numpy, run by python3-pytest) with the
# drop-in preloaded: numpy.linalg's tests and the matmul and dot tests of
# numpy.core's test_multiarray. numpy.linalg computes float32 in float64
# (its LAPACK calls are the d* routines), so both reach the drop-in through
# numpy's own cblas_sgemm products; the Fortran sgemm_ is exercised by
# netlib's tests (test_blas_netlib.sh).
# Trimmed to stay quick on a 2-core machine: the "generalized"
# (stacked-matrix) linalg cases (60 s of thousands of tiny calls) and
# test_huge_vectordot (140 s of float64 and complex vector dots, no SGEMM)
# are left out.
# With ONEGPU_BLAS_FORCE=gpu (CTest sets it) the trace must show at least
# 1000 calls on the GPU and none that fell back: a run that silently used
# the CPU fails.
# Usage: test_blas_numpy.sh PRELOAD (the LD_PRELOAD list: the drop-in, after
# the sanitizer runtime in a sanitizer build)
set -eu
preload=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
LD_PRELOAD=$preload ONEGPU_BLAS_TRACE=$tmp/trace.txt /usr/bin/python3 -m pytest -q -p no:cacheprovider \
  --pyargs numpy.linalg.tests.test_linalg numpy.core.tests.test_multiarray \
  -k "(test_linalg and not generalized) or (test_multiarray and (matmul or dot) and not huge_vectordot)"
gpu=$(grep -c -- '-> gpu:' trace.txt || true)
fallback=$(grep -c 'gpu failed' trace.txt || true)
echo "test_blas_numpy: $gpu calls on the GPU, $fallback fell back to the CPU"
if [ "${ONEGPU_BLAS_FORCE:-}" = gpu ]; then
  [ "$gpu" -ge 1000 ] && [ "$fallback" -eq 0 ] ||
    { echo "test_blas_numpy: expected >= 1000 calls on the GPU and no fallback" >&2; exit 1; }
fi
