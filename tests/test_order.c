/* The blocked summation order (docs/accumulation-order.md) is a function of
 * the shape only: every acc=blocked configuration, loaded staged, direct or
 * with vector loads, in GLSL or HLSL, gives exactly the bits of the host
 * implementation of that order (og_reference_ordered), with the device's own
 * rounding of a shader fma (fused or not, found by a probe). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "og_test.h"

typedef struct order_case {
    og_dtype dtype;
    int trans_a, trans_b;
    int64_t m, n, k, batch;
    int64_t pad;    /* added to every leading dimension */
    int64_t offset; /* element offset of every operand */
    /* HLSL for the default only (0), or for the even-indexed (1) or the
     * odd-indexed (2) candidates. */
    int hlsl;
    int standard;   /* a spread of the standard space instead of the quick one */
} order_case;

/* Every STANDARD_STRIDE-th candidate of the standard space past the quick
 * ones, from the STANDARD_STRIDE / 2-th. Its large direct-load tiles are the
 * slowest kernels to compile: every 61st (18 tiles) took over half of the
 * test's time cold, every 122nd (9 tiles) still about half of its 244 s in
 * a fresh-clone run. Every 175th from the 87th (7 tiles) keeps tiles of
 * every size (32 to 128, registers 2 to 16 a side, k steps 16 and 32) with
 * staged, direct, vector and texel loads; the quick cases run each load
 * path on every transpose and type. */
#define STANDARD_STRIDE 175

/* The blocked candidates of the quick space (staged and direct, storage and
 * texel buffers, element and vector loads), or a spread of the standard space
 * (every tile and register tile shape the device allows). */
static size_t blocked_candidates(const og_limits *lim, int standard, og_params *out, size_t cap)
{
    og_params *space;
    size_t n, count = 0;
    og_shape shape = {64, 64, 64, 1};
    cr_assert_eq(og_space(lim, standard ? OG_PRESET_STANDARD : OG_PRESET_QUICK, OG_F32, 0, 0,
                          &shape, &space, &n),
                 OG_OK);
    for (size_t i = 0; i < n && count < cap; i++)
        if (space[i].acc == OG_ACC_BLOCKED &&
            (!standard || (i > 10 && i % STANDARD_STRIDE == STANDARD_STRIDE / 2)))
            out[count++] = space[i];
    free(space);
    cr_assert_gt(count, 3, "the quick space holds several blocked candidates");
    return count;
}

static void check_case(const order_case *oc)
{
    og_context *ctx;
    cr_assert_eq(og_context_create(NULL, &ctx), OG_OK, "%s", og_last_error());
    int fused = device_fuses(ctx);
    og_gemm_args g = {.trans_a = oc->trans_a,
                      .trans_b = oc->trans_b,
                      .m = oc->m,
                      .n = oc->n,
                      .k = oc->k,
                      .batch = oc->batch,
                      .alpha = 1.5f,
                      .beta = -0.75f};
    g.lda = (oc->trans_a ? oc->m : oc->k) + oc->pad;
    g.ldb = (oc->trans_b ? oc->k : oc->n) + oc->pad;
    g.ldc = oc->n + oc->pad;
    g.a_offset = g.b_offset = g.c_offset = oc->offset;
    g.stride_a = (oc->trans_a ? oc->k : oc->m) * g.lda + oc->pad;
    g.stride_b = (oc->trans_b ? oc->n : oc->k) * g.ldb + oc->pad;
    g.stride_c = oc->m * g.ldc + oc->pad;
    size_t na, nb, nc, eb = og_dtype_bytes(oc->dtype);
    og_gemm_extents(&g, &na, &nb, &nc);
    void *a = malloc(na * eb), *b = malloc(nb * eb);
    float *c0 = malloc(nc * sizeof(float)), *want = malloc(nc * sizeof(float)),
          *got = malloc(nc * sizeof(float));
    cr_assert(a && b && c0 && want && got);
    uint64_t seed = 42;
    og_fill_random(oc->dtype, a, na, &seed);
    og_fill_random(oc->dtype, b, nb, &seed);
    og_fill_random(OG_F32, c0, nc, &seed);
    cr_assert_eq(og_buffer_create(ctx, na * eb, &g.a), OG_OK);
    cr_assert_eq(og_buffer_create(ctx, nb * eb, &g.b), OG_OK);
    cr_assert_eq(og_buffer_create(ctx, nc * sizeof(float), &g.c), OG_OK);
    og_buffer_write(g.a, 0, a, na * eb);
    og_buffer_write(g.b, 0, b, nb * eb);

    og_params cands[32];
    size_t n = blocked_candidates(&ctx->limits, oc->standard, cands, 32);
    og_order order, computed = {.ranges = 0}; /* the order `want` holds */
    og_gemm *gemm;
    cr_assert_eq(og_gemm_create(ctx, oc->dtype, OG_MODE_FAST, &gemm), OG_OK);
    for (int dialect = OG_GLSL; dialect <= OG_HLSL; dialect++) {
        ctx->dialect = (og_dialect)dialect;
        /* HLSL kernels come from the same template: every candidate once,
         * half of them in the float32 case and half in the float16 one (on
         * lavapipe each half holds staged, direct, vector and texel loads),
         * and the default in the others, keeps the suite short. */
        for (size_t i = 0; i < n; i++) {
            if (dialect == OG_HLSL && (oc->hlsl ? i % 2 != (size_t)oc->hlsl - 1 : i != 0))
                continue;
            /* Most candidates share one order: emulate each order once. */
            documented_order(gemm, &g, &cands[i], &order);
            if (memcmp(&order, &computed, sizeof order) != 0) {
                og_reference_ordered(oc->dtype, &g, a, b, c0, NULL, fused, &order, want);
                computed = order;
            }
            og_buffer_write(g.c, 0, c0, nc * sizeof(float));
            VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
            cr_assert_eq(ctx->vk.vkBeginCommandBuffer(ctx->cmd, &begin), VK_SUCCESS);
            cr_assert_eq(og_gemm_encode_params(gemm, ctx->cmd, &g, &cands[i]), OG_OK, "%s",
                         og_context_last_error(ctx));
            cr_assert_eq(ctx->vk.vkEndCommandBuffer(ctx->cmd), VK_SUCCESS);
            cr_assert_eq(og_submit_wait(ctx, ctx->cmd), OG_OK);
            og_buffer_read(g.c, 0, got, nc * sizeof(float));
            char params[OG_PARAMS_MAX];
            og_params_format(&cands[i], params, sizeof params);
            for (size_t e = 0; e < nc; e++)
                cr_assert(memcmp(&got[e], &want[e], sizeof(float)) == 0,
                          "%s %s %s: element %zu is %a, the documented order (%s fma) gives %a",
                          og_dtype_name(oc->dtype), dialect == OG_HLSL ? "HLSL" : "GLSL", params, e,
                          (double)got[e], fused ? "fused" : "unfused", (double)want[e]);
        }
    }
    og_gemm_destroy(gemm);
    og_buffer_destroy(g.a);
    og_buffer_destroy(g.b);
    og_buffer_destroy(g.c);
    close_context(ctx);
    free(a);
    free(b);
    free(c0);
    free(want);
    free(got);
}

/* K = 300: two whole groups of 128 and a ragged tail of 44 (a short chain,
 * a short block); shapes ragged against every tile. */
Test(order, f32_ragged_unaligned)
{
    check_case(&(order_case){OG_F32, 0, 0, 37, 45, 300, 2, 3, 1, 0, 0});
}

/* Aligned leading dimensions and offsets, whole tiles: the vector-load path runs. */
Test(order, f32_aligned_transposed)
{
    check_case(&(order_case){OG_F32, 1, 1, 64, 64, 160, 1, 4, 4, 1, 0});
}

Test(order, f32_aligned_b_transposed)
{
    check_case(&(order_case){OG_F32, 0, 1, 128, 64, 144, 2, 0, 8, 0, 0});
}

/* A spread of the whole standard space (7 tiles) in GLSL: every
 * configuration sums in the documented order, split-k by the rule included. */
Test(order, f32_standard_space_spread, .timeout = 600)
{
    check_case(&(order_case){OG_F32, 0, 0, 37, 45, 300, 2, 3, 1, 0, 1});
}

Test(order, f16_aligned)
{
    check_case(&(order_case){OG_F16, 0, 0, 64, 128, 272, 1, 0, 4, 2, 0});
}

Test(order, bf16_ragged_a_transposed)
{
    check_case(&(order_case){OG_BF16, 1, 0, 70, 33, 129, 1, 1, 2, 0, 0});
}
