/* Lavapipe (Mesa's gallivm) ends every loop of a shader invocation once
 * 65535 iterations have run in all: a k loop longer than that stopped early
 * and left C silently wrong (1x16x1200000 gave 1048560 for sums of ones).
 * The runtime counts each kernel's iterations and refuses what the device
 * cannot loop. The test computes the counts itself from the rules in
 * docs/loop-count.md: for each kernel family, at the largest K the rule
 * allows the answer is exact (so the rule is not too low) and one k step
 * more is refused (so the runtime counts as the rule says). On a device
 * without the cap every call computes. */
#include <criterion/criterion.h>

#include "og_test.h"

enum { LAVAPIPE_LOOP_CAP = 65535 };

static uint64_t steps(int64_t k, int per_step)
{
    return (uint64_t)((k + per_step - 1) / per_step);
}

/* docs/loop-count.md's table, for the families this file runs. */
static uint64_t documented_iterations(const og_params *p, int64_t k)
{
    uint64_t tiles = (uint64_t)(p->tm * p->tn), slices = (uint64_t)p->slices;
    uint64_t rows = (uint64_t)p->rows;
    switch (p->variant) {
    case OG_VARIANT_TILE:
        return steps(k, p->bk) + (p->load == OG_LOAD_DIRECT ? 2u : 1u) + tiles + 1u;
    case OG_VARIANT_FEWROWS:
        return steps(k, 4 * p->slices) + 3u + 16u + 4u * slices;
    case OG_VARIANT_INT8_SKINNY: {
        uint64_t sums = rows * (slices + 1u) + rows + 1u;
        if (p->vec == 4)
            return steps(k, 4 * p->slices) + 3u + rows * 4u * (slices + 1u) + rows + 1u;
        if (p->dot)
            return steps(k, 4 * p->slices) * (1u + rows) + 1u + 3u * rows + sums;
        return steps(k, p->slices) + 1u + sums;
    }
    case OG_VARIANT_INT8_TILE: {
        if (p->load == OG_LOAD_DIRECT)
            return steps(k, p->bk) + 2u * (steps(k, 256) + 1u) + 2u + tiles + 1u;
        uint64_t words = (uint64_t)(p->dot ? p->bk / 4 : p->bk);
        return steps(k, p->bk) * (words + 2u) + 1u + tiles + 1u;
    }
    default:
        cr_assert_fail("no documented count for variant %d here", (int)p->variant);
        return 0;
    }
}

/* The largest multiple of step whose documented count stays within the cap. */
static int64_t k_at_cap(const char *params, int64_t step)
{
    og_params p;
    char why[256];
    cr_assert_eq(og_params_parse(params, &p, why, sizeof why), 0, "%s", why);
    int64_t lo = 1, hi = 1 << 24; /* the count at lo * step fits, at hi * step it does not */
    while (hi - lo > 1) {
        int64_t mid = (lo + hi) / 2;
        if (documented_iterations(&p, mid * step) <= LAVAPIPE_LOOP_CAP)
            lo = mid;
        else
            hi = mid;
    }
    return lo * step;
}

/* A, B of ones and C of -7 (k at most `kmax`, M x N at most 1024): every
 * element of A*B is K, exact in float32 below 2^24. */
typedef struct ones {
    og_context *ctx;
    og_gemm *g;
    og_buffer *a, *b, *c;
    og_gemm_args args;
} ones;

static void ones_create(ones *o, int64_t m, int64_t n, int64_t kmax)
{
    cr_assert_leq(m * n, 1024);
    o->ctx = open_context();
    cr_assert_eq(og_gemm_create(o->ctx, OG_F32, OG_MODE_FAST, &o->g), OG_OK);
    size_t na = (size_t)(m * kmax), nb = (size_t)(kmax * n);
    float *a = malloc(sizeof(float) * na), *b = malloc(sizeof(float) * nb);
    cr_assert(a && b);
    for (size_t i = 0; i < na; i++)
        a[i] = 1.0f;
    for (size_t i = 0; i < nb; i++)
        b[i] = 1.0f;
    o->a = make_buffer(o->ctx, a, sizeof(float) * na);
    o->b = make_buffer(o->ctx, b, sizeof(float) * nb);
    cr_assert_eq(og_buffer_create(o->ctx, sizeof(float) * (size_t)(m * n), &o->c), OG_OK);
    free(a);
    free(b);
    o->args = (og_gemm_args){
        .m = m, .n = n, .alpha = 1, .a = o->a, .b = o->b, .c = o->c, .ldb = n, .ldc = n};
}

/* Runs params p at K = k (lda = k) on C = -7; *c0 is C's first element after. */
static og_status ones_run(ones *o, const char *params, int64_t k, float *c0)
{
    og_params p;
    char why[256];
    cr_assert_eq(og_params_parse(params, &p, why, sizeof why), 0, "%s", why);
    float c[1024];
    size_t count = (size_t)(o->args.m * o->args.n);
    for (size_t i = 0; i < count; i++)
        c[i] = -7.0f;
    cr_assert_eq(og_buffer_write(o->c, 0, c, sizeof(float) * count), OG_OK);
    o->args.k = k;
    o->args.lda = k;
    og_timing t;
    og_status st = og_gemm_time(o->g, &o->args, &p, &(og_timing_plan){0, 1, 1, 0}, &t);
    cr_assert_eq(og_buffer_read(o->c, 0, c, sizeof(float) * count), OG_OK);
    for (size_t i = 1; i < count; i++)
        cr_expect_eq(c[i], c[0], "C is not uniform at %zu", i);
    *c0 = c[0];
    return st;
}

static void ones_destroy(ones *o)
{
    og_gemm_destroy(o->g);
    og_buffer_destroy(o->a);
    og_buffer_destroy(o->b);
    og_buffer_destroy(o->c);
    close_context(o->ctx);
}

/* Exact at the cap, and past it refused with C untouched (lavapipe) or exact. */
static void expect_cap(int64_t m, int64_t n, const char *params, int64_t step)
{
    int64_t k = k_at_cap(params, step);
    ones o;
    ones_create(&o, m, n, k + step);
    float c0;
    cr_expect_eq(ones_run(&o, params, k, &c0), OG_OK, "%s at K = %" PRId64 ": %s", params, k,
                 og_context_last_error(o.ctx));
    cr_expect_eq(c0, (float)k, "%s: sums of %" PRId64 " ones gave %.1f", params, k, c0);
    og_status st = ones_run(&o, params, k + step, &c0);
    if (o.ctx->limits.max_loop_iterations == LAVAPIPE_LOOP_CAP) {
        char want[64];
        snprintf(want, sizeof want, "K = %" PRId64 " ", k + step);
        cr_expect_eq(st, OG_ERROR_UNSUPPORTED, "%s past the cap", params);
        cr_expect(strstr(og_context_last_error(o.ctx), want), "%s", og_context_last_error(o.ctx));
        cr_expect_eq(c0, -7.0f, "a refused call leaves C as it was");
    } else {
        cr_expect_eq(st, OG_OK, "%s", og_context_last_error(o.ctx));
        cr_expect_eq(c0, (float)(k + step));
    }
    ones_destroy(&o);
}

/* Four columns of B keep the largest B (K x 4 floats, K near 4.2 million)
 * within lavapipe's 128 MiB binding; they take the edge workgroup's loops,
 * which loop as the interior ones do. */
Test(loop_cap, few_rows_kernel, .timeout = 300)
{
    expect_cap(1, 4, "variant=fewrows,cols=16,slices=16", 16);
    expect_cap(4, 4, "variant=fewrows,cols=16,slices=8,vec=4", 8);
}

Test(loop_cap, tile_kernel_with_one_k_range, .timeout = 300)
{
    expect_cap(5, 8,
               "variant=tile,bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=1,load=staged,"
               "acc=blocked,vec=1,src=ssbo,split=1",
               16);
}

/* Direct loads in a workgroup wholly inside C: the unchecked loop of whole
 * k steps, then the checked loop for the tail (one more loop to count).
 * A and B at this K nearly fill lavapipe's 128 MiB storage range. */
Test(loop_cap, tile_kernel_with_direct_loads_inside_c, .timeout = 300)
{
    expect_cap(32, 32,
               "variant=tile,bm=32,bn=32,bk=16,tm=2,tn=2,wgx=16,wgy=16,pad=0,load=direct,"
               "acc=chain,vec=1,src=ssbo,split=1",
               16);
}

/* The blocked order with direct loads and k steps of 32 (its joins inside
 * the steps). A and B (16 x 1.4 million floats) fit lavapipe's binding. */
Test(loop_cap, tile_kernel_with_direct_loads_in_blocked_order, .timeout = 300)
{
    expect_cap(16, 16,
               "variant=tile,bm=16,bn=16,bk=32,tm=2,tn=2,wgx=8,wgy=8,pad=0,load=direct,"
               "acc=blocked,vec=1,src=ssbo,split=1",
               32);
}

/* Verifies Int8Gemm params p bit for bit at M x 16 x K (random bytes against
 * the host's int32 sums; rows in whole words when `words`, so word loads run);
 * returns the status of the call. */
static og_status int8_at(og_context *ctx, og_int8gemm *g, const og_params *p, int64_t m, int64_t k,
                         int words, int *accepted)
{
    og_int8_problem *pr;
    char why[256] = "";
    cr_assert_eq((words ? og_int8_problem_create_words : og_int8_problem_create)(
                     ctx, OG_INT8, OG_INT8, 0, 0, m, 16, k, 1, 99, &pr),
                 OG_OK, "%s", og_context_last_error(ctx));
    og_status st = og_int8_problem_verify(g, pr, p, accepted, why, sizeof why);
    cr_expect(st != OG_OK || *accepted, "%" PRId64 "x16x%" PRId64 ": %s", m, k, why);
    og_int8_problem_destroy(pr);
    return st;
}

/* Int8Gemm params `text` at M = m: bit for bit at the largest K its count
 * allows, and one k step past it refused on lavapipe (exact elsewhere). */
static void expect_int8_cap(og_context *ctx, og_int8gemm *g, const char *text, int64_t m,
                            int64_t step, int words)
{
    og_params p;
    char why[256];
    cr_assert_eq(og_params_parse(text, &p, why, sizeof why), 0, "%s", why);
    int64_t k = k_at_cap(text, step);
    int accepted = 0;
    cr_expect_eq(int8_at(ctx, g, &p, m, k, words, &accepted), OG_OK, "%s at K = %" PRId64, text, k);
    cr_expect(accepted, "%s at K = %" PRId64, text, k);
    int capped = ctx->limits.max_loop_iterations == LAVAPIPE_LOOP_CAP;
    cr_expect_eq(int8_at(ctx, g, &p, m, k + step, words, &accepted),
                 capped ? OG_ERROR_UNSUPPORTED : OG_OK, "%s past the cap: %s", text,
                 og_context_last_error(ctx));
}

/* The skinny Int8Gemm kernel, one term a step and four (packed dot
 * products, with a row-end loop per row in every step). */
Test(loop_cap, skinny_int8_kernel, .timeout = 300)
{
    og_context *ctx = open_context();
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    for (int dot = 0; dot <= ctx->limits.integer_dot; dot++) {
        for (int rows = 1; rows <= 2; rows++) {
            char text[128];
            snprintf(text, sizeof text, "variant=int8skinny,rows=%d,cols=16,slices=16,dot=%d", rows,
                     dot);
            expect_int8_cap(ctx, g, text, rows, dot ? 64 : 16, 0);
        }
    }
    og_int8gemm_destroy(g);
    close_context(ctx);
}

/* The Int8Gemm tile (M above 16): k steps of 16, each with its loop over
 * the step's words (4 packed, or 16). */
Test(loop_cap, int8_tile_kernel, .timeout = 300)
{
    og_context *ctx = open_context();
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    for (int dot = 0; dot <= ctx->limits.integer_dot; dot++) {
        char text[128];
        snprintf(text, sizeof text,
                 "variant=int8tile,bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,dot=%d", dot);
        expect_int8_cap(ctx, g, text, 17, 16, 0);
    }
    og_int8gemm_destroy(g);
    close_context(ctx);
}

/* Word loads inside C: the direct-load tile (a 32x16 tile wholly inside C:
 * chunks of whole steps, then the tail's checked loop) and the skinny
 * kernel (16 columns: its unchecked loop of quads, then the checked one). */
Test(loop_cap, int8_word_loads_inside_c, .timeout = 600)
{
    og_context *ctx = open_context();
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    expect_int8_cap(ctx, g,
                    "variant=int8tile,bm=32,bn=16,bk=16,tm=4,tn=4,wgx=4,wgy=8,pad=0,dot=0,"
                    "load=direct,vec=4",
                    32, 16, 1);
    expect_int8_cap(ctx, g, "variant=int8skinny,rows=1,cols=16,slices=8,dot=0,vec=4", 1, 32, 1);
    og_int8gemm_destroy(g);
    close_context(ctx);
}

/* Recovered float32 with range scaling: its exponent pass loops over K
 * (K + 3 iterations with the loops' own), so 65532 is the longest K. The
 * largest element of A is its last, 2^20: a pass cut short would scale it
 * past float16's range. */
Test(loop_cap, range_scaling_exponent_pass, .timeout = 300)
{
    const int64_t at_cap = LAVAPIPE_LOOP_CAP - 3;
    ones o;
    ones_create(&o, 1, 8, at_cap + 1);
    og_gemm *g;
    og_gemm_desc d = {.precision = OG_PRECISION_RECOVERED, .range_scaling = 1};
    cr_assert_eq(og_gemm_create_desc(o.ctx, &d, &g), OG_OK, "%s", og_context_last_error(o.ctx));
    float c[8], last = 1048576.0f;
    cr_assert_eq(og_buffer_write(o.a, sizeof(float) * (size_t)(at_cap - 1), &last, sizeof last),
                 OG_OK);
    o.args.k = o.args.lda = at_cap;
    cr_assert_eq(og_gemm_run(g, &o.args), OG_OK, "%s", og_context_last_error(o.ctx));
    cr_assert_eq(og_buffer_read(o.c, 0, c, sizeof c), OG_OK);
    for (int j = 0; j < 8; j++)
        cr_expect_eq(c[j], (float)(at_cap - 1) + last, "C[%d] = %.1f", j, c[j]);
    o.args.k = o.args.lda = at_cap + 1;
    og_status st = og_gemm_run(g, &o.args);
    if (o.ctx->limits.max_loop_iterations == LAVAPIPE_LOOP_CAP)
        cr_expect_eq(st, OG_ERROR_UNSUPPORTED, "past the cap");
    else
        cr_expect_eq(st, OG_OK, "%s", og_context_last_error(o.ctx));
    og_gemm_destroy(g);
    ones_destroy(&o);
}
