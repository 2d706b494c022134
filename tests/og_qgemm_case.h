/* The cases of the low-bit weight product tests (test_qgemm_results.c,
 * test_qgemm_prefill.c, test_qgemm_order.c): a float64 reference that
 * decodes the weights' image from onegpu_formats.h's table with its own code
 * (not og_qweights_decode), random images and operands, and one product run
 * and compared against it (case_mismatches, run_case) over the formats the
 * tests loop over; kernels that must agree bit for bit (same_bits). */
#ifndef OG_QGEMM_CASE_H
#define OG_QGEMM_CASE_H

#include <math.h>
#include <unistd.h>

#include "og_lane.h"
#include "og_text.h"

/* ---- the reference: the table of onegpu_formats.h, in double ---- */

static inline double e2m1(unsigned c)
{
    static const double mag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    return (c & 8) ? -mag[c & 7] : mag[c & 7];
}

static inline double half_value(unsigned h, int bf16)
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

static inline double e4m3(unsigned s)
{
    unsigned e = (s >> 3) & 15, m = s & 7;
    if (e == 15 && m == 7)
        return NAN;
    double v = e == 0 ? ldexp(m, -9) : ldexp(8 + m, (int)e - 10);
    return (s & 0x80) ? -v : v;
}

typedef struct layout {
    int64_t k, block, bits, scale_bytes;
    uint64_t code_row, scales_at, scale_row, zeros_at, zero_row, bytes;
} layout;

static inline uint64_t up16(uint64_t v)
{
    return (v + 15) / 16 * 16;
}

/* The layout as the header specifies it, computed here from the spec. */
static inline layout layout_for(const og_qweights_format *f, int64_t n, int64_t k)
{
    layout l = {0};
    int kquant = f->format == OG_QFORMAT_Q4_K || f->format == OG_QFORMAT_Q6_K;
    l.k = k;
    l.bits = f->format == OG_QFORMAT_Q8_0 ? 8 : f->format == OG_QFORMAT_Q6_K ? 6 : 4;
    l.block = f->format == OG_QFORMAT_NVFP4  ? 16
              : f->format == OG_QFORMAT_INT4 ? (f->group ? f->group : k)
              : kquant                       ? 256
                                             : 32;
    l.scale_bytes = f->format == OG_QFORMAT_Q4_K   ? 16
                    : f->format == OG_QFORMAT_Q6_K ? 18
                    : f->format == OG_QFORMAT_INT4 || f->format == OG_QFORMAT_Q8_0 ? 2
                                                                                  : 1;
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

static inline unsigned u16_at(const uint8_t *p)
{
    return (unsigned)p[0] | (unsigned)p[1] << 8;
}

/* Weight (j, k) of the image, exactly, in double. */
static inline double weight(const og_qweights_format *f, const layout *l, const uint8_t *img, int64_t j,
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
    case OG_QFORMAT_Q4_K: {
        /* 16 bytes a super-block: d, dmin, then the 6-bit scales and mins
         * of its 8 sub-blocks as the header packs them. */
        const uint8_t *h = scales + 16 * b, *p = h + 4;
        int s = (int)(k / 32 % 8);
        unsigned sc = s < 4 ? p[s] & 63 : (p[s + 4] & 15) | (p[s - 4] >> 6) << 4;
        unsigned m = s < 4 ? p[s + 4] & 63 : (p[s + 4] >> 4) | (p[s] >> 6) << 4;
        return half_value(u16_at(h), 0) * sc * q - half_value(u16_at(h + 2), 0) * m;
    }
    case OG_QFORMAT_Q6_K: {
        /* The high 2 bits at byte K / 2 + k / 4; int8 sub-block scales, then the d's. */
        unsigned hi = (codes[l->k / 2 + k / 4] >> (2 * (k % 4))) & 3;
        double d = half_value(u16_at(scales + 16 * (l->k / 256) + 2 * b), 0);
        return d * (int8_t)scales[k / 16] * ((double)(q | hi << 4) - 32);
    }
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
static inline uint32_t rnd(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

/* An image of random codes with scales in a range where no product
 * overflows (scale bytes: E8M0 around 2^0, E4M3 normal, float16 around 1/64). */
static inline uint8_t *random_image(const og_qweights_format *f, const layout *l, int64_t n, int64_t k)
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
            if (l->scale_bytes > 2) {
                /* K-quants: float16 d (and Q4_K's dmin) around 2^-8, random
                 * 6-bit (Q4_K) or int8 (Q6_K) sub-block scales. */
                int q6 = f->format == OG_QFORMAT_Q6_K;
                uint8_t *sub = scales + (q6 ? 16 : 16 * b + 4);
                for (int i = 0; i < (q6 ? 16 : 12); i++)
                    sub[q6 ? 16 * b + i : i] = (uint8_t)rnd();
                uint8_t *d = q6 ? scales + 16 * (k / 256) + 2 * b : scales + 16 * b;
                for (int i = 0; i < (q6 ? 1 : 2); i++) {
                    unsigned h = (q6 ? 0x1800u : 0x1c00u) + rnd() % 0x400u;
                    d[2 * i] = (uint8_t)h;
                    d[2 * i + 1] = (uint8_t)(h >> 8);
                }
                continue;
            }
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
static inline void *store_a(og_dtype t, const float *v, size_t count, size_t *bytes)
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
static inline float a_value(og_dtype t, float v)
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
    /* K-quants: a planted fault, sub-block 0's scale of row 0 changed by one
     * in the image the device reads (the reference keeps it). */
    int plant;
    /* A of integers in [-127, 127] with one of magnitude 127 in each block
     * of 32 along k: the integer path's int8 activations are then A itself
     * (scale 1), so its only error is float32's, within the float bound. */
    int exact_a;
} qcase;

/* Whether the case runs the integer path (params dot=1 or 2), whose bound
 * adds the activations' quantisation (docs/decode.md). */
static inline int int8_path(const qcase *c)
{
    return c->params && c->params->dot != 0;
}

static inline double act_ref(og_activation a, double x)
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
 * any wrong weight, scale or row; the integer path on A that is not
 * exact_a adds its quantisation bound, sum over blocks of 32 of
 * (amax / 254) * (1 + 2^-8) * sum |w| (each int8 value within half a step
 * of x / (amax / 127)); C outside its M x N blocks must keep its values.
 * Returns the number of wrong elements, the first described in first. */
static inline size_t case_mismatches(og_context *ctx, const qcase *c, og_mode mode, char *first,
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
    if (c->plant) {
        cr_assert(f->format == OG_QFORMAT_Q4_K || f->format == OG_QFORMAT_Q6_K);
        wimg[16 * c->w_off + l.scales_at + (f->format == OG_QFORMAT_Q4_K ? 4 : 0)] ^= 1;
    }
    int64_t stride_a = c->m * lda, stride_c = c->m * ldc;
    size_t a_count = (size_t)(c->a_off + batch * stride_a),
           c_count = (size_t)(c->c_off + batch * stride_c);
    float *av = malloc(a_count * 4), *cv = malloc(c_count * 4), *bias = malloc((size_t)c->n * 4);
    cr_assert(av && cv && bias);
    for (size_t i = 0; i < a_count; i++)
        av[i] = a_value(c->a_type, c->exact_a ? (float)((int)(rnd() % 255) - 127)
                                              : (float)((int)(rnd() % 2001) - 1000) / 256.0f);
    if (c->exact_a)
        for (size_t i = (size_t)c->a_off; i < a_count; i++)
            if ((i - (size_t)c->a_off) % (size_t)lda % 32 == 0)
                av[i] = rnd() % 2 ? 127.0f : -127.0f;
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
                double sum = 0, mag = 0, quant = 0;
                for (int64_t kk = 0; kk < c->k; kk++) {
                    sum += (double)arow[kk] * wrow[kk];
                    mag += fabs((double)arow[kk] * wrow[kk]);
                }
                for (int64_t u = 0; int8_path(c) && !c->exact_a && u < c->k; u += 32) {
                    double amax = 0, wsum = 0;
                    for (int64_t kk = u; kk < u + 32; kk++) {
                        amax = fmax(amax, fabs((double)arow[kk]));
                        wsum += fabs(wrow[kk]);
                    }
                    quant += amax / 254 * (1 + ldexp(1, -8)) * wsum;
                }
                size_t ci = (size_t)(c->c_off + b * stride_c + i * ldc + j);
                double r =
                    sum + (c->beta != 0 ? (double)c->beta * cv[ci] : 0) + (c->bias ? bias[j] : 0);
                double tol =
                    ldexp(mag + fabs((double)c->beta * cv[ci]) + (c->bias ? fabs(bias[j]) : 0),
                          -17) +
                    quant + 1e-30;
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

static inline void run_case(og_context *ctx, const qcase *c, og_mode mode)
{
    char first[512] = "";
    size_t wrong = case_mismatches(ctx, c, mode, first, sizeof first);
    cr_assert_eq(wrong, 0, "%zu elements of C wrong; the first: %s", wrong, first);
}

/* Runs format f with A of type at (m x k from a) on each of the n
 * parameter sets and expects the bits of the first from every other; with
 * texel set, also that the weights were read through texel views. */
static inline void same_bits(og_context *ctx, const og_qweights_format *f, og_dtype at,
                             const float *a, int64_t m, int64_t n, int64_t k, const og_params *sets,
                             size_t count, int texel)
{
    char name[32] = "?";
    og_qweights_format_name(f, name, sizeof name);
    size_t a_count = (size_t)(m * k), c_count = (size_t)(m * n);
    float *want = malloc(c_count * 4), *got = malloc(c_count * 4);
    cr_assert(want && got);
    layout l = layout_for(f, n, k);
    uint8_t *img = random_image(f, &l, n, k);
    size_t a_bytes;
    void *a_stored = store_a(at, a, a_count, &a_bytes);
    og_buffer *A = make_buffer(ctx, a_stored, a_bytes), *W = make_buffer(ctx, img, l.bytes), *C = NULL;
    cr_assert_eq(og_buffer_create(ctx, c_count * 4, &C), OG_OK);
    og_qgemm *q = NULL;
    cr_assert_eq(og_qgemm_create(ctx, at, f, OG_MODE_FAST, &q), OG_OK);
    og_qgemm_args args = {.m = m, .n = n, .k = k, .a = A, .lda = k, .w = W, .c = C, .ldc = n};
    for (size_t i = 0; i < count; i++) {
        char text[128];
        og_params_format(&sets[i], text, sizeof text);
        cr_assert_eq(run_qparams(q, ctx, &args, &sets[i]), OG_OK, "%s: %s", text,
                     og_context_last_error(ctx));
        cr_assert_eq(og_buffer_read(C, 0, i ? got : want, c_count * 4), OG_OK);
        cr_expect(i == 0 || memcmp(want, got, c_count * 4) == 0,
                  "%s, A %s, %s: the bits differ from the first kernel's", name,
                  og_dtype_name(at), text);
    }
    cr_expect(!texel || (W->texels[0] != VK_NULL_HANDLE &&
                         (sets[count - 1].vec == 1 || W->texels[2] != VK_NULL_HANDLE)),
              "%s: the weights were not read through texel views", name);
    og_qgemm_destroy(q);
    og_buffer_destroy(A);
    og_buffer_destroy(W);
    og_buffer_destroy(C);
    free(a_stored);
    free(img);
    free(want);
    free(got);
}

/* Random A of count values in [-1000, 1000] / scale. */
static inline float *random_a(size_t count, float scale)
{
    float *a = malloc(count * 4);
    cr_assert(a);
    for (size_t i = 0; i < count; i++)
        a[i] = (float)((int)(rnd() % 2001) - 1000) / scale;
    return a;
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
/* GGUF's K-quants, whose K is a multiple of 256 (test_qgemm_kquants.c). */
static const og_qweights_format kquant_formats[] = {
    {OG_QFORMAT_Q4_K, 0, 0, 0},
    {OG_QFORMAT_Q6_K, 0, 0, 0},
};
#define N_FORMATS (sizeof formats / sizeof formats[0])

#endif /* OG_QGEMM_CASE_H */
