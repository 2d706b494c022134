/* Low-bit weight matrices read (onegpu_formats.h, runtime/formats/og_qweights.c)
 * against the reference of og_qweights_ref.h: the layout of every format
 * (sizes, 16-byte rows, refusals), images written by hand decoded as the
 * reference decodes them, and the formats' text names. */
#include "og_qweights_ref.h"

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

/* The text form: every format's canonical name parses back to it, the
 * options of INT4 in any order name one format, and other texts are
 * refused. */
Test(layout, format_names)
{
    static const int groups[] = {0, 32, 64, 128};
    for (int f = 0; f <= OG_QFORMAT_Q6_K; f++)
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
    fmt = (og_qweights_format){.format = (og_qformat)(OG_QFORMAT_Q6_K + 1)};
    cr_expect_eq(og_qweights_format_name(&fmt, name, sizeof name), -1);
}
