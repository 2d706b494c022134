/* FP8 inputs (OCP E4M3 and E5M2 bytes in 32-bit words, a float32 scale per
 * tensor) on the portable tile, the few-rows kernel and the decode kernel:
 * the kernels' decode is the host library's (onegpu_formats.h) for all 256
 * codes, and products match float64 on the decoded values. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "og_test.h"

static float decode(og_dtype t, uint8_t v)
{
    return t == OG_FP8_E4M3 ? og_e4m3_to_f32(v) : og_e5m2_to_f32(v);
}

static og_gemm *fp8_gemm(og_context *ctx, og_dtype a, og_dtype b)
{
    og_gemm *g;
    og_gemm_desc d = {.a_type = a, .b_type = b};
    cr_assert_eq(og_gemm_create_desc(ctx, &d, &g), OG_OK, "%s", og_context_last_error(ctx));
    return g;
}

/* The kernel's value of every code equals the host decoder's: NaN codes give
 * NaN, the rest the same float32 (-0 reads back as +0: the sum starts at +0). */
static void expect_codes(og_dtype t, const float *got, const char *path)
{
    for (int v = 0; v < 256; v++) {
        float want = decode(t, (uint8_t)v);
        if (isnan(want))
            cr_expect(isnan(got[v]), "%s %s code 0x%02x: %a, want NaN", og_dtype_name(t), path, v,
                      (double)got[v]);
        else
            cr_expect(got[v] == want && (want != 0 || got[v] == 0),
                      "%s %s code 0x%02x: %a, want %a", og_dtype_name(t), path, v, (double)got[v],
                      (double)want);
    }
}

/* Each code as A (256 x 1 times 1 x 1, the tile), as B (1 x 1 times 1 x 256:
 * the few-rows kernel, and the tile when forced), and beside an FP8 B. */
Test(fp8, decode_equals_host_for_all_codes)
{
    og_context *ctx = open_context();
    uint8_t codes[256];
    for (int v = 0; v < 256; v++)
        codes[v] = (uint8_t)v;
    const float one = 1.0f;
    float got[256] = {0};
    og_dtype types[2] = {OG_FP8_E4M3, OG_FP8_E5M2};
    for (int t = 0; t < 2; t++) {
        og_buffer *fp8 = make_buffer(ctx, codes, sizeof codes);
        og_buffer *f32 = make_buffer(ctx, &one, sizeof one);
        og_buffer *c = make_buffer(ctx, got, sizeof got);

        og_gemm *g = fp8_gemm(ctx, types[t], OG_F32);
        og_gemm_args as_a = {.m = 256,
                             .n = 1,
                             .k = 1,
                             .alpha = 1,
                             .a = fp8,
                             .b = f32,
                             .c = c,
                             .lda = 1,
                             .ldb = 1,
                             .ldc = 1};
        cr_assert_eq(og_gemm_run(g, &as_a), OG_OK, "%s", og_context_last_error(ctx));
        cr_assert_eq(og_buffer_read(c, 0, got, sizeof got), OG_OK);
        expect_codes(types[t], got, "A, tile");
        og_gemm_destroy(g);

        g = fp8_gemm(ctx, OG_F32, types[t]);
        og_gemm_args as_b = {.m = 1,
                             .n = 256,
                             .k = 1,
                             .alpha = 1,
                             .a = f32,
                             .b = fp8,
                             .c = c,
                             .lda = 1,
                             .ldb = 256,
                             .ldc = 256};
        og_params chosen;
        cr_assert_eq(og_gemm_choose(g, &as_b, &chosen), OG_OK);
        cr_expect_eq(chosen.variant, OG_VARIANT_FEWROWS);
        cr_assert_eq(og_gemm_run(g, &as_b), OG_OK, "%s", og_context_last_error(ctx));
        cr_assert_eq(og_buffer_read(c, 0, got, sizeof got), OG_OK);
        expect_codes(types[t], got, "B, few rows");
        og_params tile = og_params_default();
        cr_assert_eq(run_params(g, ctx, &as_b, &tile), OG_OK, "%s", og_context_last_error(ctx));
        cr_assert_eq(og_buffer_read(c, 0, got, sizeof got), OG_OK);
        expect_codes(types[t], got, "B, tile");
        og_gemm_destroy(g);

        /* A FP8 of this type beside a B of the other type holding 1.0. */
        og_dtype other = types[1 - t];
        uint8_t one_code = other == OG_FP8_E4M3 ? 0x38 : 0x3c;
        cr_assert_eq(decode(other, one_code), 1.0f);
        og_buffer *b1 = make_buffer(ctx, &one_code, 1);
        g = fp8_gemm(ctx, types[t], other);
        as_a.b = b1;
        cr_assert_eq(og_gemm_run(g, &as_a), OG_OK, "%s", og_context_last_error(ctx));
        cr_assert_eq(og_buffer_read(c, 0, got, sizeof got), OG_OK);
        expect_codes(types[t], got, "A beside FP8 B");
        og_gemm_destroy(g);
        og_buffer_destroy(b1);
        og_buffer_destroy(fp8);
        og_buffer_destroy(f32);
        og_buffer_destroy(c);
    }
    close_context(ctx);
}

/* Every code as B of the decode kernel (5 x 8 times 8 x 256, A's rows
 * picking k = 0), B K x N and N x K, in whole-unit loads from storage and
 * texel buffers. */
Test(fp8, decode_kernel_equals_host_for_all_codes)
{
    og_context *ctx = open_context();
    static const og_params given[] = {
        {.variant = OG_VARIANT_DECODE, .rows = 8, .cols = 4, .slices = 32, .tn = 4, .vec = 4},
        {.variant = OG_VARIANT_DECODE, .rows = 8, .cols = 64, .slices = 4, .tn = 8, .vec = 4,
         .src = OG_SRC_TEXEL},
    };
    float a[5 * 8] = {0}, got[5 * 256];
    for (int r = 0; r < 5; r++)
        a[r * 8] = 1.0f;
    uint8_t b[8 * 256] = {0};
    og_dtype types[2] = {OG_FP8_E4M3, OG_FP8_E5M2};
    for (int t = 0; t < 2; t++)
        for (int trans_b = 0; trans_b < 2; trans_b++) {
            size_t i = (size_t)(t + trans_b) % 2; /* each type and layout from both sources */
            for (int v = 0; v < 256; v++)
                b[trans_b ? v * 8 : v] = (uint8_t)v;
            og_buffer *bufs[3] = {make_buffer(ctx, a, sizeof a), make_buffer(ctx, b, sizeof b),
                                  make_buffer(ctx, got, sizeof got)};
            og_gemm_args args = {.trans_b = trans_b, .m = 5, .n = 256, .k = 8, .alpha = 1,
                                 .a = bufs[0], .b = bufs[1], .c = bufs[2], .lda = 8,
                                 .ldb = trans_b ? 8 : 256, .ldc = 256};
            og_gemm *g = fp8_gemm(ctx, OG_F32, types[t]);
            og_params chosen;
            cr_assert_eq(og_gemm_choose(g, &args, &chosen), OG_OK);
            cr_expect_eq(chosen.variant, OG_VARIANT_DECODE);
            cr_assert_eq(run_params(g, ctx, &args, &given[i]), OG_OK, "%s",
                         og_context_last_error(ctx));
            cr_assert_eq(og_buffer_read(bufs[2], 0, got, sizeof got), OG_OK);
            for (int r = 0; r < 5; r++)
                expect_codes(types[t], got + 256 * r,
                             trans_b ? "B N x K, decode kernel" : "B K x N, decode kernel");
            og_gemm_destroy(g);
            for (int j = 0; j < 3; j++)
                og_buffer_destroy(bufs[j]);
            memset(b, 0, sizeof b);
        }
    close_context(ctx);
}

/* Random finite codes (or float32 values in [-1, 1)) for an operand. */
static void fill_operand(og_dtype t, void *dst, size_t n, uint64_t *seed)
{
    if (t == OG_F32) {
        og_fill_random(OG_F32, dst, n, seed);
        return;
    }
    uint8_t *codes = dst;
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        uint8_t v = (uint8_t)(*seed >> 56);
        while (!isfinite(decode(t, v)) || fabsf(decode(t, v)) > 512.0f)
            v = (uint8_t)(v + 37);
        codes[i] = v;
    }
}

static float *decoded(og_dtype t, const void *src, size_t n)
{
    float *out = malloc((n ? n : 1) * sizeof *out);
    cr_assert_not_null(out);
    for (size_t i = 0; i < n; i++)
        out[i] = t == OG_F32 ? ((const float *)src)[i] : decode(t, ((const uint8_t *)src)[i]);
    return out;
}

/* One product against float64 on the decoded values, scaled by
 * (alpha * scale_a) * scale_b: error within the float32 bound relative to
 * |alpha| |A| |B| + |beta C|. aligned: offsets, leading dimensions and
 * strides in eights (the decode kernel's whole-unit loads), else odd ones;
 * kernel: the start of og_gemm_describe's text, or NULL. */
static void check_product_at(og_context *ctx, og_dtype ta, og_dtype tb, int trans_a, int trans_b,
                             int64_t m, int64_t n, int64_t k, int64_t batch, uint64_t seed,
                             int aligned, const char *kernel_want)
{
    og_gemm_args args = {.trans_a = trans_a,
                         .trans_b = trans_b,
                         .m = m,
                         .n = n,
                         .k = k,
                         .batch = batch,
                         .alpha = 0.75f,
                         .beta = 0.5f,
                         .scale_a = 0.125f,
                         .scale_b = 3.0f,
                         .a_offset = aligned ? 8 : 3,
                         .b_offset = aligned ? 16 : 1};
    args.lda = (trans_a ? m : k) + (aligned ? 8 : 1);
    args.ldb = (trans_b ? k : n) + (aligned ? 8 : 3);
    args.ldc = n;
    args.stride_a = (trans_a ? k : m) * args.lda;
    args.stride_b = (trans_b ? n : k) * args.ldb;
    args.stride_c = m * n;
    size_t na, nb, nc;
    og_gemm_extents(&args, &na, &nb, &nc);
    size_t ea = ta == OG_F32 ? 4 : 1, eb = tb == OG_F32 ? 4 : 1;
    void *a = malloc(na * ea), *b = malloc(nb * eb);
    float *c0 = malloc(nc * 4), *c = malloc(nc * 4);
    double *ref = malloc(nc * 8), *mag = malloc(nc * 8);
    cr_assert(a && b && c0 && c && ref && mag);
    fill_operand(ta, a, na, &seed);
    fill_operand(tb, b, nb, &seed);
    og_fill_random(OG_F32, c0, nc, &seed);
    float *da = decoded(ta, a, na), *db = decoded(tb, b, nb);
    og_gemm_args host = args;
    host.alpha = args.alpha * (ta == OG_F32 ? 1.0f : args.scale_a);
    host.alpha = host.alpha * (tb == OG_F32 ? 1.0f : args.scale_b);
    og_reference_gemm(OG_F32, &host, da, db, c0, ref);
    for (size_t i = 0; i < na; i++)
        da[i] = fabsf(da[i]);
    for (size_t i = 0; i < nb; i++)
        db[i] = fabsf(db[i]);
    host.alpha = fabsf(host.alpha);
    host.beta = 0;
    og_reference_gemm(OG_F32, &host, da, db, c0, mag);
    args.a = make_buffer(ctx, a, na * ea);
    args.b = make_buffer(ctx, b, nb * eb);
    args.c = make_buffer(ctx, c0, nc * 4);
    og_gemm *g = fp8_gemm(ctx, ta, tb);
    char what[160], kernel[256];
    cr_assert_eq(og_gemm_describe(g, &args, kernel, sizeof kernel), OG_OK);
    snprintf(what, sizeof what, "A %s%s, B %s%s, %lldx%lldx%lldx%lld", og_dtype_name(ta),
             trans_a ? "^T" : "", og_dtype_name(tb), trans_b ? "^T" : "", (long long)m,
             (long long)n, (long long)k, (long long)batch);
    if (kernel_want)
        cr_expect(strncmp(kernel, kernel_want, strlen(kernel_want)) == 0, "%s runs %s", what,
                  kernel);
    cr_assert_eq(og_gemm_run(g, &args), OG_OK, "%s: %s", what, og_context_last_error(ctx));
    cr_assert_eq(og_buffer_read(args.c, 0, c, nc * 4), OG_OK);
    for (size_t e = 0; e < nc; e++) {
        double tol = 1e-5 * (mag[e] + fabs(0.5 * c0[e])) + 1e-30;
        cr_assert(fabs((double)c[e] - ref[e]) <= tol, "%s (%s): element %zu is %a, want %a", what,
                  kernel, e, (double)c[e], ref[e]);
    }
    cr_log_info("%s: %s", what, kernel);
    og_gemm_destroy(g);
    og_buffer_destroy(args.a);
    og_buffer_destroy(args.b);
    og_buffer_destroy(args.c);
    free(a), free(b), free(c0), free(c), free(ref), free(mag), free(da), free(db);
}

static void check_product(og_context *ctx, og_dtype ta, og_dtype tb, int trans_a, int trans_b,
                          int64_t m, int64_t n, int64_t k, int64_t batch, uint64_t seed)
{
    check_product_at(ctx, ta, tb, trans_a, trans_b, m, n, k, batch, seed, 0, NULL);
}

/* Weight-only quantised decode steps: float32 activations, FP8 weights,
 * M = 1..4 (the few-rows kernel), both layouts of B. */
Test(fp8, decode_products, .timeout = 300)
{
    og_context *ctx = open_context();
    og_dtype types[2] = {OG_FP8_E4M3, OG_FP8_E5M2};
    for (int t = 0; t < 2; t++)
        for (int64_t m = 1; m <= 4; m++) {
            check_product(ctx, OG_F32, types[t], 0, 0, m, 333, 257, 1, 10 + (uint64_t)m);
            check_product(ctx, OG_F32, types[t], 0, 1, m, 130, 301, 2, 20 + (uint64_t)m);
        }
    close_context(ctx);
}

/* M = 5..16: the decode kernel, FP8 on either side or both, both layouts of
 * B, whole-unit loads (aligned operands, K in eights) and element loads
 * (odd offsets, ragged K). */
Test(fp8, decode_kernel_products, .timeout = 300)
{
    og_context *ctx = open_context();
    const og_dtype pairs[4][2] = {{OG_F32, OG_FP8_E4M3},
                                  {OG_F32, OG_FP8_E5M2},
                                  {OG_FP8_E5M2, OG_FP8_E4M3},
                                  {OG_FP8_E4M3, OG_F32}};
    for (int p = 0; p < 4; p++)
        for (int trans_b = 0; trans_b < 2; trans_b++) {
            uint64_t seed = (uint64_t)(100 * p + 10 * trans_b);
            if ((p + trans_b) % 2)
                check_product_at(ctx, pairs[p][0], pairs[p][1], 0, trans_b, p % 2 ? 5 : 16, 72, 264,
                                 2, seed, 1, "gemm_decode ");
            else
                check_product_at(ctx, pairs[p][0], pairs[p][1], 0, trans_b, 8, 37, 203, 1, seed + 5,
                                 0, "gemm_decode ");
        }
    close_context(ctx);
}

/* The decode kernel's FP8 loads give the bits of float32 weights holding the
 * decoded values, whatever the kernel's parameters: the same order on the
 * same values (A float32 and FP8 A beside FP8 B; alpha * scale_b exact). */
Test(fp8, decode_kernel_bits_of_float32, .timeout = 300)
{
    og_context *ctx = open_context();
    static const og_params given[] = {
        {.variant = OG_VARIANT_DECODE, .rows = 8, .cols = 4, .slices = 32, .tn = 1, .vec = 4},
        {.variant = OG_VARIANT_DECODE, .rows = 8, .cols = 64, .slices = 4, .tn = 8, .vec = 4},
        {.variant = OG_VARIANT_DECODE, .rows = 16, .cols = 64, .slices = 4, .tn = 8, .vec = 4,
         .src = OG_SRC_TEXEL},
        {.variant = OG_VARIANT_DECODE, .rows = 4, .cols = 16, .slices = 8, .tn = 4, .vec = 4,
         .src = OG_SRC_TEXEL},
        {.variant = OG_VARIANT_DECODE, .rows = 2, .cols = 16, .slices = 8, .tn = 2, .vec = 1},
    };
    /* Each set with one pair and layout (every kernel is a compile of its
     * own): both pairs and both layouts from storage and from texels. */
    const og_dtype pairs[2][2] = {{OG_F32, OG_FP8_E4M3}, {OG_FP8_E5M2, OG_FP8_E5M2}};
    static const int pair_of[] = {0, 1, 0, 1, 1}, trans_b_of[] = {1, 0, 0, 1, 0};
    int64_t m = 9, n = 48, k = 200;
    uint64_t seed = 7;
    for (size_t i = 0; i < sizeof given / sizeof given[0]; i++) {
        int trans_b = trans_b_of[i];
        og_dtype ta = pairs[pair_of[i]][0], tb = pairs[pair_of[i]][1];
        size_t na = (size_t)(m * k), nb = (size_t)(n * k), nc = (size_t)(m * n);
        size_t ea = ta == OG_F32 ? 4 : 1, eb = tb == OG_F32 ? 4 : 1;
        void *a = malloc(na * ea), *b = malloc(nb * eb);
        float *got = calloc(nc, 4), *want = malloc(nc * 4);
        cr_assert(a && b && got && want);
        fill_operand(ta, a, na, &seed);
        fill_operand(tb, b, nb, &seed);
        float *da = decoded(ta, a, na), *db = decoded(tb, b, nb);
        og_gemm_args args = {.trans_b = trans_b, .m = m, .n = n, .k = k, .alpha = 0.75f,
                             .scale_a = 0.5f, .scale_b = 2.0f, .lda = k, .ldb = trans_b ? k : n,
                             .ldc = n};
        og_gemm_args as_f32 = args;
        as_f32.alpha = (ta == OG_F32 ? 0.75f : 0.375f) * 2.0f;
        args.a = make_buffer(ctx, a, na * ea);
        args.b = make_buffer(ctx, b, nb * eb);
        args.c = make_buffer(ctx, got, nc * 4);
        as_f32.a = make_buffer(ctx, da, na * 4);
        as_f32.b = make_buffer(ctx, db, nb * 4);
        as_f32.c = make_buffer(ctx, got, nc * 4);
        og_gemm *g = fp8_gemm(ctx, ta, tb), *g32 = fp8_gemm(ctx, OG_F32, OG_F32);
        cr_assert_eq(run_params(g, ctx, &args, &given[i]), OG_OK, "%s", og_context_last_error(ctx));
        cr_assert_eq(run_params(g32, ctx, &as_f32, &given[i]), OG_OK, "%s",
                     og_context_last_error(ctx));
        cr_assert_eq(og_buffer_read(args.c, 0, got, nc * 4), OG_OK);
        cr_assert_eq(og_buffer_read(as_f32.c, 0, want, nc * 4), OG_OK);
        size_t e = 0, bad = bits_differ(got, want, nc, &e);
        cr_expect_eq(bad, 0,
                     "A %s, B %s%s, candidate %zu: %zu elements differ; element %zu is %a, "
                     "float32 gives %a",
                     og_dtype_name(ta), og_dtype_name(tb), trans_b ? "^T" : "", i, bad, e,
                     (double)got[e], (double)want[e]);
        og_gemm_destroy(g);
        og_gemm_destroy(g32);
        og_buffer_destroy(args.a), og_buffer_destroy(args.b), og_buffer_destroy(args.c);
        og_buffer_destroy(as_f32.a), og_buffer_destroy(as_f32.b), og_buffer_destroy(as_f32.c);
        free(a), free(b), free(got), free(want), free(da), free(db);
    }
    close_context(ctx);
}

/* The tile: every layout, ragged shapes, batches, FP8 on either side or
 * both, and a small grid with a long K (split-k ranges). */
Test(fp8, tile_products, .timeout = 300)
{
    og_context *ctx = open_context();
    const og_dtype pairs[4][2] = {{OG_FP8_E4M3, OG_F32},
                                  {OG_FP8_E5M2, OG_FP8_E4M3},
                                  {OG_FP8_E4M3, OG_FP8_E4M3},
                                  {OG_F32, OG_FP8_E5M2}};
    for (int p = 0; p < 4; p++)
        for (int t = 0; t < 4; t++)
            check_product(ctx, pairs[p][0], pairs[p][1], t & 1, t >> 1, 67, 45, 39, 2,
                          (uint64_t)(p * 4 + t));
    check_product(ctx, OG_FP8_E4M3, OG_FP8_E4M3, 0, 1, 40, 40, 2000, 1, 99);
    close_context(ctx);
}

/* Pairs outside the list, non-finite scales: refused, naming what is wrong,
 * C untouched. */
Test(fp8, bad_arguments)
{
    og_context *ctx = open_context();
    og_gemm *g = NULL;
    cr_expect_eq(og_gemm_create(ctx, OG_FP8_E4M3, OG_MODE_FAST, &g), OG_ERROR_INVALID_ARGUMENT);
    cr_expect(strstr(og_context_last_error(ctx), "og_gemm_create_desc"), "%s",
              og_context_last_error(ctx));
    og_gemm_desc d = {.a_type = OG_FP8_E4M3, .b_type = OG_F16};
    cr_expect_eq(og_gemm_create_desc(ctx, &d, &g), OG_ERROR_INVALID_ARGUMENT);
    d = (og_gemm_desc){.a_type = OG_FP8_E5M2, .b_type = OG_INT8};
    cr_expect_eq(og_gemm_create_desc(ctx, &d, &g), OG_ERROR_INVALID_ARGUMENT);
    d = (og_gemm_desc){.a_type = OG_FP8_E4M3, .precision = OG_PRECISION_RECOVERED};
    cr_expect_eq(og_gemm_create_desc(ctx, &d, &g), OG_ERROR_INVALID_ARGUMENT);
    cr_expect_null(g);

    g = fp8_gemm(ctx, OG_F32, OG_FP8_E4M3);
    uint8_t codes[16] = {0x38};
    float a[4] = {1, 2, 3, 4}, sentinel[4] = {7, 7, 7, 7}, back[4];
    og_gemm_args args = {
        .m = 1, .n = 4, .k = 1, .alpha = 1, .lda = 1, .ldb = 4, .ldc = 4, .scale_b = INFINITY};
    og_buffer *b = make_buffer(ctx, codes, sizeof codes);
    args.a = make_buffer(ctx, a, sizeof a);
    args.b = b;
    args.c = make_buffer(ctx, sentinel, sizeof sentinel);
    cr_expect_eq(og_gemm_run(g, &args), OG_ERROR_INVALID_ARGUMENT);
    cr_expect(strstr(og_context_last_error(ctx), "FP8 scale of B"), "%s",
              og_context_last_error(ctx));
    /* B needs K x ldb = 4 bytes: a 3-byte buffer is too small. */
    args.scale_b = 0;
    og_buffer *small = make_buffer(ctx, codes, 3);
    args.b = small;
    cr_expect_eq(og_gemm_run(g, &args), OG_ERROR_INVALID_ARGUMENT);
    cr_expect(strstr(og_context_last_error(ctx), "B needs 4 elements"), "%s",
              og_context_last_error(ctx));
    cr_assert_eq(og_buffer_read(args.c, 0, back, sizeof back), OG_OK);
    cr_expect(memcmp(back, sentinel, sizeof back) == 0, "C was written by a refused call");
    char text[256];
    cr_assert_eq(og_gemm_describe(g, &args, text, sizeof text), OG_OK);
    cr_expect(strstr(text, "A f32, B e4m3"), "%s", text);
    og_buffer_destroy(small);
    og_buffer_destroy(b);
    og_buffer_destroy(args.a);
    og_buffer_destroy(args.c);
    og_gemm_destroy(g);
    close_context(ctx);
}
