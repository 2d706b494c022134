/* Correctness of og_gemm against the float64 host reference (og_reference_gemm)
 * on ragged shapes with padded leading dimensions, offsets, batches and
 * strides, plus determinism, caller-recorded command buffers and the
 * GLSL/HLSL kernels agreeing bit for bit. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "og_test.h"

/* Ragged sizes around the default 64x64x16 tile: 1, a few, one below, at,
 * one above a tile edge, and two tiles plus a remainder. */
static const int64_t sizes[] = {1, 7, 63, 64, 65, 130};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

/* Slack past the end of C: a write beyond the last element C may touch
 * lands here and is caught. */
#define C_SLACK 16
/* Bit pattern (a signalling NaN) put in C wherever the call must not write. */
#define SENTINEL 0x7fa5a5a5u

static og_gemm *open_gemm(og_context *ctx, og_dtype t, og_mode mode)
{
    og_gemm *g = NULL;
    og_status st = og_gemm_create(ctx, t, mode, &g);
    cr_assert_eq(st, OG_OK, "og_gemm_create: %s", og_context_last_error(ctx));
    return g;
}

/* A call with every dimension padded: leading dimensions 3 above the minimum,
 * nonzero offsets, and for batch > 1 strides that leave a gap of 5 elements
 * between the products. */
static og_gemm_args padded_args(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                                int64_t batch)
{
    og_gemm_args g = {.trans_a = trans_a,
                      .trans_b = trans_b,
                      .m = m,
                      .n = n,
                      .k = k,
                      .batch = batch,
                      .alpha = 1.5f,
                      .beta = -0.75f};
    g.lda = (trans_a ? m : k) + 3;
    g.ldb = (trans_b ? k : n) + 3;
    g.ldc = n + 3;
    g.a_offset = 5;
    g.b_offset = 7;
    g.c_offset = 11;
    if (batch > 1) {
        g.stride_a = (trans_a ? k : m) * g.lda + 5;
        g.stride_b = (trans_b ? n : k) * g.ldb + 5;
        g.stride_c = m * g.ldc + 5;
    }
    return g;
}

/* Host data of one call; the og_buffers live in args. */
typedef struct problem {
    og_dtype dtype;
    og_gemm_args args;
    size_t na, nb, nc; /* elements the call may touch */
    void *a, *b;
    float *c0; /* C before the call: random inside the region, SENTINEL outside */
    float *c;  /* C read back */
    double *ref;
} problem;

static int in_region(const og_gemm_args *g, size_t idx)
{
    int64_t batch = g->batch ? g->batch : 1;
    for (int64_t p = 0; p < batch; p++) {
        int64_t rel = (int64_t)idx - g->c_offset - p * g->stride_c;
        if (rel >= 0 && rel / g->ldc < g->m && rel % g->ldc < g->n)
            return 1;
    }
    return 0;
}

/* Random A and B, random C with sentinels outside the written region, the
 * buffers, and the reference. */
static problem *problem_make(og_context *ctx, og_dtype t, const og_gemm_args *args, uint64_t seed)
{
    problem *pr = calloc(1, sizeof *pr);
    cr_assert_not_null(pr);
    pr->dtype = t;
    pr->args = *args;
    og_gemm_extents(args, &pr->na, &pr->nb, &pr->nc);
    pr->nc += C_SLACK;
    size_t eb = og_dtype_bytes(t);
    pr->a = malloc(pr->na * eb + 1);
    pr->b = malloc(pr->nb * eb + 1);
    pr->c0 = malloc(pr->nc * sizeof(float));
    pr->c = malloc(pr->nc * sizeof(float));
    pr->ref = malloc(pr->nc * sizeof(double));
    cr_assert(pr->a && pr->b && pr->c0 && pr->c && pr->ref);
    og_fill_random(t, pr->a, pr->na, &seed);
    og_fill_random(t, pr->b, pr->nb, &seed);
    og_fill_random(OG_F32, pr->c0, pr->nc, &seed);
    for (size_t i = 0; i < pr->nc; i++)
        if (!in_region(args, i))
            memcpy(&pr->c0[i], &(uint32_t){SENTINEL}, sizeof(float));
    og_reference_gemm(t, args, pr->a, pr->b, pr->c0, pr->ref);
    pr->args.a = make_buffer(ctx, pr->a, pr->na * eb);
    pr->args.b = make_buffer(ctx, pr->b, pr->nb * eb);
    pr->args.c = make_buffer(ctx, pr->c0, pr->nc * sizeof(float));
    return pr;
}

/* Destroying the buffers retires the cached descriptor sets that name them. */
static void problem_free(problem *pr)
{
    og_buffer_destroy(pr->args.a);
    og_buffer_destroy(pr->args.b);
    og_buffer_destroy(pr->args.c);
    free(pr->a);
    free(pr->b);
    free(pr->c0);
    free(pr->c);
    free(pr->ref);
    free(pr);
}

static void read_c(problem *pr)
{
    cr_assert_eq(og_buffer_read(pr->args.c, 0, pr->c, pr->nc * sizeof(float)), OG_OK);
}

static void describe(const problem *pr, char *buf, size_t len)
{
    const og_gemm_args *g = &pr->args;
    snprintf(buf, len,
             "%s %c%c M=%" PRId64 " N=%" PRId64 " K=%" PRId64 " batch=%" PRId64 " lda=%" PRId64
             " ldb=%" PRId64 " ldc=%" PRId64 " strides %" PRId64 "/%" PRId64 "/%" PRId64,
             og_dtype_name(pr->dtype), g->trans_a ? 'T' : 'N', g->trans_b ? 'T' : 'N', g->m, g->n,
             g->k, g->batch, g->lda, g->ldb, g->ldc, g->stride_a, g->stride_b, g->stride_c);
}

/* C as read back against the reference: within the dtype's bound inside the
 * written region, bit-identical outside it (the slack included). */
static void check_result(const problem *pr)
{
    char what[256];
    describe(pr, what, sizeof what);
    double metric, max_rel;
    size_t bad = og_compare(&pr->args, pr->ref, pr->c, pr->c0, &metric, &max_rel);
    cr_assert_eq(bad, 0, "%s: %zu elements non-finite or changed outside the region", what, bad);
    cr_assert(metric <= og_dtype_bound(pr->dtype), "%s: error %.3g above the bound %.0e", what,
              metric, og_dtype_bound(pr->dtype));
    size_t na, nb, nc;
    og_gemm_extents(&pr->args, &na, &nb, &nc);
    cr_assert_eq(memcmp(pr->c + nc, pr->c0 + nc, (pr->nc - nc) * sizeof(float)), 0,
                 "%s: written past the last element of C", what);
}

static void run_and_check(og_context *ctx, og_gemm *g, og_dtype t, const og_gemm_args *args,
                          uint64_t seed)
{
    problem *pr = problem_make(ctx, t, args, seed);
    og_status st = og_gemm_run(g, &pr->args);
    cr_assert_eq(st, OG_OK, "og_gemm_run: %d: %s", st, og_context_last_error(ctx));
    read_c(pr);
    check_result(pr);
    problem_free(pr);
}

/* ---- every dtype x op(A) x op(B) over the ragged sizes ---- */

typedef struct combo {
    og_dtype dtype;
    int trans_a, trans_b;
} combo;

static combo combos[] = {
    {OG_F32, 0, 0},  {OG_F32, 0, 1},  {OG_F32, 1, 0},  {OG_F32, 1, 1},
    {OG_F16, 0, 0},  {OG_F16, 0, 1},  {OG_F16, 1, 0},  {OG_F16, 1, 1},
    {OG_BF16, 0, 0}, {OG_BF16, 0, 1}, {OG_BF16, 1, 0}, {OG_BF16, 1, 1},
};
#define N_COMBOS (sizeof combos / sizeof combos[0])

ParameterizedTestParameters(gemm, ragged)
{
    return cr_make_param_array(combo, combos, N_COMBOS);
}

/* All 216 (M, N, K) in sizes^3, with padded leading dimensions, offsets,
 * alpha 1.5 and beta -0.75. */
ParameterizedTest(combo *c, gemm, ragged)
{
    og_context *ctx = open_context();
    og_gemm *g = open_gemm(ctx, c->dtype, OG_MODE_FAST);
    uint64_t seed = 1;
    for (size_t i = 0; i < N_SIZES; i++)
        for (size_t j = 0; j < N_SIZES; j++)
            for (size_t l = 0; l < N_SIZES; l++) {
                og_gemm_args args =
                    padded_args(c->trans_a, c->trans_b, sizes[i], sizes[j], sizes[l], 1);
                run_and_check(ctx, g, c->dtype, &args, seed++);
            }
    og_gemm_destroy(g);
    close_context(ctx);
}

/* ---- batches ---- */

ParameterizedTestParameters(gemm, batch)
{
    return cr_make_param_array(combo, combos, N_COMBOS);
}

/* Batch 3 with gaps between the products, and with stride_b = 0 sharing one
 * B across the batch. */
ParameterizedTest(combo *c, gemm, batch)
{
    static const int64_t shapes[][3] = {{65, 7, 63}, {1, 130, 64}, {64, 65, 1}};
    og_context *ctx = open_context();
    og_gemm *g = open_gemm(ctx, c->dtype, OG_MODE_FAST);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        og_gemm_args args =
            padded_args(c->trans_a, c->trans_b, shapes[i][0], shapes[i][1], shapes[i][2], 3);
        run_and_check(ctx, g, c->dtype, &args, 100 + i);
        args.stride_b = 0;
        run_and_check(ctx, g, c->dtype, &args, 200 + i);
    }
    og_gemm_destroy(g);
    close_context(ctx);
}

/* ---- degenerate shapes ---- */

/* K = 0: C = beta*C, from A and B that are NULL or empty. */
Test(gemm, k_zero)
{
    og_context *ctx = open_context();
    for (int t = OG_F32; t <= OG_BF16; t++) {
        og_gemm *g = open_gemm(ctx, (og_dtype)t, OG_MODE_FAST);
        og_gemm_args args = padded_args(t == OG_F16, t != OG_F32, 65, 63, 0, 3);
        problem *pr = problem_make(ctx, (og_dtype)t, &args, 300 + (uint64_t)t);
        for (int null_ab = 0; null_ab < 2; null_ab++) {
            og_gemm_args call = pr->args;
            if (null_ab)
                call.a = call.b = NULL;
            cr_assert_eq(og_buffer_write(pr->args.c, 0, pr->c0, pr->nc * sizeof(float)), OG_OK);
            og_status st = og_gemm_run(g, &call);
            cr_assert_eq(st, OG_OK, "og_gemm_run: %s", og_context_last_error(ctx));
            read_c(pr);
            check_result(pr);
            /* C = beta*C is one multiply in float32: exact, whatever the accumulation. */
            for (size_t i = 0; i < pr->nc; i++)
                if (in_region(&args, i))
                    cr_assert_eq(pr->c[i], -0.75f * pr->c0[i], "C[%zu] = %a, expected %a", i,
                                 pr->c[i], -0.75f * pr->c0[i]);
        }
        problem_free(pr);
        og_gemm_destroy(g);
    }
    close_context(ctx);
}

/* M = 0 or N = 0 does nothing: the whole C buffer is bit-identical. */
Test(gemm, empty_output)
{
    static const int64_t shapes[][3] = {{0, 7, 5}, {7, 0, 5}, {0, 0, 5}, {0, 7, 0}};
    og_context *ctx = open_context();
    og_gemm *g = open_gemm(ctx, OG_F32, OG_MODE_FAST);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        /* Buffers sized as if M and N were 7, so a stray write would land in them. */
        og_gemm_args full = padded_args(0, 0, 7, 7, 5, 2);
        problem *pr = problem_make(ctx, OG_F32, &full, 400 + i);
        og_gemm_args call = pr->args;
        call.m = shapes[i][0];
        call.n = shapes[i][1];
        call.k = shapes[i][2];
        og_status st = og_gemm_run(g, &call);
        cr_assert_eq(st, OG_OK, "og_gemm_run M=%" PRId64 " N=%" PRId64 ": %s", call.m, call.n,
                     og_context_last_error(ctx));
        read_c(pr);
        cr_assert_eq(memcmp(pr->c, pr->c0, pr->nc * sizeof(float)), 0,
                     "M=%" PRId64 " N=%" PRId64 " K=%" PRId64 " changed C", call.m, call.n, call.k);
        problem_free(pr);
    }
    og_gemm_destroy(g);
    close_context(ctx);
}

/* ---- bit-identical results ---- */

/* Runs pr's call with og_gemm_run from the original C and returns C read back
 * (malloc'ed). */
static float *run_copy(og_context *ctx, og_gemm *g, problem *pr)
{
    cr_assert_eq(og_buffer_write(pr->args.c, 0, pr->c0, pr->nc * sizeof(float)), OG_OK);
    og_status st = og_gemm_run(g, &pr->args);
    cr_assert_eq(st, OG_OK, "og_gemm_run: %s", og_context_last_error(ctx));
    read_c(pr);
    float *out = malloc(pr->nc * sizeof(float));
    cr_assert_not_null(out);
    memcpy(out, pr->c, pr->nc * sizeof(float));
    return out;
}

static void assert_same_bits(const problem *pr, const float *x, const float *y, const char *what)
{
    char shape[256];
    describe(pr, shape, sizeof shape);
    for (size_t i = 0; i < pr->nc; i++)
        cr_assert_eq(memcmp(&x[i], &y[i], sizeof(float)), 0, "%s: %s: C[%zu] %a vs %a", shape, what,
                     i, x[i], y[i]);
}

/* Deterministic mode: two runs of the same call give the same bits. */
Test(gemm, deterministic_repeats)
{
    og_context *ctx = open_context();
    for (int t = OG_F32; t <= OG_BF16; t++) {
        og_gemm *g = open_gemm(ctx, (og_dtype)t, OG_MODE_DETERMINISTIC);
        og_gemm_args args = padded_args(t == OG_F16, t == OG_BF16, 130, 65, 130, 2);
        problem *pr = problem_make(ctx, (og_dtype)t, &args, 500 + (uint64_t)t);
        float *first = run_copy(ctx, g, pr);
        float *second = run_copy(ctx, g, pr);
        check_result(pr);
        assert_same_bits(pr, first, second, "second deterministic run");
        free(first);
        free(second);
        problem_free(pr);
        og_gemm_destroy(g);
    }
    close_context(ctx);
}

/* og_gemm_encode into the caller's command buffer, from a pool of
 * og_context_queue_family, submitted to og_context_vk_queue, gives the same
 * bits as og_gemm_run. */
Test(gemm, encode_matches_run)
{
    og_context *ctx = open_context();
    const struct VolkDeviceTable *vk = &ctx->vk;
    VkDevice dev = og_context_vk_device(ctx);
    VkCommandPoolCreateInfo pool_info = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                         .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                         .queueFamilyIndex = og_context_queue_family(ctx)};
    VkCommandPool pool;
    cr_assert_eq(vk->vkCreateCommandPool(dev, &pool_info, NULL, &pool), VK_SUCCESS);
    VkCommandBufferAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                         .commandPool = pool,
                                         .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                         .commandBufferCount = 1};
    VkCommandBuffer cmd;
    cr_assert_eq(vk->vkAllocateCommandBuffers(dev, &alloc, &cmd), VK_SUCCESS);
    VkFenceCreateInfo fence_info = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    cr_assert_eq(vk->vkCreateFence(dev, &fence_info, NULL, &fence), VK_SUCCESS);

    for (int t = OG_F32; t <= OG_BF16; t++) {
        og_gemm *g = open_gemm(ctx, (og_dtype)t, OG_MODE_FAST);
        og_gemm_args args = padded_args(t != OG_F32, t == OG_F16, 63, 130, 65, 3);
        problem *pr = problem_make(ctx, (og_dtype)t, &args, 600 + (uint64_t)t);
        float *by_run = run_copy(ctx, g, pr);

        cr_assert_eq(og_buffer_write(pr->args.c, 0, pr->c0, pr->nc * sizeof(float)), OG_OK);
        VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                          .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        cr_assert_eq(vk->vkBeginCommandBuffer(cmd, &begin), VK_SUCCESS);
        og_status st = og_gemm_encode(g, cmd, &pr->args);
        cr_assert_eq(st, OG_OK, "og_gemm_encode: %s", og_context_last_error(ctx));
        cr_assert_eq(vk->vkEndCommandBuffer(cmd), VK_SUCCESS);
        VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                               .commandBufferCount = 1,
                               .pCommandBuffers = &cmd};
        cr_assert_eq(vk->vkQueueSubmit(og_context_vk_queue(ctx), 1, &submit, fence), VK_SUCCESS);
        cr_assert_eq(vk->vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
        cr_assert_eq(vk->vkResetFences(dev, 1, &fence), VK_SUCCESS);
        read_c(pr);
        check_result(pr);
        assert_same_bits(pr, by_run, pr->c, "og_gemm_encode vs og_gemm_run");
        free(by_run);
        problem_free(pr);
        og_gemm_destroy(g);
    }
    vk->vkDestroyFence(dev, fence, NULL);
    vk->vkDestroyCommandPool(dev, pool, NULL);
    close_context(ctx);
}

/* The GLSL and HLSL renderings of the kernel give the same bits. Both run in
 * Deterministic mode so both use the same (default) kernel parameters. */
Test(gemm, glsl_hlsl_identical)
{
    static const int64_t shapes[][4] = {{65, 63, 130, 1}, {1, 7, 64, 2}, {130, 1, 7, 1}};
    og_context *ctx = open_context();
    for (int t = OG_F32; t <= OG_BF16; t++) {
        og_gemm *g = open_gemm(ctx, (og_dtype)t, OG_MODE_DETERMINISTIC);
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            og_gemm_args args = padded_args((int)i % 2, t != OG_F16, shapes[i][0], shapes[i][1],
                                            shapes[i][2], shapes[i][3]);
            problem *pr = problem_make(ctx, (og_dtype)t, &args, 700 + 10 * (uint64_t)t + i);
            ctx->dialect = OG_GLSL;
            float *glsl = run_copy(ctx, g, pr);
            check_result(pr);
            ctx->dialect = OG_HLSL;
            float *hlsl = run_copy(ctx, g, pr);
            check_result(pr);
            assert_same_bits(pr, glsl, hlsl, "HLSL vs GLSL");
            free(glsl);
            free(hlsl);
            problem_free(pr);
        }
        og_gemm_destroy(g);
    }
    close_context(ctx);
}
