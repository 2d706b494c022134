/* The low-bit weight product above 16 rows (the prefill): the tile on
 * decoded weights is the GEMM of the decoded matrix, bit for bit; on
 * cooperative matrices (where the device has them: the Mesa 26 lane's
 * mesa26_test_qgemm_matrix runs the *_on_matrices tests) and with a tuned
 * record of the matrix prefill taken above 16 rows. */
#include "og_qgemm_case.h"

/* The prefill tile decodes each weight exactly as og_qweights_decode does
 * (one rounding of the exact product), so its C is, bit for bit, the
 * float32 GEMM's with the same tile over the decoded matrix (B transposed,
 * float32 B and A as float32): every format, float32 and bfloat16 A,
 * staged and direct tiles, ragged M, N and K, beta, a bias and GELU. */
Test(qgemm, prefill_is_the_gemm_on_decoded_weights, .timeout = 900)
{
    og_context *ctx = open_context();
    og_params tiles[2] = {og_params_qprefill(), og_params_qprefill()};
    tiles[1].bm = 32, tiles[1].bn = 64, tiles[1].bk = 32, tiles[1].tm = 2, tiles[1].tn = 4;
    tiles[1].load = OG_LOAD_DIRECT, tiles[1].pad = 0;
    int stride = og_test_stride();
    for (size_t fi = 0; fi < N_FORMATS; fi++)
        for (int v = 0; v < 2; v++) {
            if ((int)(2 * fi + (size_t)v) % stride)
                continue;
            const og_qweights_format *f = &formats[fi];
            og_dtype at = v ? OG_BF16 : OG_F32;
            const og_params *p = &tiles[(fi + (size_t)v) % 2];
            int64_t m = 37 + (int64_t)fi, n = 70, k = f->group > 32 ? 2 * f->group : 160;
            layout l = layout_for(f, n, k);
            uint8_t *img = random_image(f, &l, n, k);
            float *w = malloc((size_t)(n * k) * 4), *a = malloc((size_t)(m * k) * 4);
            float *c0 = malloc((size_t)(m * n) * 4), *bias = malloc((size_t)n * 4);
            float *got = malloc((size_t)(m * n) * 4), *want = malloc((size_t)(m * n) * 4);
            cr_assert(w && a && c0 && bias && got && want);
            char why[256];
            cr_assert_eq(og_qweights_decode(f, n, k, img, 1.25f, w, why, sizeof why), 0, "%s", why);
            for (int64_t i = 0; i < m * k; i++)
                a[i] = a_value(at, (float)((int)(rnd() % 2001) - 1000) / 256.0f);
            for (int64_t i = 0; i < m * n; i++)
                c0[i] = (float)((int)(rnd() % 201) - 100) / 16.0f;
            for (int64_t j = 0; j < n; j++)
                bias[j] = (float)((int)(rnd() % 201) - 100) / 32.0f;
            size_t a_bytes;
            void *a_stored = store_a(at, a, (size_t)(m * k), &a_bytes);
            og_buffer *A = make_buffer(ctx, a_stored, a_bytes),
                      *A32 = make_buffer(ctx, a, (size_t)(m * k) * 4),
                      *W = make_buffer(ctx, img, l.bytes),
                      *B = make_buffer(ctx, w, (size_t)(n * k) * 4),
                      *C = make_buffer(ctx, c0, (size_t)(m * n) * 4),
                      *Bias = make_buffer(ctx, bias, (size_t)n * 4);
            og_qgemm *q;
            og_gemm *g;
            cr_assert_eq(og_qgemm_create(ctx, at, f, OG_MODE_FAST, &q), OG_OK);
            cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
            og_qgemm_args qa = {.m = m,
                                .n = n,
                                .k = k,
                                .a = A,
                                .lda = k,
                                .w = W,
                                .tensor_scale = 1.25f,
                                .c = C,
                                .ldc = n,
                                .beta = 0.5f,
                                .bias = Bias,
                                .activation = OG_ACTIVATION_GELU_ERF};
            cr_assert_eq(run_qparams(q, ctx, &qa, p), OG_OK, "%s", og_context_last_error(ctx));
            cr_assert_eq(og_buffer_read(C, 0, got, (size_t)(m * n) * 4), OG_OK);
            cr_assert_eq(og_buffer_write(C, 0, c0, (size_t)(m * n) * 4), OG_OK);
            og_gemm_args ga = {.trans_b = 1,
                               .m = m,
                               .n = n,
                               .k = k,
                               .alpha = 1.0f,
                               .beta = 0.5f,
                               .a = A32,
                               .b = B,
                               .c = C,
                               .lda = k,
                               .ldb = k,
                               .ldc = n,
                               .bias = Bias,
                               .activation = OG_ACTIVATION_GELU_ERF};
            cr_assert_eq(run_params(g, ctx, &ga, p), OG_OK, "%s", og_context_last_error(ctx));
            cr_assert_eq(og_buffer_read(C, 0, want, (size_t)(m * n) * 4), OG_OK);
            size_t first = 0, differ = bits_differ(got, want, (size_t)(m * n), &first);
            cr_expect_eq(differ, 0,
                         "format %zu, A %s, %s tile: %zu elements differ from the GEMM on the "
                         "decoded weights; C[%zu] = %.9g, the GEMM's %.9g",
                         fi, og_dtype_name(at), p->load == OG_LOAD_DIRECT ? "direct" : "staged",
                         differ, first, (double)got[first], (double)want[first]);
            og_qgemm_destroy(q);
            og_gemm_destroy(g);
            og_buffer *bufs[] = {A, A32, W, B, C, Bias};
            for (size_t i = 0; i < 6; i++)
                og_buffer_destroy(bufs[i]);
            free(img), free(w), free(a), free(c0), free(bias), free(got), free(want),
                free(a_stored);
        }
    close_context(ctx);
}

/* Split-k (the decode kernel with split > 1): range r's plane is exactly
 * the one-pass kernel's sum over that range of k (the same units in the
 * same order), and the planes are added in range order before the
 * epilogue. The ranges here hold whole blocks, so each range's weights
 * are the matrix encoded over that range alone (blocks are encoded apart).
 * MXFP4 with K = 2880 in 4 ranges (23, 23, 23 and 21 units), INT4 groups of
 * 128 with uint4 zero points and float16 A in 4 ranges of 1024. */
/* The prefill on matrices: the staged cooperative-matrix tile as recovered
 * float32 with range scaling (each decoded weight brought into float16's
 * range by its column's power of two, split into float16 high and low
 * parts), Fast mode. Every format, A float32, float16 and bfloat16 in turn,
 * M and N past the tile's edges, two products with beta and the bias, and
 * MXFP4 with a block scale of 2^40 and one of 2^-127; against the float64
 * reference of the decoded weights with the cases' tolerance. In the Mesa
 * 26 lane (OG_MESA26, CTest mesa26_test_qgemm_matrix) the device's KHR
 * kernel on every format; elsewhere the same template with its fragments
 * emulated (mat=emu) on every third (MXFP4, INT4 with uint4 zero points,
 * Q8_0), to keep the plain pass short. */
Test(qgemm, prefill_on_matrices, .timeout = 900)
{
    const char *lane = getenv("OG_MESA26");
    og_params p;
    og_context *ctx;
    if (lane && *lane) {
        ctx = lane_matrix_context(&p);
        p.load = OG_LOAD_STAGED;
    } else {
        char err[256] = "";
        ctx = open_context();
        cr_assert_eq(og_params_parse("variant=coopmat,bm=64,bn=64,bk=32,sgx=4,sgy=2,pad=0,load=staged,mat=emu", &p,
                                     err, sizeof err),
                     0, "%s", err);
    }
    static const og_dtype types[] = {OG_F32, OG_F16, OG_BF16};
    int stride = og_test_stride() * (lane && *lane ? 1 : 3);
    for (size_t fi = 0; fi < N_FORMATS; fi++) {
        if ((int)fi % stride)
            continue;
        const og_qweights_format *f = &formats[fi];
        qcase c = {.f = *f, .a_type = types[fi % 3], .m = 70, .n = 67, .k = f->group > 32 ? 2 * f->group : 96,
                   .batch = 2, .beta = 0.5f, .bias = 1, .tensor_scale = 1.5f, .params = &p,
                   .extreme = f->format == OG_QFORMAT_MXFP4};
        run_case(ctx, &c, OG_MODE_FAST);
    }
    close_context(ctx);
}

/* A tuned record of the matrix prefill competes above 16 rows: on a device
 * with float16 matrices (the Mesa 26 lane) a record of the device's KHR
 * tile measured faster than anything else is selected, described and run
 * right through og_qgemm_run; on one without (lavapipe 22) the same record
 * is never taken. */
Test(qgemm, matrix_records_are_taken_on_matrices, .timeout = 900)
{
    const char *lane = getenv("OG_MESA26");
    int in_lane = lane && *lane;
    char db[] = "/tmp/og_qgemm_records_XXXXXX", err[512];
    int fd = mkstemp(db);
    cr_assert_geq(fd, 0);
    close(fd);
    og_context *ctx = NULL;
    cr_assert_eq(og_context_create(&(og_context_desc){.tuning_db = db}, &ctx), OG_OK, "%s", og_last_error());
    const og_qweights_format *f = &formats[0];
    og_params p = og_params_recovered(&ctx->limits, OG_GLSL, OG_MODE_FAST);
    cr_assert_eq(p.variant == OG_VARIANT_COOPMAT, in_lane, "the device's recovered kernel: %s", og_params_template(&p));
    if (!in_lane)
        cr_assert_eq(og_params_parse("variant=coopmat,bm=64,bn=64,bk=32,sgx=4,sgy=2,pad=0,load=staged,mat=khr", &p, err,
                                     sizeof err),
                     0, "%s", err);
    og_record r = {.key = {.dtype = OG_F32, .mode = OG_MODE_FAST, .trans_b = 1},
                   .m = 70, .n = 67, .k = 96, .batch = 2, .median_us = 1, .gflops = 1e6, .samples = 3, .accepted = 1};
    og_qgemm_op(f, r.key.op, sizeof r.key.op);
    snprintf(r.template_name, sizeof r.template_name, "gemm_coopmat");
    r.template_hash = og_template_hash(r.template_name);
    og_params_format(&p, r.params, sizeof r.params);
    og_db *handle;
    int64_t device;
    cr_assert_eq(og_db_open(db, 1, &handle, err, sizeof err), OG_OK, "%s", err);
    cr_assert_eq(og_db_device(handle, &ctx->info, &device, err, sizeof err), OG_OK, "%s", err);
    cr_assert_eq(og_db_insert(handle, device, &r, err, sizeof err), OG_OK, "%s", err);
    og_db_close(handle);
    og_choice c;
    cr_assert_eq(og_select_qgemm(ctx, OG_F32, f, OG_MODE_FAST, 70, 67, 96, 2, &c), OG_OK);
    char chosen[OG_PARAMS_MAX];
    og_params_format(&c.params, chosen, sizeof chosen);
    if (in_lane) {
        cr_expect(c.source == OG_SOURCE_DB && strcmp(chosen, r.params) == 0, "chose %s", chosen);
        /* The record's kernel through og_qgemm_run, against the reference. */
        qcase q = {.f = *f, .a_type = OG_F32, .m = 70, .n = 67, .k = 96, .batch = 2, .beta = 0.5f, .bias = 1,
                   .extreme = 1};
        run_case(ctx, &q, OG_MODE_FAST);
    } else {
        cr_expect(c.params.variant != OG_VARIANT_COOPMAT, "a matrix record chosen without matrices: %s", chosen);
    }
    og_choice det;
    cr_assert_eq(og_select_qgemm(ctx, OG_F32, f, OG_MODE_DETERMINISTIC, 70, 67, 96, 2, &det), OG_OK);
    cr_expect(det.source == OG_SOURCE_DEFAULT, "Deterministic mode took a record");
    close_context(ctx);
    unlink(db);
}
