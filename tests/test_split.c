/* Split-k (reference design, "Small grids and few rows"): the rule, the
 * scratch planes added in range order, alpha and beta applied once, fewer
 * ranges when the scratch is small, pieces that keep the bits, and what the
 * blocked accumulation order buys over one chain. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "og_test.h"

/* C = alpha * A * B + beta * C for M = N = 1 with B all ones, two ranges
 * forced in Fast mode. */
static float split_dot(const float *a, int k, float alpha, float beta, float c)
{
    og_context *ctx = open_context();
    og_gemm *g;
    const float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    og_gemm_args args = {
        .m = 1, .n = 1, .k = k, .alpha = alpha, .beta = beta, .lda = k, .ldb = 1, .ldc = 1};
    args.a = make_buffer(ctx, a, (size_t)k * 4);
    args.b = make_buffer(ctx, ones, (size_t)k * 4);
    args.c = make_buffer(ctx, &c, 4);
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    og_params p = og_params_default();
    p.split = 2;
    og_order order;
    documented_order(g, &args, &p, &order);
    cr_assert_eq(order.ranges, 2u, "K = %d gives %u ranges, not 2", k, order.ranges);
    cr_assert_eq(run_params(g, ctx, &args, &p), OG_OK, "%s", og_context_last_error(ctx));
    float out;
    og_buffer_read(args.c, 0, &out, 4);
    og_gemm_destroy(g);
    og_buffer_destroy(args.a);
    og_buffer_destroy(args.b);
    og_buffer_destroy(args.c);
    close_context(ctx);
    return out;
}

Test(split, alpha_beta_once_after_the_ranges)
{
    const float a[5] = {1, 2, 3, 4, 5};
    float r = split_dot(a, 4, 2, 3, 10);
    cr_expect_eq(r, 50.0f, "K = 4: %g, want 50", r);
    r = split_dot(a, 4, 2, 0, NAN);
    cr_expect_eq(r, 20.0f, "beta = 0 with C = NaN: %g, want 20", r);
    r = split_dot(a, 5, 2, 3, 10);
    cr_expect_eq(r, 60.0f, "K = 5: %g, want 60", r);
}

/* The documented rule on the reference design's shapes. */
Test(split, rule)
{
    const struct {
        int64_t m, n, k;
        uint32_t ranges, len;
    } cases[] = {
        {128, 768, 768, 12, 64},    /* 24 workgroups: 16 wanted, 48 terms -> 64 */
        {128, 768, 3072, 16, 192},  /* 16 ranges of 192 */
        {128, 2304, 768, 6, 128},   /* 72 workgroups: 6 wanted */
        {1024, 768, 3072, 2, 1536}, /* 192 workgroups: 2 wanted */
        {128, 768, 1000, 16, 64},   /* K not a multiple of 32: the last range is short */
        {128, 768, 127, 1, 127},    /* K < 128 */
        {1024, 1536, 768, 1, 768},  /* 384 workgroups */
        {64, 64, 128, 2, 64},       /* at least 64 terms a range */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t ranges, len;
        og_split_ranges(OG_SPLIT_RULE, cases[i].m, cases[i].n, cases[i].k, 1, OG_SCRATCH_BYTES / 4,
                        &ranges, &len);
        cr_expect(ranges == cases[i].ranges && (ranges == 1 || len == cases[i].len),
                  "%lldx%lldx%lld: %u ranges of %u, want %u of %u", (long long)cases[i].m,
                  (long long)cases[i].n, (long long)cases[i].k, ranges, len, cases[i].ranges,
                  cases[i].len);
    }
}

static void check_shape(og_mode mode, int64_t m, int64_t n, int64_t k, const og_params *p)
{
    og_context *ctx = open_context();
    int fused = device_fuses(ctx);
    og_gemm *g;
    og_problem *pr;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, mode, &g), OG_OK);
    cr_assert_eq(og_problem_create(ctx, OG_F32, 0, 0, m, n, k, 1, 99, &pr), OG_OK);
    problem_scalars(pr, 1.5f, -0.5f);
    char what[128];
    snprintf(what, sizeof what, "%s %lldx%lldx%lld%s", mode ? "deterministic" : "fast",
             (long long)m, (long long)n, (long long)k, p ? " (tuned split)" : "");
    check_problem(g, pr, p, fused, what);
    og_problem_destroy(pr);
    og_gemm_destroy(g);
    close_context(ctx);
}

/* A tuned Fast-mode tile: direct vector loads from texel buffers, 4 ranges. */
static og_params tuned_split4(void)
{
    og_params p = og_params_default();
    p.tm = p.tn = 8;
    p.wgx = p.wgy = 8;
    p.load = OG_LOAD_DIRECT;
    p.vec = 4;
    p.src = OG_SRC_TEXEL;
    p.split = 4;
    return p;
}

Test(split, bert_projection_both_modes, .timeout = 300)
{
    og_params p = tuned_split4();
    check_shape(OG_MODE_DETERMINISTIC, 128, 768, 768, NULL);
    check_shape(OG_MODE_FAST, 128, 768, 768, &p);
}

Test(split, feed_forward_down_both_modes, .timeout = 300)
{
    og_params p = tuned_split4();
    check_shape(OG_MODE_DETERMINISTIC, 128, 768, 3072, NULL);
    check_shape(OG_MODE_FAST, 128, 768, 3072, &p);
}

Test(split, k_not_a_multiple_of_32, .timeout = 300)
{
    og_params p = tuned_split4();
    check_shape(OG_MODE_DETERMINISTIC, 128, 768, 1000, NULL);
    check_shape(OG_MODE_FAST, 128, 768, 1000, &p);
}

/* A scratch of three planes: the rule's 12 ranges become 3 of 256. */
Test(split, fewer_ranges_in_a_small_scratch)
{
    og_context *ctx = open_context();
    int fused = device_fuses(ctx);
    og_gemm *g;
    og_problem *pr;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_DETERMINISTIC, &g), OG_OK);
    g->scratch_bytes = 3 * 128 * 768 * 4 + 100;
    cr_assert_eq(og_problem_create(ctx, OG_F32, 0, 0, 128, 768, 768, 1, 5, &pr), OG_OK);
    og_params p;
    cr_assert_eq(og_gemm_choose(g, &pr->args, &p), OG_OK);
    og_order order;
    documented_order(g, &pr->args, &p, &order);
    cr_expect(order.ranges == 3 && order.range_len == 256, "%u ranges of %u, want 3 of 256",
              order.ranges, order.range_len);
    check_problem(g, pr, NULL, fused, "128x768x768 in a 3-plane scratch");
    cr_expect_eq(og_buffer_size(g->scratch), g->scratch_bytes, "the scratch holds %llu bytes",
                 (unsigned long long)og_buffer_size(g->scratch));
    og_problem_destroy(pr);
    og_gemm_destroy(g);
    close_context(ctx);
}

/* The scratch is made on first use only. */
Test(split, scratch_on_first_use)
{
    og_context *ctx = open_context();
    og_gemm *g;
    og_problem *pr;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    cr_assert_eq(og_problem_create(ctx, OG_F32, 0, 0, 64, 64, 64, 1, 5, &pr), OG_OK);
    cr_assert_eq(og_gemm_run(g, &pr->args), OG_OK);
    cr_expect_null(g->scratch, "an unsplit product made the scratch");
    og_problem_destroy(pr);
    cr_assert_eq(og_problem_create(ctx, OG_F32, 0, 0, 64, 64, 256, 1, 5, &pr), OG_OK);
    cr_assert_eq(og_gemm_run(g, &pr->args), OG_OK);
    cr_assert_not_null(g->scratch, "a split product made no scratch");
    cr_expect_eq(og_buffer_size(g->scratch), (uint64_t)16 << 20);
    og_problem_destroy(pr);
    og_gemm_destroy(g);
    close_context(ctx);
}

/* ---- pieces: a grid over a (lowered) maxComputeWorkGroupCount ---- */

static void run_cut_and_uncut(og_dtype t, int64_t m, int64_t n, int64_t k, int64_t batch,
                              uint32_t max_y, uint32_t max_z)
{
    og_context *ctx = open_context();
    og_gemm *g;
    og_problem *pr;
    cr_assert_eq(og_gemm_create(ctx, t, OG_MODE_DETERMINISTIC, &g), OG_OK);
    cr_assert_eq(og_problem_create(ctx, t, 0, 0, m, n, k, batch, 11, &pr), OG_OK);
    problem_scalars(pr, 0.5f, 2.0f);
    int accepted;
    double metric;
    char why[256];
    cr_assert_eq(og_problem_verify(g, pr, NULL, &accepted, &metric, why, sizeof why), OG_OK);
    cr_assert(accepted, "uncut: %s", why);
    float *uncut = malloc(pr->nc * 4);
    cr_assert_not_null(uncut);
    memcpy(uncut, pr->c, pr->nc * 4);
    og_limits saved = ctx->limits;
    ctx->limits.max_count[1] = max_y;
    ctx->limits.max_count[2] = max_z;
    cr_assert_eq(og_problem_verify(g, pr, NULL, &accepted, &metric, why, sizeof why), OG_OK, "%s",
                 og_context_last_error(ctx));
    ctx->limits = saved;
    cr_expect(accepted, "cut: %s", why);
    cr_expect(memcmp(uncut, pr->c, pr->nc * 4) == 0,
              "%lldx%lldx%lld batch %lld: cut into pieces of %u x %u workgroups changes bits",
              (long long)m, (long long)n, (long long)k, (long long)batch, max_y, max_z);
    free(uncut);
    og_problem_destroy(pr);
    og_gemm_destroy(g);
    close_context(ctx);
}

/* 5 tiles of rows cut into pieces of 2, 3 products with 4 ranges each cut
 * into pieces of 2 products (8 workgroups along z). */
Test(split, pieces_keep_the_bits)
{
    uint32_t ranges, len;
    og_split_ranges(OG_SPLIT_RULE, 300, 70, 200, 3, OG_SCRATCH_BYTES / 4, &ranges, &len);
    cr_assert_eq(ranges, 4u, "the case assumes 4 ranges, the rule gives %u", ranges);
    run_cut_and_uncut(OG_F32, 300, 70, 200, 3, 2, 8);
    run_cut_and_uncut(OG_BF16, 300, 70, 200, 3, 2, 8);
    /* Unsplit (K < 128) and few rows: row and batch pieces. */
    run_cut_and_uncut(OG_F16, 300, 70, 100, 5, 2, 2);
    run_cut_and_uncut(OG_F32, 3, 70, 300, 5, 1, 2);
}

/* ---- accumulation blocking against one chain (Fast mode variants) ---- */

static double chain_or_blocked_error(og_context *ctx, og_gemm *g, og_acc acc, int64_t k)
{
    og_problem *pr;
    cr_assert_eq(og_problem_create(ctx, OG_F32, 0, 0, 64, 64, k, 1, 2024, &pr), OG_OK);
    og_params p = og_params_default();
    p.acc = acc;
    p.split = 1; /* one range: the order alone */
    int accepted;
    double metric;
    char why[256];
    cr_assert_eq(og_problem_verify(g, pr, &p, &accepted, &metric, why, sizeof why), OG_OK);
    og_problem_destroy(pr);
    return metric;
}

/* The reference design reports about 1.5e-7 to 4e-7 for the blocked order
 * and 1e-6 to 4.5e-6 for one chain at K = 768 to 4096. */
Test(split, blocked_order_beats_one_chain, .timeout = 300)
{
    og_context *ctx = open_context();
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    const int64_t ks[] = {768, 2048, 4096};
    for (int i = 0; i < 3; i++) {
        double blocked = chain_or_blocked_error(ctx, g, OG_ACC_BLOCKED, ks[i]);
        double chain = chain_or_blocked_error(ctx, g, OG_ACC_CHAIN, ks[i]);
        cr_log_info("K = %lld: blocked %.3g, one chain %.3g (%.1fx)", (long long)ks[i], blocked,
                    chain, chain / blocked);
        cr_expect_leq(blocked, 5e-7, "K = %lld: blocked error %.3g", (long long)ks[i], blocked);
        cr_expect_geq(chain, 3 * blocked, "K = %lld: one chain %.3g, blocked %.3g",
                      (long long)ks[i], chain, blocked);
    }
    og_gemm_destroy(g);
    close_context(ctx);
}
