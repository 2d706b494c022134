/* The dense decode kernel (templates/gemm_decode.tmpl): float16 and
 * bfloat16 at M <= 16, float32 at 5 <= M <= 16 (FP8 in test_fp8.c), A not
 * transposed, B N x K and K x N; chosen from the shape, right against the float64 reference and bit for bit the host
 * emulation of its documented order (docs/accumulation-order.md, "Decode
 * kernel"), with 16-byte and element loads, ragged K, batches. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "og_test.h"

/* M = 1, 2, 3, 8, 16 rows of type t at N x K, batch b (float32: 5, 8, 16;
 * the few-rows kernel takes fewer). */
static void check_rows(og_dtype t, og_mode mode, int trans_b, int64_t n, int64_t k, int64_t batch,
                       const og_params *p)
{
    og_context *ctx = open_context();
    int fused = device_fuses(ctx);
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, t, mode, &g), OG_OK);
    static const int64_t rows16[] = {1, 2, 3, 8, 16}, rows32[] = {5, 8, 16};
    const int64_t *rows = t == OG_F32 ? rows32 : rows16;
    size_t count = t == OG_F32 ? 3 : 5;
    for (size_t r = 0; r < count; r++) {
        int64_t m = rows[r];
        og_problem *pr;
        cr_assert_eq(og_problem_create(ctx, t, 0, trans_b, m, n, k, batch, 70 + (uint64_t)m, &pr),
                     OG_OK);
        problem_scalars(pr, 1.25f, r % 2 ? 0.5f : 0.0f);
        og_params chosen;
        cr_assert_eq(og_gemm_choose(g, &pr->args, &chosen), OG_OK);
        cr_expect_eq(chosen.variant, OG_VARIANT_DECODE, "M = %lld does not run the decode kernel",
                     (long long)m);
        char what[128];
        snprintf(what, sizeof what, "%s %s %lldx%lldx%lld batch %lld B %s%s",
                 og_dtype_name(t), mode ? "deterministic" : "fast", (long long)m, (long long)n,
                 (long long)k, (long long)batch, trans_b ? "N x K" : "K x N", p ? " (given)" : "");
        check_problem(g, pr, p, fused, what);
        og_problem_destroy(pr);
    }
    og_gemm_destroy(g);
    close_context(ctx);
}

/* K a multiple of eight: 16-byte loads; ragged K: element loads and the
 * last unit's tail. */
Test(decode, float16_both_layouts, .timeout = 600)
{
    for (int trans_b = 0; trans_b < 2; trans_b++) {
        check_rows(OG_F16, OG_MODE_DETERMINISTIC, trans_b, 45, 256, 1, NULL);
        check_rows(OG_F16, OG_MODE_DETERMINISTIC, trans_b, 37, 203, 2, NULL);
        check_rows(OG_F16, OG_MODE_FAST, trans_b, 300, 1001, 1, NULL);
    }
}

Test(decode, bfloat16_both_layouts, .timeout = 600)
{
    for (int trans_b = 0; trans_b < 2; trans_b++) {
        check_rows(OG_BF16, OG_MODE_DETERMINISTIC, trans_b, 45, 264, 1, NULL);
        check_rows(OG_BF16, OG_MODE_FAST, trans_b, 70, 77, 3, NULL);
    }
}

/* Float32 weights: two 16-byte loads a unit of eight. */
Test(decode, float32_both_layouts, .timeout = 600)
{
    for (int trans_b = 0; trans_b < 2; trans_b++) {
        check_rows(OG_F32, OG_MODE_DETERMINISTIC, trans_b, 45, 256, 1, NULL);
        check_rows(OG_F32, OG_MODE_DETERMINISTIC, trans_b, 37, 203, 2, NULL);
        check_rows(OG_F32, OG_MODE_FAST, trans_b, 300, 1001, 1, NULL);
    }
}

/* The tuner's candidates: rows, columns, slices, columns an invocation
 * (tn), both load widths and both sources, each in the documented order of
 * its own slices; N = 40 (K x N's 16-byte row loads, a group of columns
 * past N) and N = 29 (element loads where N is not a multiple of eight). */
Test(decode, candidates, .timeout = 600)
{
    static const og_params given[] = {
        {.variant = OG_VARIANT_DECODE, .rows = 16, .cols = 1, .slices = 128, .tn = 1, .vec = 4},
        {.variant = OG_VARIANT_DECODE, .rows = 4, .cols = 16, .slices = 8, .tn = 1, .vec = 1},
        {.variant = OG_VARIANT_DECODE, .rows = 2, .cols = 64, .slices = 2, .tn = 1, .vec = 4},
        {.variant = OG_VARIANT_DECODE, .rows = 8, .cols = 64, .slices = 4, .tn = 4, .vec = 4},
        {.variant = OG_VARIANT_DECODE, .rows = 2, .cols = 64, .slices = 4, .tn = 8, .vec = 4,
         .src = OG_SRC_TEXEL},
        {.variant = OG_VARIANT_DECODE, .rows = 16, .cols = 16, .slices = 8, .tn = 2, .vec = 1,
         .src = OG_SRC_TEXEL},
        {.variant = OG_VARIANT_DECODE, .rows = 1, .cols = 32, .slices = 4, .tn = 4, .vec = 4,
         .src = OG_SRC_TEXEL},
    };
    for (size_t i = 0; i < sizeof given / sizeof given[0]; i++)
        for (int trans_b = 0; trans_b < 2; trans_b++) {
            check_rows(OG_F16, OG_MODE_FAST, trans_b, 40, 328, 1, &given[i]);
            check_rows(OG_BF16, OG_MODE_DETERMINISTIC, trans_b, 29, 136, 2, &given[i]);
            check_rows(OG_F32, OG_MODE_FAST, trans_b, 40, 328, 1, &given[i]);
        }
}

/* Not decode-shaped: 17 rows, A transposed, float32 at 4 rows (few rows),
 * the HLSL context. */
Test(decode, chosen_only_for_its_shapes)
{
    og_context *ctx = open_context();
    og_choice c;
    cr_assert_eq(og_select(ctx, OG_F16, OG_MODE_FAST, 0, 1, 16, 4096, 4096, 1, &c), OG_OK);
    cr_expect_eq(c.params.variant, OG_VARIANT_DECODE);
    cr_expect_eq(c.params.rows, 16);
    cr_assert_eq(og_select(ctx, OG_BF16, OG_MODE_DETERMINISTIC, 0, 0, 3, 4096, 4096, 1, &c), OG_OK);
    cr_expect_eq(c.params.variant, OG_VARIANT_DECODE);
    cr_expect_eq(c.params.rows, 4);
    cr_assert_eq(og_select(ctx, OG_F16, OG_MODE_FAST, 0, 1, 17, 4096, 4096, 1, &c), OG_OK);
    cr_expect_neq(c.params.variant, OG_VARIANT_DECODE);
    cr_assert_eq(og_select(ctx, OG_F16, OG_MODE_FAST, 1, 1, 8, 4096, 4096, 1, &c), OG_OK);
    cr_expect_neq(c.params.variant, OG_VARIANT_DECODE);
    cr_assert_eq(og_select(ctx, OG_F32, OG_MODE_FAST, 0, 1, 4, 4096, 4096, 1, &c), OG_OK);
    cr_expect_eq(c.params.variant, OG_VARIANT_FEWROWS);
    cr_assert_eq(og_select(ctx, OG_F32, OG_MODE_DETERMINISTIC, 0, 0, 5, 4096, 4096, 1, &c), OG_OK);
    cr_expect_eq(c.params.variant, OG_VARIANT_DECODE);
    cr_expect_eq(c.params.rows, 8);
    cr_assert_eq(og_select(ctx, OG_F32, OG_MODE_FAST, 0, 1, 17, 4096, 4096, 1, &c), OG_OK);
    cr_expect_neq(c.params.variant, OG_VARIANT_DECODE);
    ctx->dialect = OG_HLSL;
    cr_assert_eq(og_select(ctx, OG_F16, OG_MODE_FAST, 0, 1, 8, 4096, 4096, 1, &c), OG_OK);
    cr_expect_neq(c.params.variant, OG_VARIANT_DECODE, "the decode kernel is GLSL only");
    close_context(ctx);
}

/* B past maxStorageBufferRange: the decode kernel reads through bindings
 * only, so the call runs the portable tile, which reaches B by its device
 * address, and og_gemm_describe names the tile (with why, where the shape
 * alone chose the decode kernel); a B the binding holds runs the decode
 * kernel. */
Test(decode, operand_past_the_binding_runs_the_tile)
{
    og_context *ctx = open_context();
    const og_limits *lim = og_context_limits(ctx);
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F16, OG_MODE_FAST, &g), OG_OK);
    int64_t k = 1024, n = (int64_t)(lim->max_storage_range / 2 / (uint64_t)k) + 64;
    og_buffer *a, *b, *c;
    cr_assert_eq(og_buffer_create(ctx, 2 * 16 * (uint64_t)k, &a), OG_OK);
    cr_assert_eq(og_buffer_create(ctx, 2 * (uint64_t)n * (uint64_t)k, &b), OG_OK);
    cr_assert_eq(og_buffer_create(ctx, 4 * 16 * (uint64_t)n, &c), OG_OK);
    og_gemm_args args = {.trans_b = 1, .m = 16, .n = n, .k = k, .alpha = 1.0f, .a = a, .b = b,
                         .c = c, .lda = k, .ldb = k, .ldc = n};
    og_params p;
    cr_assert_eq(og_gemm_choose(g, &args, &p), OG_OK);
    cr_expect_eq(p.variant, OG_VARIANT_TILE, "B of %lld bytes ran variant %d",
                 (long long)(2 * n * k), (int)p.variant);
    /* og_gemm_describe names what runs: the shape's own choice is the
     * tile (a dense B of it passes the binding). */
    char text[512];
    cr_assert_eq(og_gemm_describe(g, &args, text, sizeof text), OG_OK);
    cr_expect(strncmp(text, "gemm_tile ", 10) == 0 &&
                  strstr(text, "src=addr (B past maxStorageBufferRange)") != NULL,
              "%s", text);
    /* 64 rows of B spread past the binding by their leading dimension: the
     * shape chooses the decode kernel, the call gives way, and the
     * description says why. */
    args.n = 64;
    args.ldb = (int64_t)(lim->max_storage_range / 2 / 63) + 64;
    args.ldc = 64;
    cr_assert_eq(og_gemm_choose(g, &args, &p), OG_OK);
    cr_expect_eq(p.variant, OG_VARIANT_TILE, "a strided B ran variant %d", (int)p.variant);
    cr_assert_eq(og_gemm_describe(g, &args, text, sizeof text), OG_OK);
    cr_expect(strncmp(text, "gemm_tile ", 10) == 0 &&
                  strstr(text, "the decode kernel cannot reach an operand past "
                               "maxStorageBufferRange") != NULL,
              "%s", text);
    args.ldb = k;
    args.n = 4096; /* the same shape class, B inside the binding */
    args.ldc = 4096;
    cr_assert_eq(og_gemm_choose(g, &args, &p), OG_OK);
    cr_expect_eq(p.variant, OG_VARIANT_DECODE);
    cr_assert_eq(og_gemm_describe(g, &args, text, sizeof text), OG_OK);
    cr_expect(strncmp(text, "gemm_decode ", 12) == 0, "%s", text);
    og_buffer_destroy(a);
    og_buffer_destroy(b);
    og_buffer_destroy(c);
    og_gemm_destroy(g);
    close_context(ctx);
}

/* Selection from the shape alone (ogtune select): where one dense B of the
 * shape passes maxStorageBufferRange no call can run the decode kernel, so
 * the choice is the tile; one element fewer a row of B keeps the decode
 * kernel. */
Test(decode, selection_past_the_binding_names_the_tile)
{
    og_context *ctx = open_context();
    const og_limits *lim = og_context_limits(ctx);
    int64_t k = 1024, n = (int64_t)(lim->max_storage_range / 2 / (uint64_t)k);
    og_choice c;
    cr_assert_eq(og_select(ctx, OG_F16, OG_MODE_FAST, 0, 1, 8, n + 1, k, 1, &c), OG_OK);
    cr_expect_eq(c.params.variant, OG_VARIANT_TILE, "N = %lld chose variant %d", (long long)(n + 1),
                 (int)c.params.variant);
    cr_assert_eq(og_select(ctx, OG_F16, OG_MODE_FAST, 0, 1, 8, n, k, 1, &c), OG_OK);
    cr_expect_eq(c.params.variant, OG_VARIANT_DECODE, "N = %lld chose variant %d", (long long)n,
                 (int)c.params.variant);
    close_context(ctx);
}
