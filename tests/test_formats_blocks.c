/* Blocks of narrow numbers (onegpu_formats.h) against the reference of
 * og_formats_ref.h: MX blocks (32 FP8, FP6 or FP4 codes sharing an E8M0
 * scale) and NVFP4 blocks (16 E2M1 codes, an E4M3 scale and a float32
 * tensor scale): exact blocks round trip, every scale and code decodes per
 * the specification, saturation, NaN, Inf, zero and tiny blocks. */
#include "og_formats_ref.h"

/* ---- MX blocks ---- */

static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

typedef struct mx_type {
    og_mx_element t;
    int emax; /* from the MX spec's table */
    ref_fmt *(*ref)(void);
} mx_type;

static const mx_type MX_TYPES[] = {
    {OG_MX_E4M3, 8, ref_e4m3}, {OG_MX_E5M2, 15, ref_e5m2}, {OG_MX_E2M3, 2, ref_e2m3},
    {OG_MX_E3M2, 4, ref_e3m2}, {OG_MX_E2M1, 2, ref_e2m1},
};

/* A random code of t that is a number (not Inf or NaN). */
static uint32_t random_number_code(const ref_fmt *t, uint64_t *seed)
{
    for (;;) {
        uint32_t c = (uint32_t)(next_random(seed) % (t->sign * 2));
        if (isfinite(ref_value(t, c)))
            return c;
    }
}

/* Blocks of representable values come back exactly: random codes with one
 * element in the top binade, times a random scale. */
Test(mx, exact_blocks_round_trip)
{
    uint64_t seed = 1;
    for (size_t k = 0; k < sizeof MX_TYPES / sizeof *MX_TYPES; k++) {
        const mx_type *mt = &MX_TYPES[k];
        ref_fmt *t = mt->ref();
        for (int trial = 0; trial < 2000; trial++) {
            uint32_t scale = (uint32_t)(next_random(&seed) % (uint64_t)(255 - mt->emax));
            uint8_t codes[OG_MX_BLOCK], got_codes[OG_MX_BLOCK], got_scale;
            float x[OG_MX_BLOCK], back[OG_MX_BLOCK];
            for (int i = 0; i < OG_MX_BLOCK; i++)
                codes[i] = (uint8_t)random_number_code(t, &seed);
            uint32_t top;
            do
                top = random_number_code(t, &seed);
            while (ilogb(fabs(ref_value(t, top))) != mt->emax);
            codes[next_random(&seed) % OG_MX_BLOCK] = (uint8_t)top;
            for (int i = 0; i < OG_MX_BLOCK; i++) {
                double v = ldexp(ref_value(t, codes[i]), (int)scale - 127);
                x[i] = (float)v;
                cr_assert_eq((double)x[i], v);
            }
            og_mx_encode(mt->t, x, &got_scale, got_codes);
            cr_assert_eq(got_scale, scale, "%s: scale", t->name);
            cr_assert_arr_eq(got_codes, codes, OG_MX_BLOCK, "%s: codes", t->name);
            og_mx_decode(mt->t, got_scale, got_codes, back);
            cr_assert_arr_eq(back, x, sizeof x, "%s: values", t->name);
        }
        ref_free(t);
    }
}

/* Every scale with every code decodes to code * 2^(scale - 127), rounded
 * once to float32 (overflowing to Inf); scale 0xFF gives NaN. */
Test(mx, decode_every_scale_and_code)
{
    for (size_t k = 0; k < sizeof MX_TYPES / sizeof *MX_TYPES; k++) {
        const mx_type *mt = &MX_TYPES[k];
        ref_fmt *t = mt->ref();
        check ck = {0};
        for (uint32_t scale = 0; scale < 256; scale++)
            for (uint32_t base = 0; base < t->sign * 2; base += OG_MX_BLOCK) {
                uint8_t codes[OG_MX_BLOCK];
                float out[OG_MX_BLOCK];
                for (int i = 0; i < OG_MX_BLOCK; i++)
                    codes[i] = (uint8_t)((base + (uint32_t)i) % (t->sign * 2));
                og_mx_decode(mt->t, (uint8_t)scale, codes, out);
                for (int i = 0; i < OG_MX_BLOCK; i++) {
                    double v = ref_value(t, codes[i]);
                    if (scale == 0xFF || isnan(v)) {
                        if (!isnan(out[i]))
                            check_fail(&ck, "%s: scale 0x%x code 0x%x not NaN", t->name, scale,
                                       codes[i]);
                        continue;
                    }
                    float want = (float)ldexp(v, (int)scale - 127);
                    if (bits(out[i]) != bits(want))
                        check_fail(&ck, "%s: scale 0x%x code 0x%x gave %a, want %a", t->name, scale,
                                   codes[i], out[i], want);
                }
            }
        check_done(&ck, t->name);
        ref_free(t);
    }
}

/* Random blocks of every magnitude: the scale is floor(log2(amax)) - emax
 * (clamped to -127) and each code the saturated nearest-even rounding of
 * x / 2^shared, from frexp and the reference table. */
Test(mx, scale_and_codes_per_spec)
{
    uint64_t seed = 7;
    for (size_t k = 0; k < sizeof MX_TYPES / sizeof *MX_TYPES; k++) {
        const mx_type *mt = &MX_TYPES[k];
        ref_fmt *t = mt->ref();
        for (int trial = 0; trial < 20000; trial++) {
            float x[OG_MX_BLOCK];
            int center = (int)(next_random(&seed) % 290) - 160,
                spread = (int)(next_random(&seed) % 24);
            for (int i = 0; i < OG_MX_BLOCK; i++) {
                uint64_t r = next_random(&seed);
                double mant = (double)(r >> 40) / (double)(1ull << 24);
                int e = center - (int)((r >> 8) % (uint64_t)(spread + 1));
                x[i] = (float)ldexp(r & 1 ? -mant : mant, e > 127 ? 127 : e);
                if ((r >> 1) % 17 == 0)
                    x[i] = (r >> 2) & 1 ? -0.0f : 0.0f;
            }
            double amax = 0;
            for (int i = 0; i < OG_MX_BLOCK; i++)
                amax = fmax(amax, fabs((double)x[i]));
            int shared = -127;
            if (amax > 0) {
                int e;
                frexp(amax, &e);
                shared = e - 1 - mt->emax < -127 ? -127 : e - 1 - mt->emax;
            }
            uint8_t scale, codes[OG_MX_BLOCK];
            og_mx_encode(mt->t, x, &scale, codes);
            cr_assert_eq(scale, (uint8_t)(shared + 127), "%s: amax %a", t->name, amax);
            for (int i = 0; i < OG_MX_BLOCK; i++) {
                uint32_t c = ref_round(t, ldexp(fabs((double)x[i]), -shared), NEAREST_EVEN);
                uint32_t want = (signbit(x[i]) ? t->sign : 0) | (c == t->nfin ? t->nfin - 1 : c);
                cr_assert_eq(codes[i], want, "%s: %a with scale 0x%x", t->name, x[i], scale);
            }
        }
        ref_free(t);
    }
}

/* The spec's amax rounding case: the top binade's values above the largest
 * element saturate (E4M3: 500 / 2^0 is past 448, so 448). */
Test(mx, saturates_top_binade)
{
    float x[OG_MX_BLOCK] = {500.0f, -510.0f, 1.0f};
    uint8_t scale, codes[OG_MX_BLOCK];
    og_mx_encode(OG_MX_E4M3, x, &scale, codes);
    cr_assert_eq(scale, 127); /* floor(log2(510)) - 8 = 0 */
    cr_assert_eq(codes[0], 0x7E);
    cr_assert_eq(codes[1], 0xFE);
    cr_assert_eq(codes[2], 0x38);
    og_mx_encode(OG_MX_E2M1, x, &scale, codes);
    cr_assert_eq(scale, 127 + 6); /* floor(log2(510)) - 2 = 6: elements / 64 */
    cr_assert_eq(codes[0], 0x7);  /* 7.8 -> 6 */
    cr_assert_eq(codes[1], 0xF);
    cr_assert_eq(codes[2], 0x0); /* 1/64 -> 0 */
}

Test(mx, nan_and_inf_blocks)
{
    for (size_t k = 0; k < sizeof MX_TYPES / sizeof *MX_TYPES; k++) {
        for (int which = 0; which < 3; which++) {
            float x[OG_MX_BLOCK], out[OG_MX_BLOCK];
            uint8_t scale, codes[OG_MX_BLOCK], zero[OG_MX_BLOCK] = {0};
            for (int i = 0; i < OG_MX_BLOCK; i++)
                x[i] = (float)i - 3.5f;
            x[17] = which == 0 ? NAN : which == 1 ? INFINITY : -INFINITY;
            og_mx_encode(MX_TYPES[k].t, x, &scale, codes);
            cr_assert_eq(scale, 0xFF);
            cr_assert_arr_eq(codes, zero, OG_MX_BLOCK);
            og_mx_decode(MX_TYPES[k].t, scale, codes, out);
            for (int i = 0; i < OG_MX_BLOCK; i++)
                cr_assert(isnan(out[i]));
        }
    }
}

/* All zeros: scale 0x00 (2^-127), codes of zero with their signs; decodes
 * back to the same zeros. */
Test(mx, zero_block)
{
    for (size_t k = 0; k < sizeof MX_TYPES / sizeof *MX_TYPES; k++) {
        ref_fmt *t = MX_TYPES[k].ref();
        float x[OG_MX_BLOCK], out[OG_MX_BLOCK];
        uint8_t scale, codes[OG_MX_BLOCK];
        for (int i = 0; i < OG_MX_BLOCK; i++)
            x[i] = i % 3 ? 0.0f : -0.0f;
        og_mx_encode(MX_TYPES[k].t, x, &scale, codes);
        cr_assert_eq(scale, 0x00);
        for (int i = 0; i < OG_MX_BLOCK; i++)
            cr_assert_eq(codes[i], i % 3 ? 0 : t->sign);
        og_mx_decode(MX_TYPES[k].t, scale, codes, out);
        cr_assert_arr_eq(out, x, sizeof x);
        ref_free(t);
    }
}

/* A block of float32 subnormals: the shared exponent clamps at -127. */
Test(mx, tiny_block_clamps)
{
    float x[OG_MX_BLOCK] = {f32(0x00000003), f32(0x80000001)};
    uint8_t scale, codes[OG_MX_BLOCK];
    og_mx_encode(OG_MX_E5M2, x, &scale, codes);
    cr_assert_eq(scale, 0x00);
    /* 3 * 2^-149 / 2^-127 = 3 * 2^-22: below E5M2's 2^-16 / 2, so 0. */
    cr_assert_eq(codes[0], 0x00);
    cr_assert_eq(codes[1], 0x80);
    /* 1.5 * 2^-140 / 2^-127 = 1.5 * 2^-13, an E5M2 normal: exponent field
     * 2, fraction 0b10. */
    x[0] = 0x1.8p-140f;
    og_mx_encode(OG_MX_E5M2, x, &scale, codes);
    cr_assert_eq(scale, 0x00);
    cr_assert_eq(codes[0], 0x0A);
    float out[OG_MX_BLOCK];
    og_mx_decode(OG_MX_E5M2, scale, codes, out);
    cr_assert_eq(out[0], x[0]);
}

/* ---- NVFP4 ---- */

static float e2m1_value(uint32_t c)
{
    ref_fmt *t = ref_e2m1();
    double v = ref_value(t, c);
    ref_free(t);
    return (float)v;
}

/* Exact blocks come back exactly, with the scale and codes they were made of. */
Test(nvfp4, exact_blocks_round_trip)
{
    static const float tensor_scales[] = {1.0f, 0.5f, 0x1p-20f, 3.0f, 0.375f, 96.0f};
    ref_fmt *e4m3 = ref_e4m3(), *e2m1 = ref_e2m1();
    uint64_t seed = 3;
    for (size_t s = 0; s < sizeof tensor_scales / sizeof *tensor_scales; s++)
        for (int trial = 0; trial < 3000; trial++) {
            float ts = tensor_scales[s];
            uint32_t sc = 1 + (uint32_t)(next_random(&seed) % 0x7E); /* 0x01 .. 0x7E */
            uint32_t codes[OG_NVFP4_BLOCK];
            float x[OG_NVFP4_BLOCK], back[OG_NVFP4_BLOCK];
            for (int i = 0; i < OG_NVFP4_BLOCK; i++)
                codes[i] = (uint32_t)(next_random(&seed) % 16);
            codes[next_random(&seed) % OG_NVFP4_BLOCK] = next_random(&seed) & 1 ? 0x7 : 0xF;
            for (int i = 0; i < OG_NVFP4_BLOCK; i++) {
                double v = ref_value(e2m1, codes[i]) * ref_value(e4m3, sc) * ts;
                x[i] = (float)v;
                cr_assert_eq((double)x[i], v);
            }
            uint8_t scale, packed[OG_NVFP4_BLOCK / 2];
            og_nvfp4_encode(x, ts, &scale, packed);
            cr_assert_eq(scale, sc, "tensor scale %a", ts);
            for (int i = 0; i < OG_NVFP4_BLOCK; i++)
                cr_assert_eq((packed[i / 2] >> (i % 2 * 4)) & 0xF, codes[i]);
            og_nvfp4_decode(ts, scale, packed, back);
            cr_assert_arr_eq(back, x, sizeof x);
        }
    ref_free(e4m3);
    ref_free(e2m1);
}

/* Random blocks and tensor scales against the definition: scale =
 * E4M3(amax / (6 * tensor_scale)), codes = E2M1(x / (tensor_scale * scale)),
 * both nearest even and saturated, from quotients in double; decode is
 * code * scale * tensor_scale in one rounding. */
Test(nvfp4, scale_and_codes_per_definition)
{
    ref_fmt *e4m3 = ref_e4m3(), *e2m1 = ref_e2m1();
    uint64_t seed = 11;
    for (int trial = 0; trial < 50000; trial++) {
        uint64_t r0 = next_random(&seed);
        float ts =
            (float)ldexp(1.0 + (double)(r0 >> 41) / (double)(1ull << 23), (int)(r0 % 60) - 30);
        int center = (int)((r0 >> 8) % 60) - 30 + ilogbf(ts);
        float x[OG_NVFP4_BLOCK], out[OG_NVFP4_BLOCK];
        for (int i = 0; i < OG_NVFP4_BLOCK; i++) {
            uint64_t r = next_random(&seed);
            double mant = (double)(r >> 40) / (double)(1ull << 24);
            x[i] = (float)ldexp(r & 1 ? -mant : mant, center - (int)((r >> 8) % 6));
        }
        double amax = 0;
        for (int i = 0; i < OG_NVFP4_BLOCK; i++)
            amax = fmax(amax, fabs((double)x[i]));
        uint32_t sc = ref_round(e4m3, amax / (6.0 * ts), NEAREST_EVEN);
        sc = sc == e4m3->nfin ? 0x7E : sc;
        uint8_t scale, packed[OG_NVFP4_BLOCK / 2];
        og_nvfp4_encode(x, ts, &scale, packed);
        cr_assert_eq(scale, sc, "amax %a, tensor scale %a", amax, ts);
        double block = ref_value(e4m3, sc) * ts;
        og_nvfp4_decode(ts, scale, packed, out);
        for (int i = 0; i < OG_NVFP4_BLOCK; i++) {
            uint32_t c = block > 0 ? ref_round(e2m1, fabs((double)x[i]) / block, NEAREST_EVEN) : 0;
            c = (c == e2m1->nfin ? 0x7 : c) | (signbit(x[i]) ? 0x8 : 0);
            cr_assert_eq((packed[i / 2] >> (i % 2 * 4)) & 0xF, c, "%a in block of scale %a", x[i],
                         block);
            cr_assert_eq(bits(out[i]), bits((float)(ref_value(e2m1, c) * block)));
        }
    }
    ref_free(e4m3);
    ref_free(e2m1);
}

/* Element 2i in the low nibble, 2i + 1 in the high one. */
Test(nvfp4, packing_order)
{
    float x[OG_NVFP4_BLOCK] = {0.5f, 6.0f, 1.0f, -2.0f, -0.0f, 3.0f};
    uint8_t scale, packed[OG_NVFP4_BLOCK / 2];
    og_nvfp4_encode(x, 1.0f, &scale, packed);
    cr_assert_eq(scale, 0x38); /* 6 / 6 = 1.0 */
    cr_assert_eq(packed[0], 0x71);
    cr_assert_eq(packed[1], 0xC2);
    cr_assert_eq(packed[2], 0x58);
    cr_assert_eq(packed[3], 0x00);
    float out[OG_NVFP4_BLOCK];
    og_nvfp4_decode(1.0f, scale, packed, out);
    cr_assert_arr_eq(out, x, sizeof x);
}

Test(nvfp4, nan_inf_and_bad_tensor_scale)
{
    static const float bad_scales[] = {0.0f, -1.0f, NAN, INFINITY};
    uint8_t zero[OG_NVFP4_BLOCK / 2] = {0};
    for (int which = 0; which < 3 + 4; which++) {
        float x[OG_NVFP4_BLOCK], out[OG_NVFP4_BLOCK], ts = 1.0f;
        for (int i = 0; i < OG_NVFP4_BLOCK; i++)
            x[i] = (float)i * 0.25f;
        if (which < 3)
            x[5] = which == 0 ? NAN : which == 1 ? INFINITY : -INFINITY;
        else
            ts = bad_scales[which - 3];
        uint8_t scale, packed[OG_NVFP4_BLOCK / 2];
        og_nvfp4_encode(x, ts, &scale, packed);
        cr_assert_eq(scale, 0x7F, "case %d", which);
        cr_assert_arr_eq(packed, zero, sizeof zero);
        og_nvfp4_decode(1.0f, scale, packed, out);
        for (int i = 0; i < OG_NVFP4_BLOCK; i++)
            cr_assert(isnan(out[i]));
        og_nvfp4_decode(1.0f, 0xFF, packed, out);
        for (int i = 0; i < OG_NVFP4_BLOCK; i++)
            cr_assert(isnan(out[i]));
    }
}

Test(nvfp4, zero_and_saturated_blocks)
{
    float x[OG_NVFP4_BLOCK] = {-0.0f}, out[OG_NVFP4_BLOCK];
    uint8_t scale, packed[OG_NVFP4_BLOCK / 2];
    og_nvfp4_encode(x, 1.0f, &scale, packed);
    cr_assert_eq(scale, 0x00);
    cr_assert_eq(packed[0], 0x08); /* -0, then +0 */
    og_nvfp4_decode(1.0f, scale, packed, out);
    cr_assert_arr_eq(out, x, sizeof x);
    /* amax / 6 = 1000 is past E4M3's 448: the scale saturates, and so do the
     * elements (6000 / 448 = 13.4 -> 6; 100 / 448 = 0.22 -> 0). */
    x[0] = 6000.0f;
    x[1] = -100.0f;
    og_nvfp4_encode(x, 1.0f, &scale, packed);
    cr_assert_eq(scale, 0x7E);
    cr_assert_eq(packed[0], 0x87);
    /* amax / 6 at a tie of the smallest E4M3 subnormal, 2^-10: to 0. */
    float tiny[OG_NVFP4_BLOCK] = {6.0f * 0x1p-10f, 1e-4f};
    og_nvfp4_encode(tiny, 1.0f, &scale, packed);
    cr_assert_eq(scale, 0x00);
    cr_assert_eq(packed[0], 0x00);
    tiny[0] = 6.0f * 0x1.8p-10f;
    og_nvfp4_encode(tiny, 1.0f, &scale, packed);
    cr_assert_eq(scale, 0x01);
    /* 6 * 1.5 * 2^-10 / 2^-9 = 4.5: a tie between 4 (0x6) and 6 (0x7), to 4. */
    cr_assert_eq(e2m1_value(packed[0] & 0xF), 4.0f);
}

Test(nvfp4, tensor_scale)
{
    cr_assert_eq(og_nvfp4_tensor_scale(2688.0f), 1.0f);
    cr_assert_eq(og_nvfp4_tensor_scale(-2688.0f), 1.0f);
    cr_assert_eq(og_nvfp4_tensor_scale(0.0f), FLT_MIN);
    cr_assert_eq(og_nvfp4_tensor_scale(1e-40f), FLT_MIN);
    cr_assert(isnan(og_nvfp4_tensor_scale(NAN)));
    cr_assert(isinf(og_nvfp4_tensor_scale(INFINITY)));
    uint64_t seed = 5;
    for (int trial = 0; trial < 100000; trial++) {
        uint64_t r = next_random(&seed);
        float amax =
            (float)ldexp(1.0 + (double)(r >> 41) / (double)(1ull << 23), (int)(r % 200) - 80);
        float ts = og_nvfp4_tensor_scale(amax);
        double want = (double)amax / 2688.0;
        /* The smallest float32 at or above amax / 2688. */
        cr_assert((double)ts >= want && (double)nextafterf(ts, 0) < want, "amax %a gave %a", amax,
                  ts);
        /* So the block holding amax gets the scale 448 without saturating,
         * and amax the code of 6. */
        float x[OG_NVFP4_BLOCK] = {amax};
        uint8_t scale, packed[OG_NVFP4_BLOCK / 2];
        og_nvfp4_encode(x, ts, &scale, packed);
        cr_assert(amax / (6.0 * (double)ts) <= 448.0);
        cr_assert_eq(scale, 0x7E, "amax %a scale 0x%x", amax, scale);
        cr_assert_eq(packed[0], 0x07);
    }
}
