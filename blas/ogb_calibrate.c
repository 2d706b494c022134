/* Measuring the cost model's inputs (ogb_calibrate.h). */
#include "ogb_calibrate.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ogb_cpu.h"
#include "ogb_gpu.h"

#define OGB_CAL_N 512
#define OGB_CAL_BYTES (16u << 20)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Best of `runs` seconds of the 1 x 1 x 1 call on the GPU path, after one
 * untimed; 0 when it fails. */
static double time_fixed(int runs, char *why, size_t len)
{
    float a = 1, b = 1, c = 0;
    double best = 0;
    ogb_call call = {.transa = 'N', .transb = 'N', .m = 1, .n = 1, .k = 1, .alpha = 1,
                     .a = &a, .lda = 1, .b = &b, .ldb = 1, .c = &c, .ldc = 1};
    for (int i = 0; i <= runs; i++) {
        ogb_gpu_times t;
        if (ogb_gpu_sgemm(&call, &t, why, len))
            return 0;
        best = i == 1 || (i > 1 && t.total_s < best) ? t.total_s : best;
    }
    return best;
}

/* Best of 2 seconds of the CPU BLAS at n cubed (after one small call that
 * opens it and starts its threads); 0 without memory. */
static double time_cpu(int n)
{
    size_t nn = (size_t)n * (size_t)n;
    float *a = calloc(nn * 3, sizeof *a);
    if (!a)
        return 0;
    ogb_call call = {.transa = 'N', .transb = 'N', .m = 8, .n = 8, .k = 8, .alpha = 1,
                     .a = a, .lda = n, .b = a + nn, .ldb = n, .c = a + 2 * nn, .ldc = n};
    const char *where;
    ogb_cpu_sgemm(&call, &where);
    call.m = call.n = call.k = n;
    double best = 0;
    for (int i = 0; i < 2; i++) {
        double t0 = now();
        ogb_cpu_sgemm(&call, &where);
        double t = now() - t0;
        best = i == 0 || t < best ? t : best;
    }
    free(a);
    return best;
}

int ogb_calibrate(ogb_model *m, char *why, size_t len)
{
    *m = (ogb_model){0};
    if (ogb_gpu_device(m->device, sizeof m->device)) {
        snprintf(why, len, "%s", m->device);
        return -1;
    }
    snprintf(m->cpu_blas, sizeof m->cpu_blas, "%s", ogb_cpu_path());
    double flops = 2.0 * OGB_CAL_N * OGB_CAL_N * OGB_CAL_N;
    double fixed = time_fixed(5, why, len), transfer = ogb_gpu_time_transfer(OGB_CAL_BYTES);
    double gpu = ogb_gpu_time_product(OGB_CAL_N), cpu = time_cpu(OGB_CAL_N);
    if (fixed <= 0 || transfer <= 0 || gpu <= 0 || cpu <= 0) {
        snprintf(why, len, "measuring the cost model failed (fixed %g s, transfer %g s, gpu %g s, cpu %g s)",
                 fixed, transfer, gpu, cpu);
        return -1;
    }
    m->fixed_s = fixed;
    m->transfer_bytes_per_s = 2.0 * OGB_CAL_BYTES / transfer;
    m->gpu_flops_per_s = flops / gpu;
    m->cpu_flops_per_s = flops / cpu;
    return 0;
}
