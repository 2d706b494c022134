/* Lavapipe (Mesa's gallivm) ends every loop of a shader invocation once
 * 65535 iterations have run in all: a k loop longer than that stopped early
 * and left C silently wrong (1x16x1200000 gave 1048560 for sums of ones).
 * The runtime now counts each kernel's iterations (og_kernel_loop_iterations)
 * and refuses what the device cannot loop; at the cap exactly, the answer
 * is exact. On a device without the cap every call below computes. */
#include <criterion/criterion.h>

#include "og_test.h"

/* K terms of ones: every element of C is K (exact in float32 below 2^24). */
typedef struct ones {
    og_context *ctx;
    og_buffer *a, *b, *c;
    og_gemm_args args;
} ones;

static void ones_create(ones *o, int64_t m, int64_t n, int64_t k)
{
    o->ctx = open_context();
    float *a = malloc(sizeof(float) * (size_t)(m * k)),
          *b = malloc(sizeof(float) * (size_t)(k * n));
    cr_assert(a && b);
    for (int64_t i = 0; i < m * k; i++)
        a[i] = 1.0f;
    for (int64_t i = 0; i < k * n; i++)
        b[i] = 1.0f;
    float sentinel[64];
    for (int i = 0; i < 64; i++)
        sentinel[i] = -7.0f;
    cr_assert_leq(m * n, 64);
    o->a = make_buffer(o->ctx, a, sizeof(float) * (size_t)(m * k));
    o->b = make_buffer(o->ctx, b, sizeof(float) * (size_t)(k * n));
    o->c = make_buffer(o->ctx, sentinel, sizeof(float) * (size_t)(m * n));
    free(a);
    free(b);
    o->args = (og_gemm_args){.m = m,
                             .n = n,
                             .k = k,
                             .alpha = 1,
                             .a = o->a,
                             .b = o->b,
                             .c = o->c,
                             .lda = k,
                             .ldb = n,
                             .ldc = n};
}

/* Whether every element of C is `want`. */
static int c_is(ones *o, float want)
{
    float c[64];
    size_t count = (size_t)(o->args.m * o->args.n);
    cr_assert_eq(og_buffer_read(o->c, 0, c, sizeof(float) * count), OG_OK);
    for (size_t i = 0; i < count; i++)
        if (c[i] != want)
            return 0;
    return 1;
}

static void ones_destroy(ones *o)
{
    og_buffer_destroy(o->a);
    og_buffer_destroy(o->b);
    og_buffer_destroy(o->c);
    close_context(o->ctx);
}

/* The few-rows kernel (M = 1: 16 k slices per column): at the cap
 * (65519 slice steps + 16 sums) exact, one step more refused on lavapipe. */
Test(loop_cap, few_rows_kernel_is_exact_at_the_cap_and_refused_past_it, .timeout = 300)
{
    const int64_t at_cap = 16 * (65535 - 16);
    ones o;
    ones_create(&o, 1, 16, at_cap + 16);
    og_gemm *g;
    cr_assert_eq(og_gemm_create(o.ctx, OG_F32, OG_MODE_DETERMINISTIC, &g), OG_OK);
    uint32_t cap = o.ctx->limits.max_loop_iterations;
    og_status st = og_gemm_run(g, &o.args);
    if (cap == 65535) {
        cr_expect_eq(st, OG_ERROR_UNSUPPORTED, "past the cap: %s", og_context_last_error(o.ctx));
        cr_expect(strstr(og_context_last_error(o.ctx), "K = 1048320"), "%s",
                  og_context_last_error(o.ctx));
        cr_expect(c_is(&o, -7.0f), "a refused call leaves C as it was");
    } else {
        cr_expect_eq(st, OG_OK, "%s", og_context_last_error(o.ctx));
        cr_expect(c_is(&o, (float)(at_cap + 16)));
    }
    o.args.k = at_cap;
    cr_assert_eq(og_gemm_run(g, &o.args), OG_OK, "at the cap: %s", og_context_last_error(o.ctx));
    cr_expect(c_is(&o, (float)at_cap), "sums of %" PRId64 " ones", at_cap);
    og_gemm_destroy(g);
    ones_destroy(&o);
}

/* The portable tile with one k range (64x64x16, 4x4 register tile: k steps
 * plus 16): exact at the cap, refused one step past it. */
Test(loop_cap, tile_kernel_is_exact_at_the_cap_and_refused_past_it, .timeout = 300)
{
    const int64_t at_cap = 16 * (65535 - 16);
    ones o;
    ones_create(&o, 5, 8, at_cap + 16);
    og_gemm *g;
    og_params p;
    char why[256];
    cr_assert_eq(og_gemm_create(o.ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    cr_assert_eq(og_params_parse("variant=tile,bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=1,"
                                 "load=staged,acc=blocked,vec=1,src=ssbo,split=1",
                                 &p, why, sizeof why),
                 0, "%s", why);
    double us;
    og_status st = og_gemm_time(g, &o.args, &p, 0, 1, &us);
    if (o.ctx->limits.max_loop_iterations == 65535) {
        cr_expect_eq(st, OG_ERROR_UNSUPPORTED, "past the cap");
        cr_expect(c_is(&o, -7.0f), "a refused call leaves C as it was");
    } else {
        cr_expect_eq(st, OG_OK, "%s", og_context_last_error(o.ctx));
    }
    o.args.k = at_cap;
    cr_assert_eq(og_gemm_time(g, &o.args, &p, 0, 1, &us), OG_OK, "at the cap: %s",
                 og_context_last_error(o.ctx));
    cr_expect(c_is(&o, (float)at_cap), "sums of %" PRId64 " ones", at_cap);
    og_gemm_destroy(g);
    ones_destroy(&o);
}
