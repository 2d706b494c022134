/* The low-bit decode kernel's integer path (variant=qdecode with dot=1 or
 * 2; docs/decode.md, "The integer path"): A quantised per block of 32 to
 * int8 with one scale, 4x8-bit dot products. Every format against the
 * float64 reference of og_qgemm_case.h within the stated quantisation
 * bound, at M = 1, 2, 3, 8 and 16; integer-valued A (the int8 values are A
 * itself) within float32's bound; the device's dot products, the
 * emulation and the kernel's variants bit for bit alike; a planted fault in
 * the activations' scale caught; Deterministic mode refused, WGSL taken; the
 * tuner's space offers it. The passes after the first (OG_TEST_STRIDE)
 * take every stride-th case. */
#include "og_qgemm_case.h"
#include "og_plant.h"

static const og_dtype TYPES[3] = {OG_F32, OG_F16, OG_BF16};

/* The planted template's directory (og_plant.h) lives in the test's own. */
TestSuite(faults, .init = make_tmpdir, .fini = remove_tmpdir);

/* The formats of og_qgemm_case.h, then the K-quants. */
#define ALL_FORMATS (N_FORMATS + 2)
static og_qweights_format format_at(size_t i)
{
    return i < N_FORMATS ? formats[i] : kquant_formats[i - N_FORMATS];
}

/* The integer path of the default decode kernel for M rows: the device's
 * dot products where it has them and dot is 1, else the emulation. */
static og_params int8_params(const og_context *ctx, int64_t m, int dot)
{
    og_params p = og_params_qdecode(m);
    p.vec = 1;
    p.dot = dot == 1 && ctx->limits.integer_dot ? 1 : 2;
    return p;
}

static int64_t k_for(const og_qweights_format *f)
{
    return f->format == OG_QFORMAT_Q4_K || f->format == OG_QFORMAT_Q6_K ? 512 : 384;
}

Test(qgemm_int8, every_format_and_row_count, .timeout = 900)
{
    og_context *ctx = open_context();
    static const int64_t rows[] = {1, 2, 3, 8, 16};
    int stride = og_test_stride(), i = 0;
    for (size_t fi = 0; fi < ALL_FORMATS; fi++)
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++, i++) {
            if (i % stride)
                continue;
            og_qweights_format f = format_at(fi);
            og_params p = int8_params(ctx, rows[r], (int)(fi + r) % 2 + 1);
            qcase c = {.f = f,
                       .a_type = TYPES[(fi + r) % 3],
                       .m = rows[r],
                       .n = 11,
                       .k = k_for(&f),
                       .tensor_scale = 0.5f,
                       .params = &p};
            run_case(ctx, &c, OG_MODE_FAST);
        }
    close_context(ctx);
}

/* Integer-valued A with a 127 in every block: the activations' scale is 1
 * and their int8 values A itself, so the quantisation bound is not needed
 * (case_mismatches leaves it out); with the epilogue, stacked experts and
 * offsets. */
Test(qgemm_int8, integer_activations_within_float_bound, .timeout = 600)
{
    og_context *ctx = open_context();
    int stride = og_test_stride();
    for (size_t fi = 0; fi < ALL_FORMATS; fi += (size_t)stride / 2 + 1) {
        og_qweights_format f = format_at(fi);
        og_params p = int8_params(ctx, 3, (int)fi % 2 + 1);
        qcase c = {.f = f,
                   .a_type = TYPES[fi % 3],
                   .m = 3,
                   .n = 9,
                   .k = k_for(&f),
                   .batch = fi % 3 == 0 ? 2 : 0,
                   .a_off = 32,
                   .c_off = 3,
                   .w_off = 1,
                   .ldc_pad = 2,
                   .beta = fi % 2 ? 0.5f : 0.0f,
                   .bias = (int)fi % 2,
                   .act = fi % 4 == 1 ? OG_ACTIVATION_RELU : OG_ACTIVATION_NONE,
                   .params = &p,
                   .exact_a = 1};
        run_case(ctx, &c, OG_MODE_FAST);
    }
    close_context(ctx);
}

/* Integer sums are exact and the float operations after them the same: the
 * device's dot products, the emulation, tn = 4 columns an invocation,
 * 16-byte loads with 2 units a trip, texel views and split-k's planes
 * (against the reference: its ranges add in another order) agree. */
Test(qgemm_int8, variants_give_the_same_bits, .timeout = 600)
{
    og_context *ctx = open_context();
    int64_t m = 2, n = 13;
    static const size_t picks[] = {1, 4, 6, N_FORMATS + 1}; /* NVFP4, int4 float zeros, Q8_0, Q6_K */
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i += (size_t)og_test_stride() / 2 + 1) {
        og_qweights_format f = format_at(picks[i]);
        int64_t k = k_for(&f);
        float *a = random_a((size_t)(m * k), 200.0f);
        og_params p[5];
        p[0] = int8_params(ctx, m, 2);
        p[0].cols = 4;
        p[0].slices = 8;
        for (int j = 1; j < 5; j++)
            p[j] = p[0];
        p[1].dot = ctx->limits.integer_dot ? 1 : 2;
        p[2].tn = 4;
        p[2].cols = 16;
        p[3].vec = 4;
        p[3].unroll = 2;
        p[4].src = OG_SRC_TEXEL;
        same_bits(ctx, &f, TYPES[i % 3], a, m, n, k, p, 5, 1);
        og_params split = p[0];
        split.split = 2;
        qcase c = {.f = f, .a_type = TYPES[i % 3], .m = m, .n = n, .k = k, .params = &split};
        run_case(ctx, &c, OG_MODE_FAST);
        free(a);
    }
    close_context(ctx);
}

/* The activations' scale amax / 127 planted as amax / 126: on integer A
 * every sum is 127/126 of the right one, which the float bound sees. */
Test(faults, int8_activation_scale_is_caught)
{
    plant_template("qgemm_decode", "amax / 127.0", "amax / 126.0");
    og_context *ctx = open_context();
    for (size_t fi = 0; fi < ALL_FORMATS; fi += 4) {
        og_qweights_format f = format_at(fi);
        og_params p = int8_params(ctx, 2, 2);
        qcase c = {.f = f, .a_type = OG_F32, .m = 2, .n = 5, .k = k_for(&f), .params = &p,
                   .exact_a = 1};
        char first[512] = "";
        size_t wrong = case_mismatches(ctx, &c, OG_MODE_FAST, first, sizeof first);
        cr_expect_gt(wrong, 0, "format %d: the planted activation scale went unseen",
                     (int)f.format);
    }
    close_context(ctx);
}

/* Deterministic mode keeps the float path: the integer path's parameters
 * are refused with the reason and C keeps its values. */
Test(qgemm_int8, deterministic_mode_refuses_it)
{
    og_context *ctx = open_context();
    og_qweights_format f = formats[0];
    int64_t m = 1, n = 4, k = 64;
    layout l = layout_for(&f, n, k);
    uint8_t *img = random_image(&f, &l, n, k);
    float a[64] = {0}, c[4] = {1, 2, 3, 4}, got[4];
    og_buffer *A = make_buffer(ctx, a, sizeof a), *W = make_buffer(ctx, img, l.bytes),
              *C = make_buffer(ctx, c, sizeof c);
    og_qgemm *q = NULL;
    cr_assert_eq(og_qgemm_create(ctx, OG_F32, &f, OG_MODE_DETERMINISTIC, &q), OG_OK);
    og_qgemm_args args = {.m = m, .n = n, .k = k, .a = A, .lda = k, .w = W, .c = C, .ldc = n};
    og_params p = int8_params(ctx, m, 2);
    cr_assert_eq(run_qparams(q, ctx, &args, &p), OG_ERROR_UNSUPPORTED);
    const char *why = og_context_last_error(ctx);
    cr_expect(strstr(why, "qgemm") && strstr(why, "dot=2") && strstr(why, "Fast mode only"),
              "the refusal does not say why: %s", why);
    cr_assert_eq(og_buffer_read(C, 0, got, sizeof got), OG_OK);
    cr_expect_arr_eq(got, c, sizeof c, "a refused call wrote C");
    og_qgemm_destroy(q);
    og_buffer_destroy(A);
    og_buffer_destroy(W);
    og_buffer_destroy(C);
    free(img);
    close_context(ctx);
}

/* The key: dot=1 and 2 in parameter strings, 3 refused, dot=1 refused
 * where the device has no integer dot products, WGSL taken (dot4I8Packed,
 * or the emulation), the benchmarks' parts refused with their reason. */
Test(qgemm_int8, parameters_and_refusals)
{
    og_params p;
    char why[256], text[128];
    cr_assert_eq(og_params_parse("variant=qdecode,rows=2,cols=4,slices=32,vec=1,dot=2", &p, why,
                                 sizeof why),
                 0, "%s", why);
    cr_expect_eq(p.dot, 2);
    og_params_format(&p, text, sizeof text);
    cr_expect_str_eq(text, "variant=qdecode,rows=2,cols=4,slices=32,vec=1,dot=2");
    cr_assert_eq(og_params_parse("variant=qdecode,rows=2,cols=4,slices=32,vec=1", &p, why,
                                 sizeof why),
                 0, "%s", why);
    cr_expect_eq(p.dot, 0, "an absent dot is the float path");
    p.dot = 3;
    cr_expect_neq(og_params_check(&p, NULL, why, sizeof why), 0);
    cr_expect(strstr(why, "dot=3"), "%s", why);
    og_context *ctx = open_context();
    og_limits lim = ctx->limits;
    close_context(ctx);
    lim.integer_dot = 0;
    p.dot = 1;
    cr_expect_neq(og_params_check(&p, &lim, why, sizeof why), 0);
    cr_expect(strstr(why, "VK_KHR_shader_integer_dot_product"), "%s", why);
    p.dot = 2;
    cr_expect_eq(og_params_check(&p, &lim, why, sizeof why), 0, "%s", why);
    og_kernel_key key = {.kernel = OG_KERNEL_GEMM,
                         .p = p,
                         .dtype = OG_F32,
                         .dialect = OG_WGSL,
                         .qformat = OG_QFORMAT_KEY(OG_QFORMAT_Q8_0, 0, 0)};
    cr_expect_eq(og_kernel_check(&key, NULL, why, sizeof why), 0, "%s", why);
    char *src = NULL;
    cr_assert_eq(og_gen_source(&key, &src, why, sizeof why), OG_OK, "%s", why);
    cr_expect(strstr(src, "fn og_dot_s(x: u32, w: u32) -> i32") && !strstr(src, "dot4I8Packed("),
              "the WGSL emulation (dot=2) is not there");
    free(src);
    key.p.dot = 1;
    cr_assert_eq(og_gen_source(&key, &src, why, sizeof why), OG_OK, "%s", why);
    cr_expect(strstr(src, "return dot4I8Packed(x, w);"), "dot=1 in WGSL does not use dot4I8Packed");
    free(src);
    key.dialect = OG_GLSL;
    cr_expect_eq(og_kernel_check(&key, NULL, why, sizeof why), 0, "%s", why);
    key.part = OG_PART_LOAD;
    cr_expect_neq(og_kernel_check(&key, NULL, why, sizeof why), 0);
    cr_expect(strstr(why, "parts"), "%s", why);
}

/* ogtune's space for a decode shape offers the integer path (the
 * emulation on every device, the dot products where the device has them). */
Test(qgemm_int8, the_tuner_measures_it)
{
    og_context *ctx = open_context();
    og_shape s = {.m = 8, .n = 4096, .k = 4096, .batch = 1};
    for (int preset = 0; preset < 2; preset++) {
        og_params *space = NULL;
        size_t n = 0;
        cr_assert_eq(og_space_qgemm(&ctx->limits, preset ? OG_PRESET_STANDARD : OG_PRESET_QUICK,
                                    &s, &space, &n),
                     OG_OK);
        int seen[3] = {0};
        for (size_t i = 0; i < n; i++)
            if (space[i].variant == OG_VARIANT_QDECODE && space[i].dot >= 0 && space[i].dot <= 2)
                seen[space[i].dot]++;
        cr_expect_gt(seen[0], 0);
        cr_expect_gt(seen[2], 0, "preset %d: no emulated integer path", preset);
        cr_expect(ctx->limits.integer_dot ? seen[1] > 0 : seen[1] == 0,
                  "preset %d: %d candidates with the device's dot products (integer_dot %d)",
                  preset, seen[1], ctx->limits.integer_dot);
        free(space);
    }
    close_context(ctx);
}
