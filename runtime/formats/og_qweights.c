/* Low-bit weight matrices on the host (onegpu_formats.h, "Low-bit weight
 * matrices"): the layout, the reference decoder of the kernels, an encoder
 * for tests and benchmarks, and the packers from the orderings models ship
 * in (GGUF, transformers' MXFP4 planes, NVFP4, ONNX Runtime's MatMulNBits).
 *
 * Pure C, no Vulkan, no state. Sizes are 64-bit and checked against 2^62
 * before any product is formed; every refusal says which dimension and value.
 * Values come from og_formats.c's converters, so a weight is decoded by the
 * same code as a lone element of its format. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "onegpu_formats.h"

/* The largest image: 2^62 bytes. */
#define IMAGE_MAX ((uint64_t)1 << 62)

#if defined(__GNUC__)
#define OG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define OG_PRINTF(f, a)
#endif

static int fail(char *why, size_t len, const char *fmt, ...) OG_PRINTF(3, 4);

/* Writes the reason into why (when there is room) and returns -1. */
static int fail(char *why, size_t len, const char *fmt, ...)
{
    if (why && len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static const char *format_name(og_qformat f)
{
    switch (f) {
    case OG_QFORMAT_MXFP4:
        return "MXFP4";
    case OG_QFORMAT_NVFP4:
        return "NVFP4";
    case OG_QFORMAT_INT4:
        return "INT4";
    case OG_QFORMAT_Q4_K:
        return "Q4_K";
    case OG_QFORMAT_Q6_K:
        return "Q6_K";
    default:
        return "Q8_0";
    }
}

static uint64_t align16(uint64_t v)
{
    return (v + 15) & ~(uint64_t)15;
}

int og_qweights_layout_of(const og_qweights_format *f, int64_t n, int64_t k,
                          og_qweights_layout *out, char *why, size_t len)
{
    if (!f || !out)
        return fail(why, len, "qweights: no %s (NULL)", f ? "layout" : "format");
    switch (f->format) {
    case OG_QFORMAT_MXFP4:
    case OG_QFORMAT_NVFP4:
    case OG_QFORMAT_INT4:
    case OG_QFORMAT_Q8_0:
    case OG_QFORMAT_Q4_K:
    case OG_QFORMAT_Q6_K:
        break;
    default:
        return fail(why, len, "qweights: format (%d) is unknown", (int)f->format);
    }
    if (f->format != OG_QFORMAT_INT4) {
        if (f->group != 0 || f->scale != 0 || f->zero != 0)
            return fail(why, len,
                        "qweights: group (%d), scale (%d) and zero (%d) are INT4's and must be 0 "
                        "for %s",
                        f->group, (int)f->scale, (int)f->zero, format_name(f->format));
    } else {
        if (f->scale != OG_QSCALE_F16 && f->scale != OG_QSCALE_BF16)
            return fail(why, len, "qweights: INT4 scale (%d) is unknown (0 float16, 1 bfloat16)",
                        (int)f->scale);
        if (f->zero != OG_QZERO_NONE && f->zero != OG_QZERO_UINT4 && f->zero != OG_QZERO_FLOAT)
            return fail(why, len, "qweights: INT4 zero (%d) is unknown (0 none, 1 uint4, 2 float)",
                        (int)f->zero);
        if (f->group != 0 && f->group != 32 && f->group != 64 && f->group != 128)
            return fail(why, len, "qweights: INT4 group (%d) is not 0 (per channel), 32, 64 or 128",
                        f->group);
    }
    if (n < 1)
        return fail(why, len, "qweights: N (%" PRId64 ") is below 1", n);
    if (k < 1)
        return fail(why, len, "qweights: K (%" PRId64 ") is below 1", k);
    if (k % 32 != 0)
        return fail(why, len, "qweights: K (%" PRId64 ") is not a multiple of 32", k);
    if (f->format == OG_QFORMAT_INT4 && f->group != 0 && k % f->group != 0)
        return fail(why, len, "qweights: K (%" PRId64 ") is not a multiple of the INT4 group (%d)",
                    k, f->group);
    if ((f->format == OG_QFORMAT_Q4_K || f->format == OG_QFORMAT_Q6_K) && k % OG_QK_K != 0)
        return fail(why, len, "qweights: K (%" PRId64 ") is not a multiple of %s's super-block (%d)",
                    k, format_name(f->format), OG_QK_K);
    if ((uint64_t)k > IMAGE_MAX)
        return fail(why, len, "qweights: K (%" PRId64 ") makes a row past 2^62 bytes", k);

    /* Each format's block (0: INT4's group), code bits and bytes of one
     * block's scales. */
    static const struct {
        int64_t block;
        int code_bits, scale_bytes;
    } kinds[] = {[OG_QFORMAT_MXFP4] = {OG_MX_BLOCK, 4, 1}, [OG_QFORMAT_NVFP4] = {OG_NVFP4_BLOCK, 4, 1},
                 [OG_QFORMAT_INT4] = {0, 4, 2},           [OG_QFORMAT_Q8_0] = {32, 8, 2},
                 [OG_QFORMAT_Q4_K] = {OG_QK_K, 4, 16},    [OG_QFORMAT_Q6_K] = {OG_QK_K, 6, 18}};
    og_qweights_layout l;
    memset(&l, 0, sizeof l);
    l.block = kinds[f->format].block ? kinds[f->format].block : f->group ? f->group : k;
    l.code_bits = kinds[f->format].code_bits;
    l.scale_bytes = kinds[f->format].scale_bytes;
    l.blocks = k / l.block;
    /* K is a multiple of 32 (of 256 for 6-bit codes), so a row of codes is
     * whole 16-byte lines. */
    l.code_row_bytes = (uint64_t)k * (uint64_t)l.code_bits / 8;
    l.scale_row_bytes = align16((uint64_t)l.blocks * (uint64_t)l.scale_bytes);
    if (f->format == OG_QFORMAT_INT4 && f->zero == OG_QZERO_UINT4)
        l.zero_row_bytes = align16(((uint64_t)l.blocks + 1) / 2);
    else if (f->format == OG_QFORMAT_INT4 && f->zero == OG_QZERO_FLOAT)
        l.zero_row_bytes = align16((uint64_t)l.blocks * 2);
    /* Each term is at most about K bytes (K <= 2^62), so the sum fits. */
    uint64_t row = l.code_row_bytes + l.scale_row_bytes + l.zero_row_bytes;
    if (row > IMAGE_MAX / (uint64_t)n)
        return fail(why, len,
                    "qweights: N (%" PRId64 ") x K (%" PRId64 ") of %s needs %" PRIu64
                    " bytes a row, an image past 2^62 bytes",
                    n, k, format_name(f->format), row);
    l.scales_at = (uint64_t)n * l.code_row_bytes;
    l.zeros_at = l.scales_at + (uint64_t)n * l.scale_row_bytes;
    l.bytes = l.zeros_at + (uint64_t)n * l.zero_row_bytes;
    *out = l;
    return 0;
}

/* The layout of an n x k matrix whose image (and, with floats, its n x k
 * float32 values) must be addressable here. */
static int layout_in_memory(const og_qweights_format *f, int64_t n, int64_t k, int floats,
                            og_qweights_layout *l, char *why, size_t len)
{
    if (og_qweights_layout_of(f, n, k, l, why, len) != 0)
        return -1;
    /* n * k < 2 * bytes <= 2^63: the product cannot overflow. */
    uint64_t values = (uint64_t)n * (uint64_t)k;
    if (l->bytes > SIZE_MAX || (floats && values > SIZE_MAX / sizeof(float)))
        return fail(
            why, len,
            "qweights: N (%" PRId64 ") x K (%" PRId64 ") does not fit in this address space", n, k);
    return 0;
}

static unsigned get4(const uint8_t *row, uint64_t i)
{
    return (unsigned)(row[i / 2] >> (i % 2 * 4)) & 0xF;
}

/* ORs code q into a zeroed nibble. */
static void put4(uint8_t *row, uint64_t i, unsigned q)
{
    row[i / 2] |= (uint8_t)((q & 0xF) << (i % 2 * 4));
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static float half_value(uint16_t h, og_qscale t)
{
    return t == OG_QSCALE_BF16 ? og_bf16_to_f32(h) : og_f16_to_f32(h);
}

static uint16_t half_code(float x, og_qscale t)
{
    return t == OG_QSCALE_BF16 ? og_f32_to_bf16(x, OG_ROUND_NEAREST_EVEN)
                               : og_f32_to_f16(x, OG_ROUND_NEAREST_EVEN);
}

/* The type's largest finite value and its quiet NaN. */
static uint16_t half_max(og_qscale t)
{
    return t == OG_QSCALE_BF16 ? 0x7F7F : 0x7BFF;
}

static uint16_t half_nan(og_qscale t)
{
    return t == OG_QSCALE_BF16 ? 0x7FC0 : 0x7E00;
}

/* One row of each plane. */
typedef struct row_planes {
    uint8_t *codes, *scales, *zeros;
} row_planes;

static row_planes planes_of(const og_qweights_layout *l, uint8_t *image, int64_t j)
{
    row_planes r;
    r.codes = image + (size_t)((uint64_t)j * l->code_row_bytes);
    r.scales = image + (size_t)(l->scales_at + (uint64_t)j * l->scale_row_bytes);
    r.zeros = image + (size_t)(l->zeros_at + (uint64_t)j * l->zero_row_bytes);
    return r;
}

/* ---- decoding ---- */

/* INT4 group b's zero point. */
static float int4_zero(const og_qweights_format *f, const uint8_t *zeros, int64_t b)
{
    switch (f->zero) {
    case OG_QZERO_UINT4:
        return (float)get4(zeros, (uint64_t)b);
    case OG_QZERO_FLOAT:
        return half_value(get16(zeros + 2 * b), f->scale);
    default:
        return 8.0f;
    }
}

/* Sub-block s's 6-bit scale and min from a Q4_K head's 12 bytes (ggml's
 * get_scale_min_k4). */
static void q4_k_scale_min(const uint8_t *q, int s, unsigned *sc, unsigned *m)
{
    if (s < 4) {
        *sc = q[s] & 63u;
        *m = q[s + 4] & 63u;
    } else {
        *sc = (q[s + 4] & 15u) | (unsigned)(q[s - 4] >> 6) << 4;
        *m = (unsigned)(q[s + 4] >> 4) | (unsigned)(q[s] >> 6) << 4;
    }
}

/* The 6-bit code k of a Q6_K row (its low nibble, then its high bits at
 * byte K / 2), as 0..63. */
static unsigned get6(const uint8_t *row, int64_t k, uint64_t i)
{
    unsigned hi = (unsigned)(row[(uint64_t)k / 2 + i / 4] >> (i % 4 * 2)) & 3u;
    return get4(row, i) | hi << 4;
}

/* One Q4_K super-block at weight first: head is its 16 scale bytes. d * sc
 * and dmin * m are exact; (d * sc) * q too, so the difference is the one
 * rounding. */
static void decode_q4_k(const uint8_t *codes, const uint8_t *head, uint64_t first, float *o)
{
    float d = og_f16_to_f32(get16(head)), dmin = og_f16_to_f32(get16(head + 2));
    for (int s = 0; s < 8; s++) {
        unsigned sc, m;
        q4_k_scale_min(head + 4, s, &sc, &m);
        float d1 = d * (float)sc, m1 = dmin * (float)m;
        for (int i = 0; i < 32; i++)
            o[32 * s + i] = d1 * (float)get4(codes, first + (uint64_t)(32 * s + i)) - m1;
    }
}

/* Q6_K super-block b of a row of K weights: d * sc is exact, its product
 * with q - 32 the one rounding. */
static void decode_q6_k(const uint8_t *codes, const uint8_t *scales, int64_t blocks, int64_t k,
                        int64_t b, float *o)
{
    float d = og_f16_to_f32(get16(scales + 16 * blocks + 2 * b));
    for (int s = 0; s < 16; s++) {
        float ds = d * (float)(int8_t)scales[16 * b + s];
        for (int i = 0; i < 16; i++) {
            uint64_t at = (uint64_t)(OG_QK_K * b + 16 * s + i);
            o[16 * s + i] = ds * (float)((int)get6(codes, k, at) - 32);
        }
    }
}

int og_qweights_decode(const og_qweights_format *f, int64_t n, int64_t k, const uint8_t *image,
                       float tensor_scale, float *w, char *why, size_t len)
{
    og_qweights_layout l;
    if (layout_in_memory(f, n, k, 1, &l, why, len) != 0)
        return -1;
    if (!image || !w)
        return fail(why, len, "qweights: no %s (NULL)", image ? "output" : "image");
    for (int64_t j = 0; j < n; j++) {
        row_planes r = planes_of(&l, (uint8_t *)image, j);
        float *out = w + (size_t)((uint64_t)j * (uint64_t)k);
        for (int64_t b = 0; b < l.blocks; b++) {
            float *o = out + b * l.block;
            uint64_t first = (uint64_t)(b * l.block);
            switch (f->format) {
            case OG_QFORMAT_MXFP4: {
                /* A power of two times a 2-bit significand: exact, or +-Inf,
                 * or NaN from scale 0xFF. */
                float x = og_e8m0_to_f32(r.scales[b]);
                for (int64_t i = 0; i < l.block; i++)
                    o[i] = og_e2m1_to_f32((uint8_t)get4(r.codes, first + (uint64_t)i)) * x;
                break;
            }
            case OG_QFORMAT_NVFP4:
                /* The block's 8 bytes are og_nvfp4_decode's packed array. */
                og_nvfp4_decode(tensor_scale, r.scales[b], r.codes + first / 2, o);
                break;
            case OG_QFORMAT_INT4: {
                float s = half_value(get16(r.scales + 2 * b), f->scale);
                float z = int4_zero(f, r.zeros, b);
                for (int64_t i = 0; i < l.block; i++) {
                    /* Two float32 roundings, as the kernels do; the first
                     * is exact unless z has a fraction. */
                    float d = (float)get4(r.codes, first + (uint64_t)i) - z;
                    o[i] = d * s;
                }
                break;
            }
            case OG_QFORMAT_Q4_K:
                decode_q4_k(r.codes, r.scales + 16 * b, first, o);
                break;
            case OG_QFORMAT_Q6_K:
                decode_q6_k(r.codes, r.scales, l.blocks, k, b, o);
                break;
            default: {
                float s = og_f16_to_f32(get16(r.scales + 2 * b));
                for (int64_t i = 0; i < l.block; i++)
                    o[i] = (float)(int8_t)r.codes[first + (uint64_t)i] * s;
            }
            }
        }
    }
    return 0;
}

/* ---- encoding ---- */

/* Round to nearest, ties to even, whatever the floating-point environment's
 * rounding mode; t is finite. */
static double round_even(double t)
{
    double r = floor(t), d = t - r;
    if (d > 0.5 || (d == 0.5 && fmod(r, 2.0) != 0))
        r += 1;
    return r;
}

static unsigned clamp15(double t)
{
    return t < 0 ? 0u : t > 15 ? 15u : (unsigned)t;
}

/* One INT4 group of count values: its scale code, zero point (as a uint4
 * and as a float code of the scale's type) and codes. */
static void encode_int4(const og_qweights_format *f, const float *x, int64_t count, uint8_t *codes,
                        uint64_t first, uint16_t *scale, unsigned *zero)
{
    float lo = 0, hi = 0;
    int finite = 1;
    for (int64_t i = 0; i < count; i++) {
        if (!isfinite(x[i]))
            finite = 0;
        else if (x[i] < lo)
            lo = x[i];
        else if (x[i] > hi)
            hi = x[i];
    }
    unsigned z = 8;
    if (!finite) {
        /* NaN scale: the group decodes to NaN, as MX and NVFP4 blocks do. */
        *scale = half_nan(f->scale);
        *zero = z;
        for (int64_t i = 0; i < count; i++)
            put4(codes, first + (uint64_t)i, z);
        return;
    }
    int symmetric = f->zero == OG_QZERO_NONE;
    /* amax / 7 or (max - min) / 15, in double, then float32, then the scale's type. */
    double want = symmetric ? fmax(-(double)lo, (double)hi) / 7.0 : ((double)hi - lo) / 15.0;
    uint16_t sc = half_code((float)want, f->scale);
    if (isinf(half_value(sc, f->scale)))
        sc = half_max(f->scale);
    double s = half_value(sc, f->scale);
    if (!symmetric && s > 0)
        z = clamp15(round_even(-(double)lo / s));
    for (int64_t i = 0; i < count; i++) {
        unsigned q = z;
        if (s > 0) {
            double t = (double)x[i] / s;
            /* |t| is about 16 at most; the clamp guards a flushed scale. */
            t = t < -64 ? -64 : t > 64 ? 64 : t;
            q = clamp15(round_even(t) + z);
        }
        put4(codes, first + (uint64_t)i, q);
    }
    *scale = sc;
    *zero = z;
}

/* One Q8_0 block as ggml's quantize_row_q8_0_ref writes it: d = amax / 127
 * and id = 1 / d in float32, the stored scale d rounded to float16 (nearest
 * even), q = roundf(x * id) (ties away from zero). */
static void encode_q8_0(const float *x, uint8_t *codes, uint8_t *scale)
{
    float amax = 0;
    for (int i = 0; i < 32; i++) {
        if (!isfinite(x[i])) {
            put16(scale, 0x7E00);
            memset(codes, 0, 32);
            return;
        }
        amax = fmaxf(amax, fabsf(x[i]));
    }
    float d = amax / 127.0f;
    float id = d != 0 ? 1.0f / d : 0.0f;
    put16(scale, og_f32_to_f16(d, OG_ROUND_NEAREST_EVEN));
    for (int i = 0; i < 32; i++) {
        float t = x[i] * id;
        codes[i] = (uint8_t)(int8_t)roundf(t);
    }
}

/* A non-negative float32 as a float16 code, nearest even, saturated to the
 * largest finite value. */
static uint16_t f16_saturated(double v)
{
    uint16_t h = og_f32_to_f16((float)v, OG_ROUND_NEAREST_EVEN);
    return (h & 0x7FFF) >= 0x7C00 ? 0x7BFF : h;
}

/* t / u rounded to nearest even and clamped to lo..hi; 0 where u is 0. */
static int quantise(double t, double u, int lo, int hi)
{
    if (u == 0)
        return 0;
    double q = t / u;
    q = q < lo ? lo : q > hi ? hi : round_even(q);
    return (int)q;
}

static int finite_block(const float *x, int count)
{
    for (int i = 0; i < count; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

/* One Q4_K super-block of 256 weights (onegpu_formats.h's min-max rule):
 * the codes from weight first of the row, the 16 head bytes. A block
 * holding a NaN or an infinity gets NaN d and dmin and zero codes. */
static void encode_q4_k(const float *x, uint8_t *codes, uint64_t first, uint8_t *head)
{
    if (!finite_block(x, OG_QK_K)) {
        put16(head, 0x7E00);
        put16(head + 2, 0x7E00);
        return;
    }
    double scale[8], mn[8], smax = 0, mmax = 0;
    for (int s = 0; s < 8; s++) {
        double lo = 0, hi = -INFINITY;
        for (int i = 0; i < 32; i++) {
            lo = fmin(lo, x[32 * s + i]);
            hi = fmax(hi, x[32 * s + i]);
        }
        scale[s] = (hi - lo) / 15, mn[s] = -lo;
        smax = fmax(smax, scale[s]), mmax = fmax(mmax, mn[s]);
    }
    uint16_t dh = f16_saturated(smax / 63), mh = f16_saturated(mmax / 63);
    float d = og_f16_to_f32(dh), dmin = og_f16_to_f32(mh);
    unsigned sc[8], m[8];
    for (int s = 0; s < 8; s++) {
        sc[s] = (unsigned)quantise(scale[s], d, 0, 63);
        m[s] = (unsigned)quantise(mn[s], dmin, 0, 63);
        float d1 = d * (float)sc[s], m1 = dmin * (float)m[s];
        for (int i = 0; i < 32; i++)
            put4(codes, first + (uint64_t)(32 * s + i),
                 (unsigned)quantise((double)x[32 * s + i] + m1, d1, 0, 15));
    }
    put16(head, dh);
    put16(head + 2, mh);
    /* get_scale_min_k4's packing: the low 6 bits of sub-blocks 0-3 in bytes
     * 0-3 (scales) and 4-7 (mins), sub-blocks 4-7's low nibbles in bytes
     * 8-11 and their high 2 bits on top of bytes 0-7. */
    uint8_t *q = head + 4;
    for (int s = 0; s < 4; s++) {
        q[s] = (uint8_t)(sc[s] | (sc[s + 4] >> 4) << 6);
        q[s + 4] = (uint8_t)(m[s] | (m[s + 4] >> 4) << 6);
        q[s + 8] = (uint8_t)((sc[s + 4] & 15) | (m[s + 4] & 15) << 4);
    }
}

/* Q6_K super-block b of a row of K weights into its code and scale rows;
 * a block holding a NaN or an infinity gets NaN d and codes 32 (zero). */
static void encode_q6_k(const float *x, uint8_t *codes, uint8_t *scales, int64_t blocks,
                        int64_t k, int64_t b)
{
    int finite = finite_block(x, OG_QK_K);
    double scale[16], smax = 0;
    for (int s = 0; s < 16 && finite; s++) {
        double amax = 0;
        for (int i = 0; i < 16; i++)
            amax = fmax(amax, fabs(x[16 * s + i]));
        scale[s] = amax / 31;
        smax = fmax(smax, scale[s]);
    }
    uint16_t dh = finite ? f16_saturated(smax / 127) : 0x7E00;
    float d = og_f16_to_f32(dh);
    put16(scales + 16 * blocks + 2 * b, dh);
    for (int s = 0; s < 16; s++) {
        int sc = finite ? quantise(scale[s], d, -128, 127) : 0;
        scales[16 * b + s] = (uint8_t)(int8_t)sc;
        float ds = d * (float)sc;
        for (int i = 0; i < 16; i++) {
            uint64_t at = (uint64_t)(OG_QK_K * b + 16 * s + i);
            unsigned q = (unsigned)(finite ? quantise(x[16 * s + i], ds, -32, 31) + 32 : 32);
            put4(codes, at, q & 15u);
            codes[(uint64_t)k / 2 + at / 4] |= (uint8_t)((q >> 4) << (at % 4 * 2));
        }
    }
}

int og_qweights_encode(const og_qweights_format *f, int64_t n, int64_t k, const float *w,
                       float tensor_scale, uint8_t *image, char *why, size_t len)
{
    og_qweights_layout l;
    if (layout_in_memory(f, n, k, 1, &l, why, len) != 0)
        return -1;
    if (!w || !image)
        return fail(why, len, "qweights: no %s (NULL)", w ? "image" : "input");
    memset(image, 0, (size_t)l.bytes);
    for (int64_t j = 0; j < n; j++) {
        row_planes r = planes_of(&l, image, j);
        const float *in = w + (size_t)((uint64_t)j * (uint64_t)k);
        for (int64_t b = 0; b < l.blocks; b++) {
            const float *x = in + b * l.block;
            uint64_t first = (uint64_t)(b * l.block);
            switch (f->format) {
            case OG_QFORMAT_MXFP4: {
                uint8_t codes[OG_MX_BLOCK];
                og_mx_encode(OG_MX_E2M1, x, &r.scales[b], codes);
                for (int i = 0; i < OG_MX_BLOCK; i++)
                    put4(r.codes, first + (uint64_t)i, codes[i]);
                break;
            }
            case OG_QFORMAT_NVFP4:
                og_nvfp4_encode(x, tensor_scale, &r.scales[b], r.codes + first / 2);
                break;
            case OG_QFORMAT_INT4: {
                uint16_t s;
                unsigned z;
                encode_int4(f, x, l.block, r.codes, first, &s, &z);
                put16(r.scales + 2 * b, s);
                if (f->zero == OG_QZERO_UINT4)
                    put4(r.zeros, (uint64_t)b, z);
                else if (f->zero == OG_QZERO_FLOAT)
                    put16(r.zeros + 2 * b, half_code((float)z, f->scale));
                break;
            }
            case OG_QFORMAT_Q4_K:
                encode_q4_k(x, r.codes, first, r.scales + 16 * b);
                break;
            case OG_QFORMAT_Q6_K:
                encode_q6_k(x, r.codes, r.scales, l.blocks, k, b);
                break;
            default:
                encode_q8_0(x, r.codes + first, r.scales + 2 * b);
            }
        }
    }
    return 0;
}

/* ---- packers ---- */

/* The layout and a zeroed image for a packer whose source arrays are all
 * given. */
static int packer_start(const og_qweights_format *f, int64_t n, int64_t k, const void *a,
                        const void *b, uint8_t *image, og_qweights_layout *l, char *why, size_t len)
{
    if (layout_in_memory(f, n, k, 0, l, why, len) != 0)
        return -1;
    if (!a || !b || !image)
        return fail(why, len, "qweights: no %s (NULL)",
                    !a   ? "source codes"
                    : !b ? "source scales"
                         : "image");
    memset(image, 0, (size_t)l->bytes);
    return 0;
}

/* GGUF's Q4_K block b of a row into the row's planes: the 16 head bytes as
 * they are; in each 64 weights, qs's low nibbles then its high nibbles. */
static void unpack_q4_k(const uint8_t *src, const row_planes *r, int64_t b)
{
    memcpy(r->scales + 16 * b, src, 16);
    const uint8_t *qs = src + 16;
    uint64_t first = (uint64_t)(OG_QK_K * b);
    for (unsigned c = 0; c < 4; c++)
        for (unsigned i = 0; i < 32; i++) {
            put4(r->codes, first + 64 * c + i, qs[32 * c + i] & 0xFu);
            put4(r->codes, first + 64 * c + 32 + i, (unsigned)qs[32 * c + i] >> 4);
        }
}

/* GGUF's Q6_K block b of a row into the row's planes (the header's order). */
static void unpack_q6_k(const uint8_t *src, const row_planes *r, int64_t blocks, int64_t k,
                        int64_t b)
{
    const uint8_t *ql = src, *qh = src + 128;
    memcpy(r->scales + 16 * b, src + 192, 16);
    memcpy(r->scales + 16 * blocks + 2 * b, src + 208, 2);
    for (unsigned h = 0; h < 2; h++)
        for (unsigned i = 0; i < 32; i++)
            for (unsigned part = 0; part < 4; part++) {
                /* Weights i, i + 32, i + 64, i + 96 of the half. */
                uint8_t low = ql[64 * h + i + 32 * (part % 2)];
                unsigned lo = part < 2 ? low & 0xFu : (unsigned)low >> 4;
                unsigned hi = (unsigned)qh[32 * h + i] >> (2 * part) & 3u;
                uint64_t at = (uint64_t)(OG_QK_K * b + 128 * h + 32 * part + i);
                put4(r->codes, at, lo);
                r->codes[(uint64_t)k / 2 + at / 4] |= (uint8_t)(hi << (at % 4 * 2));
            }
}

int og_qweights_from_gguf(og_gguf_type type, int64_t n, int64_t k, const uint8_t *blocks,
                          uint8_t *image, char *why, size_t len)
{
    og_qweights_format f = {OG_QFORMAT_Q8_0, 0, OG_QSCALE_F16, OG_QZERO_NONE};
    size_t block_bytes;
    switch (type) {
    case OG_GGUF_Q4_0:
        f.format = OG_QFORMAT_INT4, f.group = 32, block_bytes = 18;
        break;
    case OG_GGUF_Q8_0:
        block_bytes = 34;
        break;
    case OG_GGUF_MXFP4:
        f.format = OG_QFORMAT_MXFP4, block_bytes = 17;
        break;
    case OG_GGUF_Q4_K:
        f.format = OG_QFORMAT_Q4_K, block_bytes = 144;
        break;
    case OG_GGUF_Q6_K:
        f.format = OG_QFORMAT_Q6_K, block_bytes = 210;
        break;
    default:
        return fail(why, len,
                    "qweights: GGUF type (%d) is not Q4_0 (2), Q8_0 (8), Q4_K (12), Q6_K (14) or "
                    "MXFP4 (39)",
                    (int)type);
    }
    og_qweights_layout l;
    if (packer_start(&f, n, k, blocks, blocks, image, &l, why, len) != 0)
        return -1;
    /* The source is at most 34/32 bytes a weight: it fits where the image does. */
    const uint8_t *src = blocks;
    for (int64_t j = 0; j < n; j++) {
        row_planes r = planes_of(&l, image, j);
        if (type == OG_GGUF_Q4_K || type == OG_GGUF_Q6_K) {
            for (int64_t b = 0; b < l.blocks; b++, src += block_bytes)
                if (type == OG_GGUF_Q4_K)
                    unpack_q4_k(src, &r, b);
                else
                    unpack_q6_k(src, &r, l.blocks, k, b);
            continue;
        }
        for (int64_t b = 0; b < l.blocks; b++, src += block_bytes) {
            uint64_t first = (uint64_t)(b * 32);
            if (type == OG_GGUF_Q8_0) {
                memcpy(r.scales + 2 * b, src, 2);
                memcpy(r.codes + first, src + 2, 32);
                continue;
            }
            /* Q4_0 and MXFP4: the scale (2 bytes of float16 d, or 1 of E8M0 e),
             * then qs: element i in the low nibble of qs[i], i + 16 in its high. */
            size_t head = type == OG_GGUF_Q4_0 ? 2 : 1;
            memcpy(r.scales + head * (size_t)b, src, head);
            const uint8_t *qs = src + head;
            for (unsigned i = 0; i < 16; i++) {
                put4(r.codes, first + i, qs[i] & 0xFu);
                put4(r.codes, first + i + 16, (unsigned)qs[i] >> 4);
            }
        }
    }
    return 0;
}

/* Copies n rows of row_bytes bytes, one after another in src, to a plane. */
static void copy_rows(uint8_t *plane, uint64_t stride, const uint8_t *src, int64_t n,
                      uint64_t row_bytes)
{
    for (int64_t j = 0; j < n; j++)
        memcpy(plane + (size_t)((uint64_t)j * stride), src + (size_t)((uint64_t)j * row_bytes),
               (size_t)row_bytes);
}

int og_qweights_from_mxfp4_planes(int64_t n, int64_t k, const uint8_t *blocks,
                                  const uint8_t *scales, uint8_t *image, char *why, size_t len)
{
    og_qweights_format f = {OG_QFORMAT_MXFP4, 0, 0, 0};
    og_qweights_layout l;
    if (packer_start(&f, n, k, blocks, scales, image, &l, why, len) != 0)
        return -1;
    /* transformers' bytes are the code rows already: byte i holds elements
     * 2i (low nibble) and 2i + 1. */
    copy_rows(image, l.code_row_bytes, blocks, n, (uint64_t)k / 2);
    copy_rows(image + l.scales_at, l.scale_row_bytes, scales, n, (uint64_t)l.blocks);
    return 0;
}

int og_qweights_from_nvfp4(int64_t n, int64_t k, const uint8_t *packed, const uint8_t *scales,
                           uint8_t *image, char *why, size_t len)
{
    og_qweights_format f = {OG_QFORMAT_NVFP4, 0, 0, 0};
    og_qweights_layout l;
    if (packer_start(&f, n, k, packed, scales, image, &l, why, len) != 0)
        return -1;
    copy_rows(image, l.code_row_bytes, packed, n, (uint64_t)k / 2);
    copy_rows(image + l.scales_at, l.scale_row_bytes, scales, n, (uint64_t)l.blocks);
    return 0;
}

int og_qweights_from_matmulnbits(const og_qweights_format *f, int64_t n, int64_t k,
                                 const uint8_t *b, const uint16_t *scales, const void *zeros,
                                 uint8_t *image, char *why, size_t len)
{
    if (f && f->format != OG_QFORMAT_INT4 && (unsigned)f->format <= OG_QFORMAT_Q6_K)
        return fail(why, len, "qweights: MatMulNBits (bits 4) packs INT4, not %s",
                    format_name(f->format));
    if (f && f->format == OG_QFORMAT_INT4 && f->zero != OG_QZERO_NONE && !zeros)
        return fail(why, len, "qweights: no zero points (NULL) for zero %d", (int)f->zero);
    if (f && f->format == OG_QFORMAT_INT4 && f->zero == OG_QZERO_NONE && zeros)
        return fail(why, len, "qweights: zero points given for INT4 without them (zero 0)");
    og_qweights_layout l;
    if (packer_start(f, n, k, b, scales, image, &l, why, len) != 0)
        return -1;
    /* B is (N, blocks, group / 2): a row's blobs follow one another, element
     * 2i of a blob in the low nibble of its byte i, so a row of B is a row of
     * codes. */
    copy_rows(image, l.code_row_bytes, b, n, (uint64_t)k / 2);
    uint64_t blocks = (uint64_t)l.blocks, zero_bytes = (blocks + 1) / 2;
    for (int64_t j = 0; j < n; j++) {
        row_planes r = planes_of(&l, image, j);
        const uint16_t *s = scales + (size_t)((uint64_t)j * blocks);
        for (uint64_t i = 0; i < blocks; i++)
            put16(r.scales + 2 * i, s[i]);
        if (f->zero == OG_QZERO_UINT4) {
            /* (N, ceil(blocks / 2)) bytes, block 2i in the low nibble; the
             * high nibble after an odd count of blocks is padding, zeroed. */
            memcpy(r.zeros, (const uint8_t *)zeros + (size_t)((uint64_t)j * zero_bytes),
                   (size_t)zero_bytes);
            if (blocks % 2)
                r.zeros[zero_bytes - 1] &= 0x0F;
        } else if (f->zero == OG_QZERO_FLOAT) {
            const uint16_t *z = (const uint16_t *)zeros + (size_t)((uint64_t)j * blocks);
            for (uint64_t i = 0; i < blocks; i++)
                put16(r.zeros + 2 * i, z[i]);
        }
    }
    return 0;
}
