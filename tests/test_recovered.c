/* Float32 recovered from float16 products (SGEMM-cube, arXiv:2507.23387),
 * on the portable kernel: the arithmetic a matrix engine would do, so
 * lavapipe checks the accuracy. The error table of bench/logs comes from
 * the same measurement (og_precision_errors_measure, `ogtune accuracy`). */
#include <criterion/criterion.h>

#include <math.h>

#include "og_matrix_device.h"
#include "og_ogtune.h"
#include "og_test.h"
#include "og_tmpdir.h"

static og_precision_errors measure(og_context *ctx, og_input_kind kind, int64_t k)
{
    og_precision_errors e;
    og_status st = og_precision_errors_measure(ctx, kind, 96, 80, k, 7 + (uint64_t)k, &e);
    cr_assert_eq(st, OG_OK, "%s", og_context_last_error(ctx));
    cr_log_info("%s K=%lld: native %.3g, f16 %.3g, recovered %.3g, scaled %.3g",
                og_input_kind_name(kind), (long long)k, e.native, e.f16, e.recovered, e.scaled);
    return e;
}

/* Uniform inputs in [-1, 1): within 2x of native float32 and at least 100x
 * below plain float16, with and without scaling. */
Test(recovered, uniform_inputs, .timeout = 300)
{
    og_context *ctx = open_context();
    for (int64_t k = 256; k <= 1024; k *= 4) {
        og_precision_errors e = measure(ctx, OG_INPUT_UNIFORM, k);
        cr_expect_leq(e.recovered, 2 * e.native, "K=%lld: recovered %.3g, native %.3g",
                      (long long)k, e.recovered, e.native);
        cr_expect_leq(e.scaled, 2 * e.native, "K=%lld: scaled %.3g, native %.3g", (long long)k,
                      e.scaled, e.native);
        cr_expect_geq(e.f16, 100 * e.recovered, "K=%lld: float16 %.3g, recovered %.3g",
                      (long long)k, e.f16, e.recovered);
    }
    close_context(ctx);
}

/* Exponents offset from 0, the paper's range study: at 2^-20 the unscaled
 * split loses bits to float16's subnormals; at 2^20, and with rows and
 * columns anywhere in 2^-60..2^60, float16 overflows. Scaling recovers
 * native accuracy on all of them. */
Test(recovered, inputs_outside_float16_range, .timeout = 300)
{
    og_context *ctx = open_context();
    og_precision_errors tiny = measure(ctx, OG_INPUT_TINY, 256);
    cr_expect_gt(tiny.recovered, 100 * tiny.native, "unscaled at 2^-20: %.3g", tiny.recovered);
    cr_expect_leq(tiny.scaled, 2 * tiny.native, "scaled at 2^-20: %.3g, native %.3g", tiny.scaled,
                  tiny.native);
    og_input_kind beyond[2] = {OG_INPUT_HUGE, OG_INPUT_SPREAD};
    for (int i = 0; i < 2; i++) {
        og_precision_errors e = measure(ctx, beyond[i], 256);
        cr_expect(isinf(e.recovered), "%s: the unscaled split should overflow, error %.3g",
                  og_input_kind_name(beyond[i]), e.recovered);
        cr_expect(isinf(e.f16), "%s: float16 should overflow", og_input_kind_name(beyond[i]));
        cr_expect_leq(e.scaled, 2 * e.native, "%s: scaled %.3g, native %.3g",
                      og_input_kind_name(beyond[i]), e.scaled, e.native);
    }
    close_context(ctx);
}

/* A product of op(A) and op(B) whose rows of A and columns of B are each
 * scaled by 2^r, r in -60..60, stored with padded leading dimensions,
 * offsets and batch strides; recovered with scaling against float64 (error
 * relative to |A| |B|, as og_precision_errors). */
static void check_spread(og_context *ctx, og_gemm *g, int ta, int tb, int64_t m, int64_t n,
                         int64_t k, int64_t batch, uint64_t seed)
{
    og_gemm_args args = {.trans_a = ta,
                         .trans_b = tb,
                         .m = m,
                         .n = n,
                         .k = k,
                         .batch = batch,
                         .alpha = 1.0f,
                         .a_offset = 3,
                         .b_offset = 5,
                         .c_offset = 1};
    args.lda = (ta ? m : k) + 2;
    args.ldb = (tb ? k : n) + 1;
    args.ldc = n + 3;
    args.stride_a = (ta ? k : m) * args.lda + 7;
    args.stride_b = (tb ? n : k) * args.ldb;
    args.stride_c = m * args.ldc;
    size_t na, nb, nc;
    og_gemm_extents(&args, &na, &nb, &nc);
    float *a = malloc(na * 4), *b = malloc(nb * 4), *c = calloc(nc, 4);
    float *abs_a = malloc(na * 4), *abs_b = malloc(nb * 4);
    double *ref = malloc(nc * 8), *mag = malloc(nc * 8);
    cr_assert(a && b && c && abs_a && abs_b && ref && mag);
    og_fill_random(OG_F32, a, na, &seed);
    og_fill_random(OG_F32, b, nb, &seed);
    for (int64_t p = 0; p < batch; p++) {
        for (int64_t i = 0; i < m; i++) {
            float s = ldexpf(1.0f, (int)(seed++ * 37 % 121) - 60);
            for (int64_t kk = 0; kk < k; kk++)
                a[args.a_offset + p * args.stride_a +
                  (ta ? kk * args.lda + i : i * args.lda + kk)] *= s;
        }
        for (int64_t j = 0; j < n; j++) {
            float s = ldexpf(1.0f, (int)(seed++ * 53 % 121) - 60);
            for (int64_t kk = 0; kk < k; kk++)
                b[args.b_offset + p * args.stride_b +
                  (tb ? j * args.ldb + kk : kk * args.ldb + j)] *= s;
        }
    }
    for (size_t i = 0; i < na; i++)
        abs_a[i] = fabsf(a[i]);
    for (size_t i = 0; i < nb; i++)
        abs_b[i] = fabsf(b[i]);
    og_reference_gemm(OG_F32, &args, a, b, c, ref);
    og_reference_gemm(OG_F32, &args, abs_a, abs_b, c, mag);
    args.a = make_buffer(ctx, a, na * 4);
    args.b = make_buffer(ctx, b, nb * 4);
    args.c = make_buffer(ctx, c, nc * 4);
    cr_assert_eq(og_gemm_run(g, &args), OG_OK, "%s", og_context_last_error(ctx));
    cr_assert_eq(og_buffer_read(args.c, 0, c, nc * 4), OG_OK);
    double worst = 0;
    for (size_t e = 0; e < nc; e++) {
        double err = fabs((double)c[e] - ref[e]);
        double rel = mag[e] > 0 ? err / mag[e] : err;
        cr_assert(isfinite(c[e]) && rel <= 1e-6,
                  "%c%c %lldx%lldx%lldx%lld: element %zu is %a, want %a", ta ? 'T' : 'N',
                  tb ? 'T' : 'N', (long long)m, (long long)n, (long long)k, (long long)batch, e,
                  (double)c[e], ref[e]);
        worst = rel > worst ? rel : worst;
    }
    cr_log_info("%c%c %lldx%lldx%lld: %.3g", ta ? 'T' : 'N', tb ? 'T' : 'N', (long long)m,
                (long long)n, (long long)k, worst);
    og_buffer_destroy(args.a);
    og_buffer_destroy(args.b);
    og_buffer_destroy(args.c);
    free(a), free(b), free(c), free(abs_a), free(abs_b), free(ref), free(mag);
}

static og_gemm *recovered_gemm(og_context *ctx, og_mode mode, int shift, int scaling)
{
    og_gemm *g;
    og_gemm_desc d = {.mode = mode,
                      .precision = OG_PRECISION_RECOVERED,
                      .residual_shift = shift,
                      .range_scaling = scaling};
    cr_assert_eq(og_gemm_create_desc(ctx, &d, &g), OG_OK, "%s", og_context_last_error(ctx));
    return g;
}

/* Every layout, ragged shapes across tile edges, batches: each row's and
 * column's own exponent is applied (a wrong index would be off by 2^120). */
static void spread_layouts(og_dialect dialect)
{
    og_context *ctx = open_context();
    ctx->dialect = dialect;
    og_gemm *g = recovered_gemm(ctx, OG_MODE_FAST, 0, 1);
    for (int t = 0; t < 4; t++) {
        check_spread(ctx, g, t & 1, t >> 1, 67, 75, 41, 3, 11 + (uint64_t)t);
        check_spread(ctx, g, t & 1, t >> 1, 1, 130, 200, 1, 21 + (uint64_t)t);
    }
    og_gemm_destroy(g);
    close_context(ctx);
}

Test(recovered, scaled_layouts_glsl, .timeout = 300)
{
    spread_layouts(OG_GLSL);
}

Test(recovered, scaled_layouts_hlsl, .timeout = 300)
{
    spread_layouts(OG_HLSL);
}

/* Calls cut into pieces of rows and products (lowered workgroup counts):
 * each piece computes its own exponents. */
Test(recovered, scaled_pieces, .timeout = 300)
{
    og_context *ctx = open_context();
    ctx->limits.max_count[1] = 1; /* one tile of rows a dispatch */
    ctx->limits.max_count[2] = 2; /* two products a dispatch */
    og_gemm *g = recovered_gemm(ctx, OG_MODE_FAST, 0, 1);
    check_spread(ctx, g, 0, 1, 150, 33, 20, 5, 5);
    check_spread(ctx, g, 1, 0, 70, 9, 64, 3, 6);
    og_gemm_destroy(g);
    close_context(ctx);
}

/* alpha, beta, bias and activation, and the residual shift: the float32
 * bound of the design on uniform inputs; where Deterministic mode runs the
 * same kernel as Fast mode (no cooperative matrices), the same bits. */
Test(recovered, epilogue_shift_and_modes, .timeout = 300)
{
    og_context *ctx = open_context();
    const int shifts[] = {0, 8, 12};
    for (int s = 0; s < 3; s++) {
        for (int scaling = 0; scaling <= 1; scaling++) {
            og_gemm *fast = recovered_gemm(ctx, OG_MODE_FAST, shifts[s], scaling);
            og_gemm *det = recovered_gemm(ctx, OG_MODE_DETERMINISTIC, shifts[s], scaling);
            og_problem *pr;
            cr_assert_eq(og_problem_create(ctx, OG_F32, s & 1, 1, 70, 66, 300, 2, 90 + s, &pr),
                         OG_OK);
            problem_scalars(pr, 1.25f, -0.5f);
            pr->args.activation = OG_ACTIVATION_RELU;
            og_reference_gemm(OG_F32, &pr->args, pr->a, pr->b, pr->c0, pr->ref);
            for (size_t e = 0; e < pr->nc; e++)
                pr->ref[e] = pr->ref[e] < 0 ? 0 : pr->ref[e];
            int accepted;
            double metric;
            char why[256] = "";
            og_params p = og_params_recovered(&ctx->limits, ctx->dialect, OG_MODE_FAST);
            cr_assert_eq(og_problem_verify(fast, pr, &p, &accepted, &metric, why, sizeof why),
                         OG_OK, "%s", og_context_last_error(ctx));
            cr_expect(accepted, "shift %d, scaling %d: %s", shifts[s], scaling, why);
            float *first = malloc(pr->nc * 4);
            memcpy(first, pr->c, pr->nc * 4);
            cr_assert_eq(og_problem_verify(det, pr, NULL, &accepted, &metric, why, sizeof why),
                         OG_OK);
            og_params pf, pd;
            cr_assert_eq(og_gemm_choose(fast, &pr->args, &pf), OG_OK);
            cr_assert_eq(og_gemm_choose(det, &pr->args, &pd), OG_OK);
            cr_expect(accepted, "Deterministic, shift %d, scaling %d: %s", shifts[s], scaling, why);
            if (memcmp(&pf, &pd, sizeof pf) == 0)
                cr_expect(memcmp(first, pr->c, pr->nc * 4) == 0,
                          "Deterministic mode gave other bits than Fast mode");
            free(first);
            og_problem_destroy(pr);
            og_gemm_destroy(fast);
            og_gemm_destroy(det);
        }
    }
    close_context(ctx);
}

/* Options out of range are refused, naming the field; what a call can ask
 * of the kernel is described. */
Test(recovered, bad_options)
{
    og_context *ctx = open_context();
    og_gemm *g = NULL;
    og_gemm_desc d = {.a_type = OG_F16, .b_type = OG_F16, .precision = OG_PRECISION_RECOVERED};
    cr_expect_eq(og_gemm_create_desc(ctx, &d, &g), OG_ERROR_INVALID_ARGUMENT);
    cr_expect(strstr(og_context_last_error(ctx), "recovered precision takes float32"), "%s",
              og_context_last_error(ctx));
    cr_expect_null(g);
    d = (og_gemm_desc){.precision = OG_PRECISION_RECOVERED, .residual_shift = 13};
    cr_expect_eq(og_gemm_create_desc(ctx, &d, &g), OG_ERROR_INVALID_ARGUMENT);
    cr_expect(strstr(og_context_last_error(ctx), "residual shift 13"), "%s",
              og_context_last_error(ctx));
    d = (og_gemm_desc){.precision = (og_precision)7};
    cr_expect_eq(og_gemm_create_desc(ctx, &d, &g), OG_ERROR_INVALID_ARGUMENT);
    d = (og_gemm_desc){.a_type = OG_F32, .b_type = OG_F16};
    cr_expect_eq(og_gemm_create_desc(ctx, &d, &g), OG_ERROR_INVALID_ARGUMENT);
    d = (og_gemm_desc){.a_type = OG_INT8, .b_type = OG_INT8};
    cr_expect_eq(og_gemm_create_desc(ctx, &d, &g), OG_ERROR_INVALID_ARGUMENT);

    g = recovered_gemm(ctx, OG_MODE_FAST, 0, 1);
    og_gemm_args args = {.m = 8, .n = 8, .k = 8000, .alpha = 1};
    char text[256];
    cr_assert_eq(og_gemm_describe(g, &args, text, sizeof text), OG_OK);
    cr_expect(strstr(text, "recovered from float16, s=11, rows and columns scaled") &&
                  !strstr(text, "k ranges"),
              "%s", text);
    /* Forced split-k or direct loads are not the recovered kernel. */
    og_params p = og_params_recovered(&ctx->limits, ctx->dialect, OG_MODE_FAST);
    p.load = OG_LOAD_DIRECT;
    float zero[64] = {0};
    args = (og_gemm_args){.m = 8, .n = 8, .k = 8, .alpha = 1, .lda = 8, .ldb = 8, .ldc = 8};
    args.a = make_buffer(ctx, zero, sizeof zero);
    args.b = make_buffer(ctx, zero, sizeof zero);
    float sentinel[64];
    for (int i = 0; i < 64; i++)
        sentinel[i] = 42.0f;
    args.c = make_buffer(ctx, sentinel, sizeof sentinel);
    cr_expect_eq(run_params(g, ctx, &args, &p), OG_ERROR_UNSUPPORTED);
    cr_expect(strstr(og_context_last_error(ctx), "recovered float32 runs the staged tile"), "%s",
              og_context_last_error(ctx));
    float back[64];
    cr_assert_eq(og_buffer_read(args.c, 0, back, sizeof back), OG_OK);
    cr_expect(memcmp(back, sentinel, sizeof back) == 0, "C was written by a refused call");
    og_buffer_destroy(args.a);
    og_buffer_destroy(args.b);
    og_buffer_destroy(args.c);
    og_gemm_destroy(g);
    close_context(ctx);
}

/* Which kernel recovered float32 takes: the cooperative-matrix tile with
 * residual tiles where the device qualifies (a synthetic record of one),
 * 4 subgroups where 8 do not fit the memory, the portable tile in
 * Deterministic mode, in HLSL and on lavapipe. */
Test(recovered, matrix_kernel_where_the_device_qualifies)
{
    og_context *ctx = open_context();
    og_limits real = ctx->limits;
    og_params p = og_params_recovered(&ctx->limits, ctx->dialect, OG_MODE_FAST);
    if (real.matrix.n_shapes == 0)
        cr_expect_eq(p.variant, OG_VARIANT_TILE, "no cooperative matrices: the portable tile");
    og_limits *lim = &ctx->limits;
    lim->max_invocations = 1024;
    lim->max_shared_bytes = 48 * 1024;
    lim->subgroup_size = 32;
    og_matrix_caps *m = &lim->matrix;
    memset(m, 0, sizeof *m);
    m->shapes[m->n_shapes++] = f16_shape(16, 16, 16);
    m->subgroup_min = m->subgroup_max = 32;
    m->full_subgroups = m->float16 = m->storage16 = m->memory_model = 1;
    p = og_params_recovered(&ctx->limits, ctx->dialect, OG_MODE_FAST);
    cr_expect(p.variant == OG_VARIANT_COOPMAT && p.sgx * p.sgy == 8, "variant %d, %d subgroups",
              (int)p.variant, p.sgx * p.sgy);
    og_kernel_key key = {.p = p, .dtype = OG_F32, .dialect = OG_GLSL, .recover = 11};
    /* Memory for the 4-subgroup kernel with residual tiles, not for 8. */
    lim->max_shared_bytes = og_kernel_shared_bytes(&key) - 1;
    p = og_params_recovered(&ctx->limits, ctx->dialect, OG_MODE_FAST);
    cr_expect(p.variant == OG_VARIANT_COOPMAT && p.sgx * p.sgy == 4, "variant %d, %d subgroups",
              (int)p.variant, p.sgx * p.sgy);
    key.p = og_params_coopmat(4);
    lim->max_shared_bytes = og_kernel_shared_bytes(&key) - 1;
    cr_expect_eq(og_params_recovered(&ctx->limits, ctx->dialect, OG_MODE_FAST).variant, OG_VARIANT_TILE);
    lim->max_shared_bytes = 48 * 1024;
    cr_expect_eq(og_params_recovered(&ctx->limits, ctx->dialect, OG_MODE_DETERMINISTIC).variant, OG_VARIANT_TILE);
    ctx->dialect = OG_HLSL;
    cr_expect_eq(og_params_recovered(&ctx->limits, ctx->dialect, OG_MODE_FAST).variant, OG_VARIANT_TILE);
    ctx->limits = real;
    ctx->dialect = OG_GLSL;
    close_context(ctx);
}

/* On a device with cooperative matrices (skipped on lavapipe): the matrix
 * kernel, with and without scaling, on every layout against float64. */
Test(recovered, matrix_kernel_right_where_the_device_qualifies, .timeout = 300)
{
    og_context *ctx = open_context();
    og_params p = og_params_recovered(&ctx->limits, ctx->dialect, OG_MODE_FAST);
    if (p.variant != OG_VARIANT_COOPMAT) {
        close_context(ctx);
        cr_skip_test("the device does not take the cooperative-matrix kernel");
    }
    og_gemm *g = recovered_gemm(ctx, OG_MODE_FAST, 0, 1);
    for (int t = 0; t < 4; t++)
        check_spread(ctx, g, t & 1, t >> 1, 130, 150, 200, 2, 31 + (uint64_t)t);
    og_gemm_destroy(g);
    og_precision_errors e = measure(ctx, OG_INPUT_UNIFORM, 1024);
    cr_expect_leq(e.recovered, 2 * e.native, "recovered %.3g, native %.3g", e.recovered, e.native);
    close_context(ctx);
}

/* ---- tuning: op gemm_recovered records, selection, ogtune ---- */

TestSuite(recovered_tuning, .init = make_tmpdir, .fini = remove_tmpdir);

/* Stores a record of op (float32, Fast mode, no transposes) with params at
 * MxNxK in the database at path, for the device of probe, measured faster
 * than anything tuned. */
static void plant(const char *path, const og_device_info *dev, const char *op, const char *params,
                  int64_t m, int64_t n, int64_t k)
{
    og_db *db;
    int64_t device;
    char err[512];
    og_params p;
    cr_assert_eq(og_params_parse(params, &p, err, sizeof err), 0, "%s: %s", params, err);
    cr_assert_eq(og_db_open(path, 1, &db, err, sizeof err), OG_OK, "%s", err);
    cr_assert_eq(og_db_device(db, dev, &device, err, sizeof err), OG_OK, "%s", err);
    og_record r = {.key = {.dtype = OG_F32, .mode = OG_MODE_FAST},
                   .m = m,
                   .n = n,
                   .k = k,
                   .batch = 1,
                   .median_us = 1,
                   .gflops = 1e6,
                   .samples = 3,
                   .accepted = 1};
    snprintf(r.key.op, sizeof r.key.op, "%s", op);
    snprintf(r.template_name, sizeof r.template_name, "%s", og_params_template(&p));
    r.template_hash = og_template_hash(r.template_name);
    snprintf(r.params, sizeof r.params, "%s", params);
    cr_assert_eq(og_db_insert(db, device, &r, err, sizeof err), OG_OK, "%s", err);
    og_db_close(db);
}

/* ogtune tune --precision recovered measures the recovered space into
 * records of op gemm_recovered; a recovered GEMM selects the best of them
 * (og_gemm_describe: "db") and stays within float32's bound of the float64
 * reference; a native float32 GEMM, a scaled recovered one and Deterministic
 * mode do not select them; ogtune select --precision recovered shows it. */
Test(recovered_tuning, tune_and_select, .timeout = 300)
{
    char db[512], args[1400], *out;
    tmp_path(db, sizeof db, "recovered.db");
    snprintf(args, sizeof args,
             "tune --precision recovered --shapes 96x80x128 --budget 3c --json --db '%s'", db);
    cr_assert_eq(ogtune(args, &out), 0, "ogtune tune failed:\n%s", out);
    cr_expect_not_null(strstr(out, "\"op\":\"gemm_recovered\",\"dtype\":\"f32\""), "%s", out);
    cr_expect_null(strstr(out, "\"accepted\":false"), "a candidate was rejected:\n%s", out);
    cr_expect_null(strstr(out, "\"op\":\"gemm\""), "a native record was written:\n%s", out);
    free(out);

    og_context *ctx = NULL;
    cr_assert_eq(og_context_create(&(og_context_desc){.tuning_db = db}, &ctx), OG_OK);
    og_problem *pr;
    cr_assert_eq(og_problem_create(ctx, OG_F32, 0, 0, 96, 80, 128, 1, 5, &pr), OG_OK);
    og_gemm *g = recovered_gemm(ctx, OG_MODE_FAST, 0, 0);
    char text[512];
    cr_assert_eq(og_gemm_describe(g, &pr->args, text, sizeof text), OG_OK);
    cr_expect_not_null(strstr(text, " (db)"), "%s", text);
    /* The best record of the selected template is the one that runs. */
    og_choice c;
    cr_assert_eq(og_select_recovered(ctx, OG_MODE_FAST, 0, 0, 96, 80, 128, 1, &c), OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DB);
    og_db *handle;
    char err[512];
    cr_assert_eq(og_db_open(db, 0, &handle, err, sizeof err), OG_OK, "%s", err);
    og_record_key key = {.op = OG_OP_GEMM_RECOVERED, .dtype = OG_F32, .mode = OG_MODE_FAST};
    og_record rec;
    og_device_info rec_dev;
    int found, other;
    const char *name = og_params_template(&c.params);
    cr_assert_eq(og_db_select(handle, &ctx->info, &key, name, og_template_hash(name), 96, 80, 128,
                              1, &rec, &rec_dev, &found, &other, err, sizeof err),
                 OG_OK, "%s", err);
    cr_expect_eq(found, 1);
    char params[OG_PARAMS_MAX];
    og_params_format(&c.params, params, sizeof params);
    cr_expect_str_eq(params, rec.params, "the best record is selected");
    og_db_close(handle);
    int accepted;
    double metric;
    cr_assert_eq(og_problem_verify(g, pr, NULL, &accepted, &metric, text, sizeof text), OG_OK);
    cr_expect(accepted, "the tuned recovered kernel: %s", text);
    cr_expect_leq(metric, og_dtype_bound(OG_F32));
    og_gemm_destroy(g);
    /* Native float32, scaled recovered and Deterministic mode keep their defaults. */
    cr_assert_eq(og_select(ctx, OG_F32, OG_MODE_FAST, 0, 0, 96, 80, 128, 1, &c), OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT, "native float32 selected a recovered record");
    g = recovered_gemm(ctx, OG_MODE_FAST, 0, 1);
    cr_assert_eq(og_gemm_describe(g, &pr->args, text, sizeof text), OG_OK);
    cr_expect_not_null(strstr(text, " (default)"), "scaled: %s", text);
    og_gemm_destroy(g);
    cr_assert_eq(og_select_recovered(ctx, OG_MODE_DETERMINISTIC, 0, 0, 96, 80, 128, 1, &c), OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT);
    og_problem_destroy(pr);
    close_context(ctx);

    snprintf(args, sizeof args, "select --precision recovered --shape 96x80x128 --json --db '%s'",
             db);
    cr_expect_eq(ogtune(args, &out), 0);
    cr_expect_not_null(strstr(out, "\"op\":\"gemm_recovered\""), "%s", out);
    cr_expect_not_null(strstr(out, "\"source\":\"db\""), "%s", out);
    free(out);
    /* The text says so too. */
    snprintf(args, sizeof args, "select --precision recovered --shape 96x80x128 --db '%s'", db);
    cr_expect_eq(ogtune(args, &out), 0);
    cr_expect_eq(strncmp(out, "recovered float32: ", 19), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, "select --shape 96x80x128 --json --db '%s'", db);
    cr_expect_eq(ogtune(args, &out), 0);
    cr_expect_not_null(strstr(out, "\"source\":\"default\""), "native: %s", out);
    free(out);
}

/* Records stay with their precision: a native record is never selected for
 * a recovered call; a recovered record the recovered kernel cannot run
 * (direct loads, split-k, vector loads) is skipped with a warning and the
 * default kept; bad --precision options are refused, nothing written. */
Test(recovered_tuning, keys_apart_and_unusable_records)
{
    static const char staged[] = "bm=128,bn=64,bk=16,tm=8,tn=4,wgx=16,wgy=16,pad=0,load=staged,"
                                 "acc=blocked,vec=1,src=ssbo,split=1";
    static const char *const unusable[] = {
        "bm=64,bn=64,bk=16,tm=8,tn=8,wgx=8,wgy=8,pad=0,load=direct,acc=blocked,vec=1,src=ssbo,"
        "split=1",
        "bm=128,bn=64,bk=16,tm=8,tn=4,wgx=16,wgy=16,pad=0,load=staged,acc=blocked,vec=1,src=ssbo,"
        "split=4",
        "bm=64,bn=64,bk=16,tm=8,tn=8,wgx=8,wgy=8,pad=0,load=direct,acc=blocked,vec=4,src=ssbo,"
        "split=1"};
    og_context *probe = open_context();
    og_device_info dev = probe->info;
    og_params def = og_params_recovered(&probe->limits, probe->dialect, OG_MODE_FAST);
    close_context(probe);
    char native[512], bad[512], args[1400], *out;
    tmp_path(native, sizeof native, "native.db");
    tmp_path(bad, sizeof bad, "unusable.db");
    plant(native, &dev, "gemm", staged, 64, 64, 64);
    for (size_t i = 0; i < sizeof unusable / sizeof unusable[0]; i++)
        plant(bad, &dev, OG_OP_GEMM_RECOVERED, unusable[i], 64, 64, 64 + (int64_t)i);
    og_choice c;
    og_context *ctx = NULL;
    cr_assert_eq(og_context_create(&(og_context_desc){.tuning_db = native}, &ctx), OG_OK);
    cr_assert_eq(og_select(ctx, OG_F32, OG_MODE_FAST, 0, 0, 64, 64, 64, 1, &c), OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DB, "the native record serves native calls");
    cr_assert_eq(og_select_recovered(ctx, OG_MODE_FAST, 0, 0, 64, 64, 64, 1, &c), OG_OK);
    cr_expect_eq(c.source, OG_SOURCE_DEFAULT, "a native record was selected for recovered");
    close_context(ctx);
    cr_assert_eq(og_context_create(&(og_context_desc){.tuning_db = bad}, &ctx), OG_OK);
    for (int64_t k = 64; k < 67; k++) {
        cr_assert_eq(og_select_recovered(ctx, OG_MODE_FAST, 0, 0, 64, 64, k, 1, &c), OG_OK);
        cr_expect_eq(c.source, OG_SOURCE_DEFAULT, "an unusable record was selected (k %lld)",
                     (long long)k);
        cr_expect(memcmp(&c.params, &def, sizeof def) == 0, "the default was not kept");
    }
    close_context(ctx);

    tmp_path(bad, sizeof bad, "refused.db");
    snprintf(args, sizeof args,
             "tune --precision recovered --dtype f16 --shapes 64x64x64 --db '%s' 2>/dev/null", bad);
    cr_expect_eq(ogtune(args, &out), 2);
    free(out);
    snprintf(args, sizeof args, "tune --precision double --shapes 64x64x64 --db '%s' 2>/dev/null",
             bad);
    cr_expect_eq(ogtune(args, &out), 2);
    free(out);
    cr_expect_neq(access(bad, F_OK), 0, "a refused command wrote %s", bad);
    cr_expect_eq(
        ogtune("select --precision recovered --op int8gemm --shape 8x8x8 2>/dev/null", &out), 2);
    free(out);
}
