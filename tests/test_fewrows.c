/* The few-rows kernel (reference design, "Small grids and few rows"):
 * float32, M <= 4, A not transposed, both layouts of B, the rule's shapes,
 * tuned shapes, and the operand too large for one binding. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "og_test.h"

/* M = 1..4 against the float64 reference and, bit for bit, the host
 * emulation (slices chained in increasing k, slice sums added in order),
 * with kernels generated as GLSL or HLSL. */
static void check_rows_in(og_dialect dialect, og_mode mode, int trans_b, int64_t n,
                          const og_params *p)
{
    og_context *ctx = open_context();
    ctx->dialect = dialect;
    int fused = device_fuses(ctx);
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, mode, &g), OG_OK);
    for (int64_t m = 1; m <= 4; m++) {
        /* The widest N only for one and four rows: the host reference is slow. */
        if (n > 10000 && m != 1 && m != 4)
            continue;
        og_problem *pr;
        cr_assert_eq(
            og_problem_create(ctx, OG_F32, 0, trans_b, m, n, 256, 1, 40 + (uint64_t)m, &pr), OG_OK);
        problem_scalars(pr, 1.25f, 0.5f);
        og_params chosen;
        cr_assert_eq(og_gemm_choose(g, &pr->args, &chosen), OG_OK);
        cr_expect_eq(chosen.variant, OG_VARIANT_FEWROWS, "M = %lld runs the tile", (long long)m);
        char what[96];
        snprintf(what, sizeof what, "%s %s %lldx%lldx256 B %s",
                 dialect == OG_HLSL ? "HLSL" : "GLSL", mode ? "deterministic" : "fast",
                 (long long)m, (long long)n, trans_b ? "N x K" : "K x N");
        check_problem(g, pr, p, fused, what);
        og_problem_destroy(pr);
    }
    og_gemm_destroy(g);
    close_context(ctx);
}

static void check_rows(og_mode mode, int trans_b, int64_t n, const og_params *p)
{
    check_rows_in(OG_GLSL, mode, trans_b, n, p);
}

/* The HLSL kernels come from the same template. */
Test(fewrows, hlsl_both_layouts)
{
    check_rows_in(OG_HLSL, OG_MODE_DETERMINISTIC, 0, 45, NULL);
    check_rows_in(OG_HLSL, OG_MODE_DETERMINISTIC, 1, 45, NULL);
}

Test(fewrows, b_k_by_n, .timeout = 300)
{
    check_rows(OG_MODE_DETERMINISTIC, 0, 45, NULL);
    check_rows(OG_MODE_DETERMINISTIC, 0, 8192, NULL);
    check_rows(OG_MODE_FAST, 0, 51865, NULL);
}

Test(fewrows, b_n_by_k, .timeout = 300)
{
    check_rows(OG_MODE_DETERMINISTIC, 1, 45, NULL);
    check_rows(OG_MODE_FAST, 1, 8192, NULL);
    check_rows(OG_MODE_DETERMINISTIC, 1, 51865, NULL);
}

/* Fast mode may run other shapes of the kernel (the tuner's candidates). */
Test(fewrows, tuned_shapes, .timeout = 300)
{
    for (int vec = 1; vec <= 4; vec += 3) {
        og_params kn = {.variant = OG_VARIANT_FEWROWS, .cols = 64, .slices = 4, .vec = vec};
        og_params nk = {.variant = OG_VARIANT_FEWROWS, .cols = 4, .slices = 64, .vec = vec};
        check_rows(OG_MODE_FAST, 0, 300, &kn);
        check_rows(OG_MODE_FAST, 1, 300, &nk);
    }
}

/* Where the loops change hands: N around the workgroup's columns (the edge
 * workgroup reads its last column again), K around one step of slices, four
 * steps (one unrolled trip) and the ragged step after them, reading one and
 * four elements at a time; M = 1..4 each, against the documented order bit
 * for bit. (test_plan checks when the runtime reads one element at a time.) */
Test(fewrows, edges_of_the_loops, .timeout = 300)
{
    og_context *ctx = open_context();
    int fused = device_fuses(ctx);
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    const int cols = 16, slices = 8;
    const int64_t ns[] = {1, cols - 1, cols, cols + 1, 2 * cols + 1};
    const int64_t ks[] = {1,          slices - 1,     slices,         slices + 1,
                          4 * slices, 4 * slices + 4, 5 * slices + 3, 12 * slices + 1};
    for (int vec = 1; vec <= 4; vec += 3)
        for (int trans_b = 0; trans_b < 2; trans_b++)
            for (size_t in = 0; in < sizeof ns / sizeof ns[0]; in++)
                for (size_t ik = 0; ik < sizeof ks / sizeof ks[0]; ik++)
                    for (int64_t m = 1; m <= 4; m++) {
                        og_params p = {.variant = OG_VARIANT_FEWROWS,
                                       .cols = cols,
                                       .slices = slices,
                                       .vec = vec};
                        og_problem *pr;
                        cr_assert_eq(og_problem_create(ctx, OG_F32, 0, trans_b, m, ns[in], ks[ik],
                                                       1, (uint64_t)(in * 97 + ik * 7 + (size_t)m),
                                                       &pr),
                                     OG_OK);
                        problem_scalars(pr, 1.25f, 0.5f);
                        char what[96];
                        snprintf(what, sizeof what, "vec=%d %lldx%lldx%lld B %s", vec, (long long)m,
                                 (long long)ns[in], (long long)ks[ik], trans_b ? "N x K" : "K x N");
                        check_problem(g, pr, &p, fused, what);
                        og_problem_destroy(pr);
                    }
    og_gemm_destroy(g);
    close_context(ctx);
}

/* The rule: 16 columns and 16 slices, 32 and 8 from N = 8192; B stored
 * N x K: 8 columns of 32 lanes. Deterministic mode ignores any database. */
Test(fewrows, rule)
{
    og_context *ctx = open_context();
    const struct {
        int trans_b;
        int64_t m, n;
        int cols, slices;
    } cases[] = {{0, 1, 768, 16, 16},
                 {0, 4, 8191, 16, 16},
                 {0, 2, 8192, 32, 8},
                 {1, 1, 768, 8, 32},
                 {1, 4, 51865, 8, 32}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        og_choice c;
        cr_assert_eq(og_select(ctx, OG_F32, OG_MODE_DETERMINISTIC, 0, cases[i].trans_b, cases[i].m,
                               cases[i].n, 768, 1, &c),
                     OG_OK);
        cr_expect(c.params.variant == OG_VARIANT_FEWROWS && c.params.cols == cases[i].cols &&
                      c.params.slices == cases[i].slices,
                  "case %zu: variant %d, %d columns, %d slices", i, c.params.variant, c.params.cols,
                  c.params.slices);
    }
    /* Not few rows: A transposed (the tile); five to sixteen rows and
     * float16 of any few rows are the decode kernel's (tests/test_decode.c). */
    og_choice c;
    og_select(ctx, OG_F32, OG_MODE_DETERMINISTIC, 1, 0, 1, 768, 768, 1, &c);
    cr_expect_eq(c.params.variant, OG_VARIANT_TILE);
    og_select(ctx, OG_F32, OG_MODE_DETERMINISTIC, 0, 0, 5, 768, 768, 1, &c);
    cr_expect_eq(c.params.variant, OG_VARIANT_DECODE);
    og_select(ctx, OG_F16, OG_MODE_DETERMINISTIC, 0, 0, 1, 768, 768, 1, &c);
    cr_expect_eq(c.params.variant, OG_VARIANT_DECODE);
    close_context(ctx);
}

/* Forcing the few-rows kernel on a shape it does not take is unsupported. */
Test(fewrows, forced_on_five_rows)
{
    og_context *ctx = open_context();
    og_gemm *g;
    og_problem *pr;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    cr_assert_eq(og_problem_create(ctx, OG_F32, 0, 0, 5, 40, 40, 1, 3, &pr), OG_OK);
    og_params p = og_params_fewrows(0, 40);
    cr_expect_eq(run_params(g, ctx, &pr->args, &p), OG_ERROR_UNSUPPORTED);
    cr_expect(strstr(og_context_last_error(ctx), "few-rows") != NULL, "message: %s",
              og_context_last_error(ctx));
    og_problem_destroy(pr);
    og_gemm_destroy(g);
    close_context(ctx);
}
