/* Number formats on the host (onegpu_formats.h).
 *
 * Every encoder ends in round_mag(), which rounds the exact value, held as a
 * double, to a format given by its fraction width and smallest normal
 * exponent. A double holds every float32 exactly, and also the quotients the
 * block formats divide by (see og_nvfp4_encode), so each conversion rounds
 * once. Decoders build the value with ldexpf, which is exact for every code. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "onegpu_formats.h"

/* A sign-magnitude binary format: m fraction bits, normal exponents from
 * emin (subnormals below), `max` the largest finite code magnitude and
 * `sign` the sign bit. For the IEEE-style formats (float16, bfloat16, TF32,
 * E5M2) max + 1 is +Inf and the codes above it are NaNs. */
typedef struct fmt {
    int m, emin;
    uint32_t max, sign;
} fmt;

static const fmt F16 = {10, -14, 0x7BFF, 0x8000};
static const fmt BF16 = {7, -126, 0x7F7F, 0x8000};
static const fmt TF32 = {10, -126, 0x3FBFF, 0x40000}; /* 19 bits: 1 + 8 + 10 */
static const fmt E4M3 = {3, -6, 0x7E, 0x80};
static const fmt E5M2 = {2, -14, 0x7B, 0x80};
static const fmt E2M3 = {3, 0, 0x1F, 0x20};
static const fmt E3M2 = {2, -2, 0x1F, 0x20};
static const fmt E2M1 = {1, 0, 0x7, 0x8};

/* The rounding of a magnitude: once the sign is known, up and down become
 * toward zero or away from it. */
typedef enum mag_rounding { MAG_NEAREST_EVEN, MAG_TRUNCATE, MAG_AWAY } mag_rounding;

static mag_rounding mag_rounding_of(og_rounding r, int negative)
{
    switch (r) {
    case OG_ROUND_TOWARD_ZERO:
        return MAG_TRUNCATE;
    case OG_ROUND_UP:
        return negative ? MAG_TRUNCATE : MAG_AWAY;
    case OG_ROUND_DOWN:
        return negative ? MAG_AWAY : MAG_TRUNCATE;
    default:
        return MAG_NEAREST_EVEN;
    }
}

static uint32_t f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float f32_from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* The finite magnitude a >= 0 rounded to f, as a code magnitude (biased
 * exponent above m fraction bits) computed as if f's exponent had no upper
 * limit: a result above f->max means overflow, for the caller to resolve.
 * Codes grow with values, so a carry out of the fraction (1.111 + 0.001)
 * lands on the next binade's code, and one out of the subnormals on the
 * smallest normal, without a special case. */
static uint32_t round_mag(double a, const fmt *f, mag_rounding mode)
{
    if (a == 0)
        return 0;
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    /* a = sig * 2^(e - 52) with bit 52 of sig set. A subnormal double, read
     * this way, is still far below half the smallest subnormal of every
     * format here, which is all that matters for it. */
    int e = (int)(bits >> 52) - 1023;
    uint64_t sig = (bits & 0xFFFFFFFFFFFFFull) | 1ull << 52;
    /* The result's last fraction bit weighs 2^(max(e, emin) - m): sig loses
     * `shift` bits, at least 52 - m. From 54 on, all of sig lies below half
     * of that bit. */
    int binade = e > f->emin ? e : f->emin;
    int shift = binade - f->m - (e - 52);
    uint64_t kept = 0, rest = sig, half = 1ull << 53;
    if (shift < 54) {
        kept = sig >> shift;
        rest = sig & ((1ull << shift) - 1);
        half = 1ull << (shift - 1);
    }
    int up = mode == MAG_AWAY           ? rest != 0
             : mode == MAG_NEAREST_EVEN ? rest > half || (rest == half && (kept & 1))
                                        : 0;
    return ((uint32_t)(binade - f->emin) << f->m) + (uint32_t)kept + (uint32_t)up;
}

/* round_mag with its overflow resolved: truncation never leaves the range
 * (IEEE 754 7.4 gives the largest finite value), the others give `overflow`
 * (Inf, NaN or, saturating, f->max). */
static uint32_t finite_code(double a, const fmt *f, mag_rounding mode, uint32_t overflow)
{
    uint32_t c = round_mag(a, f, mode);
    if (c <= f->max)
        return c;
    return mode == MAG_TRUNCATE ? f->max : overflow;
}

/* float32 -> the IEEE-style format f. NaN keeps its sign and the top bits of
 * its fraction, with the quiet bit set, so it can never come out as Inf. */
static uint32_t encode_ieee(float x, const fmt *f, mag_rounding mode, uint32_t overflow)
{
    uint32_t u = f32_bits(x), mag = u & 0x7FFFFFFFu, sign = u >> 31 ? f->sign : 0;
    uint32_t inf = f->max + 1, frac_mask = (1u << f->m) - 1;
    if (mag > 0x7F800000u)
        return sign | inf | (1u << (f->m - 1)) | ((mag >> (23 - f->m)) & frac_mask);
    if (mag == 0x7F800000u)
        return sign | inf;
    return sign | finite_code(fabs((double)x), f, mode, overflow);
}

/* float32 -> a format without Inf or NaN (FP6, FP4): nearest even, saturating;
 * NaN becomes zero with its sign (onegpu_formats.h says why). */
static uint8_t encode_saturating(float x, const fmt *f)
{
    uint32_t sign = signbit(x) ? f->sign : 0;
    if (isnan(x))
        return (uint8_t)sign;
    if (isinf(x))
        return (uint8_t)(sign | f->max);
    return (uint8_t)(sign | finite_code(fabsf(x), f, MAG_NEAREST_EVEN, f->max));
}

/* The value of the finite code magnitude c of f. */
static float value(uint32_t c, const fmt *f)
{
    uint32_t e = c >> f->m, frac = c & ((1u << f->m) - 1);
    if (e == 0)
        return ldexpf((float)frac, f->emin - f->m);
    return ldexpf((float)(frac | 1u << f->m), (int)e - 1 + f->emin - f->m);
}

/* A quiet float32 NaN with the given sign and fraction bits below the quiet bit. */
static float quiet_nan(int negative, uint32_t payload)
{
    return f32_from_bits((negative ? 0x80000000u : 0) | 0x7FC00000u | payload);
}

/* A code of f (high bits beyond the sign ignored) as a float32; if
 * ieee, the codes above max are Inf and NaNs, with their payload kept. */
static float decode(uint32_t c, const fmt *f, int ieee)
{
    uint32_t mag = c & (f->sign - 1);
    int negative = (c & f->sign) != 0;
    if (ieee && mag > f->max + 1)
        return quiet_nan(negative, (mag & ((1u << f->m) - 1)) << (23 - f->m));
    float v = ieee && mag == f->max + 1 ? INFINITY : value(mag, f);
    return negative ? -v : v;
}

uint16_t og_f32_to_f16(float x, og_rounding r)
{
    return (uint16_t)encode_ieee(x, &F16, mag_rounding_of(r, signbit(x)), F16.max + 1);
}

float og_f16_to_f32(uint16_t h)
{
    return decode(h, &F16, 1);
}

uint16_t og_f32_to_bf16(float x, og_rounding r)
{
    return (uint16_t)encode_ieee(x, &BF16, mag_rounding_of(r, signbit(x)), BF16.max + 1);
}

float og_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        u |= 0x00400000u;
    return f32_from_bits(u);
}

float og_f32_round_tf32(float x, og_rounding r)
{
    uint32_t c = encode_ieee(x, &TF32, mag_rounding_of(r, signbit(x)), TF32.max + 1);
    /* TF32's exponent is float32's, so the code's magnitude only moves up
     * past the 13 dropped fraction bits. */
    return f32_from_bits((c & TF32.sign ? 0x80000000u : 0) | (c & (TF32.sign - 1)) << 13);
}

uint8_t og_f32_to_e4m3(float x, og_overflow o)
{
    uint8_t sign = signbit(x) ? 0x80 : 0;
    if (!isfinite(x))
        return sign | 0x7F;
    uint32_t overflow = o == OG_OVERFLOW_SATURATING ? E4M3.max : 0x7F;
    return (uint8_t)(sign | finite_code(fabsf(x), &E4M3, MAG_NEAREST_EVEN, overflow));
}

float og_e4m3_to_f32(uint8_t v)
{
    if ((v & 0x7F) == 0x7F)
        return quiet_nan(v >> 7, 0);
    return decode(v, &E4M3, 0);
}

uint8_t og_f32_to_e5m2(float x, og_overflow o)
{
    uint32_t overflow = o == OG_OVERFLOW_SATURATING ? E5M2.max : E5M2.max + 1;
    return (uint8_t)encode_ieee(x, &E5M2, MAG_NEAREST_EVEN, overflow);
}

float og_e5m2_to_f32(uint8_t v)
{
    return decode(v, &E5M2, 1);
}

uint8_t og_f32_to_e2m3(float x)
{
    return encode_saturating(x, &E2M3);
}

float og_e2m3_to_f32(uint8_t v)
{
    return decode(v, &E2M3, 0);
}

uint8_t og_f32_to_e3m2(float x)
{
    return encode_saturating(x, &E3M2);
}

float og_e3m2_to_f32(uint8_t v)
{
    return decode(v, &E3M2, 0);
}

uint8_t og_f32_to_e2m1(float x)
{
    return encode_saturating(x, &E2M1);
}

float og_e2m1_to_f32(uint8_t v)
{
    return decode(v, &E2M1, 0);
}

uint8_t og_f32_to_e8m0(float x, og_rounding r)
{
    if (!(x > 0) || isinf(x))
        return 0xFF;
    /* x = frac * 2^k with frac in [1, 2), exactly (subnormals too): the
     * candidates are codes k + 127 and k + 128. */
    int k = ilogbf(x);
    float frac = ldexpf(x, -k);
    int code = k + 127, up;
    switch (mag_rounding_of(r, 0)) {
    case MAG_AWAY:
        up = frac > 1;
        break;
    case MAG_NEAREST_EVEN:
        up = frac > 1.5f || (frac == 1.5f && code % 2 != 0);
        break;
    default:
        up = 0;
    }
    code += up;
    return (uint8_t)(code < 0 ? 0 : code > 254 ? 254 : code);
}

float og_e8m0_to_f32(uint8_t v)
{
    return v == 0xFF ? quiet_nan(0, 0) : ldexpf(1, v - 127);
}

static const fmt *const MX_FORMAT[] = {
    [OG_MX_E4M3] = &E4M3, [OG_MX_E5M2] = &E5M2, [OG_MX_E2M3] = &E2M3,
    [OG_MX_E3M2] = &E3M2, [OG_MX_E2M1] = &E2M1,
};

static float (*const MX_DECODE[])(uint8_t) = {
    [OG_MX_E4M3] = og_e4m3_to_f32, [OG_MX_E5M2] = og_e5m2_to_f32, [OG_MX_E2M3] = og_e2m3_to_f32,
    [OG_MX_E3M2] = og_e3m2_to_f32, [OG_MX_E2M1] = og_e2m1_to_f32,
};

void og_mx_encode(og_mx_element t, const float x[OG_MX_BLOCK], uint8_t *scale,
                  uint8_t codes[OG_MX_BLOCK])
{
    const fmt *f = MX_FORMAT[t];
    float amax = 0;
    for (int i = 0; i < OG_MX_BLOCK; i++) {
        if (!isfinite(x[i])) {
            *scale = 0xFF;
            memset(codes, 0, OG_MX_BLOCK);
            return;
        }
        amax = fmaxf(amax, fabsf(x[i]));
    }
    /* The element type's largest exponent, that of its largest value. */
    int emax = (int)(f->max >> f->m) - 1 + f->emin;
    /* floor(log2(amax)) - emax: ilogbf is exact, subnormals included. Finite
     * floats keep it at most 127 - 2, so only the bottom of E8M0's range
     * needs a clamp, which also serves log2(0) = -Inf. */
    int shared = amax > 0 ? ilogbf(amax) - emax : -127;
    if (shared < -127)
        shared = -127;
    *scale = (uint8_t)(shared + 127);
    for (int i = 0; i < OG_MX_BLOCK; i++) {
        /* Exact: |x| / 2^shared stays far inside double's range. */
        double a = ldexp(fabs((double)x[i]), -shared);
        uint32_t sign = signbit(x[i]) ? f->sign : 0;
        codes[i] = (uint8_t)(sign | finite_code(a, f, MAG_NEAREST_EVEN, f->max));
    }
}

void og_mx_decode(og_mx_element t, uint8_t scale, const uint8_t codes[OG_MX_BLOCK],
                  float out[OG_MX_BLOCK])
{
    for (int i = 0; i < OG_MX_BLOCK; i++)
        out[i] = scale == 0xFF ? quiet_nan(0, 0) : ldexpf(MX_DECODE[t](codes[i]), scale - 127);
}

/* Both NVFP4 quotients are rounded to double and then to the narrow format,
 * which equals rounding the exact quotient once: the operands have at most
 * 24 and 28 significant bits, so a quotient that is not exactly a rounding
 * midpoint of E4M3 or E2M1 (at most 5 significant bits) differs from every
 * such midpoint by more than 2^-32 relative, far more than double's error. */
void og_nvfp4_encode(const float x[OG_NVFP4_BLOCK], float tensor_scale, uint8_t *scale_e4m3,
                     uint8_t packed[OG_NVFP4_BLOCK / 2])
{
    int valid = tensor_scale > 0 && !isinf(tensor_scale);
    double amax = 0;
    for (int i = 0; i < OG_NVFP4_BLOCK; i++) {
        valid &= isfinite(x[i]) != 0;
        amax = fmax(amax, fabs((double)x[i]));
    }
    memset(packed, 0, OG_NVFP4_BLOCK / 2);
    if (!valid) {
        *scale_e4m3 = 0x7F;
        return;
    }
    *scale_e4m3 =
        (uint8_t)finite_code(amax / (6.0 * tensor_scale), &E4M3, MAG_NEAREST_EVEN, E4M3.max);
    double block = (double)og_e4m3_to_f32(*scale_e4m3) * tensor_scale; /* exact */
    for (int i = 0; i < OG_NVFP4_BLOCK; i++) {
        uint32_t c = signbit(x[i]) ? E2M1.sign : 0;
        if (block > 0)
            c |= finite_code(fabs((double)x[i]) / block, &E2M1, MAG_NEAREST_EVEN, E2M1.max);
        packed[i / 2] |= (uint8_t)(c << (i % 2 * 4));
    }
}

void og_nvfp4_decode(float tensor_scale, uint8_t scale_e4m3,
                     const uint8_t packed[OG_NVFP4_BLOCK / 2], float out[OG_NVFP4_BLOCK])
{
    double block = (double)og_e4m3_to_f32(scale_e4m3) * tensor_scale;
    for (int i = 0; i < OG_NVFP4_BLOCK; i++)
        out[i] = (float)(og_e2m1_to_f32((uint8_t)(packed[i / 2] >> (i % 2 * 4))) * block);
}

float og_nvfp4_tensor_scale(float amax)
{
    double want = fabs((double)amax) / (6.0 * 448.0);
    float s = (float)want;
    if (s < want)
        s = nextafterf(s, INFINITY);
    return s < FLT_MIN ? FLT_MIN : s;
}
