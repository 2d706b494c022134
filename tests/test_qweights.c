/* Low-bit weight matrices (onegpu_formats.h, runtime/formats/og_qweights.c) against
 * references of the test's own.
 *
 * The reference never reuses the library's code paths:
 *  - the layout (plane offsets, 16-byte rows, nibble order) is recomputed
 *    here from the header's description and read byte by byte;
 *  - a weight's value comes from the formats' tables in double (E2M1's 16
 *    values, E8M0 as a power of two, E4M3, float16 and bfloat16 from their
 *    fields) and is rounded to float32 once, with overflow to Inf written
 *    out;
 *  - each packer's source arrays are written here in the source's own
 *    ordering (ggml's block_q4_0 / block_q8_0 / block_mxfp4, transformers'
 *    blocks and scales, ONNX Runtime's MatMulNBits B / scales / zero_points),
 *    and the expected values come from that source's own dequantisation
 *    formula;
 *  - planted faults (swapped nibbles, the next block's scale, rows of
 *    scales without their padding) must make those comparisons fail.
 * Only the float32 -> float16 conversion of the Q8_0 check is borrowed
 * (og_f32_to_f16, which test_formats checks on every float32). */
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

static uint32_t bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* ---- reference values ---- */

/* E2M1 (OCP MX v1.0; the same 16 values as transformers' FP4_VALUES). */
static const double FP4[16] = {0.0,  0.5,  1.0,  1.5,  2.0,  3.0,  4.0,  6.0,
                               -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0};

static double ref_e8m0(unsigned s)
{
    return s == 0xFF ? NAN : ldexp(1.0, (int)s - 127);
}

/* E4M3: bias 7, 3 fraction bits, S.1111.111 NaN, no infinity. */
static double ref_e4m3(unsigned v)
{
    unsigned e = (v >> 3) & 15, m = v & 7;
    double x = e == 15 && m == 7 ? NAN : e == 0 ? ldexp(m, -9) : ldexp(8 + m, (int)e - 10);
    return v & 0x80 ? -x : x;
}

static double ref_f16(unsigned h)
{
    unsigned e = (h >> 10) & 31, m = h & 1023;
    double x = e == 31  ? (m ? NAN : INFINITY)
               : e == 0 ? ldexp(m, -24)
                        : ldexp(1024 + m, (int)e - 25);
    return h & 0x8000 ? -x : x;
}

static double ref_bf16(unsigned h)
{
    unsigned e = (h >> 7) & 255, m = h & 127;
    double x = e == 255 ? (m ? NAN : INFINITY)
               : e == 0 ? ldexp(m, -133)
                        : ldexp(128 + m, (int)e - 134);
    return h & 0x8000 ? -x : x;
}

static double ref_half(unsigned h, og_qscale t)
{
    return t == OG_QSCALE_BF16 ? ref_bf16(h) : ref_f16(h);
}

/* v rounded to float32 to nearest even, overflowing to +-Inf from the
 * midpoint between FLT_MAX and 2^128 up. */
static float to_f32(double v)
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

static uint64_t up16(uint64_t v)
{
    return (v + 15) / 16 * 16;
}

static ref_layout ref_layout_of(const og_qweights_format *f, int64_t n, int64_t k)
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
static unsigned ref_code(const uint8_t *img, const ref_layout *l, int64_t j, int64_t i)
{
    const uint8_t *row = img + (uint64_t)j * l->crow;
    if (l->bits == 8)
        return row[i];
    return (row[i / 2] >> (4 * (i % 2))) & 15;
}

static void ref_set_code(uint8_t *img, const ref_layout *l, int64_t j, int64_t i, unsigned q)
{
    uint8_t *row = img + (uint64_t)j * l->crow;
    if (l->bits == 8) {
        row[i] = (uint8_t)q;
        return;
    }
    int sh = 4 * (int)(i % 2);
    row[i / 2] = (uint8_t)((row[i / 2] & ~(15 << sh)) | (q & 15) << sh);
}

static uint8_t *ref_scale_at(const uint8_t *img, const ref_layout *l, int64_t j, int64_t b)
{
    return (uint8_t *)img + l->sat + (uint64_t)j * l->srow + (uint64_t)(b * l->sbytes);
}

static unsigned ref_scale(const uint8_t *img, const ref_layout *l, int64_t j, int64_t b)
{
    const uint8_t *p = ref_scale_at(img, l, j, b);
    return l->sbytes == 1 ? p[0] : (unsigned)(p[0] | p[1] << 8);
}

static void ref_set_scale(uint8_t *img, const ref_layout *l, int64_t j, int64_t b, unsigned s)
{
    uint8_t *p = ref_scale_at(img, l, j, b);
    p[0] = (uint8_t)s;
    if (l->sbytes == 2)
        p[1] = (uint8_t)(s >> 8);
}

static unsigned ref_zero4(const uint8_t *img, const ref_layout *l, int64_t j, int64_t b)
{
    return (img[l->zat + (uint64_t)j * l->zrow + (uint64_t)b / 2] >> (4 * (b % 2))) & 15;
}

static void ref_set_zero4(uint8_t *img, const ref_layout *l, int64_t j, int64_t b, unsigned z)
{
    uint8_t *p = img + l->zat + (uint64_t)j * l->zrow + (uint64_t)b / 2;
    int sh = 4 * (int)(b % 2);
    *p = (uint8_t)((*p & ~(15 << sh)) | (z & 15) << sh);
}

static unsigned ref_zero16(const uint8_t *img, const ref_layout *l, int64_t j, int64_t b)
{
    const uint8_t *p = img + l->zat + (uint64_t)j * l->zrow + 2 * (uint64_t)b;
    return (unsigned)(p[0] | p[1] << 8);
}

static void ref_set_zero16(uint8_t *img, const ref_layout *l, int64_t j, int64_t b, unsigned z)
{
    uint8_t *p = img + l->zat + (uint64_t)j * l->zrow + 2 * (uint64_t)b;
    p[0] = (uint8_t)z;
    p[1] = (uint8_t)(z >> 8);
}

/* The header's table, on the test's layout. */
static void ref_decode(const og_qweights_format *f, int64_t n, int64_t k, const uint8_t *img,
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
static long mismatches(const float *got, const float *want, size_t count, char *first, size_t len)
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

static void expect_same(const float *got, const float *want, size_t count, const char *what)
{
    char first[200] = "";
    long bad = mismatches(got, want, count, first, sizeof first);
    cr_assert_eq(bad, 0, "%s: %ld of %zu values differ; %s", what, bad, count, first);
}

/* An image buffer of `bytes` bytes with a canary tail, filled with the
 * canary so that unwritten padding shows. */
static uint8_t *image_alloc(uint64_t bytes)
{
    uint8_t *p = malloc((size_t)bytes + CANARY_BYTES);
    cr_assert_not_null(p);
    memset(p, CANARY, (size_t)bytes + CANARY_BYTES);
    return p;
}

static float *floats_alloc(int64_t count)
{
    float *p = malloc((size_t)count * sizeof *p + CANARY_BYTES);
    cr_assert_not_null(p);
    memset(p, CANARY, (size_t)count * sizeof *p + CANARY_BYTES);
    return p;
}

static void expect_canary(const void *buf, uint64_t bytes, const char *what)
{
    const uint8_t *p = (const uint8_t *)buf + bytes;
    for (int i = 0; i < CANARY_BYTES; i++)
        cr_assert_eq(p[i], CANARY, "%s: byte %d past the end (%" PRIu64 ") was written", what, i,
                     bytes);
}

/* Every byte of the image that holds no code, scale or zero point is 0,
 * and nothing past it was written. */
static void expect_padding_zero(const og_qweights_format *f, int64_t n, int64_t k,
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
static void expect_decodes_like_reference(const og_qweights_format *f, int64_t n, int64_t k,
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

static uint32_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

/* Uniform in [-1, 1). */
static double rnd_unit(uint64_t *s)
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

static const char *config_name(const og_qweights_format *f, char *buf, size_t len)
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

/* ---- the layout ---- */

typedef struct layout_case {
    og_qweights_format f;
    int64_t n, k;
    og_qweights_layout want;
} layout_case;

Test(layout, sizes_per_format)
{
    /* Worked by hand: gpt-oss's K = 2880, one block (K = 32), per-channel INT4. */
    static const layout_case cases[] = {
        /* block, blocks, code_bits, scale_bytes, code_row, scales_at, scale_row, zeros_at,
         * zero_row, bytes */
        {{OG_QFORMAT_MXFP4, 0, 0, 0}, 7, 2880, {32, 90, 4, 1, 1440, 10080, 96, 10752, 0, 10752}},
        {{OG_QFORMAT_MXFP4, 0, 0, 0}, 1, 32, {32, 1, 4, 1, 16, 16, 16, 32, 0, 32}},
        {{OG_QFORMAT_NVFP4, 0, 0, 0}, 3, 2880, {16, 180, 4, 1, 1440, 4320, 192, 4896, 0, 4896}},
        {{OG_QFORMAT_NVFP4, 0, 0, 0}, 1, 32, {16, 2, 4, 1, 16, 16, 16, 32, 0, 32}},
        {{OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_NONE},
         2,
         32,
         {32, 1, 4, 2, 16, 32, 16, 64, 0, 64}},
        {{OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_UINT4},
         1,
         32,
         {32, 1, 4, 2, 16, 16, 16, 32, 16, 48}},
        {{OG_QFORMAT_INT4, 0, OG_QSCALE_F16, OG_QZERO_NONE},
         4,
         4096,
         {4096, 1, 4, 2, 2048, 8192, 16, 8256, 0, 8256}},
        {{OG_QFORMAT_INT4, 0, OG_QSCALE_BF16, OG_QZERO_UINT4},
         3,
         2880,
         {2880, 1, 4, 2, 1440, 4320, 16, 4368, 16, 4416}},
        {{OG_QFORMAT_INT4, 64, OG_QSCALE_BF16, OG_QZERO_UINT4},
         5,
         2880,
         {64, 45, 4, 2, 1440, 7200, 96, 7680, 32, 7840}},
        {{OG_QFORMAT_INT4, 128, OG_QSCALE_F16, OG_QZERO_FLOAT},
         3,
         4096,
         {128, 32, 4, 2, 2048, 6144, 64, 6336, 64, 6528}},
        {{OG_QFORMAT_Q8_0, 0, 0, 0}, 7, 2880, {32, 90, 8, 2, 2880, 20160, 192, 21504, 0, 21504}},
        {{OG_QFORMAT_Q8_0, 0, 0, 0}, 1, 32, {32, 1, 8, 2, 32, 32, 16, 48, 0, 48}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const layout_case *t = &cases[c];
        og_qweights_layout l;
        char why[200] = "", name[64];
        config_name(&t->f, name, sizeof name);
        cr_assert_eq(og_qweights_layout_of(&t->f, t->n, t->k, &l, why, sizeof why), 0,
                     "%s %" PRId64 " x %" PRId64 ": %s", name, t->n, t->k, why);
        const og_qweights_layout *w = &t->want;
        cr_expect(l.block == w->block && l.blocks == w->blocks && l.code_bits == w->code_bits &&
                      l.scale_bytes == w->scale_bytes,
                  "%s %" PRId64 " x %" PRId64 ": block %" PRId64 " blocks %" PRId64
                  " bits %d scale bytes %d",
                  name, t->n, t->k, l.block, l.blocks, l.code_bits, l.scale_bytes);
        cr_expect(l.code_row_bytes == w->code_row_bytes && l.scales_at == w->scales_at &&
                      l.scale_row_bytes == w->scale_row_bytes && l.zeros_at == w->zeros_at &&
                      l.zero_row_bytes == w->zero_row_bytes && l.bytes == w->bytes,
                  "%s %" PRId64 " x %" PRId64 ": code row %" PRIu64 ", scales at %" PRIu64
                  " row %" PRIu64 ", zeros at %" PRIu64 " row %" PRIu64 ", bytes %" PRIu64
                  "; want %" PRIu64 ", %" PRIu64 " %" PRIu64 ", %" PRIu64 " %" PRIu64 ", %" PRIu64,
                  name, t->n, t->k, l.code_row_bytes, l.scales_at, l.scale_row_bytes, l.zeros_at,
                  l.zero_row_bytes, l.bytes, w->code_row_bytes, w->scales_at, w->scale_row_bytes,
                  w->zeros_at, w->zero_row_bytes, w->bytes);
    }
}

Test(layout, rows_on_16_bytes)
{
    static const int64_t ks[] = {32, 64, 96, 128, 160, 2880, 4096, 4160};
    static const int64_t ns[] = {1, 3, 7};
    for (size_t c = 0; c < NCONFIGS; c++)
        for (size_t a = 0; a < sizeof ks / sizeof ks[0]; a++)
            for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++) {
                const og_qweights_format *f = &CONFIGS[c];
                int64_t k = ks[a], n = ns[b];
                char why[200] = "", name[64];
                config_name(f, name, sizeof name);
                og_qweights_layout l;
                if (f->format == OG_QFORMAT_INT4 && f->group && k % f->group) {
                    cr_assert_eq(og_qweights_layout_of(f, n, k, &l, why, sizeof why), -1,
                                 "%s K %" PRId64 ": accepted", name, k);
                    continue;
                }
                cr_assert_eq(og_qweights_layout_of(f, n, k, &l, why, sizeof why), 0,
                             "%s %" PRId64 " x %" PRId64 ": %s", name, n, k, why);
                ref_layout r = ref_layout_of(f, n, k);
                cr_expect(l.code_row_bytes % 16 == 0 && l.scale_row_bytes % 16 == 0 &&
                              l.zero_row_bytes % 16 == 0 && l.scales_at % 16 == 0 &&
                              l.zeros_at % 16 == 0 && l.bytes % 16 == 0,
                          "%s %" PRId64 " x %" PRId64 ": a row or plane off 16 bytes", name, n, k);
                /* Rows are no longer than their contents rounded up to 16 bytes. */
                cr_expect(l.code_row_bytes == r.crow && l.scale_row_bytes == r.srow &&
                              l.zero_row_bytes == r.zrow && l.scales_at == r.sat &&
                              l.zeros_at == r.zat && l.bytes == r.bytes && l.blocks == r.blocks &&
                              l.block == r.block,
                          "%s %" PRId64 " x %" PRId64 ": scale row %" PRIu64 " (want %" PRIu64
                          "), zero row %" PRIu64 " (want %" PRIu64 "), bytes %" PRIu64
                          " (want %" PRIu64 ")",
                          name, n, k, l.scale_row_bytes, r.srow, l.zero_row_bytes, r.zrow, l.bytes,
                          r.bytes);
            }
}

typedef struct refusal {
    og_qweights_format f;
    int64_t n, k;
    const char *says, *also;
} refusal;

Test(layout, refusals)
{
    static const refusal cases[] = {
        {{OG_QFORMAT_MXFP4, 0, 0, 0}, 4, 2881, "K (2881) is not a multiple of 32", NULL},
        {{OG_QFORMAT_MXFP4, 0, 0, 0}, 4, 48, "K (48) is not a multiple of 32", NULL},
        {{OG_QFORMAT_NVFP4, 0, 0, 0}, 4, 16, "K (16) is not a multiple of 32", NULL},
        {{OG_QFORMAT_Q8_0, 0, 0, 0}, 4, 2900, "K (2900)", NULL},
        {{OG_QFORMAT_INT4, 48, OG_QSCALE_F16, OG_QZERO_NONE}, 4, 96, "group (48)", NULL},
        {{OG_QFORMAT_INT4, 64, OG_QSCALE_F16, OG_QZERO_NONE}, 4, 96, "K (96)", "group (64)"},
        {{OG_QFORMAT_INT4, 128, OG_QSCALE_BF16, OG_QZERO_UINT4}, 4, 2880, "K (2880)", "(128)"},
        {{OG_QFORMAT_INT4, 32, 2, OG_QZERO_NONE}, 4, 96, "scale (2)", NULL},
        {{OG_QFORMAT_INT4, 32, OG_QSCALE_F16, 3}, 4, 96, "zero (3)", NULL},
        {{OG_QFORMAT_MXFP4, 32, 0, 0}, 4, 96, "group (32)", "MXFP4"},
        {{OG_QFORMAT_Q8_0, 0, OG_QSCALE_BF16, 0}, 4, 96, "scale (1)", "Q8_0"},
        {{OG_QFORMAT_NVFP4, 0, 0, OG_QZERO_UINT4}, 4, 96, "zero (1)", "NVFP4"},
        {{9, 0, 0, 0}, 4, 96, "format (9)", NULL},
        {{OG_QFORMAT_MXFP4, 0, 0, 0}, 0, 96, "N (0) is below 1", NULL},
        {{OG_QFORMAT_INT4, 32, 0, 0}, -5, 96, "N (-5) is below 1", NULL},
        {{OG_QFORMAT_Q8_0, 0, 0, 0}, 3, 0, "K (0) is below 1", NULL},
        {{OG_QFORMAT_Q8_0, 0, 0, 0}, 3, -64, "K (-64) is below 1", NULL},
        {{OG_QFORMAT_MXFP4, 0, 0, 0},
         (int64_t)1 << 40,
         (int64_t)1 << 30,
         "2^62",
         "N (1099511627776)"},
        {{OG_QFORMAT_Q8_0, 0, 0, 0}, (int64_t)1 << 32, (int64_t)1 << 30, "2^62", NULL},
        {{OG_QFORMAT_MXFP4, 0, 0, 0}, 1, INT64_MAX - 31, "2^62", "K (9223372036854775776)"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const refusal *t = &cases[c];
        og_qweights_layout l;
        char why[200] = "";
        cr_assert_eq(og_qweights_layout_of(&t->f, t->n, t->k, &l, why, sizeof why), -1,
                     "case %zu (%s) accepted", c, t->says);
        cr_expect(strncmp(why, "qweights: ", 10) == 0, "case %zu: \"%s\"", c, why);
        cr_expect(strstr(why, t->says) != NULL, "case %zu: \"%s\" does not say \"%s\"", c, why,
                  t->says);
        cr_expect(!t->also || strstr(why, t->also) != NULL, "case %zu: \"%s\" does not say \"%s\"",
                  c, why, t->also);
    }
    /* 2^62 bytes is the largest image: MXFP4 rows of K = 32 take 32 bytes
     * (16 of codes, 1 of scale padded to 16), so N = 2^57 fits exactly. */
    og_qweights_layout l;
    char why[200] = "";
    og_qweights_format q8 = Q8_0, mx = MXFP4;
    cr_expect_eq(og_qweights_layout_of(&mx, (int64_t)1 << 57, 32, &l, why, sizeof why), 0, "%s",
                 why);
    cr_expect_eq(l.bytes, (uint64_t)1 << 62, "bytes %" PRIu64, l.bytes);
    cr_expect_eq(og_qweights_layout_of(&mx, ((int64_t)1 << 57) + 1, 32, &l, why, sizeof why), -1,
                 "2^62 + 32 bytes accepted");
    cr_expect(strstr(why, "2^62") != NULL, "\"%s\"", why);
    /* NULL arguments, and no room for the reason. */
    cr_expect_eq(og_qweights_layout_of(NULL, 1, 32, &l, why, sizeof why), -1);
    cr_expect(strstr(why, "format") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_layout_of(&q8, 1, 32, NULL, why, sizeof why), -1);
    cr_expect(strstr(why, "layout") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_layout_of(&q8, 1, 33, &l, NULL, 0), -1);
    char small[12];
    memset(small, 'x', sizeof small);
    cr_expect_eq(og_qweights_layout_of(&q8, 1, 33, &l, small, 8), -1);
    cr_expect(strlen(small) == 7 && small[8] == 'x', "a reason of 8 bytes ran over: %.12s", small);
}

/* ---- decoding, against the reference ---- */

/* An n x k image of format f filled by the test (codes and scales set
 * through the reference layout, padding zero). */
static uint8_t *hand_image(const og_qweights_format *f, int64_t n, int64_t k, ref_layout *l)
{
    *l = ref_layout_of(f, n, k);
    uint8_t *img = image_alloc(l->bytes);
    memset(img, 0, (size_t)l->bytes);
    return img;
}

Test(decode, mxfp4_all_codes_by_scales)
{
    /* Five blocks a row: E8M0 0, 1, 127, 254, 0xFF (row 1 in reverse);
     * every block holds all 16 codes twice. */
    static const unsigned scales[5] = {0x00, 0x01, 0x7F, 0xFE, 0xFF};
    const int64_t n = 2, k = 160;
    ref_layout l;
    uint8_t *img = hand_image(&MXFP4, n, k, &l);
    for (int64_t j = 0; j < n; j++)
        for (int64_t b = 0; b < 5; b++) {
            ref_set_scale(img, &l, j, b, scales[j ? 4 - b : b]);
            for (int64_t i = 0; i < 32; i++)
                ref_set_code(img, &l, j, b * 32 + i, (unsigned)(i + b + j) % 16);
        }
    expect_decodes_like_reference(&MXFP4, n, k, img, 0, "MXFP4");
    float w[320];
    char why[200] = "";
    cr_assert_eq(og_qweights_decode(&MXFP4, n, k, img, 0, w, why, sizeof why), 0, "%s", why);
    /* Row 0, block 0 (2^-127): code 1 (0.5) is 2^-128, a subnormal. */
    cr_expect_eq(bits(w[1]), 0x00200000u, "0.5 * 2^-127: 0x%08x", bits(w[1]));
    /* Block 3 (2^127): element i holds code (i + 3) % 16. Code 3 (1.5) is
     * 1.5 * 2^127; code 4 (2.0) and up overflow to Inf; code 0xC to -Inf. */
    cr_expect_eq(bits(w[96 + 0]), 0x7F400000u, "1.5 * 2^127: 0x%08x", bits(w[96]));
    cr_expect_eq(bits(w[96 + 1]), 0x7F800000u, "2 * 2^127: 0x%08x", bits(w[97]));
    cr_expect_eq(bits(w[96 + 9]), 0xFF800000u, "-2 * 2^127: 0x%08x", bits(w[105]));
    /* Block 4 (0xFF): all NaN, code 0 included. */
    for (int i = 0; i < 32; i++)
        cr_expect(isnan(w[128 + i]), "E8M0 0xFF element %d: %a", i, (double)w[128 + i]);
    /* Row 1 starts with 0xFF, then 254. */
    cr_expect(isnan(w[160]) && isnan(w[191]), "row 1's NaN block");
    cr_expect_eq(bits(w[192 + 1]), 0x7F400000u, "row 1, 1.5 * 2^127: 0x%08x", bits(w[193]));
    free(img);
}

Test(decode, negative_zero)
{
    const int64_t n = 1, k = 32;
    float w[32];
    char why[200] = "";
    ref_layout l;
    /* MXFP4: code 0x8 is -0 under any finite scale. */
    uint8_t *img = hand_image(&MXFP4, n, k, &l);
    ref_set_scale(img, &l, 0, 0, 0x7F);
    ref_set_code(img, &l, 0, 0, 0x8);
    ref_set_code(img, &l, 0, 1, 0x0);
    cr_assert_eq(og_qweights_decode(&MXFP4, n, k, img, 0, w, why, sizeof why), 0, "%s", why);
    cr_expect_eq(bits(w[0]), 0x80000000u, "MXFP4 code 0x8: 0x%08x", bits(w[0]));
    cr_expect_eq(bits(w[1]), 0x00000000u, "MXFP4 code 0x0: 0x%08x", bits(w[1]));
    free(img);
    /* NVFP4: the same, under a block scale of 1. */
    img = hand_image(&NVFP4, n, k, &l);
    ref_set_scale(img, &l, 0, 0, 0x38);
    ref_set_code(img, &l, 0, 3, 0x8);
    cr_assert_eq(og_qweights_decode(&NVFP4, n, k, img, 2.0f, w, why, sizeof why), 0, "%s", why);
    cr_expect_eq(bits(w[3]), 0x80000000u, "NVFP4 code 0x8: 0x%08x", bits(w[3]));
    cr_expect_eq(bits(w[2]), 0x00000000u, "NVFP4 code 0x0: 0x%08x", bits(w[2]));
    free(img);
    /* INT4's zero code is (8 - 8) * s: +0 times the scale, so -0 under a
     * negative scale, as IEEE multiplication gives. */
    og_qweights_format int4 = {OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_NONE};
    float w2[64];
    img = hand_image(&int4, 1, 64, &l);
    ref_set_scale(img, &l, 0, 0, 0x3C00); /* 1 */
    ref_set_scale(img, &l, 0, 1, 0xBC00); /* -1 */
    for (int i = 0; i < 64; i++)
        ref_set_code(img, &l, 0, i, 8);
    cr_assert_eq(og_qweights_decode(&int4, 1, 64, img, 0, w2, why, sizeof why), 0, "%s", why);
    cr_expect_eq(bits(w2[5]), 0x00000000u, "INT4 (8 - 8) * 1: 0x%08x", bits(w2[5]));
    cr_expect_eq(bits(w2[37]), 0x80000000u, "INT4 (8 - 8) * -1: 0x%08x", bits(w2[37]));
    free(img);
}

Test(decode, nvfp4_scales_and_tensor_scales)
{
    /* Block scales: NaN (0x7F, 0xFF), 448 (0x7E), 2^-9 (0x01), 1 (0x38), 0,
     * 2^-6 (0x08), a negative one (0xB9): two blocks a row over 5 rows. */
    static const unsigned scales[10] = {0x7F, 0x7E, 0x01, 0x38, 0x00, 0xFF, 0x08, 0x77, 0xB9, 0x7E};
    static const float tensor_scales[] = {1.0f, 0.375f, 1e-3f, 3e36f, FLT_TRUE_MIN, 1.0e38f};
    const int64_t n = 5, k = 32;
    ref_layout l;
    uint8_t *img = hand_image(&NVFP4, n, k, &l);
    for (int64_t j = 0; j < n; j++)
        for (int64_t b = 0; b < 2; b++) {
            ref_set_scale(img, &l, j, b, scales[j * 2 + b]);
            for (int64_t i = 0; i < 16; i++)
                ref_set_code(img, &l, j, b * 16 + i, (unsigned)(i * 7 + j + b) % 16);
        }
    for (size_t t = 0; t < sizeof tensor_scales / sizeof tensor_scales[0]; t++) {
        char what[64];
        snprintf(what, sizeof what, "NVFP4, tensor scale %a", (double)tensor_scales[t]);
        expect_decodes_like_reference(&NVFP4, n, k, img, tensor_scales[t], what);
        /* og_nvfp4_decode of the block's 8 bytes, bit for bit. */
        float w[160], block[16];
        char why[200] = "";
        cr_assert_eq(og_qweights_decode(&NVFP4, n, k, img, tensor_scales[t], w, why, sizeof why), 0,
                     "%s", why);
        for (int64_t j = 0; j < n; j++)
            for (int64_t b = 0; b < 2; b++) {
                og_nvfp4_decode(tensor_scales[t], (uint8_t)scales[j * 2 + b],
                                img + j * l.crow + b * 8, block);
                expect_same(w + j * k + b * 16, block, 16, what);
            }
        /* Scale 0x7F: a NaN block whatever the codes. */
        for (int i = 0; i < 16; i++)
            cr_expect(isnan(w[i]), "%s: 0x7F block element %d is %a", what, i, (double)w[i]);
    }
    /* 6 * 448 * 1e38 overflows; 0.5 * 2^-9 * FLT_TRUE_MIN underflows to 0. */
    float w[160];
    char why[200] = "";
    cr_assert_eq(og_qweights_decode(&NVFP4, n, k, img, 1.0e38f, w, why, sizeof why), 0, "%s", why);
    int infs = 0;
    for (int i = 16; i < 32; i++)
        infs += isinf(w[i]) != 0;
    cr_expect_gt(infs, 0, "448 * 1e38: no infinity");
    free(img);
}

typedef struct int4_case {
    og_qweights_format f;
    unsigned scales[4], zeros[4];
} int4_case;

Test(decode, int4_zero_points_and_scales)
{
    static const int4_case cases[] = {
        /* No zero points (8); float16 scales 1, 65504, 2^-24, -1. */
        {{OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_NONE},
         {0x3C00, 0x7BFF, 0x0001, 0xBC00},
         {0}},
        /* uint4 zero points 0 and 15 under 65504: (0 - 15) * 65504 and
         * (15 - 0) * 65504 lie far past float16's range. */
        {{OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_UINT4},
         {0x7BFF, 0x7BFF, 0x3C00, 0x5640},
         {0, 15, 15, 7}},
        /* bfloat16 scales: the largest (15 times it overflows), 1, 2^-133
         * (a subnormal), 65536. */
        {{OG_QFORMAT_INT4, 32, OG_QSCALE_BF16, OG_QZERO_UINT4},
         {0x7F7F, 0x3F80, 0x0001, 0x4780},
         {0, 15, 0, 8}},
        /* float16 zero points: 7.5, 2^-24 (q - z rounds in float32), -3.25,
         * 65504. */
        {{OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_FLOAT},
         {0x3C00, 0x4B00, 0x3555, 0x0400},
         {0x4780, 0x0001, 0xC280, 0x7BFF}},
        /* bfloat16 zero points 8.0625, 2^-30, 15, -0 with bfloat16 scales. */
        {{OG_QFORMAT_INT4, 32, OG_QSCALE_BF16, OG_QZERO_FLOAT},
         {0x4780, 0x3F80, 0x7F7F, 0xBF80},
         {0x4101, 0x3080, 0x4170, 0x8000}},
        /* Groups of 64 and 128 with uint4 zero points (two and one groups). */
        {{OG_QFORMAT_INT4, 64, OG_QSCALE_F16, OG_QZERO_UINT4}, {0x7BFF, 0x2E66}, {15, 0}},
        {{OG_QFORMAT_INT4, 128, OG_QSCALE_BF16, OG_QZERO_FLOAT}, {0x4780}, {0x4170}},
        /* Per channel: one group of K. */
        {{OG_QFORMAT_INT4, 0, OG_QSCALE_F16, OG_QZERO_UINT4}, {0x7BFF}, {15}},
    };
    const int64_t n = 3, k = 128;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int4_case *t = &cases[c];
        char name[64];
        config_name(&t->f, name, sizeof name);
        ref_layout l;
        uint8_t *img = hand_image(&t->f, n, k, &l);
        for (int64_t j = 0; j < n; j++) {
            for (int64_t b = 0; b < l.blocks; b++) {
                int64_t g = (b + j) % l.blocks; /* rows rotate the groups */
                ref_set_scale(img, &l, j, b, t->scales[g]);
                if (t->f.zero == OG_QZERO_UINT4)
                    ref_set_zero4(img, &l, j, b, t->zeros[g]);
                else if (t->f.zero == OG_QZERO_FLOAT)
                    ref_set_zero16(img, &l, j, b, t->zeros[g]);
            }
            for (int64_t i = 0; i < k; i++)
                ref_set_code(img, &l, j, i, (unsigned)(i * 5 + j) % 16);
        }
        expect_decodes_like_reference(&t->f, n, k, img, 0, name);
        free(img);
    }
    /* Spot values, from the definition. */
    og_qweights_format f = {OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_UINT4};
    ref_layout l;
    uint8_t *img = hand_image(&f, 1, 32, &l);
    ref_set_scale(img, &l, 0, 0, 0x7BFF);
    ref_set_zero4(img, &l, 0, 0, 15);
    ref_set_code(img, &l, 0, 0, 0);
    ref_set_code(img, &l, 0, 1, 15);
    ref_set_code(img, &l, 0, 2, 14);
    float w[32];
    char why[200] = "";
    cr_assert_eq(og_qweights_decode(&f, 1, 32, img, 0, w, why, sizeof why), 0, "%s", why);
    cr_expect_eq(w[0], -982560.0f, "(0 - 15) * 65504 = %a", (double)w[0]);
    cr_expect_eq(bits(w[1]), 0u, "(15 - 15) * 65504 = %a", (double)w[1]);
    cr_expect_eq(w[2], -65504.0f, "(14 - 15) * 65504 = %a", (double)w[2]);
    free(img);
    /* Float zero points: (0 - (1 + 2^-10)) * 3, exact; and two roundings
     * where they differ from one: 2 - 3 * 2^-24 is a tie in float32 and
     * goes to 2 - 2^-22, whose product with 1.5 is a tie again and goes to
     * 3 - 2^-21; the exact (2 - 3 * 2^-24) * 1.5 would round to 3 - 2^-22. */
    og_qweights_format g = {OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_FLOAT};
    img = hand_image(&g, 1, 64, &l);
    ref_set_scale(img, &l, 0, 0, 0x4200);  /* 3 */
    ref_set_zero16(img, &l, 0, 0, 0x3C01); /* 1 + 2^-10 */
    ref_set_code(img, &l, 0, 0, 0);
    ref_set_scale(img, &l, 0, 1, 0x3E00);  /* 1.5 */
    ref_set_zero16(img, &l, 0, 1, 0x0003); /* 3 * 2^-24 */
    ref_set_code(img, &l, 0, 32, 2);
    float w3[64];
    cr_assert_eq(og_qweights_decode(&g, 1, 64, img, 0, w3, why, sizeof why), 0, "%s", why);
    cr_expect_eq(w3[0], -3.0029296875f, "(0 - (1 + 2^-10)) * 3 = %a", (double)w3[0]);
    cr_expect_eq(w3[32], 0x1.7ffffcp+1f, "(2 - 3 * 2^-24) * 1.5 in two roundings = %a",
                 (double)w3[32]);
    free(img);
}

Test(decode, q8_0_extremes)
{
    static const int8_t codes[8] = {-128, 127, 0, -1, 1, 100, -100, 64};
    static const unsigned scales[4] = {0x7BFF, 0x0001, 0x3C00, 0x3555};
    const int64_t n = 2, k = 64;
    ref_layout l;
    uint8_t *img = hand_image(&Q8_0, n, k, &l);
    for (int64_t j = 0; j < n; j++)
        for (int64_t b = 0; b < 2; b++) {
            ref_set_scale(img, &l, j, b, scales[j * 2 + b]);
            for (int64_t i = 0; i < 32; i++)
                ref_set_code(img, &l, j, b * 32 + i, (uint8_t)codes[(i + b) % 8]);
        }
    expect_decodes_like_reference(&Q8_0, n, k, img, 0, "Q8_0");
    float w[128];
    char why[200] = "";
    cr_assert_eq(og_qweights_decode(&Q8_0, n, k, img, 0, w, why, sizeof why), 0, "%s", why);
    cr_expect_eq(w[0], -8384512.0f, "-128 * 65504 = %a", (double)w[0]);
    cr_expect_eq(w[1], 8319008.0f, "127 * 65504 = %a", (double)w[1]);
    cr_expect_eq(w[32 + 7], -128.0f * 0x1p-24f, "-128 * 2^-24 = %a", (double)w[39]);
    free(img);
}

Test(decode, refusals)
{
    float w[64];
    uint8_t img[64] = {0};
    char why[200] = "";
    cr_expect_eq(og_qweights_decode(&MXFP4, 1, 33, img, 0, w, why, sizeof why), -1);
    cr_expect(strstr(why, "K (33)") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_decode(&MXFP4, 1, 32, NULL, 0, w, why, sizeof why), -1);
    cr_expect(strstr(why, "image") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_decode(&MXFP4, 1, 32, img, 0, NULL, why, sizeof why), -1);
    cr_expect(strstr(why, "output") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_encode(&MXFP4, 0, 32, w, 0, img, why, sizeof why), -1);
    cr_expect(strstr(why, "N (0)") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_encode(&MXFP4, 1, 32, NULL, 0, img, why, sizeof why), -1);
    cr_expect(strstr(why, "input") != NULL, "\"%s\"", why);
}

/* ---- encoding ---- */

/* Values every format holds exactly, so that encode reproduces them: each
 * block or group at a power-of-two scale with a code of its largest
 * magnitude (E2M1 4 or 6, INT4 q - 8 = +-7 or both ends 0 and 15, Q8_0
 * +-127), which makes the encoder's scale exactly that power of two. */
static void exact_values(const og_qweights_format *f, int64_t n, int64_t k, float ts, uint64_t seed,
                         float *w)
{
    static const int mx_exp[5] = {-127, -20, 0, 3, 125};
    static const unsigned nv_scale[8] = {0x08, 0x30, 0x38, 0x41, 0x55, 0x7E, 0x01, 0x03};
    static const int int_exp[5] = {-10, -3, 0, 4, 9};
    static const int q8_exp[4] = {-14, -5, 0, 6};
    ref_layout l = ref_layout_of(f, n, k);
    for (int64_t j = 0; j < n; j++)
        for (int64_t b = 0; b < l.blocks; b++) {
            float *x = w + j * k + b * l.block;
            int64_t at = (int64_t)(rnd(&seed) % (uint32_t)l.block), at2 = (at + 1) % l.block;
            int64_t c = j * l.blocks + b;
            switch (f->format) {
            case OG_QFORMAT_MXFP4: {
                double s = ldexp(1.0, mx_exp[c % 5]);
                for (int64_t i = 0; i < l.block; i++) {
                    unsigned q =
                        i == at ? 6 + 8 * (rnd(&seed) % 2) + rnd(&seed) % 2 : rnd(&seed) % 16;
                    x[i] = (float)(FP4[q] * s);
                }
                break;
            }
            case OG_QFORMAT_NVFP4: {
                double s = ref_e4m3(nv_scale[c % 8]) * ts;
                for (int64_t i = 0; i < l.block; i++) {
                    unsigned q = i == at ? 7 + 8 * (rnd(&seed) % 2) : rnd(&seed) % 16;
                    x[i] = (float)(FP4[q] * s);
                }
                break;
            }
            case OG_QFORMAT_INT4: {
                double s = ldexp(1.0, int_exp[c % 5]);
                int z = f->zero == OG_QZERO_NONE ? 8 : (int)(rnd(&seed) % 16);
                for (int64_t i = 0; i < l.block; i++) {
                    int q;
                    if (f->zero == OG_QZERO_NONE)
                        q = i == at ? (rnd(&seed) % 2 ? 1 : 15) : 1 + (int)(rnd(&seed) % 15);
                    else
                        q = i == at ? 0 : i == at2 ? 15 : (int)(rnd(&seed) % 16);
                    x[i] = (float)((q - z) * s);
                }
                break;
            }
            default: {
                double s = ldexp(1.0, q8_exp[c % 4]);
                for (int64_t i = 0; i < l.block; i++) {
                    int q = i == at ? (rnd(&seed) % 2 ? 127 : -127) : (int)(rnd(&seed) % 255) - 127;
                    x[i] = (float)(q * s);
                }
            }
            }
        }
}

Test(roundtrip, exact_values_reproduced)
{
    static const float tensor_scales[2] = {1.0f, 0x1p-10f};
    const int64_t n = 3, k = 256;
    for (size_t c = 0; c < NCONFIGS; c++)
        for (int t = 0; t < 2; t++) {
            const og_qweights_format *f = &CONFIGS[c];
            if (t == 1 && f->format != OG_QFORMAT_NVFP4)
                continue;
            char name[80], why[200] = "";
            config_name(f, name, sizeof name);
            ref_layout l = ref_layout_of(f, n, k);
            float *w = floats_alloc(n * k), *back = floats_alloc(n * k);
            uint8_t *img = image_alloc(l.bytes);
            exact_values(f, n, k, tensor_scales[t], 1234 + c, w);
            cr_assert_eq(og_qweights_encode(f, n, k, w, tensor_scales[t], img, why, sizeof why), 0,
                         "%s: %s", name, why);
            expect_padding_zero(f, n, k, img, name);
            cr_assert_eq(og_qweights_decode(f, n, k, img, tensor_scales[t], back, why, sizeof why),
                         0, "%s: %s", name, why);
            expect_same(back, w, (size_t)(n * k), name);
            free(w);
            free(back);
            free(img);
        }
}

/* The E2M1 grid's half spacing at t = |x| / scale, or how far a value
 * beyond 6 saturates. */
static double e2m1_error(double t)
{
    return t < 2 ? 0.25 : t < 4 ? 0.5 : t <= 6 ? 1.0 : t - 6;
}

/* Checks decode(encode(w)) against the format's error bound, with the
 * scales the encoder chose checked against the header's recipe. */
static void check_bounds(const og_qweights_format *f, int64_t n, int64_t k, const float *w,
                         const uint8_t *img, const float *back, float ts, const char *name)
{
    ref_layout l = ref_layout_of(f, n, k);
    /* Half an ulp of the 16-bit scale, relative, with room for the float32
     * step on the way. */
    double rel16 =
        (f->scale == OG_QSCALE_BF16 && f->format == OG_QFORMAT_INT4 ? 0x1p-8 : 0x1p-11) * 1.01;
    long bad = 0;
    char first[300] = "";
    for (int64_t j = 0; j < n; j++)
        for (int64_t b = 0; b < l.blocks; b++) {
            const float *x = w + j * k + b * l.block, *y = back + j * k + b * l.block;
            double amax = 0, lo = 0, hi = 0;
            for (int64_t i = 0; i < l.block; i++) {
                amax = fmax(amax, fabs(x[i]));
                lo = fmin(lo, x[i]);
                hi = fmax(hi, x[i]);
            }
            unsigned sc = ref_scale(img, &l, j, b);
            double step = 0, want = 0; /* the scale, and what the recipe says it is */
            int scale_ok = 1;
            switch (f->format) {
            case OG_QFORMAT_MXFP4: {
                int e;
                frexp(amax, &e); /* amax = m * 2^e, m in [0.5, 1) */
                step = ldexp(1.0, e - 1 - 2);
                scale_ok = sc == (unsigned)(e - 1 - 2 + 127);
                want = step;
                break;
            }
            case OG_QFORMAT_NVFP4:
                want = amax / (6.0 * ts);
                step = ref_e4m3(sc);
                scale_ok = fabs(step - want) <= fmax(want * 0x1p-4, 0x1p-10);
                step *= ts;
                break;
            case OG_QFORMAT_INT4:
                want = f->zero == OG_QZERO_NONE ? amax / 7 : (hi - lo) / 15;
                step = ref_half(sc, f->scale);
                scale_ok = fabs(step - want) <= want * rel16;
                if (f->zero != OG_QZERO_NONE) {
                    double z = f->zero == OG_QZERO_UINT4
                                   ? ref_zero4(img, &l, j, b)
                                   : ref_half(ref_zero16(img, &l, j, b), f->scale);
                    scale_ok &=
                        fabs(z - -lo / step) <= 0.5 + 1e-9 && z == floor(z) && z >= 0 && z <= 15;
                }
                break;
            default:
                want = amax / 127;
                step = ref_f16(sc);
                scale_ok = fabs(step - want) <= want * rel16;
            }
            if (!scale_ok && bad++ == 0)
                snprintf(first, sizeof first,
                         "row %" PRId64 " block %" PRId64 ": scale 0x%x (%a) for %a", j, b, sc,
                         step, want);
            for (int64_t i = 0; i < l.block; i++) {
                double e = fabs((double)y[i] - x[i]), t = fabs(x[i]) / step, bound;
                if (f->format == OG_QFORMAT_MXFP4 || f->format == OG_QFORMAT_NVFP4)
                    bound = step * e2m1_error(t);
                else if (f->format == OG_QFORMAT_INT4 && f->zero == OG_QZERO_NONE)
                    bound = 0.5 * step;
                else
                    bound = 0.6 * step;
                bound += fabs(x[i]) * 0x1p-23;
                if (!(e <= bound) && bad++ == 0)
                    snprintf(first, sizeof first,
                             "row %" PRId64 " element %" PRId64 ": %a came back %a, off by %a > %a",
                             j, b * l.block + i, (double)x[i], (double)y[i], e, bound);
            }
        }
    cr_expect_eq(bad, 0, "%s: %ld values or scales out of bounds; first %s", name, bad, first);
}

Test(roundtrip, random_within_bounds)
{
    const int64_t n = 5, k = 2880 / 64 * 64; /* 2880: every group size divides it but 128 */
    for (size_t c = 0; c < NCONFIGS; c++) {
        const og_qweights_format *f = &CONFIGS[c];
        int64_t kk = f->format == OG_QFORMAT_INT4 && f->group == 128 ? 2944 : k;
        char name[80], why[200] = "";
        config_name(f, name, sizeof name);
        ref_layout l = ref_layout_of(f, n, kk);
        float *w = floats_alloc(n * kk), *back = floats_alloc(n * kk);
        uint8_t *img = image_alloc(l.bytes);
        uint64_t seed = 99 + c;
        /* Rows of magnitude 2^-4 .. 2^8, some values squared toward 0. */
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < kk; i++) {
                double u = rnd_unit(&seed);
                /* Row 1 all positive and row 3 all negative: asymmetric
                 * ranges must still reach zero. */
                u = j == 1 ? 0.25 + 0.75 * fabs(u) : j == 3 ? -0.25 - 0.75 * fabs(u) : u;
                w[j * kk + i] = (float)(ldexp(1.0, -4 + 3 * (int)j) * (i % 3 ? u : u * fabs(u)));
            }
        /* NVFP4's block scales stay inside E4M3's normal range: amax / 1.5
         * from 2^-4 / 1.5 to 2^8 / 1.5. */
        const float ts = 0.25f;
        cr_assert_eq(og_qweights_encode(f, n, kk, w, ts, img, why, sizeof why), 0, "%s: %s", name,
                     why);
        expect_padding_zero(f, n, kk, img, name);
        cr_assert_eq(og_qweights_decode(f, n, kk, img, ts, back, why, sizeof why), 0, "%s: %s",
                     name, why);
        check_bounds(f, n, kk, w, img, back, ts, name);
        /* The library decodes its own image as the reference does. */
        expect_decodes_like_reference(f, n, kk, img, ts, name);
        free(w);
        free(back);
        free(img);
    }
}

Test(roundtrip, special_groups)
{
    /* Per format, four blocks: a NaN, an infinity, all zeros, and values
     * past the 16-bit scales' range. */
    const int64_t n = 1, k = 128;
    for (size_t c = 0; c < NCONFIGS; c++) {
        const og_qweights_format *f = &CONFIGS[c];
        if (f->format == OG_QFORMAT_INT4 && f->group != 32)
            continue;
        char name[80], why[200] = "";
        config_name(f, name, sizeof name);
        ref_layout l = ref_layout_of(f, n, k);
        float w[128], back[128];
        for (int i = 0; i < 128; i++)
            w[i] = (float)(i % 7) - 3;
        w[5] = NAN;
        w[32 + 9] = -INFINITY;
        for (int i = 64; i < 96; i++)
            w[i] = 0;
        for (int i = 96; i < 128; i++)
            w[i] = (float)(i - 111) * 1e5f; /* up to 1.6e6: amax / 7 > 65504 */
        uint8_t *img = image_alloc(l.bytes);
        cr_assert_eq(og_qweights_encode(f, n, k, w, 1.0f, img, why, sizeof why), 0, "%s: %s", name,
                     why);
        cr_assert_eq(og_qweights_decode(f, n, k, img, 1.0f, back, why, sizeof why), 0, "%s: %s",
                     name, why);
        /* NVFP4's blocks are 16: the NaN and the infinity poison their half. */
        int span = f->format == OG_QFORMAT_NVFP4 ? 16 : 32;
        for (int i = 0; i < span; i++) {
            cr_expect(isnan(back[i]), "%s: NaN block element %d is %a", name, i, (double)back[i]);
            cr_expect(isnan(back[32 + i]), "%s: Inf block element %d is %a", name, i,
                      (double)back[32 + i]);
        }
        for (int i = 64; i < 96; i++)
            cr_expect_eq(back[i], 0.0f, "%s: zero block element %d is %a", name, i,
                         (double)back[i]);
        for (int i = 96; i < 128; i++)
            cr_expect(isfinite(back[i]), "%s: large block element %d is %a", name, i,
                      (double)back[i]);
        if (f->format == OG_QFORMAT_INT4 && f->scale == OG_QSCALE_F16 && f->zero == OG_QZERO_NONE) {
            /* amax / 7 = 228571 saturates to 65504: 1.6e6 comes back 7 * 65504. */
            cr_expect_eq(ref_scale(img, &l, 0, 3), 0x7BFFu, "%s: scale 0x%x", name,
                         ref_scale(img, &l, 0, 3));
            cr_expect_eq(back[127], 458528.0f, "%s: %a", name, (double)back[127]);
        }
        free(img);
    }
}

/* ---- packers: sources written in their own orderings ---- */

/* float16 bit patterns of assorted magnitudes and signs, distinct. */
static const uint16_t F16_SCALES[] = {0x3C00, 0x2E66, 0xB800, 0x7BFF, 0x0001, 0x5640,
                                      0x1400, 0xC500, 0x3555, 0x4248, 0x0400, 0xE3D0};
static const uint8_t E8M0_SCALES[] = {0x7F, 0x76, 0x85, 0x00, 0xFE, 0x01, 0x80, 0x7E, 0x90};
#define NF16 (sizeof F16_SCALES / sizeof F16_SCALES[0])
#define NE8M0 (sizeof E8M0_SCALES / sizeof E8M0_SCALES[0])

/* Random codes, n x k, 0..15 (or -128..127 as bytes when wide); every
 * pair (2i, 2i + 1) and (i, i + 16) of a block differs somewhere, so that
 * nibble swaps show. */
static uint8_t *random_codes(int64_t n, int64_t k, int wide, uint64_t seed)
{
    uint8_t *q = malloc((size_t)(n * k));
    cr_assert_not_null(q);
    for (int64_t i = 0; i < n * k; i++)
        q[i] = (uint8_t)(wide ? rnd(&seed) % 256 : rnd(&seed) % 16);
    if (!wide)
        for (int64_t i = 0; i < n * k; i += 32)
            q[i] = 1, q[i + 1] = 9, q[i + 16] = 14;
    else
        for (int64_t i = 0; i < n * k; i += 32)
            q[i] = 0x80, q[i + 1] = 0x7F;
    return q;
}

/* GGUF blocks of a row-major n x k tensor: Q4_0 and MXFP4 write the scale
 * (float16 d, little-endian, or E8M0 e) and qs[i] = q[i] | q[i + 16] << 4;
 * Q8_0 d and the 32 int8 codes. The scale of block c is scales[c % count]. */
static uint8_t *gguf_blocks(og_gguf_type type, int64_t n, int64_t k, const uint8_t *q, size_t *size)
{
    size_t bb = type == OG_GGUF_Q4_0 ? 18 : type == OG_GGUF_Q8_0 ? 34 : 17;
    int64_t count = n * k / 32;
    uint8_t *src = malloc((size_t)count * bb), *p = src;
    cr_assert_not_null(src);
    for (int64_t c = 0; c < count; c++, p += bb) {
        const uint8_t *e = q + c * 32;
        if (type == OG_GGUF_MXFP4) {
            p[0] = E8M0_SCALES[c % NE8M0];
        } else {
            p[0] = (uint8_t)F16_SCALES[c % NF16];
            p[1] = (uint8_t)(F16_SCALES[c % NF16] >> 8);
        }
        if (type == OG_GGUF_Q8_0) {
            memcpy(p + 2, e, 32);
            continue;
        }
        uint8_t *qs = p + (type == OG_GGUF_Q4_0 ? 2 : 1);
        for (int i = 0; i < 16; i++)
            qs[i] = (uint8_t)(e[i] | e[i + 16] << 4);
    }
    *size = (size_t)count * bb;
    return src;
}

/* What ggml's dequantize_row_q4_0 / _q8_0 / _mxfp4 give for block c's
 * codes (MXFP4 by the OCP table: ggml's kvalues_mxfp4 has +0 for 0x8, and
 * the scales here avoid 0xFF, which ggml reads as 2^128). */
static void gguf_values(og_gguf_type type, int64_t n, int64_t k, const uint8_t *q, float *out)
{
    for (int64_t i = 0; i < n * k; i++) {
        int64_t c = i / 32;
        if (type == OG_GGUF_Q4_0)
            out[i] = to_f32((q[i] - 8) * ref_f16(F16_SCALES[c % NF16]));
        else if (type == OG_GGUF_Q8_0)
            out[i] = to_f32((int8_t)q[i] * ref_f16(F16_SCALES[c % NF16]));
        else
            out[i] = to_f32(FP4[q[i]] * ref_e8m0(E8M0_SCALES[c % NE8M0]));
    }
}

typedef int (*pack_fn)(const void *ctx, uint8_t *image, char *why, size_t len);

/* Packs (through fn), expects padding zero and the values want; returns
 * the image. */
static uint8_t *pack_and_check(const og_qweights_format *f, int64_t n, int64_t k, pack_fn fn,
                               const void *ctx, const float *want, float ts, const char *what)
{
    ref_layout l = ref_layout_of(f, n, k);
    uint8_t *img = image_alloc(l.bytes);
    char why[200] = "";
    cr_assert_eq(fn(ctx, img, why, sizeof why), 0, "%s: %s", what, why);
    expect_padding_zero(f, n, k, img, what);
    float *got = floats_alloc(n * k);
    cr_assert_eq(og_qweights_decode(f, n, k, img, ts, got, why, sizeof why), 0, "%s: %s", what,
                 why);
    expect_same(got, want, (size_t)(n * k), what);
    free(got);
    return img;
}

/* How many values of an image differ from want. */
static long image_mismatches(const og_qweights_format *f, int64_t n, int64_t k, const uint8_t *img,
                             float ts, const float *want)
{
    float *got = floats_alloc(n * k);
    char why[200] = "", first[200];
    cr_assert_eq(og_qweights_decode(f, n, k, img, ts, got, why, sizeof why), 0, "%s", why);
    long bad = mismatches(got, want, (size_t)(n * k), first, sizeof first);
    free(got);
    return bad;
}

typedef struct gguf_ctx {
    og_gguf_type type;
    int64_t n, k;
    const uint8_t *src;
} gguf_ctx;

static int pack_gguf(const void *ctx, uint8_t *image, char *why, size_t len)
{
    const gguf_ctx *c = ctx;
    return og_qweights_from_gguf(c->type, c->n, c->k, c->src, image, why, len);
}

static og_qweights_format gguf_format(og_gguf_type type)
{
    og_qweights_format f = {OG_QFORMAT_Q8_0, 0, 0, 0};
    if (type == OG_GGUF_Q4_0)
        f = (og_qweights_format){OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_NONE};
    if (type == OG_GGUF_MXFP4)
        f = MXFP4;
    return f;
}

Test(packers, gguf_blocks)
{
    static const og_gguf_type types[3] = {OG_GGUF_Q4_0, OG_GGUF_Q8_0, OG_GGUF_MXFP4};
    static const char *const names[3] = {"GGUF Q4_0", "GGUF Q8_0", "GGUF MXFP4"};
    /* ggml's type numbers (ggml.h, enum ggml_type). */
    cr_expect(OG_GGUF_Q4_0 == 2 && OG_GGUF_Q8_0 == 8 && OG_GGUF_MXFP4 == 39);
    const int64_t n = 3, k = 96; /* 3 blocks a row: scale rows padded */
    for (int t = 0; t < 3; t++) {
        og_qweights_format f = gguf_format(types[t]);
        uint8_t *q = random_codes(n, k, types[t] == OG_GGUF_Q8_0, 7 + (uint64_t)t);
        size_t size;
        uint8_t *src = gguf_blocks(types[t], n, k, q, &size);
        float *want = floats_alloc(n * k);
        gguf_values(types[t], n, k, q, want);
        gguf_ctx ctx = {types[t], n, k, src};
        uint8_t *img = pack_and_check(&f, n, k, pack_gguf, &ctx, want, 0, names[t]);
        free(img);
        free(want);
        free(src);
        free(q);
    }
}

Test(packers, gguf_q8_0_is_ggml_quantize)
{
    /* Blocks written as ggml's quantize_row_q8_0_ref does, from random
     * values, equal og_qweights_encode's image byte for byte. */
    const int64_t n = 7, k = 96;
    float w[7 * 96];
    uint64_t seed = 5;
    for (int i = 0; i < n * k; i++)
        w[i] = (float)(rnd_unit(&seed) * ldexp(1.0, i / 96 * 3 - 9));
    /* A block of ties: d = 1, and x * id = +-(m + 0.5), which roundf takes
     * away from zero (3.5 -> 4, -2.5 -> -3), not to even. */
    w[32] = 127;
    for (int i = 1; i < 32; i++)
        w[32 + i] = (float)((i % 2 ? 1 : -1) * (i / 2 + 0.5));
    uint8_t *src = malloc((size_t)(n * k / 32 * 34)), *p = src;
    cr_assert_not_null(src);
    for (int c = 0; c < n * k / 32; c++, p += 34) {
        const float *x = w + c * 32;
        float amax = 0;
        for (int i = 0; i < 32; i++)
            amax = fmaxf(amax, fabsf(x[i]));
        const float d = amax / ((1 << 7) - 1);
        const float id = d ? 1.0f / d : 0.0f;
        uint16_t h = og_f32_to_f16(d, OG_ROUND_NEAREST_EVEN);
        p[0] = (uint8_t)h, p[1] = (uint8_t)(h >> 8);
        for (int i = 0; i < 32; i++) {
            const float x0 = x[i] * id;
            p[2 + i] = (uint8_t)(int8_t)roundf(x0);
        }
    }
    ref_layout l = ref_layout_of(&Q8_0, n, k);
    uint8_t *a = image_alloc(l.bytes), *b = image_alloc(l.bytes);
    char why[200] = "";
    cr_assert_eq(og_qweights_from_gguf(OG_GGUF_Q8_0, n, k, src, a, why, sizeof why), 0, "%s", why);
    cr_assert_eq(og_qweights_encode(&Q8_0, n, k, w, 0, b, why, sizeof why), 0, "%s", why);
    cr_expect(memcmp(a, b, (size_t)l.bytes) == 0, "Q8_0: encode differs from ggml's blocks");
    free(a);
    free(b);
    free(src);
}

/* transformers' gpt-oss planes: blocks[j][b][i] = q[2i] | q[2i + 1] << 4,
 * scales[j][b]; value FP4_VALUES[q] * 2^(scale - 127) (torch.ldexp). */
typedef struct planes_ctx {
    int64_t n, k;
    const uint8_t *blocks, *scales;
} planes_ctx;

static int pack_planes(const void *ctx, uint8_t *image, char *why, size_t len)
{
    const planes_ctx *c = ctx;
    return og_qweights_from_mxfp4_planes(c->n, c->k, c->blocks, c->scales, image, why, len);
}

static void planes_of_codes(int64_t n, int64_t k, const uint8_t *q, uint8_t *blocks,
                            uint8_t *scales)
{
    for (int64_t j = 0; j < n; j++)
        for (int64_t g = 0; g < k / 32; g++) {
            int64_t c = j * (k / 32) + g;
            scales[c] = E8M0_SCALES[c % NE8M0];
            for (int i = 0; i < 16; i++)
                blocks[c * 16 + i] = (uint8_t)(q[c * 32 + 2 * i] | q[c * 32 + 2 * i + 1] << 4);
        }
}

Test(packers, mxfp4_planes_and_gguf_agree)
{
    const int64_t n = 7, k = 160;
    uint8_t *q = random_codes(n, k, 0, 11);
    uint8_t *blocks = malloc((size_t)(n * k / 2)), *scales = malloc((size_t)(n * k / 32));
    cr_assert(blocks && scales);
    planes_of_codes(n, k, q, blocks, scales);
    float *want = floats_alloc(n * k);
    for (int64_t i = 0; i < n * k; i++)
        want[i] = to_f32(ldexp(FP4[q[i]], (int)scales[i / 32] - 127));
    planes_ctx pc = {n, k, blocks, scales};
    uint8_t *a = pack_and_check(&MXFP4, n, k, pack_planes, &pc, want, 0, "transformers MXFP4");
    /* The same codes and scales as GGUF MXFP4 blocks: the same image. */
    size_t size;
    uint8_t *src = gguf_blocks(OG_GGUF_MXFP4, n, k, q, &size);
    gguf_ctx gc = {OG_GGUF_MXFP4, n, k, src};
    uint8_t *b = pack_and_check(&MXFP4, n, k, pack_gguf, &gc, want, 0, "GGUF MXFP4");
    cr_expect(memcmp(a, b, (size_t)ref_layout_of(&MXFP4, n, k).bytes) == 0,
              "GGUF and transformers MXFP4 images differ");
    free(a);
    free(b);
    free(src);
    free(want);
    free(blocks);
    free(scales);
    free(q);
}

typedef struct nvfp4_ctx {
    int64_t n, k;
    const uint8_t *packed, *scales;
} nvfp4_ctx;

static int pack_nvfp4(const void *ctx, uint8_t *image, char *why, size_t len)
{
    const nvfp4_ctx *c = ctx;
    return og_qweights_from_nvfp4(c->n, c->k, c->packed, c->scales, image, why, len);
}

Test(packers, nvfp4)
{
    static const uint8_t e4m3[] = {0x38, 0x7E, 0x01, 0x45, 0x2A, 0x7F, 0x50, 0x08, 0x33};
    const int64_t n = 3, k = 96;
    const float ts = 0.75f;
    uint8_t *q = random_codes(n, k, 0, 13);
    uint8_t *packed = calloc((size_t)(n * k / 2), 1), *scales = malloc((size_t)(n * k / 16));
    cr_assert(packed && scales);
    for (int64_t i = 0; i < n * k; i++)
        packed[i / 2] |= (uint8_t)(q[i] << (i % 2 * 4));
    for (int64_t c = 0; c < n * k / 16; c++)
        scales[c] = e4m3[c % sizeof e4m3];
    float *want = floats_alloc(n * k);
    for (int64_t i = 0; i < n * k; i++)
        want[i] = to_f32(FP4[q[i]] * ref_e4m3(scales[i / 16]) * ts);
    nvfp4_ctx ctx = {n, k, packed, scales};
    uint8_t *img = pack_and_check(&NVFP4, n, k, pack_nvfp4, &ctx, want, ts, "NVFP4");
    free(img);
    /* og_nvfp4_encode's output, block by block, packs to og_qweights_encode's image. */
    float w[3 * 96];
    uint64_t seed = 17;
    for (int i = 0; i < n * k; i++)
        w[i] = (float)rnd_unit(&seed) * 3.0f;
    for (int64_t c = 0; c < n * k / 16; c++)
        og_nvfp4_encode(w + c * 16, ts, &scales[c], packed + c * 8);
    ref_layout l = ref_layout_of(&NVFP4, n, k);
    uint8_t *a = image_alloc(l.bytes), *b = image_alloc(l.bytes);
    char why[200] = "";
    cr_assert_eq(og_qweights_from_nvfp4(n, k, packed, scales, a, why, sizeof why), 0, "%s", why);
    cr_assert_eq(og_qweights_encode(&NVFP4, n, k, w, ts, b, why, sizeof why), 0, "%s", why);
    cr_expect(memcmp(a, b, (size_t)l.bytes) == 0, "NVFP4: packed encode differs from encode");
    free(a);
    free(b);
    free(want);
    free(packed);
    free(scales);
    free(q);
}

/* ONNX Runtime's MatMulNBits (bits 4): B (N, blocks, block / 2), element 2i
 * of a blob in the low nibble of its byte i; scales (N, blocks); packed
 * zero_points (N, ceil(blocks / 2)) uint8, block 2i in the low nibble, or
 * (N, blocks) of the scale's type; absent: 8. Value (q - zp) * scale. */
typedef struct nbits_src {
    og_qweights_format f;
    int64_t n, k, blocks;
    uint8_t *b;
    uint16_t *scales, *fzeros;
    uint8_t *zeros;
} nbits_src;

static const uint16_t BF16_SCALES[] = {0x3F80, 0x3DCD, 0xBF00, 0x7F7F, 0x0001,
                                       0x42CA, 0x3A80, 0xC0A0, 0x3EAB, 0x4049};
static const uint16_t F16_ZEROS[] = {0x4780, 0x0001, 0xC280, 0x4800, 0x0000, 0x4B80, 0x3E00};
static const uint16_t BF16_ZEROS[] = {0x40F0, 0x3080, 0xC050, 0x4100, 0x0000, 0x4170, 0x3FC0};

static nbits_src nbits_make(const og_qweights_format *f, int64_t n, int64_t k, const uint8_t *q)
{
    nbits_src s = {*f, n, k, k / (f->group ? f->group : k), NULL, NULL, NULL, NULL};
    int64_t zb = (s.blocks + 1) / 2;
    s.b = calloc((size_t)(n * k / 2), 1);
    s.scales = malloc((size_t)(n * s.blocks) * 2);
    s.fzeros = malloc((size_t)(n * s.blocks) * 2);
    s.zeros = malloc((size_t)(n * zb));
    cr_assert(s.b && s.scales && s.fzeros && s.zeros);
    for (int64_t i = 0; i < n * k; i++)
        s.b[i / 2] |= (uint8_t)(q[i] << (i % 2 * 4));
    /* Padding nibbles of the packed zero points hold garbage (0xF). */
    memset(s.zeros, 0xFF, (size_t)(n * zb));
    for (int64_t j = 0; j < n; j++)
        for (int64_t b = 0; b < s.blocks; b++) {
            int64_t c = j * s.blocks + b;
            int bf = f->scale == OG_QSCALE_BF16;
            s.scales[c] = bf ? BF16_SCALES[c % 10] : F16_SCALES[c % NF16];
            s.fzeros[c] = bf ? BF16_ZEROS[c % 7] : F16_ZEROS[c % 7];
            unsigned z = (unsigned)(c * 5 + 3) % 16;
            uint8_t *p = s.zeros + j * zb + b / 2;
            *p = (uint8_t)((*p & ~(15 << (b % 2 * 4))) | z << (b % 2 * 4));
        }
    return s;
}

static void nbits_free(nbits_src *s)
{
    free(s->b);
    free(s->scales);
    free(s->fzeros);
    free(s->zeros);
}

static void nbits_values(const nbits_src *s, const uint8_t *q, float *out)
{
    int64_t block = s->k / s->blocks, zb = (s->blocks + 1) / 2;
    for (int64_t j = 0; j < s->n; j++)
        for (int64_t i = 0; i < s->k; i++) {
            int64_t b = i / block, c = j * s->blocks + b;
            double z = 8;
            if (s->f.zero == OG_QZERO_UINT4)
                z = (s->zeros[j * zb + b / 2] >> (b % 2 * 4)) & 15;
            else if (s->f.zero == OG_QZERO_FLOAT)
                z = ref_half(s->fzeros[c], s->f.scale);
            float d = to_f32(q[j * s->k + i] - z);
            out[j * s->k + i] = to_f32((double)d * ref_half(s->scales[c], s->f.scale));
        }
}

static int pack_nbits(const void *ctx, uint8_t *image, char *why, size_t len)
{
    const nbits_src *s = ctx;
    const void *zeros = s->f.zero == OG_QZERO_UINT4   ? (const void *)s->zeros
                        : s->f.zero == OG_QZERO_FLOAT ? (const void *)s->fzeros
                                                      : NULL;
    return og_qweights_from_matmulnbits(&s->f, s->n, s->k, s->b, s->scales, zeros, image, why, len);
}

Test(packers, matmulnbits)
{
    static const struct {
        og_qweights_format f;
        int64_t k;
    } cases[] = {
        {{OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_UINT4}, 96}, /* 3 blocks: a padding nibble */
        {{OG_QFORMAT_INT4, 32, OG_QSCALE_BF16, OG_QZERO_UINT4}, 160},
        {{OG_QFORMAT_INT4, 64, OG_QSCALE_F16, OG_QZERO_FLOAT}, 128},
        {{OG_QFORMAT_INT4, 32, OG_QSCALE_BF16, OG_QZERO_FLOAT}, 96},
        {{OG_QFORMAT_INT4, 128, OG_QSCALE_BF16, OG_QZERO_NONE}, 256},
        {{OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_NONE}, 96},
        {{OG_QFORMAT_INT4, 0, OG_QSCALE_F16, OG_QZERO_UINT4}, 64}, /* per channel: block_size K */
    };
    const int64_t n = 7;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const og_qweights_format *f = &cases[c].f;
        int64_t k = cases[c].k;
        char name[80];
        snprintf(name, sizeof name, "MatMulNBits ");
        config_name(f, name + strlen(name), sizeof name - strlen(name));
        uint8_t *q = random_codes(n, k, 0, 19 + c);
        nbits_src s = nbits_make(f, n, k, q);
        float *want = floats_alloc(n * k);
        nbits_values(&s, q, want);
        uint8_t *img = pack_and_check(f, n, k, pack_nbits, &s, want, 0, name);
        free(img);
        free(want);
        nbits_free(&s);
        free(q);
    }
}

Test(packers, q4_0_and_matmulnbits_agree)
{
    /* GGUF Q4_0 and MatMulNBits (group 32, float16, no zero points) of the
     * same codes and scales give one image. */
    const og_qweights_format f = {OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_NONE};
    const int64_t n = 3, k = 128;
    uint8_t *q = random_codes(n, k, 0, 23);
    size_t size;
    uint8_t *src = gguf_blocks(OG_GGUF_Q4_0, n, k, q, &size);
    nbits_src s = nbits_make(&f, n, k, q);
    for (int64_t c = 0; c < n * k / 32; c++)
        s.scales[c] = F16_SCALES[c % NF16]; /* gguf_blocks' */
    ref_layout l = ref_layout_of(&f, n, k);
    uint8_t *a = image_alloc(l.bytes), *b = image_alloc(l.bytes);
    char why[200] = "";
    cr_assert_eq(og_qweights_from_gguf(OG_GGUF_Q4_0, n, k, src, a, why, sizeof why), 0, "%s", why);
    cr_assert_eq(pack_nbits(&s, b, why, sizeof why), 0, "%s", why);
    cr_expect(memcmp(a, b, (size_t)l.bytes) == 0, "GGUF Q4_0 and MatMulNBits images differ");
    free(a);
    free(b);
    nbits_free(&s);
    free(src);
    free(q);
}

Test(packers, refusals)
{
    uint8_t src[64] = {0}, img[256];
    uint16_t scales[8] = {0};
    char why[200] = "";
    cr_expect_eq(og_qweights_from_gguf(3, 1, 32, src, img, why, sizeof why), -1);
    cr_expect(strstr(why, "GGUF type (3)") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_from_gguf(OG_GGUF_Q4_0, 1, 2881, src, img, why, sizeof why), -1);
    cr_expect(strstr(why, "K (2881)") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_from_gguf(OG_GGUF_Q4_0, 1, 32, NULL, img, why, sizeof why), -1);
    cr_expect(strstr(why, "NULL") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_from_mxfp4_planes(1, 32, src, NULL, img, why, sizeof why), -1);
    cr_expect(strstr(why, "scales") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_from_nvfp4(0, 32, src, src, img, why, sizeof why), -1);
    cr_expect(strstr(why, "N (0)") != NULL, "\"%s\"", why);
    og_qweights_format mx = MXFP4, u4 = {OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_UINT4},
                       none = {OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_NONE},
                       g48 = {OG_QFORMAT_INT4, 48, OG_QSCALE_F16, OG_QZERO_NONE};
    cr_expect_eq(og_qweights_from_matmulnbits(&mx, 1, 32, src, scales, NULL, img, why, sizeof why),
                 -1);
    cr_expect(strstr(why, "MatMulNBits") != NULL && strstr(why, "MXFP4") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_from_matmulnbits(&u4, 1, 32, src, scales, NULL, img, why, sizeof why),
                 -1);
    cr_expect(strstr(why, "zero points") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_from_matmulnbits(&none, 1, 32, src, scales, src, img, why, sizeof why),
                 -1);
    cr_expect(strstr(why, "zero points") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_from_matmulnbits(&g48, 1, 96, src, scales, NULL, img, why, sizeof why),
                 -1);
    cr_expect(strstr(why, "group (48)") != NULL, "\"%s\"", why);
}

/* ---- planted faults: each must make the comparison above fail ---- */

Test(faults, swapped_nibbles_are_caught)
{
    const int64_t n = 3, k = 96;
    const og_qweights_format q4 = gguf_format(OG_GGUF_Q4_0);
    uint8_t *q = random_codes(n, k, 0, 29);
    float *want = floats_alloc(n * k);
    gguf_values(OG_GGUF_Q4_0, n, k, q, want);
    /* A packer that took qs[i]'s high nibble for element i: the same as a
     * source with every qs byte's nibbles swapped. */
    size_t size;
    uint8_t *src = gguf_blocks(OG_GGUF_Q4_0, n, k, q, &size);
    for (size_t c = 0; c < size; c += 18)
        for (int i = 0; i < 16; i++)
            src[c + 2 + i] = (uint8_t)(src[c + 2 + i] >> 4 | src[c + 2 + i] << 4);
    ref_layout l = ref_layout_of(&q4, n, k);
    uint8_t *img = image_alloc(l.bytes);
    char why[200] = "";
    cr_assert_eq(og_qweights_from_gguf(OG_GGUF_Q4_0, n, k, src, img, why, sizeof why), 0, "%s",
                 why);
    long bad = image_mismatches(&q4, n, k, img, 0, want);
    cr_expect_gt(bad, n * k / 4, "Q4_0 with swapped nibbles: only %ld mismatches", bad);
    /* An image whose code bytes were written high nibble first (the even
     * element in the high nibble), from a right MatMulNBits packing. */
    nbits_src s = nbits_make(&q4, n, k, q);
    for (int64_t c = 0; c < n * k / 32; c++)
        s.scales[c] = F16_SCALES[c % NF16];
    uint8_t *good = pack_and_check(&q4, n, k, pack_nbits, &s, want, 0, "MatMulNBits as Q4_0");
    for (uint64_t i = 0; i < l.sat; i++)
        good[i] = (uint8_t)(good[i] >> 4 | good[i] << 4);
    bad = image_mismatches(&q4, n, k, good, 0, want);
    cr_expect_gt(bad, n * k / 4, "image with swapped nibbles: only %ld mismatches", bad);
    /* transformers' planes read with the GGUF split order. */
    uint8_t *blocks = malloc((size_t)(n * k / 2)), *scales = malloc((size_t)(n * k / 32));
    cr_assert(blocks && scales);
    planes_of_codes(n, k, q, blocks, scales);
    float *mxwant = floats_alloc(n * k);
    for (int64_t i = 0; i < n * k; i++)
        mxwant[i] = to_f32(ldexp(FP4[q[i]], (int)scales[i / 32] - 127));
    uint8_t *gsrc = malloc((size_t)(n * k / 32 * 17));
    cr_assert_not_null(gsrc);
    for (int64_t c = 0; c < n * k / 32; c++) {
        gsrc[c * 17] = scales[c];
        memcpy(gsrc + c * 17 + 1, blocks + c * 16, 16); /* interleaved bytes, taken as split */
    }
    cr_assert_eq(og_qweights_from_gguf(OG_GGUF_MXFP4, n, k, gsrc, img, why, sizeof why), 0, "%s",
                 why);
    bad = image_mismatches(&MXFP4, n, k, img, 0, mxwant);
    cr_expect_gt(bad, n * k / 4, "planes taken as GGUF order: only %ld mismatches", bad);
    free(gsrc);
    free(mxwant);
    free(blocks);
    free(scales);
    free(good);
    nbits_free(&s);
    free(img);
    free(src);
    free(want);
    free(q);
}

Test(faults, next_block_scale_is_caught)
{
    const int64_t n = 3, k = 96;
    const og_qweights_format q4 = gguf_format(OG_GGUF_Q4_0);
    uint8_t *q = random_codes(n, k, 0, 31);
    float *want = floats_alloc(n * k);
    gguf_values(OG_GGUF_Q4_0, n, k, q, want);
    /* A packer that took block c + 1's d for block c. */
    size_t size;
    uint8_t *src = gguf_blocks(OG_GGUF_Q4_0, n, k, q, &size);
    for (size_t c = 0; c + 18 < size; c += 18)
        memcpy(src + c, src + c + 18, 2);
    ref_layout l = ref_layout_of(&q4, n, k);
    uint8_t *img = image_alloc(l.bytes);
    char why[200] = "";
    cr_assert_eq(og_qweights_from_gguf(OG_GGUF_Q4_0, n, k, src, img, why, sizeof why), 0, "%s",
                 why);
    long bad = image_mismatches(&q4, n, k, img, 0, want);
    cr_expect_gt(bad, n * k / 2, "Q4_0 with the next block's scale: only %ld mismatches", bad);
    free(img);
    /* An image whose scale rows lost their padding (row j at j * blocks
     * bytes, not j * scale_row_bytes): rows after the first go wrong. */
    uint8_t *blocks = malloc((size_t)(n * k / 2)), *scales = malloc((size_t)(n * k / 32));
    cr_assert(blocks && scales);
    planes_of_codes(n, k, q, blocks, scales);
    float *mxwant = floats_alloc(n * k);
    for (int64_t i = 0; i < n * k; i++)
        mxwant[i] = to_f32(ldexp(FP4[q[i]], (int)scales[i / 32] - 127));
    planes_ctx pc = {n, k, blocks, scales};
    img = pack_and_check(&MXFP4, n, k, pack_planes, &pc, mxwant, 0, "transformers MXFP4");
    ref_layout ml = ref_layout_of(&MXFP4, n, k);
    memset(img + ml.sat, 0, (size_t)(n * ml.srow));
    memcpy(img + ml.sat, scales, (size_t)(n * k / 32));
    bad = image_mismatches(&MXFP4, n, k, img, 0, mxwant);
    cr_expect_gt(bad, k, "scale rows without padding: only %ld mismatches", bad);
    /* And the planes with each block given the next one's scale. */
    memmove(scales, scales + 1, (size_t)(n * k / 32 - 1));
    uint8_t *img2 = image_alloc(ml.bytes);
    cr_assert_eq(og_qweights_from_mxfp4_planes(n, k, blocks, scales, img2, why, sizeof why), 0,
                 "%s", why);
    bad = image_mismatches(&MXFP4, n, k, img2, 0, mxwant);
    cr_expect_gt(bad, n * k / 2, "planes with the next block's scale: only %ld mismatches", bad);
    free(img2);
    free(img);
    free(mxwant);
    free(blocks);
    free(scales);
    free(src);
    free(want);
    free(q);
}

/* ---- shapes: many rows, each with padding ---- */

Test(shapes, gpt_oss_rows_cross_padding)
{
    /* N = 7 rows of K = 2880 (gpt-oss): every plane's rows carry padding
     * (90 MXFP4 scales in 96 bytes, 45 uint4 zero points in 32, ...), and
     * the reference reads every row at its own offset. */
    const int64_t n = 7, k = 2880;
    for (size_t c = 0; c < NCONFIGS; c++) {
        const og_qweights_format *f = &CONFIGS[c];
        if (f->format == OG_QFORMAT_INT4 && f->group == 128)
            continue;
        char name[80], why[200] = "";
        config_name(f, name, sizeof name);
        ref_layout l = ref_layout_of(f, n, k);
        float *w = floats_alloc(n * k);
        uint8_t *img = image_alloc(l.bytes);
        uint64_t seed = 41 + c;
        for (int64_t i = 0; i < n * k; i++)
            w[i] = (float)(rnd_unit(&seed) * ldexp(1.0, (int)(i / k) - 3));
        cr_assert_eq(og_qweights_encode(f, n, k, w, 0.01f, img, why, sizeof why), 0, "%s: %s", name,
                     why);
        expect_padding_zero(f, n, k, img, name);
        expect_decodes_like_reference(f, n, k, img, 0.01f, name);
        /* Each row within its bounds, with its own scales (read at the
         * reference's offsets). */
        float *back = floats_alloc(n * k);
        cr_assert_eq(og_qweights_decode(f, n, k, img, 0.01f, back, why, sizeof why), 0, "%s", why);
        check_bounds(f, n, k, w, img, back, 0.01f, name);
        free(back);
        free(w);
        free(img);
    }
}

/* The text form: every format's canonical name parses back to it, the
 * options of INT4 in any order name one format, and other texts are
 * refused. */
Test(layout, format_names)
{
    static const int groups[] = {0, 32, 64, 128};
    for (int f = 0; f < 4; f++)
        for (int g = 0; g < 4; g++)
            for (int s = 0; s < 2; s++)
                for (int z = 0; z < 3; z++) {
                    int int4 = f == OG_QFORMAT_INT4;
                    if (!int4 && (g || s || z))
                        continue;
                    og_qweights_format fmt = {(og_qformat)f, int4 ? groups[g] : 0, (og_qscale)s,
                                              (og_qzero)z},
                                       back;
                    char name[64];
                    cr_assert_eq(og_qweights_format_name(&fmt, name, sizeof name), 0);
                    cr_assert_eq(og_qweights_format_parse(name, &back), 0, "%s", name);
                    cr_expect_eq(memcmp(&fmt, &back, sizeof fmt), 0, "%s", name);
                }
    og_qweights_format fmt;
    char name[64];
    cr_assert_eq(og_qweights_format_parse("int4:uint4:bf16:g128", &fmt), 0);
    cr_assert_eq(og_qweights_format_name(&fmt, name, sizeof name), 0);
    cr_expect_str_eq(name, "int4:g128:bf16:uint4");
    cr_assert_eq(og_qweights_format_parse("int4", &fmt), 0);
    cr_assert_eq(og_qweights_format_name(&fmt, name, sizeof name), 0);
    cr_expect_str_eq(name, "int4:g32:f16:none");
    cr_expect_eq(og_qweights_format_name(&fmt, name, 8), -1, "a short buffer");
    static const char *const bad[] = {"",         "int4:",         "int4:g100", "int4:g0",
                                      "int4:f32", "mxfp4:g32",     "int4::g64", "q4_0",
                                      "MXFP4",    "int4:g64:gc:x", "nvfp4:f16", "int4:g0128"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_eq(og_qweights_format_parse(bad[i], &fmt), -1, "'%s' taken", bad[i]);
    fmt = (og_qweights_format){.format = (og_qformat)4};
    cr_expect_eq(og_qweights_format_name(&fmt, name, sizeof name), -1);
}
