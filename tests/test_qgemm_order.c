/* The low-bit weight product's order of additions: split-k ranges added in
 * order, pieces past the device's workgroup counts, unrolled trips and
 * texel-buffer loads give the same bits as one pass from storage buffers;
 * and faults planted in a copy of the decode template are caught by the
 * reference. */
#include "og_qgemm_case.h"

Test(qgemm, split_k_adds_the_ranges_in_order, .timeout = 900)
{
    og_context *ctx = open_context();
    static const struct {
        size_t format;
        og_dtype type;
        int64_t m, n, k, range;
        int split;
    } cases[] = {{0, OG_F32, 2, 9, 2880, 736, 4}, {3, OG_F16, 5, 6, 4096, 1024, 4}};
    for (size_t ci = 0; ci < 2; ci++) {
        const og_qweights_format *f = &formats[cases[ci].format == 3 ? 3 : 0];
        og_qweights_format g128 = {OG_QFORMAT_INT4, 128, OG_QSCALE_F16, OG_QZERO_UINT4};
        if (ci == 1)
            f = &g128;
        int64_t m = cases[ci].m, n = cases[ci].n, k = cases[ci].k, len = cases[ci].range;
        int64_t ranges = (k + len - 1) / len;
        og_dtype at = cases[ci].type;
        float *w = malloc((size_t)(n * k) * 4), *a = malloc((size_t)(m * k) * 4);
        float *c0 = malloc((size_t)(m * n) * 4), *bias = malloc((size_t)n * 4);
        float *got = malloc((size_t)(m * n) * 4), *sum = calloc((size_t)(m * n), 4);
        float *plane = malloc((size_t)(m * n) * 4), *wr = malloc((size_t)(n * len) * 4);
        float *ar = malloc((size_t)(m * len) * 4);
        cr_assert(w && a && c0 && bias && got && sum && plane && wr && ar);
        for (int64_t i = 0; i < n * k; i++)
            w[i] = (float)((int)(rnd() % 2001) - 1000) / 1000.0f;
        for (int64_t i = 0; i < m * k; i++)
            a[i] = a_value(at, (float)((int)(rnd() % 2001) - 1000) / 256.0f);
        for (int64_t i = 0; i < m * n; i++)
            c0[i] = (float)((int)(rnd() % 201) - 100) / 16.0f;
        for (int64_t j = 0; j < n; j++)
            bias[j] = (float)((int)(rnd() % 201) - 100) / 32.0f;
        og_qweights_layout lay;
        char why[256];
        cr_assert_eq(og_qweights_layout_of(f, n, k, &lay, why, sizeof why), 0, "%s", why);
        uint8_t *img = malloc(lay.bytes);
        cr_assert_not_null(img);
        cr_assert_eq(og_qweights_encode(f, n, k, w, 1.0f, img, why, sizeof why), 0, "%s", why);
        size_t a_bytes;
        void *a_stored = store_a(at, a, (size_t)(m * k), &a_bytes);
        og_buffer *A = make_buffer(ctx, a_stored, a_bytes), *W = make_buffer(ctx, img, lay.bytes),
                  *C = make_buffer(ctx, c0, (size_t)(m * n) * 4),
                  *Bias = make_buffer(ctx, bias, (size_t)n * 4);
        og_qgemm *q;
        cr_assert_eq(og_qgemm_create(ctx, at, f, OG_MODE_FAST, &q), OG_OK);
        og_params split = og_params_qdecode(m);
        split.split = cases[ci].split;
        og_qgemm_args args = {.m = m, .n = n, .k = k, .a = A, .lda = k, .w = W, .c = C,
                              .ldc = n, .beta = 0.5f, .bias = Bias};
        cr_assert_eq(run_qparams(q, ctx, &args, &split), OG_OK, "%s", og_context_last_error(ctx));
        cr_assert_eq(og_buffer_read(C, 0, got, (size_t)(m * n) * 4), OG_OK);
        char desc[256];
        og_params_format(&split, desc, sizeof desc);
        cr_expect(strstr(desc, ",split=4") != NULL, "%s", desc);
        /* Each range alone, unsplit, with no epilogue: its plane. */
        for (int64_t r = 0; r < ranges; r++) {
            int64_t kr = r + 1 < ranges ? len : k - r * len;
            for (int64_t j = 0; j < n; j++)
                memcpy(wr + j * kr, w + j * k + r * len, (size_t)kr * 4);
            for (int64_t i = 0; i < m; i++)
                memcpy(ar + i * kr, a + i * k + r * len, (size_t)kr * 4);
            og_qweights_layout lr;
            cr_assert_eq(og_qweights_layout_of(f, n, kr, &lr, why, sizeof why), 0, "%s", why);
            uint8_t *ir = malloc(lr.bytes);
            cr_assert_not_null(ir);
            cr_assert_eq(og_qweights_encode(f, n, kr, wr, 1.0f, ir, why, sizeof why), 0, "%s", why);
            size_t ar_bytes;
            void *ar_stored = store_a(at, ar, (size_t)(m * kr), &ar_bytes);
            og_buffer *Ar = make_buffer(ctx, ar_stored, ar_bytes), *Wr = make_buffer(ctx, ir, lr.bytes),
                      *Cr = NULL;
            cr_assert_eq(og_buffer_create(ctx, (uint64_t)(m * n) * 4, &Cr), OG_OK);
            og_qgemm_args ra = {.m = m, .n = n, .k = kr, .a = Ar, .lda = kr, .w = Wr, .c = Cr,
                                .ldc = n};
            og_params one = og_params_qdecode(m);
            cr_assert_eq(run_qparams(q, ctx, &ra, &one), OG_OK, "%s", og_context_last_error(ctx));
            cr_assert_eq(og_buffer_read(Cr, 0, plane, (size_t)(m * n) * 4), OG_OK);
            for (int64_t e = 0; e < m * n; e++) {
                volatile float s = r == 0 ? plane[e] : sum[e] + plane[e];
                sum[e] = s;
            }
            og_buffer_destroy(Ar);
            og_buffer_destroy(Wr);
            og_buffer_destroy(Cr);
            free(ir);
            free(ar_stored);
        }
        /* The epilogue as the kernels apply it: + beta * C, then + bias. */
        size_t wrong = 0, first = 0;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                volatile float old = 0.5f * c0[i * n + j];
                volatile float v = sum[i * n + j] + old;
                volatile float want = v + bias[j];
                float g = got[i * n + j];
                if (memcmp(&g, (const void *)&want, 4) != 0 && wrong++ == 0)
                    first = (size_t)(i * n + j);
            }
        cr_expect_eq(wrong, 0,
                     "case %zu: %zu elements differ from the planes added in range order; C[%zu] "
                     "= %.9g",
                     ci, wrong, first, (double)got[first]);
        og_qgemm_destroy(q);
        og_buffer *bufs[] = {A, W, C, Bias};
        for (size_t i = 0; i < 4; i++)
            og_buffer_destroy(bufs[i]);
        free(w), free(a), free(c0), free(bias), free(got), free(sum), free(plane), free(wr);
        free(ar), free(img), free(a_stored);
    }
    close_context(ctx);
}

/* Rows and products past the device's workgroup counts run as pieces (y
 * and z limited here to one tile and two products a dispatch) with the
 * same bits as one dispatch. */
Test(qgemm, pieces_give_the_same_bits)
{
    og_context *ctx = open_context();
    const og_qweights_format *f = &formats[3];
    int64_t m = 37, n = 10, k = 128, batch = 3;
    layout l = layout_for(f, n, k);
    uint8_t *img = random_image(f, &l, n, k);
    size_t a_count = (size_t)(batch * m * k), c_count = (size_t)(batch * m * n);
    float *a = malloc(a_count * 4), *one = malloc(c_count * 4), *cut = malloc(c_count * 4);
    cr_assert(a && one && cut);
    for (size_t i = 0; i < a_count; i++)
        a[i] = (float)((int)(rnd() % 2001) - 1000) / 128.0f;
    og_buffer *A = make_buffer(ctx, a, a_count * 4), *W = make_buffer(ctx, img, l.bytes), *C = NULL;
    cr_assert_eq(og_buffer_create(ctx, c_count * 4, &C), OG_OK);
    og_qgemm *q = NULL;
    cr_assert_eq(og_qgemm_create(ctx, OG_F32, f, OG_MODE_FAST, &q), OG_OK);
    og_qgemm_args args = {.m = m,
                          .n = n,
                          .k = k,
                          .batch = batch,
                          .a = A,
                          .lda = k,
                          .stride_a = m * k,
                          .w = W,
                          .c = C,
                          .ldc = n,
                          .stride_c = m * n};
    cr_assert_eq(og_qgemm_run(q, &args), OG_OK, "%s", og_context_last_error(ctx));
    cr_assert_eq(og_buffer_read(C, 0, one, c_count * 4), OG_OK);
    uint32_t saved[3];
    memcpy(saved, ctx->limits.max_count, sizeof saved);
    ctx->limits.max_count[1] = 1;
    ctx->limits.max_count[2] = 2;
    cr_assert_eq(og_qgemm_run(q, &args), OG_OK, "%s", og_context_last_error(ctx));
    memcpy(ctx->limits.max_count, saved, sizeof saved);
    cr_assert_eq(og_buffer_read(C, 0, cut, c_count * 4), OG_OK);
    cr_assert(memcmp(one, cut, c_count * 4) == 0, "pieces changed the bits of C");
    og_qgemm_destroy(q);
    og_buffer_destroy(A);
    og_buffer_destroy(W);
    og_buffer_destroy(C);
    free(img);
    free(a);
    free(one);
    free(cut);
    close_context(ctx);
}

/* Unrolled trips (unroll = 2 and 4 units) add the same units in the same
 * order as one unit a trip: the same bits, for every format, with float32
 * and float16 A, 4-wide and word loads, unsplit and split in 2 ranges (the
 * formats take those four in turn, so that each is compiled a few times
 * only), 40 units over 8 slices: units left after the last whole trip. */
Test(qgemm, unrolled_trips_give_the_same_bits, .timeout = 600)
{
    og_context *ctx = open_context();
    int64_t m = 3, n = 9, k = 40 * 32;
    float *a = random_a((size_t)(m * k), 128.0f);
    for (size_t fi = 0; fi < sizeof formats / sizeof formats[0]; fi++) {
        og_params p[3];
        p[0] = og_params_qdecode(m);
        p[0].cols = 4;
        p[0].slices = 8;
        p[0].vec = fi % 2 ? 1 : 4;
        p[0].split = fi % 4 >= 2 ? 2 : OG_SPLIT_RULE;
        p[1] = p[2] = p[0];
        p[1].unroll = 2;
        p[2].unroll = 4;
        same_bits(ctx, &formats[fi], fi % 2 ? OG_F16 : OG_F32, a, m, n, k, p, 3, 0);
    }
    free(a);
    close_context(ctx);
}

/* Texel views (src=texel) read the same words as storage buffers: the same
 * bits for every format, A of each type, 16-byte and word loads, one pass
 * and split-k; the weights' buffer has its views afterwards, so the texel
 * kernel ran. */
Test(qgemm, texel_loads_give_the_same_bits, .timeout = 600)
{
    og_context *ctx = open_context();
    int64_t m = 5, n = 12, k = 24 * 32;
    float *a = random_a((size_t)(m * k), 64.0f);
    static const og_dtype types[] = {OG_F32, OG_F16, OG_BF16};
    for (size_t fi = 0; fi < sizeof formats / sizeof formats[0]; fi++)
        for (int variant = 0; variant < 4; variant++) {
            og_params p[2];
            p[0] = og_params_qdecode(m);
            p[0].cols = 4;
            p[0].slices = 8;
            p[0].vec = variant % 2 ? 1 : 4;
            p[0].split = variant >= 2 ? 2 : OG_SPLIT_RULE;
            p[1] = p[0];
            p[1].src = OG_SRC_TEXEL;
            same_bits(ctx, &formats[fi], types[(fi + (size_t)variant) % 3], a, m, n, k, p, 2, 1);
        }
    free(a);
    close_context(ctx);
}

/* tn columns an invocation (each value of A loaded once for tn columns)
 * give each column the sums of one column an invocation: the same bits for
 * every format (the K-quants too), A of each type, rows 1 and 4, 16-byte
 * and word loads, from storage and texel buffers; N = 21 leaves columns
 * past N in the last workgroup. */
Test(qgemm, columns_an_invocation_give_the_same_bits, .timeout = 600)
{
    og_context *ctx = open_context();
    int64_t n = 21, k = 2 * 256;
    static const og_dtype types[] = {OG_F32, OG_F16, OG_BF16};
    size_t count = N_FORMATS + 2;
    for (size_t fi = 0; fi < count; fi++) {
        const og_qweights_format *f = fi < N_FORMATS ? &formats[fi] : &kquant_formats[fi - N_FORMATS];
        if (f->format == OG_QFORMAT_INT4 && f->group == 0)
            continue; /* one group a row: K = 512 is one group like the others */
        int64_t m = fi % 2 ? 4 : 1;
        float *a = random_a((size_t)(m * k), 64.0f);
        og_params p[3];
        p[0] = og_params_qdecode(m);
        p[0].vec = fi % 3 ? 4 : 1;
        p[0].src = fi % 4 == 3 ? OG_SRC_TEXEL : OG_SRC_STORAGE;
        for (int i = 1; i < 3; i++) {
            p[i] = p[0];
            p[i].tn = 2 * i;
            p[i].cols = p[0].cols * p[i].tn;
        }
        same_bits(ctx, f, types[fi % 3], a, m, n, k, p, 3, p[0].src == OG_SRC_TEXEL);
        free(a);
    }
    close_context(ctx);
}

/* Faults planted in a copy of the template (OG_TEMPLATE_DIR) are caught by
 * the comparison above: nibbles swapped within a byte, the scale of the
 * next block, INT4's zero point ignored, a slice's sum left out of the
 * tree; the same cases pass on the real template. */
Test(qgemm, planted_faults_are_caught, .timeout = 900)
{
    static const struct {
        const char *name, *from, *to;
        size_t format;
    } faults[] = {
        {"swapped nibbles", "nibbles and 4 * (e % 8)", "nibbles and 4 * ((e ~ 1) % 8)", 0},
        {"next block's scale", "og_byte(scales, ${n(\"scale_row\", c)} + ${unit}))",
         "og_byte(scales, ${n(\"scale_row\", c)} + ${unit} + 1u))", 0},
        {"zero point ignored",
         "${F}${n(\"z\", c)} = ${f32}((og_byte(zeros, ${n(\"zero_row\", c)} + ${n(\"b\", c)} / "
         "2u) >> ((${n(\"b\", c)} & 1u) * 4u)) & 15u);",
         "${F}${n(\"z\", c)} = 8.0;", 3},
        {"a slice left out", "partial[${at(r, c)}u + t + h]; partial",
         "partial[${at(r, c)}u + t + h] * 0.0; partial", 6},
    };
    char dir[] = "/tmp/og_qgemm_plant_XXXXXX", path[512];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/qgemm_decode.tmpl", dir);
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
        char *text = read_text(OG_TEMPLATES "/qgemm_decode.tmpl");
        cr_assert_eq(count(text, faults[i].from), 1, "%s: the template holds \"%s\" %zu times",
                     faults[i].name, faults[i].from, count(text, faults[i].from));
        text = replaced(text, faults[i].from, faults[i].to);
        write_text(path, text);
        free(text);
        setenv("OG_TEMPLATE_DIR", dir, 1);
        qcase c = {.f = formats[faults[i].format], .a_type = OG_F32, .m = 2, .n = 9, .k = 128};
        og_context *ctx = open_context();
        char first[512] = "";
        cr_expect_gt(case_mismatches(ctx, &c, OG_MODE_FAST, first, sizeof first), 0,
                     "%s was not caught", faults[i].name);
        close_context(ctx);
        unsetenv("OG_TEMPLATE_DIR");
        og_context *clean = open_context();
        run_case(clean, &c, OG_MODE_FAST);
        close_context(clean);
    }
    unlink(path);
    rmdir(dir);
}
