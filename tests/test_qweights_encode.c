/* Low-bit weight matrices written (og_qweights_encode) against the reference
 * of og_qweights_ref.h: values every format holds exactly are reproduced,
 * random values decode within the format's bounds, special groups, and
 * rows of gpt-oss's width whose every plane carries padding. */
#include "og_qweights_ref.h"

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
