"""Seconds of numpy's float32 `a @ b` (cblas_sgemm) at each shape, one line a
shape: "MxNxK seconds", the best of REPS timed batches of calls, each batch
long enough (about 0.05 s) for the host clock. Used by bench/blas_numpy.sh,
once with the drop-in preloaded and once without, alternately.
Usage: python3 numpy_time.py REPS MxNxK..."""
import sys
import time

import numpy as np


def seconds_per_call(m, n, k, reps):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    a @ b  # untimed: the library's start, the model's file read
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            a @ b
        if time.perf_counter() - start >= 0.05:
            break
        calls *= 2
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(calls):
            a @ b
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def main():
    reps = int(sys.argv[1])
    for shape in sys.argv[2:]:
        m, n, k = (int(x) for x in shape.split("x"))
        print(f"{shape} {seconds_per_call(m, n, k, reps):.9g}", flush=True)


main()
