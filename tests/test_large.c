/* Operands past maxStorageBufferRange (lavapipe: 128 MiB): the decoder's
 * logits product 1x51865x768 in float32 (a 159 MB B) and 4096x512x14336 (a
 * 235 MB A) run by reading A and B at their device addresses (src=addr),
 * against the float64 reference with the design's bound on the rows (and in
 * the later passes of scripts/test.sh, the columns) the host checks (or bit
 * for bit, Int8Gemm). Where the device's binding range holds the operand the test
 * still runs the call, but says it proved nothing about addresses. */
#include <criterion/criterion.h>

#include <math.h>

#include "og_test.h"

/* Whether an operand of `bytes` bytes is past the device's binding range,
 * so this test exercises device addresses on it. */
static int past_range(og_context *ctx, uint64_t bytes)
{
    return bytes > ctx->limits.max_storage_range;
}

/* The row of C the host checks after row i of m, or m when done: all of up
 * to 64 rows, else 64 spread rows and the last (the whole float64 reference
 * of 4096 x 512 x 14336 would take minutes on this machine). */
static int64_t next_row(int64_t i, int64_t m)
{
    int64_t step = m <= 64 ? 1 : m / 64;
    if (i == m - 1)
        return m;
    return i + step < m ? i + step : m - 1;
}

/* The column of C the host checks first in row i, and after column j of n
 * (n when done): every column in the plain pass; in the later passes
 * (OG_TEST_STRIDE > 1) every stride-th, from row i's residue (so that the
 * checked rows between them meet every column position of a tile) and the
 * last. The host reference is most of this file's time under the
 * sanitizers (2026-12-05, ASan, every column: 166 CPU seconds, the split-k
 * test 84 s and the 4096-row one 76 s of it; 16 or 65 rows of 4096 or 512
 * columns, each a float64 dot product of 14336 terms down a column of B),
 * and those passes look for the host's memory errors and the layer's
 * reports, not for another wrong column: the plain pass checks them all. */
static int64_t first_col(int64_t i, int64_t stride)
{
    return i % stride;
}

static int64_t next_col(int64_t j, int64_t n, int64_t stride)
{
    if (j == n - 1)
        return n;
    return j + stride < n ? j + stride : n - 1;
}

/* Runs float32 C = 1.5 op(A) op(B) + 0.5 C, M x N x K with B transposed or
 * not, with the selected kernel (params NULL) or params, and compares the
 * sampled rows with the float64 reference by the design's metric
 * (max |C - ref| / max |ref| <= 1e-5 for float32). Where an operand is past
 * the binding range, the selected kernel reads it by address. */
static void expect_right(og_context *ctx, int trans_b, int64_t m, int64_t n, int64_t k,
                         const char *params, uint64_t big_bytes)
{
    size_t na = (size_t)(m * k), nb = (size_t)(k * n), nc = (size_t)(m * n);
    float *a = malloc(sizeof(float) * na), *b = malloc(sizeof(float) * nb),
          *c0 = malloc(sizeof(float) * nc), *c = malloc(sizeof(float) * nc);
    cr_assert(a && b && c0 && c);
    uint64_t seed = 5;
    og_fill_random(OG_F32, a, na, &seed);
    og_fill_random(OG_F32, b, nb, &seed);
    og_fill_random(OG_F32, c0, nc, &seed);
    og_gemm_args args = {.m = m, .n = n, .k = k, .alpha = 1.5f, .beta = 0.5f, .trans_b = trans_b,
                         .lda = k, .ldb = trans_b ? k : n, .ldc = n};
    args.a = make_buffer(ctx, a, sizeof(float) * na);
    args.b = make_buffer(ctx, b, sizeof(float) * nb);
    args.c = make_buffer(ctx, c0, sizeof(float) * nc);
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    char line[512];
    cr_assert_eq(og_gemm_describe(g, &args, line, sizeof line), OG_OK);
    if (past_range(ctx, big_bytes) && !params)
        cr_expect(strstr(line, "src=addr"), "the call past the binding range runs %s", line);
    og_status st;
    if (params) {
        og_params p;
        char why[256];
        cr_assert_eq(og_params_parse(params, &p, why, sizeof why), 0, "%s", why);
        st = run_params(g, ctx, &args, &p);
    } else {
        st = og_gemm_run(g, &args);
    }
    cr_assert_eq(st, OG_OK, "%" PRId64 "x%" PRId64 "x%" PRId64 ": %s", m, n, k,
                 og_context_last_error(ctx));
    cr_assert_eq(og_buffer_read(args.c, 0, c, sizeof(float) * nc), OG_OK);
    double worst = 0, largest = 0;
    size_t bad = 0;
    int64_t stride = og_test_stride();
    for (int64_t i = 0; i < m; i = next_row(i, m)) {
        for (int64_t j = first_col(i, stride); j < n; j = next_col(j, n, stride)) {
            double sum = 0;
            for (int64_t p = 0; p < k; p++)
                sum += (double)a[i * k + p] * (double)b[trans_b ? j * k + p : p * n + j];
            double want = 1.5 * sum + 0.5 * (double)c0[i * n + j], got = c[i * n + j];
            bad += !isfinite(got);
            worst = fmax(worst, fabs(got - want));
            largest = fmax(largest, fabs(want));
        }
    }
    cr_expect_eq(bad, 0, "%zu results are not finite", bad);
    cr_expect_leq(worst / largest, og_dtype_bound(OG_F32),
                  "%" PRId64 "x%" PRId64 "x%" PRId64 " (B%s, %s): error %g of %g", m, n, k,
                  trans_b ? "^T" : "", line, worst, largest);
    og_gemm_destroy(g);
    og_buffer_destroy(args.a);
    og_buffer_destroy(args.b);
    og_buffer_destroy(args.c);
    free(a);
    free(b);
    free(c0);
    free(c);
}

/* The decoder's logits: B is 768 x 51865 float32 (159 MB), in both layouts,
 * for one row (few rows) and four. */
Test(large_operands, decoder_logits_both_layouts_of_b, .timeout = 600)
{
    og_context *ctx = open_context();
    uint64_t b_bytes = 768ull * 51868ull * 4ull;
    if (!past_range(ctx, b_bytes))
        cr_log_info("maxStorageBufferRange holds B: device addresses are not exercised here");
    for (int trans_b = 0; trans_b <= 1; trans_b++) {
        expect_right(ctx, trans_b, 1, 51865, 768, NULL, b_bytes);
        expect_right(ctx, trans_b, 4, 51865, 768, NULL, b_bytes);
    }
    close_context(ctx);
}

/* A is 4096 x 14336 float32 (235 MB): the default tile, and direct loads
 * with vector reads, from addresses. */
Test(large_operands, tall_a_4096x512x14336, .timeout = 900)
{
    og_context *ctx = open_context();
    expect_right(ctx, 0, 4096, 512, 14336, NULL, 4096ull * 14336ull * 4ull);
    close_context(ctx);
}

/* Split-k planes and vector loads reading a 235 MB B by address (given
 * parameters: a call whose kernel kept B's binding would be refused). */
Test(large_operands, split_k_and_vector_loads_by_address, .timeout = 600)
{
    og_context *ctx = open_context();
    const char *const params[] = {
        "bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,load=staged,acc=blocked,vec=1,src=ssbo,"
        "split=4",
        "bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,load=direct,acc=chain,vec=4,src=ssbo,"
        "split=1"};
    for (size_t i = 0; i < 2; i++)
        expect_right(ctx, 0, 16, 4096, 14336, params[i], 14336ull * 4096ull * 4ull);
    close_context(ctx);
}

/* Int8Gemm with a B of 2600 x 51865 bytes (135 MB), int8 A and uint8 B
 * with zero points: the skinny kernel (one row) and the tile (33 rows), bit
 * for bit on the sampled rows (int32 sums, exact in any order) and their
 * columns (first_col, next_col). */
Test(large_operands, int8gemm_b_past_the_range, .timeout = 600)
{
    og_context *ctx = open_context();
    og_int8gemm *g;
    cr_assert_eq(og_int8gemm_create(ctx, &g), OG_OK);
    const int64_t n = 51865, k = 2600, rows[] = {1, 33};
    uint8_t *b = malloc((size_t)(k * n)), *a = malloc((size_t)(33 * k));
    int32_t *c = malloc(sizeof(int32_t) * (size_t)(33 * n));
    cr_assert(a && b && c);
    uint64_t seed = 11;
    for (int64_t i = 0; i < k * n; i++)
        b[i] = (uint8_t)((seed = seed * 6364136223846793005ull + 1442695040888963407ull) >> 56);
    for (int64_t i = 0; i < 33 * k; i++)
        a[i] = (uint8_t)((seed = seed * 6364136223846793005ull + 1442695040888963407ull) >> 56);
    og_buffer *ba = make_buffer(ctx, a, (size_t)(33 * k)), *bb = make_buffer(ctx, b, (size_t)(k * n));
    og_buffer *bc;
    cr_assert_eq(og_buffer_create(ctx, sizeof(int32_t) * (size_t)(33 * n), &bc), OG_OK);
    for (size_t r = 0; r < 2; r++) {
        int64_t m = rows[r];
        og_int8gemm_args args = {.m = m, .n = n, .k = k, .type_a = OG_INT8, .zero_a = -3,
                                 .type_b = OG_UINT8, .zero_b = 128, .a = ba, .b = bb, .c = bc,
                                 .lda = k, .ldb = n, .ldc = n};
        char line[512];
        cr_assert_eq(og_int8gemm_describe(g, &args, line, sizeof line), OG_OK);
        if (past_range(ctx, (uint64_t)(k * n)))
            cr_expect(strstr(line, "src=addr"), "%s", line);
        cr_assert_eq(og_int8gemm_run(g, &args), OG_OK, "%s", og_context_last_error(ctx));
        cr_assert_eq(og_buffer_read(bc, 0, c, sizeof(int32_t) * (size_t)(m * n)), OG_OK);
        size_t wrong = 0;
        int64_t stride = og_test_stride();
        for (int64_t i = 0; i < m; i += m > 1 ? 16 : 1)
            for (int64_t j = first_col(i, stride); j < n; j = next_col(j, n, stride)) {
                int64_t sum = 0;
                for (int64_t p = 0; p < k; p++)
                    sum += ((int64_t)(int8_t)a[i * k + p] + 3) * ((int64_t)b[p * n + j] - 128);
                wrong += c[i * n + j] != (int32_t)sum;
            }
        cr_expect_eq(wrong, 0, "%" PRId64 "x%" PRId64 "x%" PRId64 " (%s): %zu sums differ", m, n,
                     k, line, wrong);
    }
    og_buffer_destroy(ba);
    og_buffer_destroy(bb);
    og_buffer_destroy(bc);
    og_int8gemm_destroy(g);
    free(a);
    free(b);
    free(c);
    close_context(ctx);
}

/* The device's maxStorageBufferRange, or the test is skipped where it is
 * too large for this test to fill a buffer past it. */
static uint64_t small_range(og_context *ctx)
{
    uint64_t range = ctx->limits.max_storage_range;
    if (range > (1ull << 30)) {
        close_context(ctx);
        cr_skip_test("maxStorageBufferRange %" PRIu64 " is too large to pass here", range);
    }
    return range;
}

/* What cannot be read by address is refused, naming the operand and why,
 * and C is left as it was: an application's VkBuffer without
 * SHADER_DEVICE_ADDRESS usage, and recovered float32 (bindings only). */
Test(large_operands, refusals_name_the_operand_and_the_reason, .timeout = 300)
{
    og_context *ctx = open_context();
    uint64_t range = small_range(ctx);
    int64_t n = 4, k = (int64_t)(range / 16) + 16; /* B (k x 4 floats) just past the range */
    og_buffer *big, *a, *c;
    cr_assert_eq(og_buffer_create(ctx, (uint64_t)k * 16, &big), OG_OK);
    cr_assert_eq(og_buffer_create(ctx, (uint64_t)k * 4, &a), OG_OK);
    float c0[4] = {-7, -7, -7, -7}, c1[4];
    c = make_buffer(ctx, c0, sizeof c0);
    og_buffer *wrapped;
    cr_assert_eq(og_buffer_wrap(ctx, og_buffer_vk_buffer(big), og_buffer_vk_offset(big),
                                (uint64_t)k * 16, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, &wrapped),
                 OG_OK);
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    og_gemm_args args = {.m = 1, .n = n, .k = k, .alpha = 1, .a = a, .b = wrapped, .c = c,
                         .lda = k, .ldb = n, .ldc = n};
    cr_expect_eq(og_gemm_run(g, &args), OG_ERROR_UNSUPPORTED);
    const char *msg = og_context_last_error(ctx);
    cr_expect(strstr(msg, "gemm: B needs") && strstr(msg, "maxStorageBufferRange") &&
                  strstr(msg, ctx->limits.buffer_address
                                  ? "VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT"
                                  : "bufferDeviceAddress"),
              "%s", msg);
    if (ctx->limits.buffer_address) {
        og_gemm *r;
        og_gemm_desc d = {.precision = OG_PRECISION_RECOVERED};
        cr_assert_eq(og_gemm_create_desc(ctx, &d, &r), OG_OK);
        args.b = big;
        cr_expect_eq(og_gemm_run(r, &args), OG_ERROR_UNSUPPORTED);
        msg = og_context_last_error(ctx);
        cr_expect(strstr(msg, "gemm: B ends past") && strstr(msg, "recovered float32"), "%s",
                  msg);
        og_gemm_destroy(r);
    }
    cr_assert_eq(og_buffer_read(c, 0, c1, sizeof c1), OG_OK);
    cr_expect_eq(memcmp(c0, c1, sizeof c0), 0, "a refused call leaves C as it was");
    og_gemm_destroy(g);
    og_buffer_destroy(wrapped);
    og_buffer_destroy(big);
    og_buffer_destroy(a);
    og_buffer_destroy(c);
    close_context(ctx);
}

/* Every operand of one buffer past maxStorageBufferRange from its start, as
 * an application's memory pool lays them out: each binding starts near its
 * operand, so the call runs through bindings (not addresses) and is exact
 * (small integers, so every order gives the same sums). */
Test(large_operands, operands_at_offsets_past_the_range, .timeout = 300)
{
    og_context *ctx = open_context();
    uint64_t range = small_range(ctx);
    const int64_t m = 33, n = 47, k = 29;
    /* Element offsets past the range, none a multiple of 4 (bindings start
     * aligned down, the kernels take the rest). */
    const int64_t first = (int64_t)(range / 4) + 5;
    const int64_t off_a = first, off_b = off_a + m * k + 3, off_c = off_b + k * n + 1,
                  off_bias = off_c + m * n + 2;
    uint64_t bytes = (uint64_t)(off_bias + n) * 4;
    og_buffer *pool;
    cr_assert_eq(og_buffer_create(ctx, bytes, &pool), OG_OK, "%s", og_context_last_error(ctx));
    float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
    float *c = malloc(sizeof(float) * (size_t)(m * n)), bias[47];
    cr_assert(a && b && c);
    for (int64_t i = 0; i < m * k; i++)
        a[i] = (float)(i % 7 - 3);
    for (int64_t i = 0; i < k * n; i++)
        b[i] = (float)(i % 5 - 2);
    for (int64_t j = 0; j < n; j++)
        bias[j] = (float)j;
    for (int64_t i = 0; i < m * n; i++)
        c[i] = 1.0f;
    cr_assert_eq(og_buffer_write(pool, (uint64_t)off_a * 4, a, sizeof(float) * (size_t)(m * k)), OG_OK);
    cr_assert_eq(og_buffer_write(pool, (uint64_t)off_b * 4, b, sizeof(float) * (size_t)(k * n)), OG_OK);
    cr_assert_eq(og_buffer_write(pool, (uint64_t)off_c * 4, c, sizeof(float) * (size_t)(m * n)), OG_OK);
    cr_assert_eq(og_buffer_write(pool, (uint64_t)off_bias * 4, bias, sizeof bias), OG_OK);
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    og_gemm_args args = {.m = m, .n = n, .k = k, .alpha = 2, .beta = 3, .a = pool, .b = pool,
                         .c = pool, .bias = pool, .lda = k, .ldb = n, .ldc = n, .a_offset = off_a,
                         .b_offset = off_b, .c_offset = off_c, .bias_offset = off_bias};
    char line[512];
    cr_assert_eq(og_gemm_describe(g, &args, line, sizeof line), OG_OK);
    cr_expect(!strstr(line, "src=addr"), "operands within their own bindings: %s", line);
    cr_assert_eq(og_gemm_run(g, &args), OG_OK, "%s", og_context_last_error(ctx));
    cr_assert_eq(og_buffer_read(pool, (uint64_t)off_c * 4, c, sizeof(float) * (size_t)(m * n)), OG_OK);
    size_t wrong = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++)
                s += (double)a[i * k + p] * (double)b[p * n + j];
            float want = (float)(2 * s + 3 + (double)bias[j]);
            wrong += c[i * n + j] != want;
        }
    cr_expect_eq(wrong, 0, "%zu elements of C differ", wrong);
    float tail;
    cr_assert_eq(og_buffer_read(pool, (uint64_t)(off_c + m * n) * 4, &tail, sizeof tail), OG_OK);
    cr_expect_eq(tail, 0.0f, "nothing past C is written");
    og_gemm_destroy(g);
    og_buffer_destroy(pool);
    free(a);
    free(b);
    free(c);
    close_context(ctx);
}
