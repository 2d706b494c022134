/* Accuracy of float32 recovered from float16 products against the native
 * float32 kernel and plain float16 (SGEMM-cube's study, arXiv:2507.23387):
 * what `ogtune accuracy` prints and tests/test_recovered.c asserts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "og_tuner.h"

const char *og_input_kind_name(og_input_kind kind)
{
    static const char *const names[] = {"uniform", "tiny", "huge", "spread"};
    return (unsigned)kind <= OG_INPUT_SPREAD ? names[kind] : "?";
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A (m x k) and B (k x n), both not transposed, of the given kind. */
static void fill_inputs(og_input_kind kind, int64_t m, int64_t n, int64_t k, uint64_t seed,
                        float *a, float *b)
{
    og_fill_random(OG_F32, a, (size_t)(m * k), &seed);
    og_fill_random(OG_F32, b, (size_t)(k * n), &seed);
    if (kind == OG_INPUT_TINY || kind == OG_INPUT_HUGE) {
        float s = kind == OG_INPUT_TINY ? 0x1p-20f : 0x1p20f;
        for (int64_t i = 0; i < m * k; i++)
            a[i] *= s;
        for (int64_t i = 0; i < k * n; i++)
            b[i] *= s;
    } else if (kind == OG_INPUT_SPREAD) {
        /* Row i of A times 2^r_i and column j of B times 2^c_j, r and c in
         * -60..60: every product and sum stays inside float32's range. */
        for (int64_t i = 0; i < m; i++) {
            float s = ldexpf(1.0f, (int)(splitmix64(&seed) % 121) - 60);
            for (int64_t kk = 0; kk < k; kk++)
                a[i * k + kk] *= s;
        }
        for (int64_t j = 0; j < n; j++) {
            float s = ldexpf(1.0f, (int)(splitmix64(&seed) % 121) - 60);
            for (int64_t kk = 0; kk < k; kk++)
                b[kk * n + j] *= s;
        }
    }
}

/* max over (i, j) of |C(i, j) - ref(i, j)| / (|A| |B|)(i, j); infinite
 * when an element is not finite. */
static double error_of(const float *c, const double *ref, const double *mag, size_t count)
{
    double worst = 0;
    for (size_t e = 0; e < count; e++) {
        if (!isfinite(c[e]))
            return INFINITY;
        double err = fabs((double)c[e] - ref[e]);
        double rel = mag[e] > 0 ? err / mag[e] : (err > 0 ? INFINITY : 0);
        if (rel > worst)
            worst = rel;
    }
    return worst;
}

/* Runs one GEMM object of desc on the device buffers of args and reads C. */
static og_status run_one(og_context *ctx, const og_gemm_desc *desc, const og_gemm_args *args,
                         float *c, size_t nc)
{
    og_gemm *g;
    og_status st = og_gemm_create_desc(ctx, desc, &g);
    if (st != OG_OK)
        return st;
    st = og_gemm_run(g, args);
    if (st == OG_OK)
        st = og_buffer_read(args->c, 0, c, nc * sizeof *c);
    og_gemm_destroy(g);
    return st;
}

static og_status make(og_context *ctx, const void *data, size_t bytes, og_buffer **out)
{
    og_status st = og_buffer_create(ctx, bytes, out);
    if (st == OG_OK && data)
        st = og_buffer_write(*out, 0, data, bytes);
    return st;
}

og_status og_precision_errors_measure(og_context *ctx, og_input_kind kind, int64_t m, int64_t n,
                                      int64_t k, uint64_t seed, og_precision_errors *out)
{
    size_t na = (size_t)(m * k), nb = (size_t)(k * n), nc = (size_t)(m * n);
    float *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b), *c = calloc(nc, sizeof *c);
    float *abs_a = malloc(na * sizeof *a), *abs_b = malloc(nb * sizeof *b);
    uint16_t *a16 = malloc(na * 2), *b16 = malloc(nb * 2);
    double *ref = malloc(nc * sizeof *ref), *mag = malloc(nc * sizeof *mag);
    og_buffer *bufs[5] = {NULL};
    og_status st = OG_ERROR_OUT_OF_MEMORY;
    if (!a || !b || !c || !abs_a || !abs_b || !a16 || !b16 || !ref || !mag)
        goto done;
    fill_inputs(kind, m, n, k, seed, a, b);
    for (size_t i = 0; i < na; i++) {
        abs_a[i] = fabsf(a[i]);
        a16[i] = og_f32_to_f16(a[i], OG_ROUND_NEAREST_EVEN);
    }
    for (size_t i = 0; i < nb; i++) {
        abs_b[i] = fabsf(b[i]);
        b16[i] = og_f32_to_f16(b[i], OG_ROUND_NEAREST_EVEN);
    }
    og_gemm_args args = {.m = m, .n = n, .k = k, .alpha = 1.0f, .lda = k, .ldb = n, .ldc = n};
    og_reference_gemm(OG_F32, &args, a, b, c, ref);
    og_reference_gemm(OG_F32, &args, abs_a, abs_b, c, mag);
    if ((st = make(ctx, a, na * 4, &bufs[0])) != OG_OK ||
        (st = make(ctx, b, nb * 4, &bufs[1])) != OG_OK ||
        (st = make(ctx, a16, na * 2, &bufs[2])) != OG_OK ||
        (st = make(ctx, b16, nb * 2, &bufs[3])) != OG_OK ||
        (st = make(ctx, NULL, nc * 4, &bufs[4])) != OG_OK)
        goto done;
    args.c = bufs[4];
    /* Native float32, then recovered without and with scaling, on A and B as
     * float32; plain float16 on them rounded to nearest even. */
    const og_gemm_desc descs[3] = {
        {.a_type = OG_F32, .b_type = OG_F32},
        {.a_type = OG_F32, .b_type = OG_F32, .precision = OG_PRECISION_RECOVERED},
        {.a_type = OG_F32,
         .b_type = OG_F32,
         .precision = OG_PRECISION_RECOVERED,
         .range_scaling = 1}};
    double *slots[3] = {&out->native, &out->recovered, &out->scaled};
    args.a = bufs[0];
    args.b = bufs[1];
    for (int i = 0; i < 3; i++) {
        if ((st = run_one(ctx, &descs[i], &args, c, nc)) != OG_OK)
            goto done;
        *slots[i] = error_of(c, ref, mag, nc);
    }
    args.a = bufs[2];
    args.b = bufs[3];
    const og_gemm_desc half = {.a_type = OG_F16, .b_type = OG_F16};
    if ((st = run_one(ctx, &half, &args, c, nc)) != OG_OK)
        goto done;
    out->f16 = error_of(c, ref, mag, nc);
done:
    for (int i = 0; i < 5; i++)
        og_buffer_destroy(bufs[i]);
    free(a), free(b), free(c), free(abs_a), free(abs_b), free(a16), free(b16), free(ref), free(mag);
    return st;
}
