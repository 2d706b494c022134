/* GGUF's K-quants on the host (onegpu_formats.h, "Low-bit weight
 * matrices"): Q4_K and Q6_K blocks are written here from their fields by
 * the test's own encoder, in ggml's block layouts (block_q4_K: d, dmin,
 * scales[12], qs[128]; block_q6_K: ql[128], qh[64], scales[16], d), and
 * their values come from ggml's dequantisation formulas (dequantize_row_q4_K
 * and _q6_K), also written here and applied to the bytes; the packer
 * (og_qweights_from_gguf) and the reference decoder (og_qweights_decode)
 * must give those values bit for bit. Also: the layout and the format's
 * names, og_qweights_encode's error bound, and planted faults in the
 * sub-block scales, which the comparison must catch. Only float16's value
 * (ref_f16) is shared with the other low-bit weight tests. */
#include "og_qweights_ref.h"

#define QK 256
#define Q4K_BYTES 144
#define Q6K_BYTES 210

/* ---- the test's encoder: fields -> GGUF bytes ---- */

typedef struct q4k_fields {
    uint16_t d, dmin;
    uint8_t sc[8], m[8]; /* 6 bits each */
    uint8_t q[QK];       /* 0..15 */
} q4k_fields;

typedef struct q6k_fields {
    uint16_t d;
    int8_t sc[16];
    uint8_t q[QK]; /* 0..63 */
} q6k_fields;

/* block_q4_K: sub-blocks 0-3 keep their 6-bit scale and min in bytes 0-3
 * and 4-7 of scales[]; sub-blocks 4-7 put their low 4 bits in bytes 8-11
 * (scale low, min high) and their top 2 bits in bits 6-7 of bytes 0-3
 * (scale) and 4-7 (min). qs: weights 64c + l and 64c + 32 + l share byte
 * 32c + l, the first in the low nibble. */
static void q4k_block(const q4k_fields *f, uint8_t *out)
{
    memset(out, 0, Q4K_BYTES);
    out[0] = (uint8_t)f->d, out[1] = (uint8_t)(f->d >> 8);
    out[2] = (uint8_t)f->dmin, out[3] = (uint8_t)(f->dmin >> 8);
    uint8_t *scales = out + 4, *qs = out + 16;
    for (int j = 0; j < 8; j++) {
        if (j < 4) {
            scales[j] |= f->sc[j];
            scales[j + 4] |= f->m[j];
        } else {
            scales[j + 4] = (uint8_t)((f->sc[j] & 0xF) | (f->m[j] & 0xF) << 4);
            scales[j - 4] |= (uint8_t)((f->sc[j] >> 4) << 6);
            scales[j] |= (uint8_t)((f->m[j] >> 4) << 6);
        }
    }
    for (int c = 0; c < 4; c++)
        for (int l = 0; l < 32; l++)
            qs[32 * c + l] = (uint8_t)(f->q[64 * c + l] | f->q[64 * c + 32 + l] << 4);
}

/* block_q6_K: in each half h of 128 weights, weight h + 32p + l (p = 0..3,
 * l < 32) has its low nibble in ql[64h/128 .. ] as dequantize_row_q6_K
 * reads it and its top 2 bits in bits 2p of qh[32h/128 + l]. */
static void q6k_block(const q6k_fields *f, uint8_t *out)
{
    memset(out, 0, Q6K_BYTES);
    uint8_t *ql = out, *qh = out + 128;
    for (int half = 0; half < 2; half++)
        for (int l = 0; l < 32; l++)
            for (int p = 0; p < 4; p++) {
                unsigned q = f->q[128 * half + 32 * p + l];
                uint8_t *low = &ql[64 * half + l + (p % 2) * 32];
                *low |= (uint8_t)((q & 0xF) << (p >= 2 ? 4 : 0));
                qh[32 * half + l] |= (uint8_t)((q >> 4) << (2 * p));
            }
    memcpy(out + 192, f->sc, 16);
    out[208] = (uint8_t)f->d, out[209] = (uint8_t)(f->d >> 8);
}

/* ---- ggml's dequantisation, on the bytes ---- */

/* Sub-block s's 6-bit scale (want_min 0) or min from scales[12]
 * (get_scale_min_k4). */
static unsigned q4k_scale(const uint8_t *scales, int s, int want_min)
{
    if (want_min)
        return s < 4 ? scales[s + 4] & 63u : (unsigned)(scales[s + 4] >> 4 | (scales[s] >> 6) << 4);
    return s < 4 ? scales[s] & 63u : (unsigned)((scales[s + 4] & 0xF) | (scales[s - 4] >> 6) << 4);
}

static void q4k_values(const uint8_t *blk, float *y)
{
    const float d = (float)ref_f16(blk[0] | blk[1] << 8), min = (float)ref_f16(blk[2] | blk[3] << 8);
    const uint8_t *scales = blk + 4, *q = blk + 16;
    for (int j = 0, is = 0; j < QK; j += 64, is += 2, q += 32) {
        unsigned sc[2], m[2];
        for (int t = 0; t < 2; t++)
            sc[t] = q4k_scale(scales, is + t, 0), m[t] = q4k_scale(scales, is + t, 1);
        const float d1 = d * (float)sc[0], m1 = min * (float)m[0];
        const float d2 = d * (float)sc[1], m2 = min * (float)m[1];
        for (int l = 0; l < 32; l++)
            *y++ = d1 * (float)(q[l] & 0xF) - m1;
        for (int l = 0; l < 32; l++)
            *y++ = d2 * (float)(q[l] >> 4) - m2;
    }
}

static void q6k_values(const uint8_t *blk, float *y)
{
    const float d = (float)ref_f16(blk[208] | blk[209] << 8);
    const uint8_t *ql = blk, *qh = blk + 128;
    const int8_t *sc = (const int8_t *)(blk + 192);
    for (int n = 0; n < QK; n += 128, y += 128, ql += 64, qh += 32, sc += 8)
        for (int l = 0; l < 32; l++) {
            int is = l / 16;
            int q1 = ((ql[l] & 0xF) | ((qh[l] >> 0) & 3) << 4) - 32;
            int q2 = ((ql[l + 32] & 0xF) | ((qh[l] >> 2) & 3) << 4) - 32;
            int q3 = ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32;
            int q4 = ((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32;
            y[l] = d * (float)sc[is] * (float)q1;
            y[l + 32] = d * (float)sc[is + 2] * (float)q2;
            y[l + 64] = d * (float)sc[is + 4] * (float)q3;
            y[l + 96] = d * (float)sc[is + 6] * (float)q4;
        }
}

/* ---- sources ---- */

/* float16 d's: normal, subnormal, negative, the largest. */
static const uint16_t DS[] = {0x2C00, 0x1E66, 0x0003, 0xA400, 0x3555, 0x7BFF, 0x1001, 0x3C00};
#define NDS (sizeof DS / sizeof DS[0])

/* n x k weights as GGUF blocks of type t from random fields (raw: random
 * bytes, any d including NaN and Inf), and their values by ggml's formula. */
static uint8_t *gguf_source(og_gguf_type t, int64_t n, int64_t k, int raw, uint64_t seed,
                            float *values)
{
    int q4 = t == OG_GGUF_Q4_K;
    size_t bytes = q4 ? Q4K_BYTES : Q6K_BYTES, blocks = (size_t)(n * k / QK);
    uint8_t *src = malloc(blocks * bytes);
    cr_assert_not_null(src);
    for (size_t b = 0; b < blocks; b++) {
        uint8_t *blk = src + b * bytes;
        if (raw) {
            for (size_t i = 0; i < bytes; i++)
                blk[i] = (uint8_t)rnd(&seed);
        } else if (q4) {
            q4k_fields f;
            f.d = DS[b % NDS], f.dmin = DS[(b + 3) % NDS];
            for (int s = 0; s < 8; s++)
                f.sc[s] = (uint8_t)(rnd(&seed) % 64), f.m[s] = (uint8_t)(rnd(&seed) % 64);
            for (int i = 0; i < QK; i++)
                f.q[i] = (uint8_t)(rnd(&seed) % 16);
            q4k_block(&f, blk);
        } else {
            q6k_fields f;
            f.d = DS[b % NDS];
            for (int s = 0; s < 16; s++)
                f.sc[s] = (int8_t)(rnd(&seed) % 256);
            for (int i = 0; i < QK; i++)
                f.q[i] = (uint8_t)(rnd(&seed) % 64);
            q6k_block(&f, blk);
        }
        (q4 ? q4k_values : q6k_values)(blk, values + b * QK);
    }
    return src;
}

static og_qweights_format format_of(og_gguf_type t)
{
    og_qweights_format f = {t == OG_GGUF_Q4_K ? OG_QFORMAT_Q4_K : OG_QFORMAT_Q6_K, 0, 0, 0};
    return f;
}

/* The image's bytes as the header lays them out: code rows of K/2 (Q4_K) or
 * 3K/4 bytes, scale rows of 16 bytes a super-block (Q4_K) or 18 rounded up
 * to 16 (Q6_K). */
static uint64_t image_bytes(og_gguf_type t, int64_t n, int64_t k, uint64_t *scales_at,
                            uint64_t *scale_row)
{
    uint64_t code_row = t == OG_GGUF_Q4_K ? (uint64_t)k / 2 : (uint64_t)k * 3 / 4;
    *scale_row = t == OG_GGUF_Q4_K ? (uint64_t)k / 16 : ((uint64_t)k / QK * 18 + 15) / 16 * 16;
    *scales_at = (uint64_t)n * code_row;
    return *scales_at + (uint64_t)n * *scale_row;
}

/* Packs src and decodes the image; returns how many values differ from
 * want (the first described in first), checking the canary past the image
 * and, for Q6_K, the scale rows' padding. */
static long pack_mismatches(og_gguf_type t, int64_t n, int64_t k, const uint8_t *src,
                            const float *want, char *first, size_t len)
{
    og_qweights_format f = format_of(t);
    uint64_t sat, srow, bytes = image_bytes(t, n, k, &sat, &srow);
    uint8_t *img = image_alloc(bytes);
    char why[200] = "";
    cr_assert_eq(og_qweights_from_gguf(t, n, k, src, img, why, sizeof why), 0, "%s", why);
    expect_canary(img, bytes, "the packed image");
    for (int64_t j = 0; j < n; j++)
        for (uint64_t i = (uint64_t)k / QK * (t == OG_GGUF_Q4_K ? 16 : 18); i < srow; i++)
            cr_assert_eq(img[sat + (uint64_t)j * srow + i], 0, "row %" PRId64 "'s scale padding",
                         j);
    float *got = floats_alloc(n * k);
    cr_assert_eq(og_qweights_decode(&f, n, k, img, 0, got, why, sizeof why), 0, "%s", why);
    expect_canary(got, (uint64_t)(n * k) * sizeof(float), "the decoded values");
    long bad = mismatches(got, want, (size_t)(n * k), first, len);
    free(got);
    free(img);
    return bad;
}

static const og_gguf_type TYPES[2] = {OG_GGUF_Q4_K, OG_GGUF_Q6_K};

/* ---- tests ---- */

Test(kquants, gguf_blocks_pack_and_decode)
{
    /* ggml's type numbers (ggml.h, enum ggml_type). */
    cr_expect(OG_GGUF_Q4_K == 12 && OG_GGUF_Q6_K == 14);
    const int64_t n = 3, k = 768; /* 3 super-blocks a row: Q6_K's scale rows padded */
    for (int t = 0; t < 2; t++)
        for (int raw = 0; raw < 2; raw++) {
            float *want = floats_alloc(n * k);
            uint8_t *src = gguf_source(TYPES[t], n, k, raw, 41 + (uint64_t)(2 * t + raw), want);
            char first[200] = "";
            long bad = pack_mismatches(TYPES[t], n, k, src, want, first, sizeof first);
            cr_expect_eq(bad, 0, "%s %s: %ld values differ; %s", t ? "Q6_K" : "Q4_K",
                         raw ? "random bytes" : "blocks from fields", bad, first);
            free(src);
            free(want);
        }
}

Test(kquants, layout_and_names)
{
    for (int t = 0; t < 2; t++) {
        og_qweights_format f = format_of(TYPES[t]);
        og_qweights_layout l;
        char why[200] = "";
        cr_assert_eq(og_qweights_layout_of(&f, 5, 1280, &l, why, sizeof why), 0, "%s", why);
        uint64_t sat, srow;
        cr_expect_eq(l.bytes, image_bytes(TYPES[t], 5, 1280, &sat, &srow));
        cr_expect_eq(l.scales_at, sat);
        cr_expect_eq(l.scale_row_bytes, srow);
        cr_expect_eq(l.block, QK);
        cr_expect_eq(l.code_bits, t ? 6 : 4);
        /* K a multiple of 32 but not of the super-block. */
        cr_expect_eq(og_qweights_layout_of(&f, 5, 2880, &l, why, sizeof why), -1);
        cr_expect(strstr(why, "K (2880)") && strstr(why, "super-block (256)"), "%s", why);
        /* INT4's options belong to INT4. */
        f.group = 32;
        cr_expect_eq(og_qweights_layout_of(&f, 5, 1280, &l, why, sizeof why), -1);
        cr_expect(strstr(why, t ? "Q6_K" : "Q4_K"), "%s", why);
        og_qweights_format p;
        const char *name = t ? "q6_k" : "q4_k";
        cr_expect_eq(og_qweights_format_parse(name, &p), 0, "%s", name);
        cr_expect_eq(p.format, t ? OG_QFORMAT_Q6_K : OG_QFORMAT_Q4_K);
        char buf[32];
        cr_expect_eq(og_qweights_format_name(&p, buf, sizeof buf), 0);
        cr_expect_str_eq(buf, name);
        char opt[32];
        snprintf(opt, sizeof opt, "%s:g32", name);
        cr_expect_eq(og_qweights_format_parse(opt, &p), -1, "%s", opt);
    }
}

/* og_qweights_encode's min-max rule: every weight within half a step of
 * its sub-block (d * sc / 2) plus half a min step (dmin / 2) and the
 * scale's rounding over the 15 (Q4_K) or 31 (Q6_K) steps of the range
 * (8 d, 16 d), d and dmin read from the image; zeros stay zeros; a super-
 * block holding a NaN decodes to NaN alone. */
Test(kquants, encode_within_its_steps)
{
    const int64_t n = 4, k = 768;
    uint64_t seed = 77;
    float *w = floats_alloc(n * k), *got = floats_alloc(n * k);
    for (int64_t i = 0; i < n * k; i++) {
        /* Sub-blocks of different ranges, some all positive or all negative. */
        double range = ldexp(1.0, (int)(i / 32 % 7) - 3), shift = (i / 64 % 3 - 1) * range;
        w[i] = (float)(rnd_unit(&seed) * range + shift);
    }
    for (int64_t i = 256; i < 512; i++)
        w[i] = 0; /* row 0's second super-block */
    w[2 * k + 300] = NAN;
    for (int t = 0; t < 2; t++) {
        og_qweights_format f = format_of(TYPES[t]);
        uint64_t sat, srow, bytes = image_bytes(TYPES[t], n, k, &sat, &srow);
        uint8_t *img = image_alloc(bytes);
        char why[200] = "";
        cr_assert_eq(og_qweights_encode(&f, n, k, w, 0, img, why, sizeof why), 0, "%s", why);
        expect_canary(img, bytes, "the encoded image");
        cr_assert_eq(og_qweights_decode(&f, n, k, img, 0, got, why, sizeof why), 0, "%s", why);
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < k; i++) {
                int64_t b = i / QK;
                const uint8_t *s = img + sat + (uint64_t)j * srow;
                float x = w[j * k + i], y = got[j * k + i];
                if (j == 2 && b == 1) {
                    cr_expect(isnan(y), "%s: (%" PRId64 ", %" PRId64 ") of a NaN block is %g",
                              t ? "Q6_K" : "Q4_K", j, i, (double)y);
                    continue;
                }
                double bound;
                if (t == 0) {
                    double d = ref_f16(s[16 * b] | s[16 * b + 1] << 8);
                    double dmin = ref_f16(s[16 * b + 2] | s[16 * b + 3] << 8);
                    unsigned sc = q4k_scale(s + 16 * b + 4, (int)(i % QK / 32), 0);
                    bound = 0.5 * d * sc + 0.5 * dmin + 8 * d;
                } else {
                    double d = ref_f16(s[16 * (k / QK) + 2 * b] | s[16 * (k / QK) + 2 * b + 1] << 8);
                    bound = 0.5 * d * abs((int8_t)s[i / 16]) + 16 * d;
                }
                bound = bound * (1 + 1e-6) + 1e-30;
                cr_expect(fabs((double)y - x) <= bound,
                          "%s: (%" PRId64 ", %" PRId64 ") encodes %.9g as %.9g (bound %.3g)",
                          t ? "Q6_K" : "Q4_K", j, i, (double)x, (double)y, bound);
                if (j == 0 && b == 1)
                    cr_expect_eq(bits(y), 0u, "a zero block decodes to +0, not %a", (double)y);
            }
        free(img);
    }
    free(w);
    free(got);
}

/* ---- planted faults: each must make the comparison above fail ---- */

Test(faults, kquant_sub_block_scales_are_caught)
{
    const int64_t n = 2, k = 512;
    char first[200];
    for (int t = 0; t < 2; t++) {
        float *want = floats_alloc(n * k);
        uint8_t *src = gguf_source(TYPES[t], n, k, 0, 90 + (uint64_t)t, want);
        size_t bytes = t ? Q6K_BYTES : Q4K_BYTES;
        /* A packer that took the next sub-block's scale: Q4_K with scale
         * bytes 0-3 rotated (sub-blocks 0-3, and the top bits of 4-7); Q6_K
         * with scales[s + 1] for scales[s]. */
        for (size_t b = 0; b < (size_t)(n * k / QK); b++) {
            uint8_t *s = src + b * bytes + (t ? 192 : 4), keep = s[0];
            memmove(s, s + 1, t ? 15 : 3);
            s[t ? 15 : 3] = keep;
        }
        long bad = pack_mismatches(TYPES[t], n, k, src, want, first, sizeof first);
        cr_expect_gt(bad, n * k / (t ? 2 : 4), "%s with the next sub-block's scale: only %ld",
                     t ? "Q6_K" : "Q4_K", bad);
        free(src);
        /* Q4_K sub-blocks 4-7 without their top 2 bits; Q6_K without the
         * codes' high bits. */
        src = gguf_source(TYPES[t], n, k, 0, 90 + (uint64_t)t, want);
        for (size_t b = 0; b < (size_t)(n * k / QK); b++) {
            uint8_t *s = src + b * bytes + (t ? 128 : 4);
            for (int i = 0; i < (t ? 64 : 8); i++)
                s[i] &= t ? 0x00 : 0x3F;
        }
        bad = pack_mismatches(TYPES[t], n, k, src, want, first, sizeof first);
        cr_expect_gt(bad, t ? n * k / 2 : n * k / 8, "%s without the high bits: only %ld",
                     t ? "Q6_K" : "Q4_K", bad);
        free(src);
        free(want);
    }
}
