/* The bias and activation epilogue (reference design, "Bias and activation
 * epilogue"): act(alpha * product + beta * C + bias[j]) in the same dispatch
 * by every variant, equal bit for bit to the product followed by the
 * standalone bias and activation kernels; the cases of public bug reports. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "og_test.h"

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* C = act(alpha * A * B + bias) for a 1 x n x 1 product with A = [1]:
 * the activation of bias[j] + alpha * b[j], through the fused epilogue. */
static void fused_row(og_context *ctx, og_mode mode, const float *b, const float *bias, int n,
                      float alpha, og_activation act, float *out)
{
    og_gemm *g;
    float one = 1.0f;
    og_gemm_args args = {
        .m = 1, .n = n, .k = 1, .alpha = alpha, .lda = 1, .ldb = n, .ldc = n, .activation = act};
    args.a = make_buffer(ctx, &one, sizeof one);
    args.b = make_buffer(ctx, b, (size_t)n * sizeof *b);
    args.c = make_buffer(ctx, b, (size_t)n * sizeof *b);
    args.bias = bias ? make_buffer(ctx, bias, (size_t)n * sizeof *bias) : NULL;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, mode, &g), OG_OK);
    cr_assert_eq(og_gemm_run(g, &args), OG_OK, "%s", og_context_last_error(ctx));
    cr_assert_eq(og_buffer_read(args.c, 0, out, (size_t)n * sizeof *out), OG_OK);
    og_gemm_destroy(g);
    og_buffer_destroy(args.a);
    og_buffer_destroy(args.b);
    og_buffer_destroy(args.c);
    og_buffer_destroy(args.bias);
}

/* The standalone activation kernel on a row of values. */
static void activate_row(og_context *ctx, const float *x, int n, og_activation act, float *out)
{
    og_gemm *g;
    og_gemm_args args = {.m = 1, .n = n, .ldc = n, .activation = act};
    args.c = make_buffer(ctx, x, (size_t)n * sizeof *x);
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_DETERMINISTIC, &g), OG_OK);
    cr_assert_eq(og_gemm_run_elementwise(g, OG_ELEMENTWISE_ACTIVATION, &args), OG_OK, "%s",
                 og_context_last_error(ctx));
    cr_assert_eq(og_buffer_read(args.c, 0, out, (size_t)n * sizeof *out), OG_OK);
    og_gemm_destroy(g);
    og_buffer_destroy(args.c);
}

/* Order act(alpha * product + beta * C + bias): M = 1, N = 2, K = 1. */
Test(epilogue, order_of_bias_and_alpha)
{
    og_context *ctx = open_context();
    const float b[2] = {2, 4}, bias[2] = {10, 20}, relu_bias[2] = {-1.5f, 0};
    for (int mode = 0; mode < 2; mode++) {
        float out[2];
        fused_row(ctx, (og_mode)mode, b, bias, 2, 0.5f, OG_ACTIVATION_NONE, out);
        cr_expect(out[0] == 11.0f && out[1] == 22.0f, "got [%g, %g], want [11, 22]", out[0],
                  out[1]);
        fused_row(ctx, (og_mode)mode, b, relu_bias, 2, 0.5f, OG_ACTIVATION_RELU, out);
        cr_expect(out[0] == 0.0f && out[1] == 2.0f, "ReLU: got [%g, %g], want [0, 2]", out[0],
                  out[1]);
    }
    close_context(ctx);
}

/* ReLU is a compare and select: NaN and +Inf pass, -Inf and negatives give 0. */
Test(epilogue, relu_nan_and_infinities)
{
    og_context *ctx = open_context();
    const float x[5] = {NAN, INFINITY, -INFINITY, -2, 3};
    float fused[5], alone[5];
    fused_row(ctx, OG_MODE_FAST, x, NULL, 5, 1.0f, OG_ACTIVATION_RELU, fused);
    activate_row(ctx, x, 5, OG_ACTIVATION_RELU, alone);
    for (int i = 0; i < 5; i++)
        cr_expect_eq(bits(fused[i]), bits(alone[i]), "element %d: fused %g, standalone %g", i,
                     fused[i], alone[i]);
    cr_expect(isnan(alone[0]), "ReLU(NaN) = %g", alone[0]);
    cr_expect(alone[1] == INFINITY && alone[2] == 0.0f && alone[3] == 0.0f && alone[4] == 3.0f,
              "ReLU gives [%g, %g, %g, %g]", alone[1], alone[2], alone[3], alone[4]);
    close_context(ctx);
}

static void check_gelu(og_activation act, const float *want)
{
    og_context *ctx = open_context();
    const float x[7] = {1, -1, -3, 2, NAN, -INFINITY, INFINITY};
    float fused[7], alone[7];
    fused_row(ctx, OG_MODE_DETERMINISTIC, x, NULL, 7, 1.0f, act, fused);
    activate_row(ctx, x, 7, act, alone);
    for (int i = 0; i < 7; i++)
        cr_expect_eq(bits(fused[i]), bits(alone[i]), "element %d: fused %a, standalone %a", i,
                     (double)fused[i], (double)alone[i]);
    for (int i = 0; i < 4; i++) {
        cr_expect(fabsf(alone[i] - want[i]) <= 1e-6f, "GELU(%g) = %.8f, want about %.7f", x[i],
                  alone[i], want[i]);
        cr_expect(fabsf(alone[i] - og_reference_activation(act, x[i])) <= 1e-6f,
                  "GELU(%g) = %.8f, the host gives %.8f", x[i], alone[i],
                  og_reference_activation(act, x[i]));
    }
    cr_expect(isnan(alone[4]), "GELU(NaN) = %g", alone[4]);
    cr_expect(alone[5] == 0.0f && signbit(alone[5]), "GELU(-Inf) = %g, want -0", alone[5]);
    cr_expect(alone[6] == INFINITY, "GELU(+Inf) = %g", alone[6]);
    close_context(ctx);
}

Test(epilogue, gelu_erf_values)
{
    const float want[4] = {0.8413447f, -0.1586553f, -0.0040497f, 1.9544997f};
    check_gelu(OG_ACTIVATION_GELU_ERF, want);
}

Test(epilogue, gelu_tanh_values)
{
    const float want[4] = {0.8411920f, -0.1588080f, -0.0036374f, 1.9545977f};
    check_gelu(OG_ACTIVATION_GELU_TANH, want);
}

/* ---- fused == product, then the bias kernel, then the activation kernel ---- */

typedef struct variant_case {
    const char *name;
    og_mode mode;
    int64_t m, n, k;
    int trans_b;
    int fast_params; /* Fast mode: run `params` instead of the selection */
    og_params params;
} variant_case;

static og_params texel_chain_split2(void)
{
    og_params p = og_params_default();
    p.bm = 128;
    p.tm = 8;
    p.wgy = 16;
    p.load = OG_LOAD_DIRECT;
    p.pad = 0;
    p.vec = 4;
    p.src = OG_SRC_TEXEL;
    p.acc = OG_ACC_CHAIN;
    p.split = 2;
    return p;
}

/* The selected kernel or the forced one, with the epilogue of args. */
static void run_variant(og_context *ctx, og_gemm *g, const variant_case *v,
                        const og_gemm_args *args)
{
    og_status st = v->fast_params ? run_params(g, ctx, args, &v->params) : og_gemm_run(g, args);
    cr_assert_eq(st, OG_OK, "%s: %s", v->name, og_context_last_error(ctx));
}

static void check_fused_equals_separate(og_dialect dialect, og_dtype t, const variant_case *v)
{
    og_context *ctx = open_context();
    ctx->dialect = dialect;
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, t, v->mode, &g), OG_OK);
    og_gemm_args args = {.trans_b = v->trans_b,
                         .m = v->m,
                         .n = v->n,
                         .k = v->k,
                         .batch = 2,
                         .alpha = 0.75f,
                         .beta = -1.25f,
                         .bias_offset = 3};
    args.lda = v->k + 4;
    args.ldb = (v->trans_b ? v->k : v->n) + 4;
    args.ldc = v->n + 1;
    args.stride_a = v->m * args.lda;
    args.stride_b = (v->trans_b ? v->n : v->k) * args.ldb;
    args.stride_c = v->m * args.ldc + 5;
    size_t na, nb, nc, eb = og_dtype_bytes(t), nbias = (size_t)v->n + 3;
    og_gemm_extents(&args, &na, &nb, &nc);
    void *a = malloc(na * eb), *b = malloc(nb * eb);
    float *c0 = malloc(nc * 4), *bias = malloc(nbias * 4), *fused = malloc(nc * 4),
          *separate = malloc(nc * 4);
    cr_assert(a && b && c0 && bias && fused && separate);
    uint64_t seed = 7;
    og_fill_random(t, a, na, &seed);
    og_fill_random(t, b, nb, &seed);
    og_fill_random(OG_F32, c0, nc, &seed);
    og_fill_random(OG_F32, bias, nbias, &seed);
    args.a = make_buffer(ctx, a, na * eb);
    args.b = make_buffer(ctx, b, nb * eb);
    args.c = make_buffer(ctx, c0, nc * 4);
    og_buffer *bias_buf = make_buffer(ctx, bias, nbias * 4);
    for (int act = OG_ACTIVATION_NONE; act <= OG_ACTIVATION_GELU_TANH; act++)
        for (int with_bias = 0; with_bias < 2; with_bias++) {
            if (act == OG_ACTIVATION_NONE && !with_bias)
                continue;
            og_gemm_args e = args;
            e.bias = with_bias ? bias_buf : NULL;
            e.activation = (og_activation)act;
            og_buffer_write(args.c, 0, c0, nc * 4);
            run_variant(ctx, g, v, &e);
            og_buffer_read(args.c, 0, fused, nc * 4);
            og_buffer_write(args.c, 0, c0, nc * 4);
            run_variant(ctx, g, v, &args);
            if (with_bias)
                cr_assert_eq(og_gemm_run_elementwise(g, OG_ELEMENTWISE_BIAS, &e), OG_OK, "%s",
                             og_context_last_error(ctx));
            if (act != OG_ACTIVATION_NONE)
                cr_assert_eq(og_gemm_run_elementwise(g, OG_ELEMENTWISE_ACTIVATION, &e), OG_OK, "%s",
                             og_context_last_error(ctx));
            og_buffer_read(args.c, 0, separate, nc * 4);
            for (size_t i = 0; i < nc; i++)
                cr_assert_eq(bits(fused[i]), bits(separate[i]),
                             "%s %s activation %d bias %d: element %zu fused %a, separate %a",
                             v->name, og_dtype_name(t), act, with_bias, i, (double)fused[i],
                             (double)separate[i]);
        }
    og_gemm_destroy(g);
    og_buffer_destroy(args.a);
    og_buffer_destroy(args.b);
    og_buffer_destroy(args.c);
    og_buffer_destroy(bias_buf);
    close_context(ctx);
    free(a);
    free(b);
    free(c0);
    free(bias);
    free(fused);
    free(separate);
}

/* Every variant: the default tile with and without split-k (the rule splits
 * K = 300 at this grid), a tuned tile with texel and vector loads, one chain
 * and two forced ranges, and the few-rows kernel for both layouts of B. */
static void check_all_variants(og_dtype t)
{
    variant_case cases[] = {
        {"deterministic tile", OG_MODE_DETERMINISTIC, 37, 45, 60, 0, 0, {0}},
        {"deterministic split-k", OG_MODE_DETERMINISTIC, 37, 45, 300, 0, 0, {0}},
        {"fast texel chain split=2", OG_MODE_FAST, 70, 45, 300, 1, 1, texel_chain_split2()},
        {"few rows, B K x N", OG_MODE_DETERMINISTIC, 3, 45, 300, 0, 0, {0}},
        {"few rows, B N x K", OG_MODE_FAST, 4, 45, 300, 1, 0, {0}},
    };
    size_t n = t == OG_F32 ? 5 : 3; /* few rows takes float32 only */
    for (size_t i = 0; i < n; i++)
        check_fused_equals_separate(OG_GLSL, t, &cases[i]);
}

Test(epilogue, fused_equals_separate_f32, .timeout = 600)
{
    check_all_variants(OG_F32);
}

Test(epilogue, fused_equals_separate_f16, .timeout = 600)
{
    check_all_variants(OG_F16);
}

Test(epilogue, fused_equals_separate_bf16, .timeout = 600)
{
    check_all_variants(OG_BF16);
}

/* The HLSL kernels (split-k reduction, elementwise, few rows) from the same
 * templates keep the equality. */
Test(epilogue, fused_equals_separate_hlsl, .timeout = 600)
{
    variant_case split = {"deterministic split-k", OG_MODE_DETERMINISTIC, 37, 45, 300, 0, 0, {0}};
    variant_case rows = {"few rows, B N x K", OG_MODE_FAST, 4, 45, 300, 1, 0, {0}};
    check_fused_equals_separate(OG_HLSL, OG_F32, &split);
    check_fused_equals_separate(OG_HLSL, OG_F32, &rows);
    check_fused_equals_separate(OG_HLSL, OG_BF16, &split);
}

/* A bias shorter than bias_offset + N is refused, naming the bias. */
Test(epilogue, short_bias_refused)
{
    og_context *ctx = open_context();
    og_gemm *g;
    float data[8] = {0};
    og_gemm_args args = {
        .m = 1, .n = 8, .k = 1, .lda = 1, .ldb = 8, .ldc = 8, .alpha = 1, .bias_offset = 1};
    args.a = make_buffer(ctx, data, 4);
    args.b = make_buffer(ctx, data, sizeof data);
    args.c = make_buffer(ctx, data, sizeof data);
    args.bias = make_buffer(ctx, data, sizeof data);
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    cr_expect_eq(og_gemm_run(g, &args), OG_ERROR_INVALID_ARGUMENT);
    cr_expect(strstr(og_context_last_error(ctx), "bias") != NULL, "message: %s",
              og_context_last_error(ctx));
    args.bias_offset = 0;
    args.activation = (og_activation)7;
    cr_expect_eq(og_gemm_run(g, &args), OG_ERROR_INVALID_ARGUMENT);
    cr_expect(strstr(og_context_last_error(ctx), "activation") != NULL, "message: %s",
              og_context_last_error(ctx));
    og_gemm_destroy(g);
    og_buffer_destroy(args.a);
    og_buffer_destroy(args.b);
    og_buffer_destroy(args.c);
    og_buffer_destroy(args.bias);
    close_context(ctx);
}
