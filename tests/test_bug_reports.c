/* Cases from public GEMM bug reports, with their exact values:
 *  - beta = 0 must not read C: NaN or infinity in C must not leak into the
 *    result (0 * NaN is NaN), and elements past N in a padded row stay as they are;
 *  - K = 0 is C = beta*C, reading neither A nor B (which may be empty or NULL),
 *    and beta = 1 leaves C bit for bit;
 *  - alpha = 0 is C = beta*C too (reference BLAS's rule): NaN and Inf in A and
 *    B never reach C;
 *  - leading dimensions with K = 0 and overlapping outputs of the elementwise
 *    kernels get true messages;
 *  - an ogtune command that cannot do what was asked exits non-zero, and
 *    with --json its output ends with the reason. */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "og_ogtune.h"
#include "og_test.h"

static float bits_to_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t float_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* An operand of n ones in type t. */
static og_buffer *ones(og_context *ctx, og_dtype t, size_t n)
{
    size_t eb = og_dtype_bytes(t);
    unsigned char *data = malloc(n * eb);
    cr_assert_not_null(data);
    for (size_t i = 0; i < n; i++) {
        if (t == OG_F32)
            memcpy(data + i * eb, &(float){1.0f}, eb);
        else
            memcpy(data + i * eb, &(uint16_t){t == OG_F16 ? 0x3c00 : 0x3f80}, eb);
    }
    og_buffer *buf = make_buffer(ctx, data, n * eb);
    free(data);
    return buf;
}

static const char *mode_name(og_mode mode)
{
    return mode == OG_MODE_FAST ? "fast" : "deterministic";
}

/* ---- beta = 0 never reads C ---- */

/* C = ones(M x K) * ones(K x N) with beta 0 over a C of ldc >= N holding c0
 * (ldc * M elements): inside the M x N region every element must be exactly
 * K, outside it every bit as it was. Every dtype, both modes. */
static void check_beta0_ones(int64_t m, int64_t n, int64_t k, int64_t ldc, const uint32_t *c0)
{
    og_context *ctx = open_context();
    size_t nc = (size_t)(m * ldc);
    uint32_t *got = malloc(nc * sizeof *got);
    cr_assert_not_null(got);
    for (og_dtype t = OG_F32; t <= OG_BF16; t++) {
        for (og_mode mode = OG_MODE_FAST; mode <= OG_MODE_DETERMINISTIC; mode++) {
            og_gemm *g = NULL;
            cr_assert_eq(og_gemm_create(ctx, t, mode, &g), OG_OK);
            og_gemm_args args = {.m = m,
                                 .n = n,
                                 .k = k,
                                 .alpha = 1.0f,
                                 .beta = 0.0f,
                                 .lda = k,
                                 .ldb = n,
                                 .ldc = ldc};
            args.a = ones(ctx, t, (size_t)(m * k));
            args.b = ones(ctx, t, (size_t)(k * n));
            args.c = make_buffer(ctx, c0, nc * sizeof *c0);
            og_status st = og_gemm_run(g, &args);
            cr_assert_eq(st, OG_OK, "og_gemm_run: %s", og_context_last_error(ctx));
            cr_assert_eq(og_buffer_read(args.c, 0, got, nc * sizeof *got), OG_OK);
            for (size_t i = 0; i < nc; i++) {
                size_t col = i % (size_t)ldc;
                if (col < (size_t)n)
                    cr_assert_eq(bits_to_float(got[i]), (float)k,
                                 "%s %s: C[%zu][%zu] = %a (bits 0x%08" PRIx32 ", was 0x%08" PRIx32
                                 "), expected %a",
                                 og_dtype_name(t), mode_name(mode), i / (size_t)ldc, col,
                                 bits_to_float(got[i]), got[i], c0[i], (float)k);
                else
                    cr_assert_eq(
                        got[i], c0[i],
                        "%s %s: padding C[%zu][%zu] changed from 0x%08" PRIx32 " to 0x%08" PRIx32,
                        og_dtype_name(t), mode_name(mode), i / (size_t)ldc, col, c0[i], got[i]);
            }
            og_buffer_destroy(args.a);
            og_buffer_destroy(args.b);
            og_buffer_destroy(args.c);
            og_gemm_destroy(g);
        }
    }
    free(got);
    close_context(ctx);
}

/* 3x3x3, C all quiet NaN: every element exactly 3. */
Test(bug_reports, beta0_nan_c)
{
    uint32_t c0[9];
    for (size_t i = 0; i < 9; i++)
        c0[i] = float_to_bits(NAN);
    check_beta0_ones(3, 3, 3, 3, c0);
}

/* 33x33x5, C cycling NaN, +Inf, -Inf, ldc 40 with a sentinel NaN pattern in
 * columns 33..39: every element exactly 5, the sentinels bit-identical. */
Test(bug_reports, beta0_nonfinite_c_padded_ldc)
{
    enum { M = 33, N = 33, K = 5, LDC = 40 };
    const uint32_t cycle[3] = {float_to_bits(NAN), float_to_bits(INFINITY),
                               float_to_bits(-INFINITY)};
    uint32_t c0[M * LDC];
    for (size_t i = 0; i < M * LDC; i++)
        c0[i] = i % LDC < N ? cycle[(i / LDC * N + i % LDC) % 3] : 0x7fa5a5a5u;
    check_beta0_ones(M, N, K, LDC, c0);
}

/* ---- K = 0 ---- */

/* A 1x1 C holding c, then a word of 0xdeadbeef past it that must survive. */
static og_buffer *scalar_c(og_context *ctx, float c)
{
    uint32_t words[2] = {float_to_bits(c), 0xdeadbeefu};
    return make_buffer(ctx, words, sizeof words);
}

/* The empty buffers' one word of padding (internal: og_buffer_create pads to
 * a word) holds a pattern; the call must leave it, as it must leave A and B. */
#define EMPTY_PATTERN 0xa5a5a5a5u

static og_buffer *empty_operand(og_context *ctx)
{
    og_buffer *buf = NULL;
    cr_assert_eq(og_buffer_create(ctx, 0, &buf), OG_OK, "og_buffer_create(0): %s",
                 og_context_last_error(ctx));
    cr_assert_eq(og_buffer_size(buf), 0);
    /* Through the staging copy: the padding lies outside og_buffer_write's range. */
    cr_assert_eq(og_staging_write(buf, 0, &(uint32_t){EMPTY_PATTERN}, sizeof(uint32_t)), OG_OK);
    return buf;
}

static uint32_t empty_padding(const og_buffer *buf)
{
    uint32_t u = 0;
    cr_assert_eq(og_staging_read(buf, 0, &u, sizeof u), OG_OK);
    return u;
}

/* M = N = 1, K = 0, alpha 1 and the given beta over C = c; returns C's bits
 * afterwards, for each dtype and with A and B empty and NULL (all must agree). */
static uint32_t k0_result(og_context *ctx, float beta, float c)
{
    uint32_t result = 0;
    int first = 1;
    for (og_dtype t = OG_F32; t <= OG_BF16; t++) {
        og_gemm *g = NULL;
        cr_assert_eq(og_gemm_create(ctx, t, OG_MODE_FAST, &g), OG_OK);
        for (int null_ab = 0; null_ab < 2; null_ab++) {
            og_gemm_args args = {
                .m = 1, .n = 1, .k = 0, .alpha = 1.0f, .beta = beta, .lda = 1, .ldb = 1, .ldc = 1};
            og_buffer *a = empty_operand(ctx), *b = empty_operand(ctx);
            if (!null_ab) {
                args.a = a;
                args.b = b;
            }
            args.c = scalar_c(ctx, c);
            og_status st = og_gemm_run(g, &args);
            cr_assert_eq(st, OG_OK, "%s beta %g, A and B %s: og_gemm_run: %s", og_dtype_name(t),
                         (double)beta, null_ab ? "NULL" : "empty", og_context_last_error(ctx));
            uint32_t words[2];
            cr_assert_eq(og_buffer_read(args.c, 0, words, sizeof words), OG_OK);
            cr_assert_eq(words[1], 0xdeadbeefu, "%s beta %g: wrote past C", og_dtype_name(t),
                         (double)beta);
            cr_assert_eq(empty_padding(a), EMPTY_PATTERN, "%s beta %g: A touched", og_dtype_name(t),
                         (double)beta);
            cr_assert_eq(empty_padding(b), EMPTY_PATTERN, "%s beta %g: B touched", og_dtype_name(t),
                         (double)beta);
            cr_assert(first || words[0] == result,
                      "%s beta %g, A and B %s: C = 0x%08" PRIx32 ", other runs gave 0x%08" PRIx32,
                      og_dtype_name(t), (double)beta, null_ab ? "NULL" : "empty", words[0], result);
            result = words[0];
            first = 0;
            og_buffer_destroy(a);
            og_buffer_destroy(b);
            og_buffer_destroy(args.c);
        }
        og_gemm_destroy(g);
    }
    return result;
}

/* beta = 0 over C = 0.266733: C becomes 0. */
Test(bug_reports, k0_beta0)
{
    og_context *ctx = open_context();
    float got = bits_to_float(k0_result(ctx, 0.0f, 0.266733f));
    cr_assert_eq(got, 0.0f, "C = %a, expected 0", got);
    close_context(ctx);
}

/* beta = 2 over C = 3: C becomes 6. */
Test(bug_reports, k0_beta2)
{
    og_context *ctx = open_context();
    float got = bits_to_float(k0_result(ctx, 2.0f, 3.0f));
    cr_assert_eq(got, 6.0f, "C = %a, expected 6", got);
    close_context(ctx);
}

/* K = 0 with a tuned texel kernel of vector loads (a record chosen for
 * another K): A and B are not read, the call scales C. Before, the
 * placeholder bound for A had no 16-byte texel to view and the call failed. */
Test(bug_reports, k0_texel_vector_kernel)
{
    og_context *ctx = open_context();
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    /* Leading dimensions of 4 keep the vector loads on. */
    og_gemm_args args = {.m = 1, .n = 1, .k = 0, .alpha = 1, .beta = 2, .lda = 4, .ldb = 4,
                         .ldc = 1, .c = scalar_c(ctx, 3.0f)};
    og_params p = og_params_default();
    p.src = OG_SRC_TEXEL;
    p.vec = 4;
    cr_assert_eq(run_params(g, ctx, &args, &p), OG_OK, "%s", og_context_last_error(ctx));
    float c;
    cr_assert_eq(og_buffer_read(args.c, 0, &c, sizeof c), OG_OK);
    cr_expect_eq(c, 6.0f, "C = %g, expected 6", (double)c);
    og_buffer_destroy(args.c);
    og_gemm_destroy(g);
    close_context(ctx);
}

/* beta = 1 leaves C bit for bit: -0.0 (0 + -0.0 would give +0.0), a normal
 * value, and a NaN with a payload. */
Test(bug_reports, k0_beta1_bit_identical)
{
    static const uint32_t values[] = {0x80000000u, 0x3e88913au /* 0.266733f */, 0x7fc12345u};
    og_context *ctx = open_context();
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        uint32_t got = k0_result(ctx, 1.0f, bits_to_float(values[i]));
        cr_assert_eq(got, values[i], "C = 0x%08" PRIx32 ", expected 0x%08" PRIx32 " unchanged", got,
                     values[i]);
    }
    close_context(ctx);
}

/* ---- alpha = 0 ---- */

/* An operand of n elements of type t alternating NaN and +-Inf. */
static og_buffer *nonfinite(og_context *ctx, og_dtype t, size_t n)
{
    static const uint32_t f32[3] = {0x7fc00000u, 0x7f800000u, 0xff800000u};
    static const uint16_t f16[3] = {0x7e00u, 0x7c00u, 0xfc00u}, bf16[3] = {0x7fc0u, 0x7f80u, 0xff80u};
    size_t eb = og_dtype_bytes(t);
    unsigned char *data = malloc(n * eb + 1);
    cr_assert_not_null(data);
    for (size_t i = 0; i < n; i++) {
        if (t == OG_F32)
            memcpy(data + 4 * i, &f32[i % 3], 4);
        else
            memcpy(data + 2 * i, t == OG_F16 ? &f16[i % 3] : &bf16[i % 3], 2);
    }
    og_buffer *buf = make_buffer(ctx, data, n * eb);
    free(data);
    return buf;
}

/* alpha = 0 with A and B all NaN and Inf: C = act(beta * C + bias) bit for
 * bit, each operation rounded once (beta = 0: C is not read, so its NaN goes
 * too; -0 in C stays -0 under beta = 2). Shapes that take few rows, split-k
 * and the tile, batched; every dtype, both modes. */
Test(bug_reports, alpha0_reads_neither_a_nor_b, .timeout = 300)
{
    static const int64_t shapes[][4] = {{2, 37, 300, 1}, {64, 64, 1024, 1}, {130, 70, 40, 2}};
    static const float betas[] = {0.0f, 0.5f, 2.0f};
    og_context *ctx = open_context();
    for (og_dtype t = OG_F32; t <= OG_BF16; t++)
        for (og_mode mode = OG_MODE_FAST; mode <= OG_MODE_DETERMINISTIC; mode++) {
            og_gemm *g = NULL;
            cr_assert_eq(og_gemm_create(ctx, t, mode, &g), OG_OK);
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2], batch = shapes[s][3];
                size_t nc = (size_t)(m * n * batch);
                float *c0 = malloc(nc * sizeof *c0), *got = malloc(nc * sizeof *got);
                float *bias = malloc((size_t)n * sizeof *bias);
                cr_assert(c0 && got && bias);
                for (size_t i = 0; i < nc; i++)
                    c0[i] = i % 7 == 0 ? -0.0f : i % 11 == 0 ? NAN : (float)((int)(i % 13) - 6) / 3.0f;
                for (int64_t j = 0; j < n; j++)
                    bias[j] = (float)(j % 5) - 2.0f;
                og_buffer *bbuf = make_buffer(ctx, bias, (size_t)n * sizeof *bias);
                for (size_t bi = 0; bi < sizeof betas / sizeof betas[0]; bi++)
                    for (int epi = 0; epi < 2; epi++) {
                        float beta = betas[bi];
                        og_gemm_args args = {.m = m, .n = n, .k = k, .batch = batch, .alpha = 0.0f,
                                             .beta = beta, .lda = k, .ldb = n, .ldc = n,
                                             .stride_a = m * k, .stride_b = k * n, .stride_c = m * n};
                        args.a = nonfinite(ctx, t, (size_t)(m * k * batch));
                        args.b = nonfinite(ctx, t, (size_t)(k * n * batch));
                        args.c = make_buffer(ctx, c0, nc * sizeof *c0);
                        args.bias = epi ? bbuf : NULL;
                        args.activation = epi ? OG_ACTIVATION_RELU : OG_ACTIVATION_NONE;
                        cr_assert_eq(og_gemm_run(g, &args), OG_OK, "%s", og_context_last_error(ctx));
                        cr_assert_eq(og_buffer_read(args.c, 0, got, nc * sizeof *got), OG_OK);
                        for (size_t i = 0; i < nc; i++) {
                            volatile float want = beta != 0.0f ? beta * c0[i] : 0.0f;
                            if (epi) {
                                want = want + bias[i % (size_t)n];
                                want = og_reference_activation(OG_ACTIVATION_RELU, want);
                            }
                            float w = want;
                            cr_assert(memcmp(&got[i], &w, sizeof w) == 0 || (isnan(w) && isnan(got[i])),
                                      "%s %s %lldx%lldx%lld beta %g epilogue %d: C[%zu] = %a, "
                                      "expected %a", og_dtype_name(t), mode_name(mode),
                                      (long long)m, (long long)n, (long long)k, (double)beta, epi,
                                      i, (double)got[i], (double)w);
                        }
                        og_buffer_destroy(args.a);
                        og_buffer_destroy(args.b);
                        og_buffer_destroy(args.c);
                    }
                og_buffer_destroy(bbuf);
                free(c0);
                free(got);
                free(bias);
            }
            og_gemm_destroy(g);
        }
    close_context(ctx);
}

/* ---- messages ---- */

/* lda with K = 0 (and ldb, ldc with N = 0): the rule is max(1, dim), and the
 * message says so rather than "smaller than K (1)". */
Test(bug_reports, leading_dimension_with_empty_dimension)
{
    og_context *ctx = open_context();
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    og_gemm_args args = {.m = 1, .n = 1, .k = 0, .alpha = 1, .beta = 2, .lda = 0, .ldb = 1,
                         .ldc = 1, .c = scalar_c(ctx, 3.0f)};
    cr_assert_eq(og_gemm_run(g, &args), OG_ERROR_INVALID_ARGUMENT);
    cr_expect_str_eq(og_context_last_error(ctx),
                     "gemm: lda (0) must be at least 1 (K is 0; BLAS asks for max(1, K)) for A "
                     "not transposed");
    float c;
    cr_assert_eq(og_buffer_read(args.c, 0, &c, sizeof c), OG_OK);
    cr_expect_eq(c, 3.0f, "a refused call wrote C");
    args.lda = 1;
    args.n = 0;
    args.ldb = 0;
    cr_assert_eq(og_gemm_run(g, &args), OG_ERROR_INVALID_ARGUMENT);
    cr_expect_str_eq(og_context_last_error(ctx),
                     "gemm: ldb (0) must be at least 1 (N is 0; BLAS asks for max(1, N)) for B "
                     "not transposed");
    args.ldb = 1;
    cr_expect_eq(og_gemm_run(g, &args), OG_OK, "%s", og_context_last_error(ctx));
    og_buffer_destroy(args.c);
    og_gemm_destroy(g);
    close_context(ctx);
}

/* The elementwise kernels refuse a batch whose outputs overlap, as the GEMM
 * does (the bias would be added twice), and write nothing. */
Test(bug_reports, elementwise_refuses_overlapping_outputs)
{
    og_context *ctx = open_context();
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    float c0[6] = {1, 2, 3, 4, 5, 6}, bias[3] = {10, 20, 30}, got[6];
    og_gemm_args args = {.m = 2, .n = 3, .batch = 2, .ldc = 3, .stride_c = 0,
                         .c = make_buffer(ctx, c0, sizeof c0),
                         .bias = make_buffer(ctx, bias, sizeof bias)};
    cr_assert_eq(og_gemm_run_elementwise(g, OG_ELEMENTWISE_BIAS, &args), OG_ERROR_INVALID_ARGUMENT);
    cr_expect_str_eq(og_context_last_error(ctx),
                     "elementwise: stride_c (0) makes the batch's outputs overlap (needs at least "
                     "(M-1)*ldc + N = 6)");
    cr_assert_eq(og_buffer_read(args.c, 0, got, sizeof got), OG_OK);
    cr_expect_arr_eq(got, c0, sizeof c0, "a refused call wrote C");
    og_buffer_destroy(args.c);
    og_buffer_destroy(args.bias);
    og_gemm_destroy(g);
    close_context(ctx);
}

/* ---- ogtune's failures in its JSON ---- */

/* Runs `ogtune args`, which must fail; its standard output must end with
 * the line {"error":"<want>..."}. */
static void expect_json_failure(const char *args, const char *want)
{
    char *out;
    int rc = ogtune(args, &out);
    cr_expect_neq(rc, 0, "ogtune %s exited 0:\n%s", args, out);
    size_t len = strlen(out);
    cr_assert(len > 0 && out[len - 1] == '\n', "ogtune %s: no line on stdout:\n%s", args, out);
    out[len - 1] = '\0';
    const char *last = strrchr(out, '\n');
    last = last ? last + 1 : out;
    char prefix[512];
    snprintf(prefix, sizeof prefix, "{\"error\":\"%s", want);
    cr_expect(strncmp(last, prefix, strlen(prefix)) == 0 && last[strlen(last) - 1] == '}',
              "ogtune %s: the last line is\n%s\nnot %s...}", args, last, prefix);
    free(out);
}

Test(bug_reports, ogtune_failures_reach_the_json)
{
    /* A kernel the shape cannot run (few rows need M <= 4): after the
     * bench's own JSON object. */
    expect_json_failure("bench --json --shapes 8x64x64 --params variant=fewrows,cols=16,slices=16",
                        "ogtune bench: gemm: the few-rows kernel takes");
    expect_json_failure("bench --json --shapes 5x5", "ogtune bench: --shapes takes MxNxK");
    expect_json_failure("select --json --bogus", "ogtune: unknown option --bogus");
    expect_json_failure("import --json /nonexistent/dump.sql", "ogtune import: ");
}
