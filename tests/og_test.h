/* Helpers shared by the Criterion tests that run GEMMs on a Vulkan device. */
#ifndef OG_TEST_H
#define OG_TEST_H

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "og_internal.h" /* the tests look inside the runtime */
#include "og_tuner.h"

/* Every how many cases of their sweeps the heavy tests run:
 * OG_TEST_STRIDE, else 1 (all). scripts/test.sh's validation and sanitizer
 * passes take every 8th, the first always among them: the plain pass has
 * run them all on the same kernels, and those passes look for what does
 * not depend on the case (the Vulkan calls' validity, the host code's
 * memory and undefined behaviour), which is where their time goes. */
static inline int og_test_stride(void)
{
    const char *env = getenv("OG_TEST_STRIDE");
    int stride = env ? atoi(env) : 1;
    return stride > 1 ? stride : 1;
}

/* A context on the default device (OG_DEVICE) that reads no tuning database
 * (so Fast mode selects what it would on an untuned machine), or the test fails. */
static inline og_context *open_context(void)
{
    og_context *ctx = NULL;
    og_status st = og_context_create(&(og_context_desc){.tuning_db = ""}, &ctx);
    cr_assert_eq(st, OG_OK, "og_context_create: %d: %s", st, og_last_error());
    return ctx;
}

/* Destroys the context and fails the test if the validation layer (on
 * with OG_VALIDATION=1) reported any error during it, its destruction
 * included (objects left behind are reported then). */
static inline void close_context(og_context *ctx)
{
    uint32_t errors = og_context_validation_errors(ctx), before = og_validation_errors_total();
    og_context_destroy(ctx);
    errors += og_validation_errors_total() - before;
    cr_assert_eq(errors, 0, "%" PRIu32 " Vulkan validation errors", errors);
}

/* A buffer holding `bytes` bytes of data (none when bytes is 0). */
static inline og_buffer *make_buffer(og_context *ctx, const void *data, size_t bytes)
{
    og_buffer *buf = NULL;
    cr_assert_eq(og_buffer_create(ctx, bytes, &buf), OG_OK, "og_buffer_create: %s",
                 og_context_last_error(ctx));
    if (bytes)
        cr_assert_eq(og_buffer_write(buf, 0, data, bytes), OG_OK);
    return buf;
}

/* Runs the GEMM with parameters p (not the selected ones) and waits. */
static inline og_status run_params(og_gemm *g, og_context *ctx, const og_gemm_args *args,
                                   const og_params *p)
{
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    cr_assert_eq(ctx->vk.vkBeginCommandBuffer(ctx->cmd, &begin), VK_SUCCESS);
    og_status st = og_gemm_encode_params(g, ctx->cmd, args, p);
    cr_assert_eq(ctx->vk.vkEndCommandBuffer(ctx->cmd), VK_SUCCESS);
    return st != OG_OK ? st : og_submit_wait(ctx, ctx->cmd);
}

/* Runs Int8Gemm with parameters p (not the selected ones) and waits. */
static inline og_status run_int8_params(og_int8gemm *g, og_context *ctx,
                                        const og_int8gemm_args *args, const og_params *p)
{
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    cr_assert_eq(ctx->vk.vkBeginCommandBuffer(ctx->cmd, &begin), VK_SUCCESS);
    og_status st = og_int8gemm_encode_params(g, ctx->cmd, args, p);
    cr_assert_eq(ctx->vk.vkEndCommandBuffer(ctx->cmd), VK_SUCCESS);
    return st != OG_OK ? st : og_submit_wait(ctx, ctx->cmd);
}

/* Runs a low-bit weight product with parameters p (not the selected ones) and waits. */
static inline og_status run_qparams(og_qgemm *q, og_context *ctx, const og_qgemm_args *args,
                             const og_params *p)
{
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    cr_assert_eq(ctx->vk.vkBeginCommandBuffer(ctx->cmd, &begin), VK_SUCCESS);
    og_status st = og_qgemm_encode_params(q, ctx->cmd, args, p);
    cr_assert_eq(ctx->vk.vkEndCommandBuffer(ctx->cmd), VK_SUCCESS);
    return st != OG_OK ? st : og_submit_wait(ctx, ctx->cmd);
}

/* C = A * B for A 1 x k and B k x 1 (float32), in its own GEMM object. */
static inline float run_dot(og_context *ctx, og_mode mode, const float *a, const float *b, int k)
{
    og_gemm_args g = {.m = 1, .n = 1, .k = k, .alpha = 1.0f, .lda = k, .ldb = 1, .ldc = 1};
    og_gemm *gemm;
    float c = 0;
    g.a = make_buffer(ctx, a, (size_t)k * sizeof *a);
    g.b = make_buffer(ctx, b, (size_t)k * sizeof *b);
    g.c = make_buffer(ctx, &c, sizeof c);
    cr_assert_eq(og_gemm_create(ctx, OG_F32, mode, &gemm), OG_OK);
    cr_assert_eq(og_gemm_run(gemm, &g), OG_OK, "%s", og_context_last_error(ctx));
    og_buffer_read(g.c, 0, &c, sizeof c);
    og_gemm_destroy(gemm);
    og_buffer_destroy(g.a);
    og_buffer_destroy(g.b);
    og_buffer_destroy(g.c);
    return c;
}

/* Whether the device's shader fma rounds once. With A = [-1, 1 + 2^-12] and
 * B = [1, 1 + 2^-12] the exact sum is 2^-11 + 2^-24: a fused fma keeps it,
 * a rounded product (1 + 2^-11) loses the 2^-24. */
static inline int device_fuses(og_context *ctx)
{
    const float a[2] = {-1.0f, 1.0f + 0x1p-12f}, b[2] = {1.0f, 1.0f + 0x1p-12f};
    float c = run_dot(ctx, OG_MODE_FAST, a, b, 2);
    cr_assert(c == 0x1p-11f + 0x1p-24f || c == 0x1p-11f, "fma probe gave %a", (double)c);
    return c != 0x1p-11f;
}

static inline uint64_t ceil_div64(uint64_t x, uint64_t y)
{
    return (x + y - 1) / y;
}

/* The split-k ranges docs/accumulation-order.md ("Split-k") gives a tile
 * call, worked out here from the document so that the tests' oracles do not
 * take them from og_split_ranges, the code under test. split: OG_SPLIT_RULE,
 * 1, or the n of Fast mode's split=n; scratch_floats: the planes' room. One
 * range of K terms when the product is not split. */
static inline void documented_ranges(int split, int64_t m, int64_t n, int64_t k, int64_t batch,
                                     uint64_t scratch_floats, uint32_t *ranges, uint32_t *len)
{
    uint64_t M = (uint64_t)m, N = (uint64_t)n, K = (uint64_t)k, B = (uint64_t)batch, l;
    *ranges = 1;
    *len = (uint32_t)k;
    if (split == 1 || m < 1 || n < 1 || k < 1 || batch < 1)
        return;
    if (split == OG_SPLIT_RULE) {
        uint64_t groups = ceil_div64(M, 64) * ceil_div64(N, 64) * B;
        if (groups >= 384 || K < 128)
            return;
        uint64_t want = ceil_div64(384, groups) < 16 ? ceil_div64(384, groups) : 16;
        l = ceil_div64(ceil_div64(K, want), 32) * 32;
        l = l < 64 ? 64 : l;
    } else {
        l = ceil_div64(K, (uint64_t)split);
    }
    /* Fewer, longer ranges when the planes do not fit the scratch. */
    uint64_t plane = M * N * B, count = ceil_div64(K, l);
    if (count * plane > scratch_floats) {
        uint64_t fit = scratch_floats / plane;
        if (fit < 2)
            return;
        l = ceil_div64(K, fit);
        if (split == OG_SPLIT_RULE)
            l = ceil_div64(l, 32) * 32;
        count = ceil_div64(K, l);
    }
    if (count < 2)
        return;
    *ranges = (uint32_t)count;
    *len = (uint32_t)l;
}

/* The order a call with parameters p sums in (docs/accumulation-order.md):
 * the tile's, few rows' and the decode kernel's own, over the split ranges documented_ranges
 * gives. */
static inline void documented_order(const og_gemm *g, const og_gemm_args *args, const og_params *p,
                                    og_order *out)
{
    int decode = p->variant == OG_VARIANT_DECODE; /* units of eight, the tree */
    *out = (og_order){.variant = p->variant,
                      .acc = p->acc,
                      .ranges = 1,
                      .range_len = (uint32_t)args->k,
                      .slices = p->slices,
                      .unit = decode ? 8 : 1,
                      .tree = decode};
    if (p->variant == OG_VARIANT_TILE)
        documented_ranges(p->split, args->m, args->n, args->k, args->batch ? args->batch : 1,
                          g->scratch_bytes / 4, &out->ranges, &out->range_len);
}

/* How many of n floats differ bit-wise from want (a bit-exact check: -0 and
 * +0 differ, a NaN equals only the same NaN); *first is the first of them. */
static inline size_t bits_differ(const float *got, const float *want, size_t n, size_t *first)
{
    size_t count = 0;
    for (size_t e = n; e-- > 0;)
        if (memcmp(&got[e], &want[e], sizeof *got) != 0) {
            *first = e;
            count++;
        }
    return count;
}

/* Sets alpha and beta of a tuning problem and recomputes its reference. */
static inline void problem_scalars(og_problem *pr, float alpha, float beta)
{
    pr->args.alpha = alpha;
    pr->args.beta = beta;
    og_reference_gemm(pr->dtype, &pr->args, pr->a, pr->b, pr->c0, pr->ref);
}

/* Runs pr with parameters p (NULL: the selected kernel) and checks C: within
 * the design's bound of the float64 reference, untouched outside its region,
 * and bit for bit the host emulation of the order the call used
 * (og_reference_ordered; fused: the device's shader fma rounds once). */
static inline void check_problem(og_gemm *g, og_problem *pr, const og_params *p, int fused,
                                 const char *what)
{
    int accepted;
    double metric;
    char why[512] = "";
    og_status st = og_problem_verify(g, pr, p, &accepted, &metric, why, sizeof why);
    cr_assert_eq(st, OG_OK, "%s: %s", what, og_context_last_error(g->ctx));
    cr_expect(accepted, "%s: %s", what, why);
    og_params q;
    if (p)
        q = *p;
    else
        cr_assert_eq(og_gemm_choose(g, &pr->args, &q), OG_OK);
    og_order order;
    documented_order(g, &pr->args, &q, &order);
    float *want = malloc(pr->nc * sizeof *want);
    cr_assert_not_null(want);
    og_reference_ordered(pr->dtype, &pr->args, pr->a, pr->b, pr->c0, NULL, fused, &order, want);
    size_t e = 0, bad = bits_differ(pr->c, want, pr->nc, &e);
    cr_assert_eq(bad, 0,
                 "%s: %zu elements differ; element %zu is %a, the documented order (%u ranges of "
                 "%u, %d slices) gives %a",
                 what, bad, e, (double)pr->c[e], order.ranges, order.range_len, order.slices,
                 (double)want[e]);
    free(want);
}

#endif /* OG_TEST_H */
