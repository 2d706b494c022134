/* The depthwise convolution kernel (variant=depthwise,
 * templates/conv_depthwise.tmpl; issue 43 item 2): few channels a group
 * against the float64 direct convolution of og_conv_case.h (depthwise,
 * channel multipliers, grouped, 1-D, dilated, strided, windows in the
 * padding, 7x7 of 49 terms), float32, float16 and bfloat16, both layouts and
 * weight orders, with the epilogue; every parameter bit for bit the default
 * tile's sums (the documented order) on random float32; which calls take it;
 * pieces of lowered grid counts; planted faults (a filter read from the
 * wrong group, the taps walked wrong, a pixel's window origin off by one,
 * the blocks of the order) caught; and a tuned record selected. */
#include "og_conv_case.h"
#include "og_ogtune.h"
#include "og_plant.h"
#include "og_records.h"

TestSuite(conv_depthwise, .init = make_tmpdir, .fini = remove_tmpdir);

/* Fields as in conv_case: layout, weights, type, N, C, H, W, K, R, S,
 * groups, strides, dilations, pads (top, bottom, left, right), bias,
 * activation, beta. Every one has at most 8 channels a group. */
// clang-format off
static const conv_case cases[] = {
    /* MobileNet's 3x3 depthwise, stride 1 and 2 */
    {OG_CONV_NHWC, OG_CONV_KRSC, OG_F32, 2, 12, 9, 11, 12, 3, 3, 12, 1, 1, 1, 1, 1, 1, 1, 1, 0, OG_ACTIVATION_NONE, 0.0f},
    {OG_CONV_NCHW, OG_CONV_KCRS, OG_F16, 1, 8, 13, 10, 8, 3, 3, 8, 2, 2, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_RELU, 0.0f},
    /* a channel multiplier of 2, dilated, asymmetric pads, beta */
    {OG_CONV_NHWC, OG_CONV_KCRS, OG_BF16, 2, 6, 10, 9, 12, 3, 3, 6, 1, 1, 2, 2, 2, 1, 0, 2, 1, OG_ACTIVATION_RELU, 1.0f},
    /* groups of 4 in, 4 out: 36 terms, three chains */
    {OG_CONV_NCHW, OG_CONV_KRSC, OG_F32, 1, 16, 7, 8, 16, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_GELU_ERF, 0.0f},
    /* ConvNeXt's 7x7 depthwise: 49 terms, two blocks */
    {OG_CONV_NHWC, OG_CONV_KRSC, OG_F32, 1, 8, 15, 14, 8, 7, 7, 8, 1, 1, 1, 1, 3, 3, 3, 3, 1, OG_ACTIVATION_NONE, 1.0f},
    /* a grouped conv1d (Whisper-like), stride 2 */
    {OG_CONV_NCHW, OG_CONV_KRSC, OG_F16, 2, 16, 1, 40, 16, 1, 5, 8, 1, 2, 1, 1, 0, 0, 2, 2, 0, OG_ACTIVATION_GELU_TANH, 0.0f},
    /* windows wholly in the padding; odd channels a group (3 out) */
    {OG_CONV_NHWC, OG_CONV_KCRS, OG_F32, 1, 5, 3, 3, 15, 3, 3, 5, 1, 1, 1, 1, 4, 4, 4, 4, 1, OG_ACTIVATION_NONE, 0.0f},
    /* 8 in, 8 out a group, 5x5 of 200 terms on a grid the split rule leaves whole */
    {OG_CONV_NCHW, OG_CONV_KCRS, OG_F32, 8, 16, 40, 40, 16, 5, 5, 2, 1, 1, 1, 1, 2, 2, 2, 2, 0, OG_ACTIVATION_NONE, 0.0f},
};
// clang-format on
#define CASES (sizeof cases / sizeof cases[0])

/* The implicit GEMM's shape of t (og_conv_geometry_check). */
static og_conv_shape shape_of(og_context *ctx, const conv_case *t)
{
    og_conv_args a = args_of(t);
    og_conv_shape s;
    cr_assert_eq(og_conv_geometry_check(ctx->error, &a, &s), OG_OK, "%s", ctx->error);
    return s;
}

/* Every case in both modes through og_conv_run, which takes the depthwise
 * kernel for them (said by og_conv_describe), against the float64
 * reference: exact sums of quarter values, bit for bit. */
Test(conv_depthwise, against_reference, .timeout = 900)
{
    og_context *ctx = open_context();
    for (size_t i = 0; i < CASES; i++) {
        og_conv_shape s = shape_of(ctx, &cases[i]);
        cr_expect(og_conv_depthwise_eligible(&s), "case %zu is not the depthwise kernel's", i);
        for (int mode = 0; mode < 2; mode++)
            run_case(ctx, mode ? OG_MODE_DETERMINISTIC : OG_MODE_FAST, &cases[i],
                     (uint32_t)(10 * i + mode));
    }
    close_context(ctx);
}

/* y of t with random float32 x and weights (every rounding shows), through
 * kernel parameters p, in Deterministic mode. */
static float *output_of(og_context *ctx, const conv_case *t, const og_params *p, uint32_t seed)
{
    og_conv_args a = args_of(t);
    int64_t P, Q;
    og_conv_output_size(&a, &P, &Q);
    size_t nx = (size_t)(t->n * t->c * t->h * t->w),
           nw = (size_t)(t->k * t->c / t->groups * t->r * t->s), ny = (size_t)(t->n * t->k * P * Q);
    float *v = malloc((nx + nw + ny) * sizeof *v), *bias = malloc((size_t)t->k * sizeof *bias);
    cr_assert(v && bias);
    for (size_t i = 0; i < nx + nw + ny; i++)
        v[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) * 0x1p-23f - 1.0f;
    for (int64_t i = 0; i < t->k; i++)
        bias[i] = (float)i * 0.375f - 2.0f;
    og_buffer *bx = make_buffer(ctx, v, nx * 4), *bw = make_buffer(ctx, v + nx, nw * 4);
    og_buffer *by = make_buffer(ctx, v + nx + nw, ny * 4),
              *bb = make_buffer(ctx, bias, (size_t)t->k * 4);
    a.x = bx, a.wt = bw, a.y = by, a.bias = t->bias ? bb : NULL;
    og_conv *cv;
    cr_assert_eq(og_conv_create(ctx, OG_F32, OG_MODE_DETERMINISTIC, &cv), OG_OK);
    run_conv_params(ctx, cv, &a, p, "depthwise");
    float *y = malloc(ny * 4);
    cr_assert_not_null(y);
    cr_assert_eq(og_buffer_read(by, 0, y, ny * 4), OG_OK);
    og_conv_destroy(cv);
    og_buffer_destroy(bx);
    og_buffer_destroy(bw);
    og_buffer_destroy(by);
    og_buffer_destroy(bb);
    free(v);
    free(bias);
    return y;
}

static size_t outputs(const conv_case *t)
{
    og_conv_args a = args_of(t);
    int64_t P, Q;
    og_conv_output_size(&a, &P, &Q);
    return (size_t)(t->n * t->k * P * Q);
}

/* The parameters the tests run: the default, each field moved, and texel
 * fetches. */
static const char *const variants[] = {
    "variant=depthwise,rows=64,tm=4,tn=1",
    "variant=depthwise,rows=32,tm=1,tn=1",
    "variant=depthwise,rows=256,tm=8,tn=2",
    "variant=depthwise,rows=128,tm=2,tn=4",
    "variant=depthwise,rows=64,tm=8,tn=8",
    "variant=depthwise,rows=32,tm=8,tn=1,src=texel",
    "variant=depthwise,rows=64,tm=4,tn=2,src=texel",
};

/* Every variant gives the default tile's bits (the documented order,
 * docs/accumulation-order.md "Convolution", which test_conv checks against
 * its host emulation): random float32, with bias and beta. */
Test(conv_depthwise, same_bits_as_the_tile, .timeout = 900)
{
    og_context *ctx = open_context();
    og_params tile = og_params_default();
    size_t step = (size_t)og_test_stride();
    for (size_t i = 0; i < CASES; i++) {
        conv_case t = cases[i];
        t.dtype = OG_F32;
        t.act = t.act == OG_ACTIVATION_RELU ? OG_ACTIVATION_RELU : OG_ACTIVATION_NONE;
        float *want = output_of(ctx, &t, &tile, 40 + (uint32_t)i);
        size_t n = outputs(&t);
        for (size_t v = i % step; v < sizeof variants / sizeof variants[0]; v += step) {
            og_params p;
            char err[256];
            cr_assert_eq(og_params_parse(variants[v], &p, err, sizeof err), 0, "%s", err);
            float *got = output_of(ctx, &t, &p, 40 + (uint32_t)i);
            size_t first = 0, differ = bits_differ(got, want, n, &first);
            cr_expect_eq(differ, 0, "case %zu, %s: %zu elements differ, first y[%zu] = %a, tile %a",
                         i, variants[v], differ, first, (double)got[first], (double)want[first]);
            free(got);
        }
        free(want);
    }
    close_context(ctx);
}

/* Which calls take it: few channels a group where the split rule leaves k
 * whole, in both modes and whatever the layouts; not a dense layer, groups
 * of more than 8 output channels, nor a grouped 5x5 whose small grid the
 * rule splits. Its parameter strings; the GEMM refuses them. */
Test(conv_depthwise, selection_and_parameters)
{
    og_context *ctx = open_context();
    og_choice c;
    for (size_t i = 0; i < CASES; i++) {
        og_conv_args a = args_of(&cases[i]);
        og_conv_shape s = shape_of(ctx, &cases[i]);
        for (int mode = 0; mode < 2; mode++) {
            cr_assert_eq(og_select_conv(ctx, cases[i].dtype,
                                        mode ? OG_MODE_DETERMINISTIC : OG_MODE_FAST, &a, &s, &c),
                         OG_OK);
            cr_expect(og_family_can(&c.params, OG_FAMILY_DEPTHWISE), "case %zu mode %d: %s", i,
                      mode, og_params_template(&c.params));
            cr_expect_eq(c.source, OG_SOURCE_DEFAULT);
        }
    }
    // clang-format off
    const conv_case others[] = {
        /* dense */
        {OG_CONV_NHWC, OG_CONV_KRSC, OG_F32, 1, 8, 9, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, OG_ACTIVATION_NONE, 0.0f},
        /* 12 output channels a group */
        {OG_CONV_NCHW, OG_CONV_KCRS, OG_F32, 1, 8, 9, 9, 24, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, OG_ACTIVATION_NONE, 0.0f},
        /* 8 in, 8 out, 200 terms, 8 groups of 225 pixels: the rule splits */
        {OG_CONV_NHWC, OG_CONV_KRSC, OG_F32, 1, 64, 30, 30, 64, 5, 5, 8, 2, 2, 1, 1, 2, 2, 2, 2, 0, OG_ACTIVATION_NONE, 0.0f},
    };
    // clang-format on
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        og_conv_args a = args_of(&others[i]);
        og_conv_shape s = shape_of(ctx, &others[i]);
        cr_expect(!og_conv_depthwise_eligible(&s), "other %zu", i);
        cr_assert_eq(og_select_conv(ctx, OG_F32, OG_MODE_DETERMINISTIC, &a, &s, &c), OG_OK);
        cr_expect(!og_family_can(&c.params, OG_FAMILY_DEPTHWISE), "other %zu", i);
    }
    /* og_conv_describe names the kernel. */
    og_conv *cv;
    cr_assert_eq(og_conv_create(ctx, OG_F32, OG_MODE_FAST, &cv), OG_OK);
    og_conv_args a = args_of(&cases[0]);
    og_buffer *x, *w, *y;
    cr_assert_eq(og_buffer_create(ctx, 2 * 12 * 9 * 11 * 4, &x), OG_OK);
    cr_assert_eq(og_buffer_create(ctx, 12 * 9 * 4, &w), OG_OK);
    cr_assert_eq(og_buffer_create(ctx, 2 * 12 * 9 * 11 * 4, &y), OG_OK);
    a.x = x, a.wt = w, a.y = y;
    char desc[512];
    cr_assert_eq(og_conv_describe(cv, &a, desc, sizeof desc), OG_OK, "%s", ctx->error);
    cr_expect(strstr(desc, "conv_depthwise variant=depthwise,rows=64,tm=4,tn=1 (default)"), "%s",
              desc);
    og_conv_destroy(cv);
    og_buffer_destroy(x);
    og_buffer_destroy(w);
    og_buffer_destroy(y);
    /* Parameter strings: round trips, omitted fields, refusals. */
    og_params p;
    char err[256], text[OG_PARAMS_MAX];
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        cr_assert_eq(og_params_parse(variants[v], &p, err, sizeof err), 0, "%s", err);
        og_params_format(&p, text, sizeof text);
        cr_expect_str_eq(text, variants[v]);
    }
    cr_assert_eq(og_params_parse("variant=depthwise,rows=128", &p, err, sizeof err), 0, "%s", err);
    cr_expect(p.rows == 128 && p.tm == 1 && p.tn == 1 && p.src == OG_SRC_STORAGE);
    const char *bad[] = {"variant=depthwise,rows=48", "variant=depthwise,rows=64,tm=3",
                         "variant=depthwise,rows=64,tn=16", "variant=depthwise,rows=64,src=addr",
                         "variant=depthwise,tm=4"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect(og_params_parse(bad[i], &p, err, sizeof err) != 0 ||
                      og_params_check(&p, &ctx->limits, err, sizeof err) != 0,
                  "%s was taken", bad[i]);
    /* A GEMM refuses them, naming why. */
    og_gemm *g;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    float zeros[64] = {0};
    og_buffer *m = make_buffer(ctx, zeros, sizeof zeros);
    og_gemm_args ga = {.m = 4,
                       .n = 4,
                       .k = 4,
                       .alpha = 1.0f,
                       .lda = 4,
                       .ldb = 4,
                       .ldc = 4,
                       .a = m,
                       .b = m,
                       .c = m};
    cr_assert_eq(og_params_parse(variants[0], &p, err, sizeof err), 0);
    cr_expect_eq(run_params(g, ctx, &ga, &p), OG_ERROR_UNSUPPORTED);
    cr_expect(strstr(og_context_last_error(ctx), "the depthwise kernel runs convolutions only"),
              "%s", og_context_last_error(ctx));
    og_gemm_destroy(g);
    og_buffer_destroy(m);
    close_context(ctx);
}

/* Grids past the device's workgroup counts: pieces of whole tiles of pixels
 * (one tile of rows * tm pixels a dispatch) and of whole images (16
 * products a dispatch: one image of 12 groups). */
Test(conv_depthwise, pieces, .timeout = 900)
{
    og_context *ctx = open_context();
    ctx->limits.max_count[1] = 1;
    ctx->limits.max_count[2] = 16;
    /* Case 0: 24 products in two pieces; case 7: 1600 pixels in seven. */
    run_case(ctx, OG_MODE_DETERMINISTIC, &cases[0], 200);
    run_case(ctx, OG_MODE_DETERMINISTIC, &cases[7], 207);
    close_context(ctx);
}

/* Faults planted in a copy of conv_depthwise.tmpl: the first three against
 * the float64 reference, the order's against the tile's bits. */
Test(conv_depthwise, planted_faults_are_caught, .timeout = 900)
{
    static const struct {
        const char *name, *at, *put;
        size_t c; /* the case that shows it */
    } faults[] = {
        {"a filter read from the wrong group", "${U}b_base = pc.off_b + grp * pc.N * pc.ldb;",
         "${U}b_base = pc.off_b + (grp + 1u) % og_conv_groups() * pc.N * pc.ldb;", 0},
        {"the channel of a tap not reset", "c = ${lang.sel(\"c_wrap\", \"0u\", \"c\")};",
         "c = ${lang.sel(\"c_wrap\", \"1u\", \"c\")};", 3},
        {"a pixel's window origin off by one", "${U}w0_${m} = og_conv_w0(min(i${m}, pc.M - 1u));",
         "${U}w0_${m} = og_conv_w0(min(i${m} + 1u, pc.M - 1u));", 0},
    };
    for (size_t f = 0; f < sizeof faults / sizeof faults[0]; f++) {
        plant_template("conv_depthwise", faults[f].at, faults[f].put);
        og_context *ctx = open_context();
        char first[1024] = "";
        size_t differ = conv_mismatches(ctx, OG_MODE_DETERMINISTIC, &cases[faults[f].c], NULL,
                                        500 + (uint32_t)f, 1, first, sizeof first);
        cr_expect_gt(differ, 0, "%s was not caught", faults[f].name);
        close_context(ctx);
        remove_tmpdir();
        make_tmpdir();
    }
    /* Blocks of four chains instead of two: the order, seen in the bits. */
    plant_template("conv_depthwise", "${B}block_end = (q & 1u) == 1u || last;",
                   "${B}block_end = (q & 3u) == 3u || last;");
    og_context *ctx = open_context();
    conv_case t = cases[4];
    og_params tile = og_params_default(), dw = og_params_depthwise();
    float *want = output_of(ctx, &t, &tile, 77), *got = output_of(ctx, &t, &dw, 77);
    size_t first = 0;
    cr_expect_gt(bits_differ(got, want, outputs(&t), &first), 0,
                 "blocks of four chains were not caught");
    free(want);
    free(got);
    close_context(ctx);
    unsetenv("OG_TEMPLATE_DIR");
}

/* ogtune's tuner measures the depthwise kernel's space for such a layer,
 * stores its records under its own template, and selection takes the best. */
Test(conv_depthwise, tune_store_select, .timeout = 900)
{
    char db[512];
    tmp_path(db, sizeof db, "dw.db");
    og_context *ctx;
    cr_assert_eq(og_context_create(&(og_context_desc){.tuning_db = db}, &ctx), OG_OK);
    FILE *out = fopen("/dev/null", "w");
    cr_assert_not_null(out);
    og_conv_args geometry = args_of(&cases[1]);
    geometry.activation = OG_ACTIVATION_NONE;
    og_tune_opts opts = {.db_path = db,
                         .dtypes = {OG_F16},
                         .n_dtypes = 1,
                         .convs = &geometry,
                         .n_convs = 1,
                         .preset = OG_PRESET_QUICK,
                         .budget_candidates = 2,
                         .out = out};
    og_status st = og_tune(ctx, &opts);
    fclose(out);
    cr_assert_eq(st, OG_OK, "og_tune: %s", og_context_last_error(ctx));
    records rs = read_records(db);
    cr_assert_eq(rs.n, 2, "%zu records", rs.n);
    const og_record *best = NULL;
    for (size_t i = 0; i < rs.n; i++) {
        cr_expect_str_eq(rs.r[i].template_name, "conv_depthwise");
        cr_expect(rs.r[i].accepted && rs.r[i].max_error < 1e-5, "%s: %s", rs.r[i].params,
                  rs.r[i].reason);
        if (!best || rs.r[i].gflops > best->gflops)
            best = &rs.r[i];
    }
    og_conv_shape s = shape_of(ctx, &cases[1]);
    og_choice c;
    char params[OG_PARAMS_MAX];
    cr_assert_eq(og_select_conv(ctx, OG_F16, OG_MODE_FAST, &geometry, &s, &c), OG_OK);
    og_params_format(&c.params, params, sizeof params);
    cr_expect_eq(c.source, OG_SOURCE_DB);
    cr_expect_str_eq(params, best->params);
    /* Deterministic mode keeps the default. */
    cr_assert_eq(og_select_conv(ctx, OG_F16, OG_MODE_DETERMINISTIC, &geometry, &s, &c), OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT);
    free(rs.r);
    close_context(ctx);
    /* The records travel (export, import); as a GEMM's they are refused. */
    char db2[512], dump[512], args[2048], *text;
    tmp_path(db2, sizeof db2, "dw2.db");
    tmp_path(dump, sizeof dump, "dw.sql");
    snprintf(args, sizeof args, "export --db '%s' --out '%s'", db, dump);
    cr_assert_eq(ogtune(args, &text), 0, "%s", text);
    free(text);
    snprintf(args, sizeof args, "import --db '%s' '%s'", db2, dump);
    cr_assert_eq(ogtune(args, &text), 0, "%s", text);
    cr_expect(strstr(text, "imported 2 records"), "%s", text);
    free(text);
    snprintf(args, sizeof args, "sed -i \"s/'conv:[^']*'/'gemm'/\" '%s'", dump);
    cr_assert_eq(system(args), 0);
    snprintf(args, sizeof args, "import --db '%s' '%s' 2>&1", db2, dump);
    cr_expect_neq(ogtune(args, &text), 0, "%s", text);
    cr_expect(strstr(text, "a convolution's own kernel"), "%s", text);
    free(text);
}
