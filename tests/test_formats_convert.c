/* Conversions of single numbers (onegpu_formats.h: float32 to and from
 * float16, bfloat16, TF32, FP8, FP6, FP4 and E8M0) against the reference of
 * og_formats_ref.h.
 * float32 -> float16 and -> bfloat16 to nearest even are checked on every one
 * of the 2^32 inputs (OG_TEST_FORMATS_STRIDE=n: every n-th, for sanitizer
 * builds), the other conversions on every boundary (each representable
 * value, each midpoint between neighbours and the float32 values within two
 * ulps of them) and on strided sweeps of float32; then the bug reports and
 * named hard cases. */
#include <pthread.h>
#include <unistd.h>

#include "og_formats_ref.h"

/* ---- conversions under test, as one shape ---- */

typedef enum nan_rule {
    NAN_IEEE, /* quiet NaN, sign kept, top payload bits kept */
    NAN_E4M3, /* exactly S.1111.111 */
    NAN_ZERO  /* no NaN in the format: zero with the sign (our choice) */
} nan_rule;

typedef struct target {
    const char *name;
    ref_fmt *t;
    uint32_t (*enc)(float x, og_rounding r);
    int directed;      /* honours the four rounding directions (else nearest even only) */
    uint32_t overflow; /* code magnitude of a finite value rounding beyond the largest */
    uint32_t inf;      /* code magnitude of +-Inf */
    nan_rule nan;
} target;

static uint32_t enc_f16(float x, og_rounding r)
{
    return og_f32_to_f16(x, r);
}

static uint32_t enc_bf16(float x, og_rounding r)
{
    return og_f32_to_bf16(x, r);
}

/* TF32's code from the float32 it is kept in (sign, then exponent and the
 * top 10 fraction bits); UINT32_MAX, matching no code, when the 13 low
 * fraction bits are not zero. */
static uint32_t enc_tf32(float x, og_rounding r)
{
    uint32_t u = bits(og_f32_round_tf32(x, r));
    if (u & 0x1FFF)
        return UINT32_MAX;
    return (u >> 31) << 18 | (u & 0x7FFFFFFF) >> 13;
}

static uint32_t enc_e4m3_nonsat(float x, og_rounding r)
{
    (void)r;
    return og_f32_to_e4m3(x, OG_OVERFLOW_NONSATURATING);
}

static uint32_t enc_e4m3_sat(float x, og_rounding r)
{
    (void)r;
    return og_f32_to_e4m3(x, OG_OVERFLOW_SATURATING);
}

static uint32_t enc_e5m2_nonsat(float x, og_rounding r)
{
    (void)r;
    return og_f32_to_e5m2(x, OG_OVERFLOW_NONSATURATING);
}

static uint32_t enc_e5m2_sat(float x, og_rounding r)
{
    (void)r;
    return og_f32_to_e5m2(x, OG_OVERFLOW_SATURATING);
}

static uint32_t enc_e2m3(float x, og_rounding r)
{
    (void)r;
    return og_f32_to_e2m3(x);
}

static uint32_t enc_e3m2(float x, og_rounding r)
{
    (void)r;
    return og_f32_to_e3m2(x);
}

static uint32_t enc_e2m1(float x, og_rounding r)
{
    (void)r;
    return og_f32_to_e2m1(x);
}

typedef enum target_id {
    T_F16,
    T_BF16,
    T_TF32,
    T_E4M3_NONSAT,
    T_E4M3_SAT,
    T_E5M2_NONSAT,
    T_E5M2_SAT,
    T_E2M3,
    T_E3M2,
    T_E2M1
} target_id;

/* The target's rules, as OFP8, OCP MX and IEEE 754 (and our documented
 * choices) state them. */
static target make_target(target_id id)
{
    ref_fmt *t;
    switch (id) {
    case T_F16:
        t = ref_f16();
        return (target){"float16", t, enc_f16, 1, t->nfin, t->nfin, NAN_IEEE};
    case T_BF16:
        t = ref_bf16();
        return (target){"bfloat16", t, enc_bf16, 1, t->nfin, t->nfin, NAN_IEEE};
    case T_TF32:
        t = ref_tf32();
        return (target){"tf32", t, enc_tf32, 1, t->nfin, t->nfin, NAN_IEEE};
    case T_E4M3_NONSAT:
        t = ref_e4m3();
        return (target){"e4m3 non-saturating", t, enc_e4m3_nonsat, 0, 0x7F, 0x7F, NAN_E4M3};
    case T_E4M3_SAT:
        t = ref_e4m3();
        return (target){"e4m3 saturating", t, enc_e4m3_sat, 0, 0x7E, 0x7F, NAN_E4M3};
    case T_E5M2_NONSAT:
        t = ref_e5m2();
        return (target){"e5m2 non-saturating", t, enc_e5m2_nonsat, 0, 0x7C, 0x7C, NAN_IEEE};
    case T_E5M2_SAT:
        t = ref_e5m2();
        return (target){"e5m2 saturating", t, enc_e5m2_sat, 0, 0x7B, 0x7C, NAN_IEEE};
    case T_E2M3:
        t = ref_e2m3();
        return (target){"e2m3", t, enc_e2m3, 0, 0x1F, 0x1F, NAN_ZERO};
    case T_E3M2:
        t = ref_e3m2();
        return (target){"e3m2", t, enc_e3m2, 0, 0x1F, 0x1F, NAN_ZERO};
    default:
        t = ref_e2m1();
        return (target){"e2m1", t, enc_e2m1, 0, 0x7, 0x7, NAN_ZERO};
    }
}

/* The expected code of x (not NaN) rounded in direction r; for a finite x,
 * c is the largest finite code at or below |x|. */
static uint32_t expect_at(const target *g, float x, og_rounding r, uint32_t c)
{
    uint32_t sign = signbit(x) ? g->t->sign : 0;
    if (isinf(x))
        return sign | g->inf;
    og_rounding mode = g->directed ? r : OG_ROUND_NEAREST_EVEN;
    uint32_t want = ref_pick(g->t, c, fabs((double)x), direction_of(mode, sign != 0));
    return sign | (want == g->t->nfin ? g->overflow : want);
}

static uint32_t expect(const target *g, float x, og_rounding r)
{
    return expect_at(g, x, r, isinf(x) ? 0 : ref_below(g->t, fabs((double)x)));
}

/* Whether `got` is the right conversion of the NaN with bits u. */
static int nan_ok(const target *g, uint32_t u, uint32_t got)
{
    const ref_fmt *t = g->t;
    uint32_t sign = u >> 31 ? t->sign : 0;
    if (g->nan == NAN_ZERO)
        return got == sign;
    if (g->nan == NAN_E4M3)
        return got == (sign | 0x7F);
    /* IEEE 754 6.2.3: a NaN, quiet, of the same sign, whose payload is the
     * top of the input's (float32's fraction bits below its quiet bit 22). */
    int m = t->mbits;
    uint32_t exp_ones = ((1u << t->ebits) - 1) << m, frac = got & ((1u << m) - 1);
    uint32_t payload = (u >> (22 - (m - 1))) & ((1u << (m - 1)) - 1);
    return (got & t->sign) == sign && (got & exp_ones) == exp_ones && frac >> (m - 1) == 1 &&
           (frac & ((1u << (m - 1)) - 1)) == payload;
}

/* Checks x (any float32) in direction r. */
static void check_one(const target *g, float x, og_rounding r, check *ck)
{
    uint32_t got = g->enc(x, r);
    if (isnan(x)) {
        if (!nan_ok(g, bits(x), got))
            check_fail(ck, "%s: NaN 0x%08x (mode %d) gave 0x%x", g->name, bits(x), r, got);
        return;
    }
    uint32_t want = expect(g, x, r);
    if (got != want)
        check_fail(ck, "%s: 0x%08x (%a, mode %d) gave 0x%x, want 0x%x", g->name, bits(x), x, r, got,
                   want);
}

static void free_target(target *g)
{
    ref_free(g->t);
}

/* ---- inputs ---- */

/* OG_TEST_FORMATS_STRIDE, or 1: the step of the 2^32 sweeps. */
static uint32_t sweep_stride(void)
{
    const char *s = getenv("OG_TEST_FORMATS_STRIDE");
    unsigned long n = s ? strtoul(s, NULL, 10) : 1;
    return n >= 1 && n < 0x10000000 ? (uint32_t)n : 1;
}

/* Float32 magnitudes around every value of g's format and every midpoint
 * between neighbours (those that are float32 numbers: all here), two ulps
 * either side, and 0, the smallest and largest float32 and +Inf. */
static uint32_t *boundaries(const ref_fmt *t, size_t *n)
{
    uint32_t *list = malloc((((size_t)t->nfin + 1) * 10 + 4) * sizeof *list);
    cr_assert_not_null(list);
    size_t k = 0;
    for (uint32_t c = 0; c <= t->nfin; c++) {
        double points[2] = {t->val[c], c < t->nfin ? (t->val[c] + t->val[c + 1]) / 2 : NAN};
        for (int p = 0; p < 2; p++) {
            float x = (float)points[p];
            if (!isfinite(x) || (double)x != points[p])
                continue;
            uint32_t u = bits(x);
            for (uint32_t d = 0; d < 5; d++)
                if (u + d >= 2 && u + d - 2 < 0x7F800000u)
                    list[k++] = u + d - 2;
        }
    }
    list[k++] = 0;
    list[k++] = 1;
    list[k++] = 0x7F7FFFFF;
    list[k++] = 0x7F800000;
    *n = k;
    return list;
}

static const uint32_t NANS[] = {0x7F800001, 0x7F801000, 0x7F802000, 0x7F810000, 0x7F900000,
                                0x7FA00000, 0x7FBFFFFF, 0x7FC00000, 0x7FC00001, 0x7FE00000,
                                0x7FF00000, 0x7FFF8C22, 0x7FFFE000, 0x7FFFFFFF};

/* Every boundary of g's format, both signs, every direction it honours,
 * plus the NaNs. */
static void check_boundaries(target_id id)
{
    target g = make_target(id);
    size_t n;
    uint32_t *list = boundaries(g.t, &n);
    check ck = {0};
    int modes = g.directed ? 4 : 1;
    for (size_t i = 0; i < n; i++)
        for (int r = 0; r < modes; r++) {
            check_one(&g, f32(list[i]), (og_rounding)r, &ck);
            check_one(&g, f32(list[i] | 0x80000000u), (og_rounding)r, &ck);
        }
    for (size_t i = 0; i < sizeof NANS / sizeof *NANS; i++)
        for (int r = 0; r < modes; r++) {
            check_one(&g, f32(NANS[i]), (og_rounding)r, &ck);
            check_one(&g, f32(NANS[i] | 0x80000000u), (og_rounding)r, &ck);
        }
    check_done(&ck, g.name);
    free(list);
    free_target(&g);
}

/* Magnitudes from..to (inclusive) in steps of `stride`, both signs, every
 * direction g honours. */
static void check_sweep(target_id id, uint32_t from, uint32_t to, uint32_t stride)
{
    target g = make_target(id);
    check ck = {0};
    int modes = g.directed ? 4 : 1;
    for (uint64_t u = from; u <= to; u += stride)
        for (int r = 0; r < modes; r++) {
            check_one(&g, f32((uint32_t)u), (og_rounding)r, &ck);
            check_one(&g, f32((uint32_t)u | 0x80000000u), (og_rounding)r, &ck);
        }
    check_done(&ck, g.name);
    free_target(&g);
}

/* Every code c that is not a NaN decodes and encodes back to c, in every
 * direction and overflow mode. */
static void check_round_trip(target_id id, float (*dec)(uint32_t))
{
    target g = make_target(id);
    check ck = {0};
    int modes = g.directed ? 4 : 1;
    for (uint32_t c = 0; c < g.t->sign * 2; c++) {
        if (isnan(ref_value(g.t, c)))
            continue;
        for (int r = 0; r < modes; r++) {
            uint32_t back = g.enc(dec(c), (og_rounding)r);
            if (back != c)
                check_fail(&ck, "%s: 0x%x -> %a -> 0x%x (mode %d)", g.name, c, dec(c), back, r);
        }
    }
    check_done(&ck, g.name);
    free_target(&g);
}

/* Every code of t decodes to its defined value, bit for bit (so -0 is -0);
 * NaN codes give a quiet NaN of the code's sign, whose top fraction bits
 * are the code's fraction when keep_payload. */
static void check_decode(ref_fmt *t, float (*dec)(uint32_t), int keep_payload)
{
    check ck = {0};
    for (uint32_t c = 0; c < t->sign * 2; c++) {
        double want = ref_value(t, c);
        uint32_t got = bits(dec(c));
        if (!isnan(want)) {
            if (got != bits((float)want))
                check_fail(&ck, "%s: 0x%x gave %a, want %a", t->name, c, f32(got), want);
            continue;
        }
        uint32_t frac = c & ((1u << t->mbits) - 1);
        uint32_t payload = keep_payload ? frac << (23 - t->mbits) : 0;
        uint32_t want_bits = (c & t->sign ? 0x80000000u : 0) | 0x7FC00000u | payload;
        if (got != want_bits)
            check_fail(&ck, "%s: NaN 0x%x gave 0x%08x, want 0x%08x", t->name, c, got, want_bits);
    }
    check_done(&ck, t->name);
    ref_free(t);
}

static float dec_f16(uint32_t c)
{
    return og_f16_to_f32((uint16_t)c);
}

static float dec_bf16(uint32_t c)
{
    return og_bf16_to_f32((uint16_t)c);
}

static float dec_e4m3(uint32_t c)
{
    return og_e4m3_to_f32((uint8_t)c);
}

static float dec_e5m2(uint32_t c)
{
    return og_e5m2_to_f32((uint8_t)c);
}

static float dec_e2m3(uint32_t c)
{
    return og_e2m3_to_f32((uint8_t)c);
}

static float dec_e3m2(uint32_t c)
{
    return og_e3m2_to_f32((uint8_t)c);
}

static float dec_e2m1(uint32_t c)
{
    return og_e2m1_to_f32((uint8_t)c);
}

/* ---- the 2^32 sweeps ---- */

typedef struct sweep_job {
    const target *g;
    uint16_t (*conv)(float x, og_rounding r); /* called directly: this loop runs 2^31 times */
    uint64_t begin, end, stride; /* magnitudes begin..end-1 that are multiples of stride */
    uint64_t checked;
    check ck;
} sweep_job;

/* Walks the magnitudes upward with the enclosing code c (the reference
 * values ascend, so c only moves up), checking +x and -x to nearest even:
 * the reference is symmetric, so -x expects +x's code with the sign bit. */
static void *sweep_thread(void *arg)
{
    sweep_job *j = arg;
    const target *g = j->g;
    const ref_fmt *t = g->t;
    uint64_t u = (j->begin + j->stride - 1) / j->stride * j->stride;
    uint32_t c = u < 0x7F800000u ? ref_below(t, (double)f32((uint32_t)u)) : 0;
    for (; u < j->end; u += j->stride) {
        float x = f32((uint32_t)u), nx = f32((uint32_t)u | 0x80000000u);
        uint32_t got = j->conv(x, OG_ROUND_NEAREST_EVEN), ngot = j->conv(nx, OG_ROUND_NEAREST_EVEN);
        j->checked += 2;
        if (isnan(x)) {
            if (!nan_ok(g, (uint32_t)u, got) || !nan_ok(g, (uint32_t)u | 0x80000000u, ngot))
                check_fail(&j->ck, "%s: NaN 0x%08x gave 0x%x / 0x%x", g->name, (uint32_t)u, got,
                           ngot);
            continue;
        }
        uint32_t want;
        if (isinf(x)) {
            want = g->inf;
        } else {
            while (c + 1 < t->nfin && t->val[c + 1] <= (double)x)
                c++;
            want = ref_pick(t, c, (double)x, NEAREST_EVEN);
            want = want == t->nfin ? g->overflow : want;
        }
        if (got != want || ngot != (want | t->sign))
            check_fail(&j->ck, "%s: +-0x%08x (%a) gave 0x%x / 0x%x, want 0x%x / 0x%x", g->name,
                       (uint32_t)u, x, got, ngot, want, want | t->sign);
    }
    return NULL;
}

/* All 2^32 float32 inputs (every stride-th with OG_TEST_FORMATS_STRIDE),
 * split between the online CPUs. The boundaries are checked whatever the
 * stride, by every_direction_on_boundaries. */
static void check_all_inputs(target_id id, uint16_t (*conv)(float x, og_rounding r))
{
    target g = make_target(id);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int n = cpus < 1 ? 1 : cpus > 64 ? 64 : (int)cpus;
    uint64_t stride = sweep_stride(), total = 1ull << 31;
    sweep_job jobs[64];
    pthread_t threads[64];
    for (int i = 0; i < n; i++) {
        jobs[i] = (sweep_job){.g = &g,
                              .conv = conv,
                              .begin = total * (uint64_t)i / (uint64_t)n,
                              .end = total * (uint64_t)(i + 1) / (uint64_t)n,
                              .stride = stride};
        cr_assert_eq(pthread_create(&threads[i], NULL, sweep_thread, &jobs[i]), 0);
    }
    uint64_t checked = 0;
    check all = {0};
    for (int i = 0; i < n; i++) {
        cr_assert_eq(pthread_join(threads[i], NULL), 0);
        checked += jobs[i].checked;
        if (jobs[i].ck.failures && all.failures == 0)
            memcpy(all.first, jobs[i].ck.first, sizeof all.first);
        all.failures += jobs[i].ck.failures;
    }
    check_done(&all, g.name);
    cr_assert_eq(checked, 2 * ((total + stride - 1) / stride), "%s: checked %llu inputs", g.name,
                 (unsigned long long)checked);
    free_target(&g);
}

/* ---- float16 ---- */

Test(f16, decode_every_code)
{
    check_decode(ref_f16(), dec_f16, 1);
}

Test(f16, round_trip_every_code)
{
    check_round_trip(T_F16, dec_f16);
}

Test(f16, nearest_even_every_float32, .timeout = 600)
{
    check_all_inputs(T_F16, og_f32_to_f16);
}

Test(f16, every_direction_on_boundaries)
{
    check_boundaries(T_F16);
}

Test(f16, every_direction_sampled_sweep)
{
    check_sweep(T_F16, 0, 0x7FFFFFFF, 4099);
}

/* ---- bfloat16 ---- */

Test(bf16, decode_every_code)
{
    check_decode(ref_bf16(), dec_bf16, 1);
}

Test(bf16, round_trip_every_code)
{
    check_round_trip(T_BF16, dec_bf16);
}

Test(bf16, nearest_even_every_float32, .timeout = 600)
{
    check_all_inputs(T_BF16, og_f32_to_bf16);
}

Test(bf16, every_direction_on_boundaries)
{
    check_boundaries(T_BF16);
}

Test(bf16, every_direction_sampled_sweep)
{
    check_sweep(T_BF16, 0, 0x7FFFFFFF, 4099);
}

/* ---- TF32 ---- */

Test(tf32, every_direction_on_boundaries)
{
    check_boundaries(T_TF32);
}

Test(tf32, every_direction_sampled_sweep)
{
    check_sweep(T_TF32, 0, 0x7FFFFFFF, 1021);
}

/* The results are TF32 values: round trip through the float32 it keeps. */
Test(tf32, values_stay)
{
    ref_fmt *t = ref_tf32();
    check ck = {0};
    for (uint32_t c = 0; c < t->nfin; c += 7)
        for (int r = 0; r < 4; r++)
            for (int s = 0; s < 2; s++) {
                float x = (float)(s ? -t->val[c] : t->val[c]);
                if (bits(og_f32_round_tf32(x, (og_rounding)r)) != bits(x))
                    check_fail(&ck, "%a moved (mode %d)", x, r);
            }
    check_done(&ck, "tf32");
    ref_free(t);
}

/* Ties go to even (not away from zero, as cvt.rna.tf32.f32 would), the low
 * 13 bits are dropped toward zero, and the range ends like IEEE's. */
Test(tf32, hard_cases)
{
    /* 1 + 2^-11: a tie between 1 and 1 + 2^-10; even is 1. */
    cr_assert_eq(bits(og_f32_round_tf32(f32(0x3F801000), OG_ROUND_NEAREST_EVEN)), 0x3F800000);
    /* 1 + 3 * 2^-11: a tie between 1 + 2^-10 and 1 + 2^-9; even is 1 + 2^-9. */
    cr_assert_eq(bits(og_f32_round_tf32(f32(0x3F803000), OG_ROUND_NEAREST_EVEN)), 0x3F804000);
    cr_assert_eq(bits(og_f32_round_tf32(f32(0xBF801000), OG_ROUND_NEAREST_EVEN)), 0xBF800000);
    /* Just above the tie rounds up. */
    cr_assert_eq(bits(og_f32_round_tf32(f32(0x3F801001), OG_ROUND_NEAREST_EVEN)), 0x3F802000);
    /* Toward zero keeps the top 10 fraction bits: what tensor cores do to raw float32. */
    cr_assert_eq(bits(og_f32_round_tf32(f32(0x3FFFFFFF), OG_ROUND_TOWARD_ZERO)), 0x3FFFE000);
    cr_assert_eq(bits(og_f32_round_tf32(f32(0xBFFFFFFF), OG_ROUND_UP)), 0xBFFFE000);
    cr_assert_eq(bits(og_f32_round_tf32(f32(0xBF800001), OG_ROUND_DOWN)), 0xBF802000);
    /* The largest float32 is past the last midpoint (0x1.FFCp127): Inf to
     * nearest, the largest TF32 toward zero. */
    cr_assert_eq(bits(og_f32_round_tf32(f32(0x7F7FFFFF), OG_ROUND_NEAREST_EVEN)), 0x7F800000);
    cr_assert_eq(bits(og_f32_round_tf32(f32(0x7F7FEFFF), OG_ROUND_NEAREST_EVEN)), 0x7F7FE000);
    cr_assert_eq(bits(og_f32_round_tf32(f32(0x7F7FFFFF), OG_ROUND_TOWARD_ZERO)), 0x7F7FE000);
    /* Subnormals: the smallest TF32 subnormal is 2^-136; half of it is a tie to 0. */
    cr_assert_eq(bits(og_f32_round_tf32(f32(0x00002000), OG_ROUND_NEAREST_EVEN)), 0x00002000);
    cr_assert_eq(bits(og_f32_round_tf32(f32(0x00001000), OG_ROUND_NEAREST_EVEN)), 0x00000000);
    cr_assert_eq(bits(og_f32_round_tf32(f32(0x00001001), OG_ROUND_NEAREST_EVEN)), 0x00002000);
    cr_assert_eq(bits(og_f32_round_tf32(f32(0x00000001), OG_ROUND_UP)), 0x00002000);
    cr_assert_eq(bits(og_f32_round_tf32(f32(0x80000000), OG_ROUND_NEAREST_EVEN)), 0x80000000);
    cr_assert_eq(bits(og_f32_round_tf32(f32(0xFF800000), OG_ROUND_TOWARD_ZERO)), 0xFF800000);
    /* NaN: quiet, sign and top fraction bits kept, low 13 cleared. */
    cr_assert_eq(bits(og_f32_round_tf32(f32(0x7F800001), OG_ROUND_NEAREST_EVEN)), 0x7FC00000);
    cr_assert_eq(bits(og_f32_round_tf32(f32(0xFFFF8C22), OG_ROUND_NEAREST_EVEN)), 0xFFFF8000);
}

/* ---- FP8, FP6, FP4 ---- */

Test(fp8, decode_every_code)
{
    check_decode(ref_e4m3(), dec_e4m3, 0);
    check_decode(ref_e5m2(), dec_e5m2, 1);
}

Test(fp6_fp4, decode_every_code)
{
    check_decode(ref_e2m3(), dec_e2m3, 0);
    check_decode(ref_e3m2(), dec_e3m2, 0);
    check_decode(ref_e2m1(), dec_e2m1, 0);
}

/* FP6 and FP4 ignore the bits above their code. */
Test(fp6_fp4, decode_ignores_high_bits)
{
    for (uint32_t c = 0; c < 256; c++) {
        cr_assert_eq(bits(og_e2m3_to_f32((uint8_t)c)), bits(og_e2m3_to_f32((uint8_t)(c & 0x3F))));
        cr_assert_eq(bits(og_e3m2_to_f32((uint8_t)c)), bits(og_e3m2_to_f32((uint8_t)(c & 0x3F))));
        cr_assert_eq(bits(og_e2m1_to_f32((uint8_t)c)), bits(og_e2m1_to_f32((uint8_t)(c & 0xF))));
    }
}

Test(fp8, round_trip_every_code)
{
    check_round_trip(T_E4M3_NONSAT, dec_e4m3);
    check_round_trip(T_E4M3_SAT, dec_e4m3);
    check_round_trip(T_E5M2_NONSAT, dec_e5m2);
    check_round_trip(T_E5M2_SAT, dec_e5m2);
}

Test(fp6_fp4, round_trip_every_code)
{
    check_round_trip(T_E2M3, dec_e2m3);
    check_round_trip(T_E3M2, dec_e3m2);
    check_round_trip(T_E2M1, dec_e2m1);
}

Test(fp8, boundaries)
{
    check_boundaries(T_E4M3_NONSAT);
    check_boundaries(T_E4M3_SAT);
    check_boundaries(T_E5M2_NONSAT);
    check_boundaries(T_E5M2_SAT);
}

Test(fp6_fp4, boundaries)
{
    check_boundaries(T_E2M3);
    check_boundaries(T_E3M2);
    check_boundaries(T_E2M1);
}

/* Dense sweeps: float32 magnitudes from 0 to twice the value where the
 * format overflows, then the whole float32 range more sparsely. */
Test(fp8, e4m3_sweep)
{
    check_sweep(T_E4M3_NONSAT, 0, bits(960.0f), 97);
    check_sweep(T_E4M3_SAT, 0, bits(960.0f), 97);
    check_sweep(T_E4M3_NONSAT, 0, 0x7FFFFFFF, 65537);
    check_sweep(T_E4M3_SAT, 0, 0x7FFFFFFF, 65537);
}

Test(fp8, e5m2_sweep)
{
    check_sweep(T_E5M2_NONSAT, 0, bits(131072.0f), 97);
    check_sweep(T_E5M2_SAT, 0, bits(131072.0f), 97);
    check_sweep(T_E5M2_NONSAT, 0, 0x7FFFFFFF, 65537);
    check_sweep(T_E5M2_SAT, 0, 0x7FFFFFFF, 65537);
}

Test(fp6_fp4, sweep)
{
    check_sweep(T_E2M3, 0, bits(16.0f), 97);
    check_sweep(T_E3M2, 0, bits(64.0f), 97);
    check_sweep(T_E2M1, 0, bits(16.0f), 97);
    check_sweep(T_E2M3, 0, 0x7FFFFFFF, 65537);
    check_sweep(T_E3M2, 0, 0x7FFFFFFF, 65537);
    check_sweep(T_E2M1, 0, 0x7FFFFFFF, 65537);
}

/* Our choices where the formats have no encoding: FP6 and FP4 saturate
 * +-Inf and turn NaN into zero with its sign; E4M3 turns +-Inf into NaN and
 * E5M2 keeps it, in both overflow modes. */
Test(fp6_fp4, specials)
{
    cr_assert_eq(og_f32_to_e2m3(INFINITY), 0x1F);
    cr_assert_eq(og_f32_to_e2m3(-INFINITY), 0x3F);
    cr_assert_eq(og_f32_to_e3m2(-INFINITY), 0x3F);
    cr_assert_eq(og_f32_to_e2m1(INFINITY), 0x7);
    cr_assert_eq(og_f32_to_e2m1(-INFINITY), 0xF);
    cr_assert_eq(og_f32_to_e2m3(f32(0x7FC00000)), 0x00);
    cr_assert_eq(og_f32_to_e3m2(f32(0xFFC00000)), 0x20);
    cr_assert_eq(og_f32_to_e2m1(f32(0xFF800001)), 0x8);
    cr_assert_eq(og_f32_to_e2m1(1e30f), 0x7);
    cr_assert_eq(og_f32_to_e2m1(-0.0f), 0x8);
    /* E2M1 ties: 2.5 between 2 (0x4) and 3 (0x5) goes to 2; 5 between 4 and 6 to 4. */
    cr_assert_eq(og_f32_to_e2m1(2.5f), 0x4);
    cr_assert_eq(og_f32_to_e2m1(5.0f), 0x6);
    cr_assert_eq(og_f32_to_e2m1(0.25f), 0x0);
    cr_assert_eq(og_f32_to_e2m1(0.75f), 0x2);
}

Test(fp8, specials)
{
    for (int o = 0; o < 2; o++) {
        cr_assert_eq(og_f32_to_e5m2(INFINITY, (og_overflow)o), 0x7C);
        cr_assert_eq(og_f32_to_e5m2(-INFINITY, (og_overflow)o), 0xFC);
        cr_assert_eq(og_f32_to_e5m2(f32(0x7FC00000), (og_overflow)o), 0x7E);
        cr_assert_eq(og_f32_to_e5m2(f32(0xFFE00000), (og_overflow)o), 0xFF);
        cr_assert_eq(og_f32_to_e5m2(f32(0x7F800001), (og_overflow)o), 0x7E);
        cr_assert_eq(og_f32_to_e4m3(f32(0x7F800001), (og_overflow)o), 0x7F);
        cr_assert_eq(og_f32_to_e4m3(f32(0xFFC00000), (og_overflow)o), 0xFF);
        cr_assert_eq(og_f32_to_e4m3(-0.0f, (og_overflow)o), 0x80);
        cr_assert_eq(og_f32_to_e5m2(-0.0f, (og_overflow)o), 0x80);
    }
    cr_assert(isinf(og_e5m2_to_f32(0x7C)) && og_e5m2_to_f32(0xFC) < 0);
    cr_assert(isnan(og_e4m3_to_f32(0x7F)) && isnan(og_e4m3_to_f32(0xFF)));
    cr_assert(signbit(og_e4m3_to_f32(0xFF)) && !signbit(og_e4m3_to_f32(0x7F)));
    cr_assert_eq(og_e4m3_to_f32(0x7E), 448.0f);
    cr_assert_eq(og_e4m3_to_f32(0xFE), -448.0f); /* S.1111.110 is a number, not NaN */
}

/* ---- E8M0 ---- */

/* The reference: x = f * 2^e with f in [0.5, 1) (frexp); the candidates are
 * 2^(e-1) and 2^e, chosen by distance (ties to the even code) or direction,
 * then clamped to 2^-127 .. 2^127. */
static uint32_t ref_e8m0(float x, og_rounding r)
{
    if (!(x > 0) || isinf(x))
        return 0xFF;
    int e;
    frexp((double)x, &e);
    double lo = ldexp(1, e - 1), hi = ldexp(1, e), a = x;
    int code = e - 1 + 127;
    int up;
    if (a == lo || r == OG_ROUND_TOWARD_ZERO || r == OG_ROUND_DOWN)
        up = 0;
    else if (r == OG_ROUND_UP)
        up = 1;
    else
        up = hi - a < a - lo || (hi - a == a - lo && code % 2 != 0);
    code += up;
    return code < 0 ? 0 : code > 254 ? 254 : (uint32_t)code;
}

Test(e8m0, decode_every_code)
{
    for (uint32_t v = 0; v < 255; v++)
        cr_assert_eq(bits(og_e8m0_to_f32((uint8_t)v)), bits((float)ldexp(1, (int)v - 127)), "0x%x",
                     v);
    cr_assert(isnan(og_e8m0_to_f32(0xFF)));
}

Test(e8m0, round_trip_every_code)
{
    for (uint32_t v = 0; v < 255; v++)
        for (int r = 0; r < 4; r++)
            cr_assert_eq(og_f32_to_e8m0(og_e8m0_to_f32((uint8_t)v), (og_rounding)r), v,
                         "0x%x, mode %d", v, r);
}

Test(e8m0, encode)
{
    check ck = {0};
    uint32_t list[4000];
    size_t n = 0;
    for (int k = -149; k <= 127; k++)
        for (int d = -2; d <= 2; d++) {
            list[n++] = bits(ldexpf(1.0f, k)) + (uint32_t)d;
            list[n++] = bits(ldexpf(1.5f, k)) + (uint32_t)d;
        }
    for (int r = 0; r < 4; r++) {
        for (size_t i = 0; i < n; i++) {
            float x = f32(list[i]);
            if (og_f32_to_e8m0(x, (og_rounding)r) != ref_e8m0(x, (og_rounding)r))
                check_fail(&ck, "%a (mode %d) gave 0x%x, want 0x%x", x, r,
                           og_f32_to_e8m0(x, (og_rounding)r), ref_e8m0(x, (og_rounding)r));
        }
        for (uint64_t u = 0; u <= 0xFFFFFFFFu; u += 4099) {
            float x = f32((uint32_t)u);
            if (og_f32_to_e8m0(x, (og_rounding)r) != ref_e8m0(x, (og_rounding)r))
                check_fail(&ck, "%a (mode %d) gave 0x%x, want 0x%x", x, r,
                           og_f32_to_e8m0(x, (og_rounding)r), ref_e8m0(x, (og_rounding)r));
        }
    }
    check_done(&ck, "e8m0");
    /* Named cases: the tie 1.5 goes to 2 (code 128, even); 3 = 1.5 * 2 to 2
     * (code 128) as well; no zero, no sign. */
    cr_assert_eq(og_f32_to_e8m0(1.5f, OG_ROUND_NEAREST_EVEN), 128);
    cr_assert_eq(og_f32_to_e8m0(3.0f, OG_ROUND_NEAREST_EVEN), 128);
    cr_assert_eq(og_f32_to_e8m0(1.4f, OG_ROUND_NEAREST_EVEN), 127);
    cr_assert_eq(og_f32_to_e8m0(1.0001f, OG_ROUND_UP), 128);
    cr_assert_eq(og_f32_to_e8m0(1.9999f, OG_ROUND_TOWARD_ZERO), 127);
    cr_assert_eq(og_f32_to_e8m0(f32(1), OG_ROUND_NEAREST_EVEN), 0x00);
    cr_assert_eq(og_f32_to_e8m0(FLT_MAX, OG_ROUND_UP), 0xFE);
    cr_assert_eq(og_f32_to_e8m0(0.0f, OG_ROUND_NEAREST_EVEN), 0xFF);
    cr_assert_eq(og_f32_to_e8m0(-0.0f, OG_ROUND_NEAREST_EVEN), 0xFF);
    cr_assert_eq(og_f32_to_e8m0(-1.0f, OG_ROUND_NEAREST_EVEN), 0xFF);
    cr_assert_eq(og_f32_to_e8m0(INFINITY, OG_ROUND_NEAREST_EVEN), 0xFF);
    cr_assert_eq(og_f32_to_e8m0(NAN, OG_ROUND_NEAREST_EVEN), 0xFF);
}

/* ---- the bug reports: float32 bits -> target bits ---- */

Test(bug_reports, f16_nearest_even)
{
    static const uint32_t cases[][2] = {
        {0x3303B960, 0x0001}, /* just above 2^-25: rounds up to the smallest subnormal */
        {0x33000000, 0x0000}, /* 2^-25, half the smallest subnormal: a tie, to even 0 */
        {0x33000001, 0x0001}, /* one ulp above the tie */
        {0xB3000001, 0x8001}, /* and its negative */
        {0x387FE000, 0x0400}, /* 1023.5 * 2^-24: a tie, carries into the smallest normal */
        {0x34200000, 0x0002}, /* 2.5 * 2^-24: a tie, to even 2 */
        {0x34600000, 0x0004}, /* 3.5 * 2^-24: a tie, to even 4 */
        {0x40001000, 0x4000}, /* 2 + 2^-10: a tie between 2 and 2 + 2^-9, to even */
        {0x477FEFFF, 0x7BFF}, /* just below 65520: 65504 */
        {0x477FF000, 0x7C00}, /* 65520, the tie between 65504 and 2^16: Inf */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        cr_assert_eq(og_f32_to_f16(f32(cases[i][0]), OG_ROUND_NEAREST_EVEN), cases[i][1],
                     "0x%08x gave 0x%04x, want 0x%04x", cases[i][0],
                     og_f32_to_f16(f32(cases[i][0]), OG_ROUND_NEAREST_EVEN), cases[i][1]);
}

Test(bug_reports, f16_directed_overflow)
{
    cr_assert_eq(og_f32_to_f16(1e6f, OG_ROUND_TOWARD_ZERO), 0x7BFF);
    cr_assert_eq(og_f32_to_f16(1e6f, OG_ROUND_DOWN), 0x7BFF);
    cr_assert_eq(og_f32_to_f16(1e6f, OG_ROUND_UP), 0x7C00);
    cr_assert_eq(og_f32_to_f16(-1e6f, OG_ROUND_TOWARD_ZERO), 0xFBFF);
    cr_assert_eq(og_f32_to_f16(-1e6f, OG_ROUND_UP), 0xFBFF);
    cr_assert_eq(og_f32_to_f16(-1e6f, OG_ROUND_DOWN), 0xFC00);
}

Test(bug_reports, bf16_nan_never_zero_or_inf)
{
    /* The classic bias-and-truncate carries this NaN into the sign: -0. */
    uint16_t h = og_f32_to_bf16(f32(0x7FFF8C22), OG_ROUND_NEAREST_EVEN);
    cr_assert_eq(h, 0x7FFF, "0x7FFF8C22 gave 0x%04x", h);
    h = og_f32_to_bf16(f32(0xFFFF8C22), OG_ROUND_NEAREST_EVEN);
    cr_assert(h > 0xFF80 && (h & 0x8000), "0xFFFF8C22 gave 0x%04x, not a negative NaN", h);
    /* A signalling NaN whose payload is all below bit 16: truncation gives +Inf. */
    h = og_f32_to_bf16(f32(0x7F800001), OG_ROUND_NEAREST_EVEN);
    cr_assert(h > 0x7F80 && h < 0x8000 && (h & 0x0040), "0x7F800001 gave 0x%04x", h);
    for (int r = 0; r < 4; r++) {
        cr_assert_eq(og_f32_to_bf16(f32(0x7FFF8C22), (og_rounding)r), 0x7FFF);
        cr_assert_eq(og_f32_to_bf16(f32(0x7F800001), (og_rounding)r), 0x7FC0);
    }
}

Test(bug_reports, bf16_nearest_even)
{
    cr_assert_eq(og_f32_to_bf16(f32(0x3E89CCD5), OG_ROUND_NEAREST_EVEN), 0x3E8A);
    cr_assert_eq(og_f32_to_bf16(f32(0x3F808000), OG_ROUND_NEAREST_EVEN), 0x3F80); /* tie, even */
    cr_assert_eq(og_f32_to_bf16(f32(0x3F818000), OG_ROUND_NEAREST_EVEN), 0x3F82); /* tie, even */
    cr_assert_eq(og_f32_to_bf16(f32(0x7F7FFFFF), OG_ROUND_NEAREST_EVEN), 0x7F80);
    cr_assert_eq(og_f32_to_bf16(f32(0x7F7FFFFF), OG_ROUND_TOWARD_ZERO), 0x7F7F);
}

Test(bug_reports, e4m3_round_then_overflow)
{
    static const struct {
        float x;
        uint8_t nonsat, sat;
    } cases[] = {
        {448.0f, 0x7E, 0x7E},     {464.0f, 0x7E, 0x7E}, /* the tie between 448 and 480: to even, 448
                                                         */
        {465.0f, 0x7F, 0x7E},     {-465.0f, 0xFF, 0xFE},  {INFINITY, 0x7F, 0x7F},
        {-INFINITY, 0xFF, 0xFF},  {0x1p-10f, 0x00, 0x00}, /* half the smallest subnormal: a tie, to
                                                             0 */
        {0x1.8p-10f, 0x01, 0x01},                         /* 3 * 2^-11 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cr_assert_eq(og_f32_to_e4m3(cases[i].x, OG_OVERFLOW_NONSATURATING), cases[i].nonsat, "%a",
                     cases[i].x);
        cr_assert_eq(og_f32_to_e4m3(cases[i].x, OG_OVERFLOW_SATURATING), cases[i].sat, "%a",
                     cases[i].x);
    }
}

Test(bug_reports, e5m2_round_then_overflow)
{
    cr_assert_eq(og_f32_to_e5m2(57344.0f, OG_OVERFLOW_NONSATURATING), 0x7B);
    cr_assert_eq(og_f32_to_e5m2(58000.0f, OG_OVERFLOW_NONSATURATING), 0x7B);
    cr_assert_eq(og_f32_to_e5m2(58000.0f, OG_OVERFLOW_SATURATING), 0x7B);
    cr_assert_eq(og_f32_to_e5m2(61440.0f, OG_OVERFLOW_NONSATURATING), 0x7C);
    cr_assert_eq(og_f32_to_e5m2(61440.0f, OG_OVERFLOW_SATURATING), 0x7B);
    cr_assert_eq(og_f32_to_e5m2(-61440.0f, OG_OVERFLOW_NONSATURATING), 0xFC);
    cr_assert_eq(og_f32_to_e5m2(-61440.0f, OG_OVERFLOW_SATURATING), 0xFB);
    cr_assert_eq(og_f32_to_e5m2(nextafterf(61440.0f, 0), OG_OVERFLOW_NONSATURATING), 0x7B);
}

/* ---- named hard cases ---- */

Test(hard_cases, ties_to_even)
{
    cr_assert_eq(og_f32_to_f16(f32(0x3F801000), OG_ROUND_NEAREST_EVEN), 0x3C00); /* 1 + 2^-11 */
    cr_assert_eq(og_f32_to_f16(f32(0x3F803000), OG_ROUND_NEAREST_EVEN), 0x3C02); /* 1 + 3*2^-11 */
    cr_assert_eq(og_f32_to_f16(f32(0x3F801001), OG_ROUND_NEAREST_EVEN), 0x3C01);
    cr_assert_eq(og_f32_to_bf16(f32(0x3F808001), OG_ROUND_NEAREST_EVEN), 0x3F81);
    cr_assert_eq(og_f32_to_f16(f32(0xBF801000), OG_ROUND_NEAREST_EVEN), 0xBC00);
    cr_assert_eq(og_f32_to_e4m3(1.0625f, OG_OVERFLOW_NONSATURATING), 0x38); /* 1 + 1/16 -> 1 */
    cr_assert_eq(og_f32_to_e4m3(1.1875f, OG_OVERFLOW_NONSATURATING), 0x3A); /* 1 + 3/16 -> 1.25 */
}

Test(hard_cases, f16_65504_and_65520)
{
    cr_assert_eq(og_f32_to_f16(65504.0f, OG_ROUND_NEAREST_EVEN), 0x7BFF);
    cr_assert_eq(og_f16_to_f32(0x7BFF), 65504.0f);
    cr_assert_eq(og_f32_to_f16(65519.996f, OG_ROUND_NEAREST_EVEN), 0x7BFF);
    cr_assert_eq(og_f32_to_f16(65520.0f, OG_ROUND_NEAREST_EVEN), 0x7C00);
    cr_assert_eq(og_f32_to_f16(-65520.0f, OG_ROUND_NEAREST_EVEN), 0xFC00);
    cr_assert_eq(og_f32_to_f16(65520.0f, OG_ROUND_TOWARD_ZERO), 0x7BFF);
    cr_assert_eq(og_f32_to_f16(65504.0f, OG_ROUND_UP), 0x7BFF); /* exact: no rounding */
    cr_assert_eq(og_f32_to_f16(nextafterf(65504.0f, INFINITY), OG_ROUND_UP), 0x7C00);
    cr_assert_eq(og_f32_to_f16(INFINITY, OG_ROUND_TOWARD_ZERO), 0x7C00); /* Inf is exact */
}

Test(hard_cases, f16_smallest_subnormal)
{
    float min_sub = 0x1p-24f, half = 0x1p-25f;
    cr_assert_eq(og_f32_to_f16(min_sub, OG_ROUND_NEAREST_EVEN), 0x0001);
    cr_assert_eq(og_f16_to_f32(0x0001), min_sub);
    cr_assert_eq(og_f32_to_f16(half, OG_ROUND_NEAREST_EVEN), 0x0000);
    cr_assert_eq(og_f32_to_f16(-half, OG_ROUND_NEAREST_EVEN), 0x8000);
    cr_assert_eq(og_f32_to_f16(nextafterf(half, 1), OG_ROUND_NEAREST_EVEN), 0x0001);
    cr_assert_eq(og_f32_to_f16(0x1.8p-24f, OG_ROUND_NEAREST_EVEN), 0x0002); /* 1.5: tie, to 2 */
    cr_assert_eq(og_f32_to_f16(f32(1), OG_ROUND_UP), 0x0001);
    cr_assert_eq(og_f32_to_f16(f32(0x80000001), OG_ROUND_UP), 0x8000);
    cr_assert_eq(og_f32_to_f16(f32(0x80000001), OG_ROUND_DOWN), 0x8001);
    cr_assert_eq(og_f32_to_f16(0x1.ff8p-15f, OG_ROUND_TOWARD_ZERO), 0x03FF);
    cr_assert_eq(og_f32_to_bf16(f32(0x00008000), OG_ROUND_NEAREST_EVEN), 0x0000); /* tie */
    cr_assert_eq(og_f32_to_bf16(f32(0x00018000), OG_ROUND_NEAREST_EVEN), 0x0002); /* tie */
    cr_assert_eq(og_f32_to_bf16(f32(0x00000001), OG_ROUND_UP), 0x0001);
}

Test(hard_cases, nan_payloads)
{
    /* Quiet bit set, top payload bits kept, sign kept, never Inf. */
    cr_assert_eq(og_f32_to_f16(f32(0x7F800001), OG_ROUND_NEAREST_EVEN), 0x7E00);
    cr_assert_eq(og_f32_to_f16(f32(0x7FA00000), OG_ROUND_NEAREST_EVEN), 0x7F00);
    cr_assert_eq(og_f32_to_f16(f32(0xFFC02000), OG_ROUND_NEAREST_EVEN), 0xFE01);
    cr_assert_eq(og_f32_to_f16(f32(0x7FFFFFFF), OG_ROUND_TOWARD_ZERO), 0x7FFF);
    cr_assert_eq(bits(og_f16_to_f32(0x7C01)), 0x7FC02000); /* signalling comes back quiet */
    cr_assert_eq(bits(og_f16_to_f32(0xFE00)), 0xFFC00000);
    cr_assert_eq(bits(og_bf16_to_f32(0x7F81)), 0x7FC10000);
    cr_assert_eq(bits(og_bf16_to_f32(0xFFC0)), 0xFFC00000);
    cr_assert_eq(og_f32_to_e5m2(f32(0x7FA00000), OG_OVERFLOW_NONSATURATING), 0x7F);
    cr_assert_eq(bits(og_e5m2_to_f32(0x7D)), 0x7FE00000);
}

Test(hard_cases, negative_zero)
{
    for (int r = 0; r < 4; r++) {
        cr_assert_eq(og_f32_to_f16(-0.0f, (og_rounding)r), 0x8000);
        cr_assert_eq(og_f32_to_bf16(-0.0f, (og_rounding)r), 0x8000);
        cr_assert_eq(bits(og_f32_round_tf32(-0.0f, (og_rounding)r)), 0x80000000);
    }
    cr_assert_eq(bits(og_f16_to_f32(0x8000)), 0x80000000);
    cr_assert_eq(bits(og_bf16_to_f32(0x8000)), 0x80000000);
    cr_assert_eq(og_f32_to_e2m3(-0.0f), 0x20);
    cr_assert_eq(og_f32_to_e3m2(-1e-30f), 0x20); /* rounds to zero, keeps the sign */
    cr_assert_eq(bits(og_e2m1_to_f32(0x8)), 0x80000000);
}
