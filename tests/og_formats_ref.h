/* The reference of the number-format tests (test_formats_convert.c,
 * test_formats_blocks.c), which never reuses the library's bit manipulation:
 * a code's value comes from the format's definition, in double:
 * (-1)^s * 2^(e - bias) * (1 + f / 2^M), or 2^(1 - bias) * f / 2^M when the
 * exponent field e is 0, with the format's Inf and NaN codes; a value is
 * rounded by listing the format's finite values in ascending order (plus the
 * value one code past the largest, which is where an overflowing value
 * rounds), finding the two that enclose |x| and choosing between them in
 * double: by distance, ties to the even code, or by direction. Failures in
 * loops are counted and reported once. */
#ifndef OG_FORMATS_REF_H
#define OG_FORMATS_REF_H

#include <criterion/criterion.h>

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onegpu_formats.h"

static inline float f32(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static inline uint32_t bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* ---- failures, counted in loops and reported once ---- */

typedef struct check {
    long failures;
    char first[320];
} check;

static inline void check_fail(check *ck, const char *fmt, ...)
{
    if (ck->failures++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ck->first, sizeof ck->first, fmt, ap);
        va_end(ap);
    }
}

static inline void check_done(const check *ck, const char *what)
{
    cr_assert_eq(ck->failures, 0, "%s: %ld failures, the first: %s", what, ck->failures, ck->first);
}

/* ---- the reference formats ---- */

typedef enum specials {
    SPECIALS_IEEE, /* all-ones exponent: Inf (fraction 0) and NaN */
    SPECIALS_E4M3, /* only S.1111.111 is NaN; no Inf */
    SPECIALS_NONE  /* every code is a finite number (FP6, FP4) */
} specials;

typedef struct ref_fmt {
    const char *name;
    int ebits, mbits, bias;
    specials sp;
    uint32_t sign; /* the sign bit */
    uint32_t nfin; /* positive finite codes are 0 .. nfin - 1, ascending in value */
    double *val;   /* val[c] for c <= nfin; val[nfin] is what code nfin would be
                      worth with a wider exponent: where overflowing values round */
} ref_fmt;

/* 2^(e - bias) * (1 + f / 2^M) */
static inline double ref_normal(const ref_fmt *t, uint32_t e, uint32_t f)
{
    return ldexp(1.0 + ldexp((double)f, -t->mbits), (int)e - t->bias);
}

/* The value of code c by the format's definition (NaN codes give NaN). */
static inline double ref_value(const ref_fmt *t, uint32_t c)
{
    uint32_t e = (c >> t->mbits) & ((1u << t->ebits) - 1), f = c & ((1u << t->mbits) - 1);
    uint32_t emax_field = (1u << t->ebits) - 1;
    double v;
    if (t->sp == SPECIALS_IEEE && e == emax_field)
        v = f ? NAN : INFINITY;
    else if (t->sp == SPECIALS_E4M3 && e == emax_field && f == (1u << t->mbits) - 1)
        v = NAN;
    else if (e == 0)
        v = ldexp((double)f, 1 - t->bias - t->mbits);
    else
        v = ref_normal(t, e, f);
    return c & t->sign ? -v : v;
}

static inline ref_fmt *ref_make(const char *name, int ebits, int mbits, int bias, specials sp)
{
    ref_fmt *t = calloc(1, sizeof *t);
    cr_assert_not_null(t);
    *t = (ref_fmt){.name = name, .ebits = ebits, .mbits = mbits, .bias = bias, .sp = sp};
    t->sign = 1u << (ebits + mbits);
    t->nfin = sp == SPECIALS_IEEE   ? ((1u << ebits) - 1) << mbits
              : sp == SPECIALS_E4M3 ? t->sign - 1
                                    : t->sign;
    t->val = malloc((t->nfin + 1) * sizeof *t->val);
    cr_assert_not_null(t->val);
    for (uint32_t c = 0; c < t->nfin; c++) {
        t->val[c] = ref_value(t, c);
        cr_assert(isfinite(t->val[c]) && (c == 0 || t->val[c] > t->val[c - 1]),
                  "%s: code 0x%x out of order", name, c);
    }
    t->val[t->nfin] = ref_normal(t, t->nfin >> mbits, t->nfin & ((1u << mbits) - 1));
    return t;
}

static inline void ref_free(ref_fmt *t)
{
    free(t->val);
    free(t);
}

static inline ref_fmt *ref_f16(void)
{
    return ref_make("float16", 5, 10, 15, SPECIALS_IEEE);
}

static inline ref_fmt *ref_bf16(void)
{
    return ref_make("bfloat16", 8, 7, 127, SPECIALS_IEEE);
}

static inline ref_fmt *ref_tf32(void)
{
    return ref_make("tf32", 8, 10, 127, SPECIALS_IEEE);
}

static inline ref_fmt *ref_e4m3(void)
{
    return ref_make("e4m3", 4, 3, 7, SPECIALS_E4M3);
}

static inline ref_fmt *ref_e5m2(void)
{
    return ref_make("e5m2", 5, 2, 15, SPECIALS_IEEE);
}

static inline ref_fmt *ref_e2m3(void)
{
    return ref_make("e2m3", 2, 3, 1, SPECIALS_NONE);
}

static inline ref_fmt *ref_e3m2(void)
{
    return ref_make("e3m2", 3, 2, 3, SPECIALS_NONE);
}

static inline ref_fmt *ref_e2m1(void)
{
    return ref_make("e2m1", 2, 1, 1, SPECIALS_NONE);
}

/* ---- the reference rounding ---- */

typedef enum direction { NEAREST_EVEN, TOWARD_ZERO, AWAY_FROM_ZERO } direction;

static inline direction direction_of(og_rounding r, int negative)
{
    if (r == OG_ROUND_TOWARD_ZERO)
        return TOWARD_ZERO;
    if (r == OG_ROUND_UP)
        return negative ? TOWARD_ZERO : AWAY_FROM_ZERO;
    if (r == OG_ROUND_DOWN)
        return negative ? AWAY_FROM_ZERO : TOWARD_ZERO;
    return NEAREST_EVEN;
}

/* The largest finite code c with val[c] <= a (a >= 0), by bisection. */
static inline uint32_t ref_below(const ref_fmt *t, double a)
{
    uint32_t lo = 0, hi = t->nfin - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (t->val[mid] <= a)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* a (>= 0, with val[c] <= a and a < val[c + 1] unless c is the largest
 * finite code) rounded in direction d: c, or c + 1, where nfin means beyond
 * the range. The midpoint of two values of a format is exact in double. */
static inline uint32_t ref_pick(const ref_fmt *t, uint32_t c, double a, direction d)
{
    double below = t->val[c], above = t->val[c + 1], mid = (below + above) / 2;
    if (a == below || d == TOWARD_ZERO)
        return c;
    if (d == AWAY_FROM_ZERO || a > mid)
        return c + 1;
    if (a < mid)
        return c;
    return c % 2 == 0 ? c : c + 1;
}

static inline uint32_t ref_round(const ref_fmt *t, double a, direction d)
{
    return ref_pick(t, ref_below(t, a), a, d);
}

#endif /* OG_FORMATS_REF_H */
