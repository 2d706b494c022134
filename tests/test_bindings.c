/* Descriptor sets that never vanish under a recording: a thousand distinct
 * (A, B, C) triples recorded into one command buffer, plain and split-k,
 * submitted once, under the validation layer; every C exact. The cache's
 * pools grow instead of being reset mid-recording. Destroying a buffer
 * visits its own sets alone, however many the cache holds. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdlib.h>

#include "og_test.h"

#define TRIPLES 1000
#define ROWS 17

/* C_t = A_t * B_t for t < TRIPLES, M = 17, N = 8 (one row past the decode
 * kernel, so the tile and split-k run): A_t holds small integers that
 * depend on t, so any set bound to the wrong triple shows. */
static void thousand_triples(int64_t k)
{
    og_context *ctx = NULL;
    og_context_desc d = {.tuning_db = "", .validation = 1};
    cr_assert_eq(og_context_create(&d, &ctx), OG_OK, "%s", og_last_error());
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    const int64_t m = ROWS, n = 8;
    float *a = malloc(sizeof(float) * (size_t)(m * k));
    float *b = malloc(sizeof(float) * (size_t)(k * n));
    og_buffer **bufs = calloc(3 * TRIPLES, sizeof *bufs);
    cr_assert(a && b && bufs);
    for (int64_t i = 0; i < k * n; i++)
        b[i] = (float)(i % 3) - 1.0f;
    for (int t = 0; t < TRIPLES; t++) {
        for (int64_t i = 0; i < m * k; i++)
            a[i] = (float)((i + t) % 5);
        bufs[3 * t] = make_buffer(ctx, a, sizeof(float) * (size_t)(m * k));
        bufs[3 * t + 1] = make_buffer(ctx, b, sizeof(float) * (size_t)(k * n));
        cr_assert_eq(og_buffer_create(ctx, sizeof(float) * (size_t)(m * n), &bufs[3 * t + 2]),
                     OG_OK);
    }
    char text[256];
    og_gemm_args args = {.m = m, .n = n, .k = k, .alpha = 1, .a = bufs[0], .b = bufs[1],
                         .c = bufs[2], .lda = k, .ldb = n, .ldc = n};
    cr_assert_eq(og_gemm_describe(g, &args, text, sizeof text), OG_OK);
    cr_expect_eq(strstr(text, "k ranges") != NULL, k >= 128, "K = %ld: %s", (long)k, text);

    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    cr_assert_eq(ctx->vk.vkBeginCommandBuffer(ctx->cmd, &begin), VK_SUCCESS);
    for (int t = 0; t < TRIPLES; t++) {
        args.a = bufs[3 * t];
        args.b = bufs[3 * t + 1];
        args.c = bufs[3 * t + 2];
        cr_assert_eq(og_gemm_encode(g, ctx->cmd, &args), OG_OK, "triple %d: %s", t,
                     og_context_last_error(ctx));
    }
    cr_assert_eq(ctx->vk.vkEndCommandBuffer(ctx->cmd), VK_SUCCESS);
    cr_assert_eq(og_submit_wait(ctx, ctx->cmd), OG_OK, "%s", og_context_last_error(ctx));

    float c[ROWS * 8];
    for (int t = 0; t < TRIPLES; t++) {
        cr_assert_eq(og_buffer_read(bufs[3 * t + 2], 0, c, sizeof c), OG_OK);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                float want = 0;
                for (int64_t p = 0; p < k; p++)
                    want += (float)((i * k + p + t) % 5) * ((float)((p * n + j) % 3) - 1.0f);
                cr_assert_eq(c[i * n + j], want, "K = %ld, triple %d: C[%ld][%ld] = %g, expected %g",
                             (long)k, t, (long)i, (long)j, (double)c[i * n + j], (double)want);
            }
    }
    /* The caller says nothing recorded is pending: every set becomes a
     * spare, rewritten for the next calls (here the triples in reverse,
     * each now bound through another triple's old set). */
    og_context_release_bindings(ctx);
    for (int t = TRIPLES - 1; t >= TRIPLES - 50; t--) {
        args.a = bufs[3 * t];
        args.b = bufs[3 * t + 1];
        args.c = bufs[3 * t + 2];
        args.beta = 1; /* C += A * B: twice the product */
        cr_assert_eq(og_gemm_run(g, &args), OG_OK, "%s", og_context_last_error(ctx));
        cr_assert_eq(og_buffer_read(args.c, 0, c, sizeof c), OG_OK);
        for (int64_t j = 0; j < n; j++) {
            float want = 0;
            for (int64_t p = 0; p < k; p++)
                want += (float)((p + t) % 5) * ((float)((p * n + j) % 3) - 1.0f);
            cr_assert_eq(c[j], 2 * want, "after the release, triple %d: C[0][%ld] = %g, expected %g",
                         t, (long)j, (double)c[j], (double)(2 * want));
        }
    }
    for (int t = 0; t < 3 * TRIPLES; t++)
        og_buffer_destroy(bufs[t]);
    free(bufs);
    free(a);
    free(b);
    og_gemm_destroy(g);
    close_context(ctx);
}

Test(bindings, thousand_triples_in_one_command_buffer, .timeout = 600)
{
    thousand_triples(16);
}

/* K = 256 on a 17 x 8 product: split-k (4 ranges of 64), two sets a call
 * (the planes and their reduction), all calls sharing the one scratch. */
Test(bindings, thousand_split_k_triples_in_one_command_buffer, .timeout = 600)
{
    thousand_triples(256);
}

#define SHARED 600

/* C_t = A_t * W for t < SHARED (8 x 8 x 8, A_t = t + 1 everywhere, W all
 * ones, so C_t = 8 (t + 1)): one set per call, all of them binding W. The
 * even A_t are destroyed: each destroy looks up its one set, not the
 * table of SHARED. The odd triples still compute right with new Cs (sets
 * from the spares, rewritten), and destroying W looks up its own list,
 * no more than twice the sets it ever bound. */
Test(bindings, destroying_a_buffer_visits_its_own_sets, .timeout = 600)
{
    og_context *ctx = NULL;
    og_context_desc d = {.tuning_db = "", .validation = 1};
    cr_assert_eq(og_context_create(&d, &ctx), OG_OK, "%s", og_last_error());
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    float ones[64], a[64], c[64];
    for (int i = 0; i < 64; i++)
        ones[i] = 1.0f;
    og_buffer *w = make_buffer(ctx, ones, sizeof ones);
    og_buffer *as[SHARED], *cs[SHARED];
    og_gemm_args args = {.m = 8, .n = 8, .k = 8, .alpha = 1, .b = w, .lda = 8, .ldb = 8, .ldc = 8};
    size_t before = ctx->sets.used;
    for (int t = 0; t < SHARED; t++) {
        for (int i = 0; i < 64; i++)
            a[i] = (float)(t + 1);
        args.a = as[t] = make_buffer(ctx, a, sizeof a);
        cr_assert_eq(og_buffer_create(ctx, sizeof c, &cs[t]), OG_OK);
        args.c = cs[t];
        cr_assert_eq(og_gemm_run(g, &args), OG_OK, "%s", og_context_last_error(ctx));
    }
    cr_assert_eq(ctx->sets.used, before + SHARED, "one set a triple");
    for (int t = 0; t < SHARED; t += 2) {
        uint64_t visits = ctx->sets.forget_visits;
        og_buffer_destroy(as[t]);
        cr_assert_eq(ctx->sets.forget_visits - visits, 1,
                     "destroying A_%d looked up %" PRIu64 " sets, not its one", t,
                     ctx->sets.forget_visits - visits);
        og_buffer_destroy(cs[t]);
        as[t] = cs[t] = NULL;
    }
    cr_expect_eq(ctx->sets.used, before + SHARED / 2, "the even triples' sets left");
    for (int t = 1; t < SHARED; t += 2) {
        og_buffer_destroy(cs[t]);
        cr_assert_eq(og_buffer_create(ctx, sizeof c, &cs[t]), OG_OK);
        args.a = as[t];
        args.c = cs[t];
        cr_assert_eq(og_gemm_run(g, &args), OG_OK, "%s", og_context_last_error(ctx));
        cr_assert_eq(og_buffer_read(cs[t], 0, c, sizeof c), OG_OK);
        for (int i = 0; i < 64; i++)
            cr_assert_eq(c[i], 8.0f * (float)(t + 1), "triple %d: C[%d] = %g", t, i, (double)c[i]);
    }
    uint64_t visits = ctx->sets.forget_visits;
    og_buffer_destroy(w);
    cr_expect_leq(ctx->sets.forget_visits - visits, 2 * SHARED, "W looked up %" PRIu64 " sets",
                  ctx->sets.forget_visits - visits);
    cr_expect_eq(ctx->sets.used, before, "every set binding W left with it");
    for (int t = 1; t < SHARED; t += 2) {
        og_buffer_destroy(as[t]);
        og_buffer_destroy(cs[t]);
    }
    og_gemm_destroy(g);
    close_context(ctx);
}
