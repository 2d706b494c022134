/*
 * Tests of low-bit weight products (og_qgemm_*): MXFP4, NVFP4, INT4 groups
 * and Q8_0 weights against a float64 reference that decodes the image from
 * onegpu_formats.h's table with its own code (not og_qweights_decode);
 * integer-valued cases bit for bit; the kernel as a decoder (A the identity)
 * bit for bit against the host library's og_qweights_decode; the epilogue,
 * stacked experts, offsets, row tiles and pieces; the checks.
 */
#include <math.h>
#include <unistd.h>

#include "og_lane.h"
#include "og_text.h"

/* ---- the reference: the table of onegpu_formats.h, in double ---- */

static double e2m1(unsigned c)
{
    static const double mag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    return (c & 8) ? -mag[c & 7] : mag[c & 7];
}

static double half_value(unsigned h, int bf16)
{
    if (bf16) {
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    unsigned e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0    ? ldexp(m, -24)
               : e == 31 ? (m ? NAN : INFINITY)
                         : ldexp(1024 + m, (int)e - 25);
    return (h & 0x8000) ? -v : v;
}

static double e4m3(unsigned s)
{
    unsigned e = (s >> 3) & 15, m = s & 7;
    if (e == 15 && m == 7)
        return NAN;
    double v = e == 0 ? ldexp(m, -9) : ldexp(8 + m, (int)e - 10);
    return (s & 0x80) ? -v : v;
}

typedef struct layout {
    int64_t block, bits, scale_bytes;
    uint64_t code_row, scales_at, scale_row, zeros_at, zero_row, bytes;
} layout;

static uint64_t up16(uint64_t v)
{
    return (v + 15) / 16 * 16;
}

/* The layout as the header specifies it, computed here from the spec. */
static layout layout_for(const og_qweights_format *f, int64_t n, int64_t k)
{
    layout l = {0};
    l.bits = f->format == OG_QFORMAT_Q8_0 ? 8 : 4;
    l.block = f->format == OG_QFORMAT_NVFP4  ? 16
              : f->format == OG_QFORMAT_INT4 ? (f->group ? f->group : k)
                                             : 32;
    l.scale_bytes = f->format == OG_QFORMAT_INT4 || f->format == OG_QFORMAT_Q8_0 ? 2 : 1;
    int64_t blocks = k / l.block;
    l.code_row = up16((uint64_t)(k * l.bits / 8));
    l.scales_at = (uint64_t)n * l.code_row;
    l.scale_row = up16((uint64_t)(blocks * l.scale_bytes));
    l.zeros_at = l.scales_at + (uint64_t)n * l.scale_row;
    if (f->format == OG_QFORMAT_INT4 && f->zero == OG_QZERO_UINT4)
        l.zero_row = up16((uint64_t)(blocks + 1) / 2);
    else if (f->format == OG_QFORMAT_INT4 && f->zero == OG_QZERO_FLOAT)
        l.zero_row = up16((uint64_t)blocks * 2);
    l.bytes = l.zeros_at + (uint64_t)n * l.zero_row;
    return l;
}

static unsigned u16_at(const uint8_t *p)
{
    return (unsigned)p[0] | (unsigned)p[1] << 8;
}

/* Weight (j, k) of the image, exactly, in double. */
static double weight(const og_qweights_format *f, const layout *l, const uint8_t *img, int64_t j,
                     int64_t k, double tensor_scale)
{
    const uint8_t *codes = img + (uint64_t)j * l->code_row;
    const uint8_t *scales = img + l->scales_at + (uint64_t)j * l->scale_row;
    const uint8_t *zeros = img + l->zeros_at + (uint64_t)j * l->zero_row;
    int64_t b = k / l->block;
    unsigned q = l->bits == 8 ? codes[k] : (codes[k / 2] >> (4 * (k % 2))) & 15;
    switch (f->format) {
    case OG_QFORMAT_MXFP4:
        return scales[b] == 0xFF ? NAN : e2m1(q) * ldexp(1, (int)scales[b] - 127);
    case OG_QFORMAT_NVFP4:
        return e2m1(q) * e4m3(scales[b]) * tensor_scale;
    case OG_QFORMAT_Q8_0:
        return (int8_t)q * half_value(u16_at(scales + 2 * b), 0);
    default: {
        int bf = f->scale == OG_QSCALE_BF16;
        double z = f->zero == OG_QZERO_UINT4   ? (zeros[b / 2] >> (4 * (b % 2))) & 15
                   : f->zero == OG_QZERO_FLOAT ? half_value(u16_at(zeros + 2 * b), bf)
                                               : 8;
        return ((double)q - z) * half_value(u16_at(scales + 2 * b), bf);
    }
    }
}

/* ---- operands ---- */

static uint32_t rng_state = 12345;
static uint32_t rnd(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

/* An image of random codes with scales in a range where no product
 * overflows (scale bytes: E8M0 around 2^0, E4M3 normal, float16 around 1/64). */
static uint8_t *random_image(const og_qweights_format *f, const layout *l, int64_t n, int64_t k)
{
    uint8_t *img = calloc(1, l->bytes);
    cr_assert_not_null(img);
    for (int64_t j = 0; j < n; j++) {
        uint8_t *codes = img + (uint64_t)j * l->code_row;
        for (int64_t i = 0; i < k * l->bits / 8; i++)
            codes[i] = (uint8_t)rnd();
        uint8_t *scales = img + l->scales_at + (uint64_t)j * l->scale_row;
        uint8_t *zeros = img + l->zeros_at + (uint64_t)j * l->zero_row;
        for (int64_t b = 0; b < k / l->block; b++) {
            if (l->scale_bytes == 1) {
                scales[b] = (uint8_t)(f->format == OG_QFORMAT_MXFP4 ? 120 + rnd() % 12
                                                                    : 0x20 + rnd() % 0x40);
            } else {
                unsigned h = f->format == OG_QFORMAT_INT4 && f->scale == OG_QSCALE_BF16
                                 ? 0x3c00u + rnd() % 0x200u  /* bf16 around 2^-7 */
                                 : 0x2000u + rnd() % 0x800u; /* float16 around 2^-7 */
                scales[2 * b] = (uint8_t)h;
                scales[2 * b + 1] = (uint8_t)(h >> 8);
            }
            if (f->zero == OG_QZERO_UINT4)
                zeros[b / 2] |= (uint8_t)((rnd() % 16) << (4 * (b % 2)));
            else if (f->zero == OG_QZERO_FLOAT) {
                unsigned h = f->scale == OG_QSCALE_BF16 ? 0x4000u + rnd() % 0x100u  /* 2..4 */
                                                        : 0x4000u + rnd() % 0x800u; /* 2..8 */
                zeros[2 * b] = (uint8_t)h;
                zeros[2 * b + 1] = (uint8_t)(h >> 8);
            }
        }
    }
    return img;
}

/* Elements of A as stored for dtype, from float32 values. */
static void *store_a(og_dtype t, const float *v, size_t count, size_t *bytes)
{
    *bytes = count * og_dtype_bytes(t);
    uint8_t *out = malloc(*bytes + 4);
    cr_assert_not_null(out);
    for (size_t i = 0; i < count; i++) {
        if (t == OG_F32) {
            memcpy(out + 4 * i, &v[i], 4);
        } else {
            uint16_t h = t == OG_F16 ? og_f32_to_f16(v[i], OG_ROUND_NEAREST_EVEN)
                                     : og_f32_to_bf16(v[i], OG_ROUND_NEAREST_EVEN);
            memcpy(out + 2 * i, &h, 2);
        }
    }
    return out;
}

/* A's values as the kernel sees them (rounded to dtype). */
static float a_value(og_dtype t, float v)
{
    if (t == OG_F16)
        return og_f16_to_f32(og_f32_to_f16(v, OG_ROUND_NEAREST_EVEN));
    if (t == OG_BF16)
        return og_bf16_to_f32(og_f32_to_bf16(v, OG_ROUND_NEAREST_EVEN));
    return v;
}

typedef struct qcase {
    og_qweights_format f;
    og_dtype a_type;
    int64_t m, n, k, batch;
    int64_t lda_pad, ldc_pad, a_off, c_off, w_off; /* w_off in 16-byte units */
    int shared_w;                                  /* stride_w 0 */
    float beta, tensor_scale;
    int bias;
    og_activation act;
    const og_params *params; /* the kernel to run, or NULL: og_qgemm_run's choice */
    /* MXFP4: block 1 of row 3 of W scaled by 2^40 (E8M0 167: its weights
     * pass float16's range) and block 0 of row 5 by 2^-127 (E8M0 0). */
    int extreme;
} qcase;

static double act_ref(og_activation a, double x)
{
    if (a == OG_ACTIVATION_RELU)
        return x < 0 ? 0 : x;
    if (a == OG_ACTIVATION_GELU_ERF)
        return 0.5 * x * erfc(-x / sqrt(2.0));
    return x;
}

/* Runs the case on the device and compares every element of C with the
 * float64 reference: |c - ref| <= 2^-17 * sum |a * w| (+ the epilogue's
 * terms), far above float32's error over K terms in practice and far below
 * any wrong weight, scale or row; C outside its M x N blocks must keep its
 * values. Returns the number of wrong elements, the first described in
 * first. */
static size_t case_mismatches(og_context *ctx, const qcase *c, og_mode mode, char *first,
                              size_t len)
{
    size_t wrong = 0;
    const og_qweights_format *f = &c->f;
    layout l = layout_for(f, c->n, c->k);
    og_qweights_layout lib;
    char why[256];
    cr_assert_eq(og_qweights_layout_of(f, c->n, c->k, &lib, why, sizeof why), 0, "%s", why);
    cr_assert_eq(lib.bytes, l.bytes,
                 "the library's layout (%" PRIu64 " bytes) is not the spec's (%" PRIu64 ")",
                 lib.bytes, l.bytes);
    int64_t batch = c->batch ? c->batch : 1, lda = c->k + c->lda_pad, ldc = c->n + c->ldc_pad;
    int64_t experts = c->shared_w ? 1 : batch;
    uint64_t stride_w = c->shared_w ? 0 : l.bytes + 32;
    uint64_t w_bytes = 16 * (uint64_t)c->w_off + (uint64_t)(experts - 1) * stride_w + l.bytes;
    uint8_t *wimg = calloc(1, w_bytes);
    uint8_t **mats = calloc((size_t)experts, sizeof *mats);
    cr_assert(wimg && mats);
    for (int64_t e = 0; e < experts; e++) {
        mats[e] = random_image(f, &l, c->n, c->k);
        if (c->extreme) {
            cr_assert(f->format == OG_QFORMAT_MXFP4 && c->n > 5 && c->k >= 64);
            mats[e][l.scales_at + 3 * l.scale_row + 1] = 167;
            mats[e][l.scales_at + 5 * l.scale_row] = 0;
        }
        memcpy(wimg + 16 * c->w_off + (uint64_t)e * stride_w, mats[e], l.bytes);
    }
    int64_t stride_a = c->m * lda, stride_c = c->m * ldc;
    size_t a_count = (size_t)(c->a_off + batch * stride_a),
           c_count = (size_t)(c->c_off + batch * stride_c);
    float *av = malloc(a_count * 4), *cv = malloc(c_count * 4), *bias = malloc((size_t)c->n * 4);
    cr_assert(av && cv && bias);
    for (size_t i = 0; i < a_count; i++)
        av[i] = a_value(c->a_type, (float)((int)(rnd() % 2001) - 1000) / 256.0f);
    for (size_t i = 0; i < c_count; i++)
        cv[i] = (float)((int)(rnd() % 201) - 100) / 16.0f;
    for (int64_t j = 0; j < c->n; j++)
        bias[j] = (float)((int)(rnd() % 201) - 100) / 32.0f;
    size_t a_bytes;
    void *a_stored = store_a(c->a_type, av, a_count, &a_bytes);
    og_buffer *A = make_buffer(ctx, a_stored, a_bytes), *W = make_buffer(ctx, wimg, w_bytes),
              *C = make_buffer(ctx, cv, c_count * 4),
              *B = c->bias ? make_buffer(ctx, bias, (size_t)c->n * 4) : NULL;
    og_qgemm *q = NULL;
    cr_assert_eq(og_qgemm_create(ctx, c->a_type, f, mode, &q), OG_OK, "%s",
                 og_context_last_error(ctx));
    og_qgemm_args args = {.m = c->m,
                          .n = c->n,
                          .k = c->k,
                          .batch = c->batch,
                          .a = A,
                          .lda = lda,
                          .a_offset = c->a_off,
                          .stride_a = stride_a,
                          .w = W,
                          .w_offset = 16 * c->w_off,
                          .stride_w = (int64_t)stride_w,
                          .tensor_scale = c->tensor_scale,
                          .c = C,
                          .ldc = ldc,
                          .c_offset = c->c_off,
                          .stride_c = stride_c,
                          .beta = c->beta,
                          .bias = B,
                          .activation = c->act};
    og_status st = c->params ? run_qparams(q, ctx, &args, c->params) : og_qgemm_run(q, &args);
    cr_assert_eq(st, OG_OK, "og_qgemm_run: %s", og_context_last_error(ctx));
    float *out = malloc(c_count * 4);
    cr_assert_not_null(out);
    cr_assert_eq(og_buffer_read(C, 0, out, c_count * 4), OG_OK);
    double ts = c->tensor_scale == 0 ? 1 : c->tensor_scale;
    double *wrow = malloc((size_t)c->k * sizeof *wrow);
    cr_assert_not_null(wrow);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t j = 0; j < c->n; j++) {
            const uint8_t *img = mats[c->shared_w ? 0 : b];
            for (int64_t kk = 0; kk < c->k; kk++)
                wrow[kk] = weight(f, &l, img, j, kk, ts);
            for (int64_t i = 0; i < c->m; i++) {
                const float *arow = av + c->a_off + b * stride_a + i * lda;
                double sum = 0, mag = 0;
                for (int64_t kk = 0; kk < c->k; kk++) {
                    sum += (double)arow[kk] * wrow[kk];
                    mag += fabs((double)arow[kk] * wrow[kk]);
                }
                size_t ci = (size_t)(c->c_off + b * stride_c + i * ldc + j);
                double r =
                    sum + (c->beta != 0 ? (double)c->beta * cv[ci] : 0) + (c->bias ? bias[j] : 0);
                double tol =
                    ldexp(mag + fabs((double)c->beta * cv[ci]) + (c->bias ? fabs(bias[j]) : 0),
                          -17) +
                    1e-30;
                r = act_ref(c->act, r);
                if (isnan(r) ? isnan(out[ci]) : fabs(out[ci] - r) <= tol)
                    continue;
                if (wrong++ == 0)
                    snprintf(first, len,
                             "format %d (group %d, scale %d, zero %d), A %s, %" PRId64 "x%" PRId64
                             "x%" PRId64 ": C(%" PRId64 ", %" PRId64 ") of product %" PRId64
                             " is %.9g, the reference %.9g (tolerance %.3g)",
                             (int)f->format, f->group, (int)f->scale, (int)f->zero,
                             og_dtype_name(c->a_type), c->m, c->n, c->k, i, j, b, out[ci], r, tol);
            }
        }
    /* Nothing outside the M x N blocks of C changed. */
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t j = c->n; j < ldc; j++) {
                size_t ci = (size_t)(c->c_off + b * stride_c + i * ldc + j);
                if (memcmp(&out[ci], &cv[ci], 4) != 0 && wrong++ == 0)
                    snprintf(first, len, "C(%" PRId64 ", %" PRId64 ") past N was written", i, j);
            }
    for (int64_t i = 0; i < c->c_off; i++)
        if (memcmp(&out[i], &cv[i], 4) != 0 && wrong++ == 0)
            snprintf(first, len, "C before c_offset was written");
    og_qgemm_destroy(q);
    og_buffer_destroy(A);
    og_buffer_destroy(W);
    og_buffer_destroy(C);
    og_buffer_destroy(B);
    for (int64_t e = 0; e < experts; e++)
        free(mats[e]);
    free(mats);
    free(wimg);
    free(a_stored);
    free(av);
    free(cv);
    free(bias);
    free(out);
    free(wrow);
    return wrong;
}

static void run_case(og_context *ctx, const qcase *c, og_mode mode)
{
    char first[512] = "";
    size_t wrong = case_mismatches(ctx, c, mode, first, sizeof first);
    cr_assert_eq(wrong, 0, "%zu elements of C wrong; the first: %s", wrong, first);
}

static const og_qweights_format formats[] = {
    {OG_QFORMAT_MXFP4, 0, 0, 0},
    {OG_QFORMAT_NVFP4, 0, 0, 0},
    {OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_NONE},
    {OG_QFORMAT_INT4, 64, OG_QSCALE_F16, OG_QZERO_UINT4},
    {OG_QFORMAT_INT4, 128, OG_QSCALE_BF16, OG_QZERO_FLOAT},
    {OG_QFORMAT_INT4, 0, OG_QSCALE_BF16, OG_QZERO_UINT4},
    {OG_QFORMAT_Q8_0, 0, 0, 0},
};
#define N_FORMATS (sizeof formats / sizeof formats[0])

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
    size_t a_count = (size_t)(m * k), c_count = (size_t)(m * n);
    float *a = malloc(a_count * 4), *want = malloc(c_count * 4), *got = malloc(c_count * 4);
    cr_assert(a && want && got);
    for (size_t i = 0; i < a_count; i++)
        a[i] = (float)((int)(rnd() % 2001) - 1000) / 128.0f;
    for (size_t fi = 0; fi < sizeof formats / sizeof formats[0]; fi++) {
        const og_qweights_format *f = &formats[fi];
        layout l = layout_for(f, n, k);
        uint8_t *img = random_image(f, &l, n, k);
        og_dtype at = fi % 2 ? OG_F16 : OG_F32;
        size_t a_bytes;
        void *a_stored = store_a(at, a, a_count, &a_bytes);
        og_buffer *A = make_buffer(ctx, a_stored, a_bytes), *W = make_buffer(ctx, img, l.bytes), *C = NULL;
        cr_assert_eq(og_buffer_create(ctx, c_count * 4, &C), OG_OK);
        og_qgemm *q = NULL;
        cr_assert_eq(og_qgemm_create(ctx, at, f, OG_MODE_FAST, &q), OG_OK);
        og_qgemm_args args = {.m = m, .n = n, .k = k, .a = A, .lda = k, .w = W, .c = C, .ldc = n};
        og_params p = og_params_qdecode(m);
        p.cols = 4;
        p.slices = 8;
        p.vec = fi % 2 ? 1 : 4;
        p.split = fi % 4 >= 2 ? 2 : OG_SPLIT_RULE;
        for (int unroll = 1; unroll <= 4; unroll *= 2) {
            p.unroll = unroll;
            cr_assert_eq(run_qparams(q, ctx, &args, &p), OG_OK, "%s", og_context_last_error(ctx));
            cr_assert_eq(og_buffer_read(C, 0, unroll == 1 ? want : got, c_count * 4), OG_OK);
            char text[128];
            og_params_format(&p, text, sizeof text);
            cr_expect(unroll == 1 || memcmp(want, got, c_count * 4) == 0,
                      "format %zu, A %s, %s: the bits differ from one unit a trip", fi, fi % 2 ? "f16" : "f32", text);
        }
        og_qgemm_destroy(q);
        og_buffer_destroy(A);
        og_buffer_destroy(W);
        og_buffer_destroy(C);
        free(a_stored);
        free(img);
    }
    free(a);
    free(want);
    free(got);
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
        {"next block's scale", "og_byte(scales, scale_row + ${unit}))",
         "og_byte(scales, scale_row + ${unit} + 1u))", 0},
        {"zero point ignored",
         "${F}z = ${f32}((og_byte(zeros, zero_row + b / 2u) >> ((b & 1u) * 4u)) & 15u);",
         "${F}z = 8.0;", 3},
        {"a slice left out", "partial[${r * COLS * SLICES}u + t + h]; partial",
         "partial[${r * COLS * SLICES}u + t + h] * 0.0; partial", 6},
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
