/* The reference of the low-bit weight tests (test_qweights_decode.c,
 * test_qweights_encode.c, test_qweights_pack.c), which never reuses the
 * library's code paths (onegpu_formats.h, runtime/formats/og_qweights.c):
 *  - the layout (plane offsets, 16-byte rows, nibble order) is recomputed
 *    here from the header's description and read byte by byte;
 *  - a weight's value comes from the formats' tables in double (E2M1's 16
 *    values, E8M0 as a power of two, E4M3, float16 and bfloat16 from their
 *    fields) and is rounded to float32 once, with overflow to Inf written
 *    out;
 * with the comparisons, random numbers and the formats the tests loop over. */
#ifndef OG_QWEIGHTS_REF_H
#define OG_QWEIGHTS_REF_H

#include <criterion/criterion.h>

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onegpu_formats.h"

#define CANARY 0xA5
#define CANARY_BYTES 64

static inline uint32_t bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* ---- reference values ---- */

/* E2M1 (OCP MX v1.0; the same 16 values as transformers' FP4_VALUES). */
static const double FP4[16] = {0.0,  0.5,  1.0,  1.5,  2.0,  3.0,  4.0,  6.0,
                               -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0};

static inline double ref_e8m0(unsigned s)
{
    return s == 0xFF ? NAN : ldexp(1.0, (int)s - 127);
}

/* E4M3: bias 7, 3 fraction bits, S.1111.111 NaN, no infinity. */
static inline double ref_e4m3(unsigned v)
{
    unsigned e = (v >> 3) & 15, m = v & 7;
    double x = e == 15 && m == 7 ? NAN : e == 0 ? ldexp(m, -9) : ldexp(8 + m, (int)e - 10);
    return v & 0x80 ? -x : x;
}

static inline double ref_f16(unsigned h)
{
    unsigned e = (h >> 10) & 31, m = h & 1023;
    double x = e == 31  ? (m ? NAN : INFINITY)
               : e == 0 ? ldexp(m, -24)
                        : ldexp(1024 + m, (int)e - 25);
    return h & 0x8000 ? -x : x;
}

static inline double ref_bf16(unsigned h)
{
    unsigned e = (h >> 7) & 255, m = h & 127;
    double x = e == 255 ? (m ? NAN : INFINITY)
               : e == 0 ? ldexp(m, -133)
                        : ldexp(128 + m, (int)e - 134);
    return h & 0x8000 ? -x : x;
}

static inline double ref_half(unsigned h, og_qscale t)
{
    return t == OG_QSCALE_BF16 ? ref_bf16(h) : ref_f16(h);
}

/* v rounded to float32 to nearest even, overflowing to +-Inf from the
 * midpoint between FLT_MAX and 2^128 up. */
static inline float to_f32(double v)
{
    if (isnan(v))
        return NAN;
    if (fabs(v) >= ldexp(2.0 - ldexp(1.0, -24), 127))
        return v < 0 ? -INFINITY : INFINITY;
    return (float)v;
}

/* ---- the reference layout ---- */

typedef struct ref_layout {
    int64_t block, blocks;
    int bits, sbytes;
    uint64_t crow, srow, zrow, sat, zat, bytes;
} ref_layout;

static inline uint64_t up16(uint64_t v)
{
    return (v + 15) / 16 * 16;
}

static inline ref_layout ref_layout_of(const og_qweights_format *f, int64_t n, int64_t k)
{
    ref_layout r;
    memset(&r, 0, sizeof r);
    switch (f->format) {
    case OG_QFORMAT_MXFP4:
        r.block = 32, r.bits = 4, r.sbytes = 1;
        break;
    case OG_QFORMAT_NVFP4:
        r.block = 16, r.bits = 4, r.sbytes = 1;
        break;
    case OG_QFORMAT_INT4:
        r.block = f->group ? f->group : k, r.bits = 4, r.sbytes = 2;
        break;
    default:
        r.block = 32, r.bits = 8, r.sbytes = 2;
    }
    r.blocks = k / r.block;
    r.crow = up16((uint64_t)k * (uint64_t)r.bits / 8);
    r.srow = up16((uint64_t)r.blocks * (uint64_t)r.sbytes);
    if (f->format == OG_QFORMAT_INT4 && f->zero == OG_QZERO_UINT4)
        r.zrow = up16(((uint64_t)r.blocks + 1) / 2);
    if (f->format == OG_QFORMAT_INT4 && f->zero == OG_QZERO_FLOAT)
        r.zrow = up16(2 * (uint64_t)r.blocks);
    r.sat = (uint64_t)n * r.crow;
    r.zat = r.sat + (uint64_t)n * r.srow;
    r.bytes = r.zat + (uint64_t)n * r.zrow;
    return r;
}

/* Element i of row j: byte i / 2 of the code row, even elements low. */
static inline unsigned ref_code(const uint8_t *img, const ref_layout *l, int64_t j, int64_t i)
{
    const uint8_t *row = img + (uint64_t)j * l->crow;
    if (l->bits == 8)
        return row[i];
    return (row[i / 2] >> (4 * (i % 2))) & 15;
}

static inline void ref_set_code(uint8_t *img, const ref_layout *l, int64_t j, int64_t i, unsigned q)
{
    uint8_t *row = img + (uint64_t)j * l->crow;
    if (l->bits == 8) {
        row[i] = (uint8_t)q;
        return;
    }
    int sh = 4 * (int)(i % 2);
    row[i / 2] = (uint8_t)((row[i / 2] & ~(15 << sh)) | (q & 15) << sh);
}

static inline uint8_t *ref_scale_at(const uint8_t *img, const ref_layout *l, int64_t j, int64_t b)
{
    return (uint8_t *)img + l->sat + (uint64_t)j * l->srow + (uint64_t)(b * l->sbytes);
}

static inline unsigned ref_scale(const uint8_t *img, const ref_layout *l, int64_t j, int64_t b)
{
    const uint8_t *p = ref_scale_at(img, l, j, b);
    return l->sbytes == 1 ? p[0] : (unsigned)(p[0] | p[1] << 8);
}

static inline void ref_set_scale(uint8_t *img, const ref_layout *l, int64_t j, int64_t b, unsigned s)
{
    uint8_t *p = ref_scale_at(img, l, j, b);
    p[0] = (uint8_t)s;
    if (l->sbytes == 2)
        p[1] = (uint8_t)(s >> 8);
}

static inline unsigned ref_zero4(const uint8_t *img, const ref_layout *l, int64_t j, int64_t b)
{
    return (img[l->zat + (uint64_t)j * l->zrow + (uint64_t)b / 2] >> (4 * (b % 2))) & 15;
}

static inline void ref_set_zero4(uint8_t *img, const ref_layout *l, int64_t j, int64_t b, unsigned z)
{
    uint8_t *p = img + l->zat + (uint64_t)j * l->zrow + (uint64_t)b / 2;
    int sh = 4 * (int)(b % 2);
    *p = (uint8_t)((*p & ~(15 << sh)) | (z & 15) << sh);
}

static inline unsigned ref_zero16(const uint8_t *img, const ref_layout *l, int64_t j, int64_t b)
{
    const uint8_t *p = img + l->zat + (uint64_t)j * l->zrow + 2 * (uint64_t)b;
    return (unsigned)(p[0] | p[1] << 8);
}

static inline void ref_set_zero16(uint8_t *img, const ref_layout *l, int64_t j, int64_t b, unsigned z)
{
    uint8_t *p = img + l->zat + (uint64_t)j * l->zrow + 2 * (uint64_t)b;
    p[0] = (uint8_t)z;
    p[1] = (uint8_t)(z >> 8);
}

/* The header's table, on the test's layout. */
static inline void ref_decode(const og_qweights_format *f, int64_t n, int64_t k, const uint8_t *img,
                       float ts, float *out)
{
    ref_layout l = ref_layout_of(f, n, k);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < k; i++) {
            int64_t b = i / l.block;
            unsigned q = ref_code(img, &l, j, i), s = ref_scale(img, &l, j, b);
            float *o = out + j * k + i;
            switch (f->format) {
            case OG_QFORMAT_MXFP4:
                *o = to_f32(FP4[q] * ref_e8m0(s));
                break;
            case OG_QFORMAT_NVFP4:
                *o = to_f32(FP4[q] * ref_e4m3(s) * ts);
                break;
            case OG_QFORMAT_INT4: {
                double z = f->zero == OG_QZERO_UINT4 ? ref_zero4(img, &l, j, b)
                           : f->zero == OG_QZERO_FLOAT
                               ? ref_half(ref_zero16(img, &l, j, b), f->scale)
                               : 8.0;
                float d = to_f32((double)q - z);
                *o = to_f32((double)d * ref_half(s, f->scale));
                break;
            }
            default:
                *o = to_f32((double)(int8_t)q * ref_f16(s));
            }
        }
}

/* ---- comparisons ---- */

/* Elements that differ in bits (any NaN matches any NaN); the first is
 * described in first. */
static inline long mismatches(const float *got, const float *want, size_t count, char *first, size_t len)
{
    long bad = 0;
    for (size_t i = 0; i < count; i++) {
        int same = isnan(want[i]) ? isnan(got[i]) != 0 : bits(got[i]) == bits(want[i]);
        if (!same && bad++ == 0)
            snprintf(first, len, "element %zu: got %a (0x%08x), want %a (0x%08x)", i,
                     (double)got[i], bits(got[i]), (double)want[i], bits(want[i]));
    }
    return bad;
}

static inline void expect_same(const float *got, const float *want, size_t count, const char *what)
{
    char first[200] = "";
    long bad = mismatches(got, want, count, first, sizeof first);
    cr_assert_eq(bad, 0, "%s: %ld of %zu values differ; %s", what, bad, count, first);
}

/* An image buffer of `bytes` bytes with a canary tail, filled with the
 * canary so that unwritten padding shows. */
static inline uint8_t *image_alloc(uint64_t bytes)
{
    uint8_t *p = malloc((size_t)bytes + CANARY_BYTES);
    cr_assert_not_null(p);
    memset(p, CANARY, (size_t)bytes + CANARY_BYTES);
    return p;
}

static inline float *floats_alloc(int64_t count)
{
    float *p = malloc((size_t)count * sizeof *p + CANARY_BYTES);
    cr_assert_not_null(p);
    memset(p, CANARY, (size_t)count * sizeof *p + CANARY_BYTES);
    return p;
}

static inline void expect_canary(const void *buf, uint64_t bytes, const char *what)
{
    const uint8_t *p = (const uint8_t *)buf + bytes;
    for (int i = 0; i < CANARY_BYTES; i++)
        cr_assert_eq(p[i], CANARY, "%s: byte %d past the end (%" PRIu64 ") was written", what, i,
                     bytes);
}

/* Every byte of the image that holds no code, scale or zero point is 0,
 * and nothing past it was written. */
static inline void expect_padding_zero(const og_qweights_format *f, int64_t n, int64_t k,
                                const uint8_t *img, const char *what)
{
    ref_layout l = ref_layout_of(f, n, k);
    for (int64_t j = 0; j < n; j++) {
        const uint8_t *s = img + l.sat + (uint64_t)j * l.srow;
        for (uint64_t i = (uint64_t)(l.blocks * l.sbytes); i < l.srow; i++)
            cr_assert_eq(s[i], 0, "%s: row %" PRId64 "'s scale padding byte %" PRIu64 " is 0x%02x",
                         what, j, i, s[i]);
        const uint8_t *z = img + l.zat + (uint64_t)j * l.zrow;
        uint64_t used = f->format == OG_QFORMAT_INT4 && f->zero == OG_QZERO_UINT4
                            ? ((uint64_t)l.blocks + 1) / 2
                            : 2 * (uint64_t)l.blocks;
        if (l.zrow == 0)
            continue;
        if (f->zero == OG_QZERO_UINT4 && l.blocks % 2)
            cr_assert_eq(z[used - 1] >> 4, 0, "%s: row %" PRId64 "'s padding nibble is 0x%x", what,
                         j, z[used - 1] >> 4);
        for (uint64_t i = used; i < l.zrow; i++)
            cr_assert_eq(z[i], 0,
                         "%s: row %" PRId64 "'s zero-point padding byte %" PRIu64 " is 0x%02x",
                         what, j, i, z[i]);
    }
    expect_canary(img, l.bytes, what);
}

/* Decodes with the library and with the reference and expects the same bits. */
static inline void expect_decodes_like_reference(const og_qweights_format *f, int64_t n, int64_t k,
                                          const uint8_t *img, float ts, const char *what)
{
    float *got = floats_alloc(n * k), *want = floats_alloc(n * k);
    char why[200] = "";
    cr_assert_eq(og_qweights_decode(f, n, k, img, ts, got, why, sizeof why), 0, "%s: %s", what,
                 why);
    expect_canary(got, (uint64_t)(n * k) * sizeof(float), what);
    ref_decode(f, n, k, img, ts, want);
    expect_same(got, want, (size_t)(n * k), what);
    free(got);
    free(want);
}

/* ---- random numbers ---- */

static inline uint32_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

/* Uniform in [-1, 1). */
static inline double rnd_unit(uint64_t *s)
{
    return (double)rnd(s) / 2147483648.0 * 2.0 - 1.0;
}

/* ---- the formats tested in loops ---- */

static const og_qweights_format MXFP4 = {OG_QFORMAT_MXFP4, 0, 0, 0};
static const og_qweights_format NVFP4 = {OG_QFORMAT_NVFP4, 0, 0, 0};
static const og_qweights_format Q8_0 = {OG_QFORMAT_Q8_0, 0, 0, 0};

static const og_qweights_format CONFIGS[] = {
    {OG_QFORMAT_MXFP4, 0, 0, 0},
    {OG_QFORMAT_NVFP4, 0, 0, 0},
    {OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_NONE},
    {OG_QFORMAT_INT4, 32, OG_QSCALE_BF16, OG_QZERO_NONE},
    {OG_QFORMAT_INT4, 64, OG_QSCALE_BF16, OG_QZERO_UINT4},
    {OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_UINT4},
    {OG_QFORMAT_INT4, 128, OG_QSCALE_F16, OG_QZERO_FLOAT},
    {OG_QFORMAT_INT4, 0, OG_QSCALE_BF16, OG_QZERO_FLOAT},
    {OG_QFORMAT_INT4, 0, OG_QSCALE_F16, OG_QZERO_UINT4},
    {OG_QFORMAT_Q8_0, 0, 0, 0},
};
#define NCONFIGS (sizeof CONFIGS / sizeof CONFIGS[0])

static inline const char *config_name(const og_qweights_format *f, char *buf, size_t len)
{
    static const char *const names[] = {"MXFP4", "NVFP4", "INT4", "Q8_0"};
    static const char *const zeros[] = {"none", "uint4", "float"};
    if (f->format == OG_QFORMAT_INT4)
        snprintf(buf, len, "INT4 group %d %s zero %s", f->group,
                 f->scale == OG_QSCALE_BF16 ? "bf16" : "f16", zeros[f->zero]);
    else
        snprintf(buf, len, "%s", names[f->format]);
    return buf;
}

#endif /* OG_QWEIGHTS_REF_H */
