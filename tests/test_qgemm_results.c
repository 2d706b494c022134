/* Low-bit weight products (og_qgemm_*): MXFP4, NVFP4, INT4 groups and Q8_0
 * weights against the float64 reference of og_qgemm_case.h; A's types and
 * rows, the epilogue, stacked experts and offsets; integer-valued cases bit
 * for bit; the kernel as a decoder (A the identity) bit for bit against the
 * host library's og_qweights_decode; the argument checks. */
#include "og_qgemm_case.h"

/* Every format with float32 A, M = 1 (the decode kernel) and 17 (the
 * prefill tile), K of one block and gpt-oss's 2880 (2944 for groups of 128), N not
 * a multiple of the 4 columns a workgroup takes; Fast and Deterministic. */
Test(qgemm, every_format)
{
    og_context *ctx = open_context();
    int stride = og_test_stride();
    for (size_t fi = 0; fi < N_FORMATS; fi++)
        for (int big = 0; big < 2; big++) {
            if ((int)(2 * fi + (size_t)big) % stride)
                continue;
            const og_qweights_format *f = &formats[fi];
            int64_t k = big ? (f->group == 128 ? 2944 : 2880) : f->group > 32 ? f->group : 32;
            qcase c = {.f = *f,
                       .a_type = OG_F32,
                       .m = big ? 17 : 1,
                       .n = big ? 37 : 6,
                       .k = k,
                       .tensor_scale = 0.75f};
            run_case(ctx, &c, big ? OG_MODE_FAST : OG_MODE_DETERMINISTIC);
        }
    close_context(ctx);
}

/* float16 and bfloat16 A, and the row counts between 1 and 16. */
Test(qgemm, types_and_rows)
{
    og_context *ctx = open_context();
    static const struct {
        size_t format;
        og_dtype type;
        int64_t m;
    } cases[] = {{0, OG_F16, 3}, {4, OG_BF16, 3}, {2, OG_BF16, 2}, {6, OG_F16, 5},
                 {0, OG_F32, 8}, {1, OG_F32, 13}, {3, OG_F32, 16}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i += (size_t)og_test_stride()) {
        qcase c = {.f = formats[cases[i].format],
                   .a_type = cases[i].type,
                   .m = cases[i].m,
                   .n = 21,
                   .k = 256,
                   .tensor_scale = 2.5f};
        run_case(ctx, &c, OG_MODE_FAST);
    }
    close_context(ctx);
}

/* The epilogue (beta, bias, ReLU, GELU), stacked experts (a batch with a
 * stride on W) and one W shared by the batch, odd leading dimensions and
 * offsets of A, C and W. */
Test(qgemm, epilogue_experts_and_offsets)
{
    og_context *ctx = open_context();
    qcase cases[] = {
        {.f = formats[0],
         .a_type = OG_F32,
         .m = 2,
         .n = 9,
         .k = 96,
         .batch = 3,
         .lda_pad = 3,
         .ldc_pad = 5,
         .a_off = 7,
         .c_off = 11,
         .w_off = 3,
         .beta = 0.5f,
         .bias = 1,
         .act = OG_ACTIVATION_GELU_ERF},
        {.f = formats[3],
         .a_type = OG_F16,
         .m = 4,
         .n = 7,
         .k = 128,
         .batch = 2,
         .shared_w = 1,
         .lda_pad = 1,
         .ldc_pad = 1,
         .a_off = 1,
         .c_off = 3,
         .w_off = 1,
         .beta = -1.0f,
         .act = OG_ACTIVATION_RELU},
        {.f = formats[6],
         .a_type = OG_F32,
         .m = 1,
         .n = 130,
         .k = 64,
         .batch = 4,
         .bias = 1,
         .tensor_scale = 0},
        {.f = formats[1],
         .a_type = OG_BF16,
         .m = 3,
         .n = 5,
         .k = 64,
         .batch = 2,
         .w_off = 5,
         .beta = 2.0f,
         .bias = 1,
         .tensor_scale = 3.0f},
        /* The prefill tile (M > 16) with the same offsets, strides and epilogue. */
        {.f = formats[4],
         .a_type = OG_F16,
         .m = 33,
         .n = 70,
         .k = 256,
         .batch = 2,
         .lda_pad = 3,
         .ldc_pad = 2,
         .a_off = 5,
         .c_off = 7,
         .w_off = 2,
         .beta = 0.5f,
         .bias = 1,
         .act = OG_ACTIVATION_GELU_ERF},
        {.f = formats[1],
         .a_type = OG_F32,
         .m = 65,
         .n = 9,
         .k = 64,
         .batch = 3,
         .shared_w = 1,
         .beta = -1.0f,
         .act = OG_ACTIVATION_RELU,
         .tensor_scale = 0.375f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(ctx, &cases[i], OG_MODE_FAST);
    close_context(ctx);
}

/* Products of integers whose sums stay below 2^24 are exact in float32 in
 * any order: C must equal the float64 result bit for bit. Codes are the
 * random ones; scales are 1 (E8M0 127, which the kernel takes as 2^-1 for
 * its doubled codes; float16 1.0), A small integers. */
Test(qgemm, integers_bit_for_bit)
{
    og_context *ctx = open_context();
    static const og_qweights_format fs[] = {{OG_QFORMAT_MXFP4, 0, 0, 0},
                                            {OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_UINT4},
                                            {OG_QFORMAT_Q8_0, 0, 0, 0}};
    for (size_t fi = 0; fi < 3; fi++) {
        const og_qweights_format *f = &fs[fi];
        int64_t m = 3, n = 11, k = 640;
        layout l = layout_for(f, n, k);
        uint8_t *img = random_image(f, &l, n, k);
        for (int64_t j = 0; j < n; j++)
            for (int64_t b = 0; b < k / l.block; b++) {
                uint8_t *s = img + l.scales_at + (uint64_t)j * l.scale_row;
                if (l.scale_bytes == 1) {
                    s[b] = 127;
                } else {
                    s[2 * b] = 0x00;
                    s[2 * b + 1] = 0x3c;
                }
            }
        float *a = malloc((size_t)(m * k) * 4);
        cr_assert_not_null(a);
        for (int64_t i = 0; i < m * k; i++)
            a[i] = (float)((int)(rnd() % 15) - 7);
        og_buffer *A = make_buffer(ctx, a, (size_t)(m * k) * 4),
                  *W = make_buffer(ctx, img, l.bytes), *C = NULL;
        cr_assert_eq(og_buffer_create(ctx, (uint64_t)(m * n) * 4, &C), OG_OK);
        og_qgemm *q = NULL;
        cr_assert_eq(og_qgemm_create(ctx, OG_F32, f, OG_MODE_FAST, &q), OG_OK);
        og_qgemm_args args = {.m = m, .n = n, .k = k, .a = A, .lda = k, .w = W, .c = C, .ldc = n};
        cr_assert_eq(og_qgemm_run(q, &args), OG_OK, "%s", og_context_last_error(ctx));
        float out[33];
        cr_assert_eq(og_buffer_read(C, 0, out, sizeof out), OG_OK);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double sum = 0;
                for (int64_t kk = 0; kk < k; kk++)
                    sum += a[i * k + kk] * weight(f, &l, img, j, kk, 1);
                float want = (float)sum;
                cr_assert(fabs(sum) < 16777216.0 && memcmp(&want, &out[i * n + j], 4) == 0,
                          "format %d: C(%" PRId64 ", %" PRId64 ") is %.9g, the exact sum %.9g",
                          (int)f->format, i, j, out[i * n + j], sum);
            }
        og_qgemm_destroy(q);
        og_buffer_destroy(A);
        og_buffer_destroy(W);
        og_buffer_destroy(C);
        free(img);
        free(a);
    }
    close_context(ctx);
}

/* The kernel as a decoder: with A the K x K identity, C(i, j) = W(j, i), so
 * C must hold og_qweights_decode's values bit for bit (a -0 weight comes
 * back +0: the sum starts at +0, and +0 + -0 = +0 in IEEE 754). Scales
 * include the edges: E8M0 0, 1 (subnormal scales), 254; UE4M3 0x01 and
 * 0x7E with a power-of-two tensor scale; float16 and bfloat16 extremes;
 * zero points 0 and 15; codes of every value, negative zeros among them.
 * Both kernels: the decode kernel and the prefill tile. */
Test(qgemm, decodes_as_the_host_library)
{
    og_context *ctx = open_context();
    for (size_t fi = 0; fi < N_FORMATS; fi++) {
        const og_qweights_format *f = &formats[fi];
        int64_t n = 5, k = f->group == 128 ? 128 : 64;
        layout l = layout_for(f, n, k);
        uint8_t *img = random_image(f, &l, n, k);
        static const uint8_t e8m0[] = {0, 1, 254, 127, 100};
        static const uint8_t ue4m3[] = {0x01, 0x7e, 0x38, 0x08, 0x44};
        static const uint16_t halves[] = {0x7bff, 0x0001, 0x3c00, 0x0400, 0xc000};
        static const uint16_t bhalves[] = {0x7f7f, 0x0080, 0x3f80, 0x1000, 0xc000};
        for (int64_t j = 0; j < n; j++) {
            uint8_t *s = img + l.scales_at + (uint64_t)j * l.scale_row;
            uint8_t *codes = img + (uint64_t)j * l.code_row;
            for (int64_t b = 0; b < k / l.block; b++) {
                if (f->format == OG_QFORMAT_MXFP4)
                    s[b] = e8m0[(j + b) % 5];
                else if (f->format == OG_QFORMAT_NVFP4)
                    s[b] = ue4m3[(j + b) % 5];
                else if (b == 0) {
                    uint16_t h = (f->format == OG_QFORMAT_INT4 && f->scale == OG_QSCALE_BF16
                                      ? bhalves
                                      : halves)[j % 5];
                    s[0] = (uint8_t)h;
                    s[1] = (uint8_t)(h >> 8);
                }
            }
            if (f->zero == OG_QZERO_UINT4)
                img[l.zeros_at + (uint64_t)j * l.zero_row] = j % 2 ? 0xf0 : 0x0f;
            /* Large scales keep codes of magnitude 1.5 at most (no Inf). */
            if (f->format == OG_QFORMAT_MXFP4)
                for (int64_t i = 0; i < k / 2; i++)
                    codes[i] &= 0xbb;
            /* Every code of the first 16 weights: 0..15 (8 is -0 in E2M1). */
            if (l.bits == 4)
                for (int64_t i = 0; i < 8; i++)
                    codes[i] = (uint8_t)((2 * i) | (2 * i + 1) << 4);
        }
        float *eye = calloc((size_t)(k * k), 4), *want = malloc((size_t)(n * k) * 4);
        cr_assert(eye && want);
        for (int64_t i = 0; i < k; i++)
            eye[i * k + i] = 1.0f;
        char why[256];
        float ts = f->format == OG_QFORMAT_NVFP4 ? 0.25f : 1.0f;
        cr_assert_eq(og_qweights_decode(f, n, k, img, ts, want, why, sizeof why), 0, "%s", why);
        og_buffer *A = make_buffer(ctx, eye, (size_t)(k * k) * 4),
                  *W = make_buffer(ctx, img, l.bytes), *C = NULL;
        cr_assert_eq(og_buffer_create(ctx, (uint64_t)(k * n) * 4, &C), OG_OK);
        og_qgemm *q = NULL;
        cr_assert_eq(og_qgemm_create(ctx, OG_F32, f, OG_MODE_DETERMINISTIC, &q), OG_OK);
        og_qgemm_args args = {
            .m = k, .n = n, .k = k, .a = A, .lda = k, .w = W, .c = C, .ldc = n, .tensor_scale = ts};
        float *out = malloc((size_t)(k * n) * 4);
        cr_assert_not_null(out);
        /* The decode kernel, then the prefill tile. The tile multiplies A
         * by the decoded weights, so a row holding an infinite weight (a
         * code of 6 under E8M0 254) gives 0 * Inf = NaN off the diagonal,
         * as IEEE 754 says; the decode kernel scales each unit's sum of the
         * small codes and keeps such a row finite. */
        const og_params kernels[2] = {og_params_qdecode(16), og_params_qprefill()};
        for (int t = 0; t < 2; t++) {
            cr_assert_eq(run_qparams(q, ctx, &args, &kernels[t]), OG_OK, "%s",
                         og_context_last_error(ctx));
            cr_assert_eq(og_buffer_read(C, 0, out, (size_t)(k * n) * 4), OG_OK);
            for (int64_t j = 0; j < n; j++) {
                int infinite = 0;
                for (int64_t i = 0; i < k; i++)
                    infinite |= isinf(want[j * k + i]);
                for (int64_t i = 0; i < k && !(t == 1 && infinite); i++) {
                    float got = out[i * n + j], w = want[j * k + i];
                    int same = memcmp(&got, &w, 4) == 0 || (got == 0 && w == 0);
                    cr_assert(same,
                              "format %d, the %s: W(%" PRId64 ", %" PRId64
                              ") decoded as %a, the host's %a",
                              (int)f->format, t ? "prefill tile" : "decode kernel", j, i, got, w);
                }
            }
        }
        og_qgemm_destroy(q);
        og_buffer_destroy(A);
        og_buffer_destroy(W);
        og_buffer_destroy(C);
        free(img);
        free(eye);
        free(want);
        free(out);
    }
    close_context(ctx);
}

/* Bad calls are refused with a message naming the dimension, and nothing is
 * written: C keeps its guard pattern. */
Test(qgemm, refusals)
{
    og_context *ctx = open_context();
    const og_qweights_format mx = formats[0];
    int64_t m = 2, n = 8, k = 64;
    layout l = layout_for(&mx, n, k);
    uint8_t *img = random_image(&mx, &l, n, k);
    float a[17 * 64] = {0}, guard[16 * 8];
    for (size_t i = 0; i < sizeof guard / 4; i++)
        guard[i] = -1234.5f;
    og_buffer *A = make_buffer(ctx, a, sizeof a), *W = make_buffer(ctx, img, l.bytes),
              *C = make_buffer(ctx, guard, sizeof guard);
    og_qgemm *q = NULL;
    cr_assert_eq(og_qgemm_create(ctx, OG_F32, &mx, OG_MODE_FAST, &q), OG_OK);
    const og_qgemm_args good = {.m = m, .n = n, .k = k, .a = A, .lda = k, .w = W, .c = C, .ldc = n};
    static const struct {
        const char *what, *message;
    } want[] = {
        {"K 48", "not a multiple of 32"},
        {"lda 32", "lda"},
        {"w_offset 8", "w_offset"},
        {"stride_w 16", "stride_w"},
        {"W short", "W needs"},
        {"C short", "C needs"},
        {"M negative", "M (-1) is negative"},
        {"tensor_scale NaN", "tensor_scale"},
        {"ldc 4", "ldc"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        og_qgemm_args args = good;
        switch (i) {
        case 0:
            args.k = 48;
            args.lda = 48;
            break;
        case 1:
            args.lda = 32;
            break;
        case 2:
            args.w_offset = 8;
            break;
        case 3:
            args.batch = 2;
            args.stride_w = 16;
            args.stride_a = 0;
            args.stride_c = m * n;
            break;
        case 4:
            args.w_offset = 16;
            break;
        case 5:
            args.m = 17;
            break;
        case 6:
            args.m = -1;
            break;
        case 7:
            args.tensor_scale = NAN;
            break;
        default:
            args.ldc = 4;
            break;
        }
        og_status st = og_qgemm_run(q, &args);
        cr_assert_eq(st, OG_ERROR_INVALID_ARGUMENT, "%s: status %d (%s)", want[i].what, st,
                     og_context_last_error(ctx));
        cr_assert(strstr(og_context_last_error(ctx), want[i].message) &&
                      strstr(og_context_last_error(ctx), "qgemm"),
                  "%s: the message '%s' does not say '%s'", want[i].what,
                  og_context_last_error(ctx), want[i].message);
    }
    float out[16 * 8];
    cr_assert_eq(og_buffer_read(C, 0, out, sizeof out), OG_OK);
    cr_assert(memcmp(out, guard, sizeof out) == 0, "a refused call wrote C");
    /* Formats the object refuses. */
    static const og_qweights_format bad[] = {{OG_QFORMAT_MXFP4, 32, 0, 0},
                                             {OG_QFORMAT_INT4, 48, 0, 0},
                                             {OG_QFORMAT_Q8_0, 0, OG_QSCALE_BF16, 0},
                                             {(og_qformat)9, 0, 0, 0},
                                             {OG_QFORMAT_INT4, 32, 0, (og_qzero)3}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        og_qgemm *r = NULL;
        cr_assert_eq(og_qgemm_create(ctx, OG_F32, &bad[i], OG_MODE_FAST, &r),
                     OG_ERROR_INVALID_ARGUMENT, "format %zu accepted", i);
        cr_assert_null(r);
    }
    og_qgemm *r = NULL;
    cr_assert_eq(og_qgemm_create(ctx, OG_INT8, &mx, OG_MODE_FAST, &r), OG_ERROR_INVALID_ARGUMENT);
    og_qgemm_destroy(q);
    og_buffer_destroy(A);
    og_buffer_destroy(W);
    og_buffer_destroy(C);
    free(img);
    close_context(ctx);
}

/* Runs part `part` of the decode kernel p on image img once (as ogtune
 * bench --parts times it) and reads C. */
static og_status run_part(og_context *ctx, og_qgemm *q, og_qgemm_args *args, const uint8_t *img,
                          uint64_t bytes, const og_params *p, int part, float *out, size_t count)
{
    og_buffer *W = make_buffer(ctx, img, bytes);
    args->w = W;
    og_timing t;
    og_status st = og_qgemm_time_part(q, args, p, part, &(og_timing_plan){0, 1, 1, 0}, &t);
    if (st == OG_OK)
        cr_assert_eq(og_buffer_read(args->c, 0, out, count * 4), OG_OK);
    og_buffer_destroy(W);
    return st;
}

/* The decode kernel's parts (ogtune bench --parts), every format kind, from
 * storage and texel views: the load part reads the codes (its C changes
 * with them), the convert part reads none (its C is the same for two
 * images that differ only in their codes); a part of the prefill tile is refused; and the product
 * after the parts is the product. */
Test(qgemm, decode_parts)
{
    og_context *ctx = open_context();
    const int64_t m = 2, n = 40, k = 512;
    float *a = random_a((size_t)(m * k), 256), c[2][2 * 40], full[2][2 * 40];
    og_buffer *A = make_buffer(ctx, a, (size_t)(m * k) * 4), *C = NULL;
    cr_assert_eq(og_buffer_create(ctx, sizeof c[0], &C), OG_OK);
    const size_t count = (size_t)(m * n);
    for (size_t fi = 0; fi < N_FORMATS + 2; fi++) {
        const og_qweights_format *f =
            fi < N_FORMATS ? &formats[fi] : &kquant_formats[fi - N_FORMATS];
        layout l = layout_for(f, n, k);
        /* Two images of the same scales and zero points, other codes. */
        uint8_t *img[2] = {random_image(f, &l, n, k), malloc(l.bytes)};
        cr_assert_not_null(img[1]);
        memcpy(img[1], img[0], l.bytes);
        for (uint64_t i = 0; i < l.scales_at; i++)
            img[1][i] = (uint8_t)rnd();
        og_qgemm *q = NULL;
        cr_assert_eq(og_qgemm_create(ctx, OG_F32, f, OG_MODE_FAST, &q), OG_OK);
        og_qgemm_args args = {.m = m, .n = n, .k = k, .a = A, .lda = k, .c = C, .ldc = n};
        og_params p = og_qgemm_default(m);
        for (int texel = 0; texel < 2; texel++) {
            p.src = texel ? OG_SRC_TEXEL : OG_SRC_STORAGE;
            for (int i = 0; i < 2; i++)
                cr_assert_eq(
                    run_part(ctx, q, &args, img[i], l.bytes, &p, OG_PART_LOAD, c[i], count), OG_OK,
                    "format %zu: %s", fi, og_context_last_error(ctx));
            cr_expect_neq(memcmp(c[0], c[1], sizeof c[0]), 0,
                          "format %zu, texel %d: the load part's C does not depend on the codes",
                          fi, texel);
            for (int i = 0; i < 2; i++)
                cr_assert_eq(
                    run_part(ctx, q, &args, img[i], l.bytes, &p, OG_PART_CONVERT, c[i], count),
                    OG_OK, "format %zu: %s", fi, og_context_last_error(ctx));
            cr_expect_eq(memcmp(c[0], c[1], sizeof c[0]), 0,
                         "format %zu, texel %d: the convert part read the codes", fi, texel);
            /* The product, before and after a part, bit for bit. */
            og_buffer *W = make_buffer(ctx, img[0], l.bytes);
            args.w = W;
            for (int i = 0; i < 2; i++) {
                if (i)
                    cr_assert_eq(
                        run_part(ctx, q, &args, img[1], l.bytes, &p, OG_PART_LOAD, c[0], count),
                        OG_OK);
                args.w = W;
                cr_assert_eq(run_qparams(q, ctx, &args, &p), OG_OK, "%s",
                             og_context_last_error(ctx));
                cr_assert_eq(og_buffer_read(C, 0, full[i], sizeof full[i]), OG_OK);
            }
            cr_expect_eq(memcmp(full[0], full[1], sizeof full[0]), 0,
                         "format %zu: the product changed after a part", fi);
            og_buffer_destroy(W);
        }
        og_params tile = og_qgemm_default(17);
        cr_expect_eq(run_part(ctx, q, &args, img[0], l.bytes, &tile, OG_PART_LOAD, c[0], count),
                     OG_ERROR_UNSUPPORTED, "format %zu: a part of the prefill tile ran", fi);
        cr_expect(strstr(og_context_last_error(ctx), "only the low-bit decode kernel"), "%s",
                  og_context_last_error(ctx));
        og_qgemm_destroy(q);
        free(img[0]);
        free(img[1]);
    }
    og_buffer_destroy(A);
    og_buffer_destroy(C);
    free(a);
    close_context(ctx);
}
