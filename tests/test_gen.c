/*
 * Tests of the generator (gen/): every candidate of the standard tuning
 * space expands, compiles, validates and reflects as its parameters promise;
 * the parameter text form; the parameter checks against device limits; MSL
 * and SPIR-V assembly output; the template hash.
 *
 * Coverage of the module test: the full cross product (every candidate x
 * dtype x op(A) x op(B) x dialect) is about 13 000 modules, far beyond the
 * time budget on two cores. Instead each candidate is built with one
 * (dtype, op(A), op(B), dialect) combination that rotates with its index,
 * and the default parameters are built with every combination. The suite
 * builds every candidate of the quick space (which also opens the standard
 * one), every SAMPLE_STRIDE-th of the standard space and the first candidate
 * with each value of each parameter not built yet; OG_TEST_FULL_SPACE=1
 * builds every candidate (about 10 minutes), and OG_TEST_GEN_MODULES=N keeps
 * N modules spread evenly over that list (the sanitizer run, where shaderc is
 * several times slower). The space comes from og_space(), so parameters
 * added to it are covered as well.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "og_spirv_val.h"
#include "og_tuner.h"

/* The limits candidates are checked against: the device's own, so that
 * limits added later take real values, raised to at least 1024 invocations
 * and 48 KiB of workgroup memory so the whole standard space fits (128x128x32
 * tiles with padding need 33 024 bytes; lavapipe allows 32 KiB). */
static og_limits generous_limits(void)
{
    og_context *ctx = NULL;
    og_limits lim;
    memset(&lim, 0, sizeof lim);
    if (og_context_create(NULL, &ctx) != OG_OK)
        return lim; /* rejects everything: the tests that need candidates fail */
    lim = *og_context_limits(ctx);
    og_context_destroy(ctx);
    if (lim.max_invocations < 1024)
        lim.max_invocations = 1024;
    for (int i = 0; i < 2; i++)
        if (lim.max_size[i] < 1024)
            lim.max_size[i] = 1024;
    if (lim.max_shared_bytes < 48 * 1024)
        lim.max_shared_bytes = 48 * 1024;
    return lim;
}

/* All candidates of the standard space under the generous limits; *n of
 * them, malloc'ed. NULL and *n = 0 when og_space fails. */
static og_params *standard_space(size_t *n)
{
    og_limits lim = generous_limits();
    og_params *space = NULL;
    og_shape cube = {1024, 1024, 1024, 1};
    if (og_space(&lim, OG_PRESET_STANDARD, OG_F32, 0, 0, &cube, &space, n) != OG_OK)
        *n = 0;
    return space;
}

/* The few-rows candidates of the standard space for B stored K x N or N x K. */
static og_params *fewrows_space(int trans_b, size_t *n)
{
    og_limits lim = generous_limits();
    og_params *space = NULL;
    og_shape row = {1, 768, 768, 1};
    if (og_space(&lim, OG_PRESET_STANDARD, OG_F32, 0, trans_b, &row, &space, n) != OG_OK)
        *n = 0;
    return space;
}

/* Int8Gemm's candidates of a preset: the tile's (1024 cubed) or the skinny
 * kernel's (M = 1, B not transposed). */
static og_params *int8_space(og_preset preset, int skinny, size_t *n)
{
    og_limits lim = generous_limits();
    og_params *space = NULL;
    og_shape shape = {skinny ? 1 : 1024, 1024, 1024, 1};
    if (og_space(&lim, preset, OG_INT8, 0, 0, &shape, &space, n) != OG_OK)
        *n = 0;
    return space;
}

/* ---- every candidate: source -> SPIR-V -> spirv-val -> reflection ---- */

#define N_COMBOS 24 /* 3 dtypes x op(A) x op(B) x 2 dialects */

typedef struct module_case {
    size_t index; /* in the space; (size_t)-1 for the default with every combination */
    og_kernel_key key;
} module_case;

static og_kernel_key combo_key(const og_params *p, size_t combo)
{
    static const og_dtype dtypes[] = {OG_F32, OG_F16, OG_BF16};
    og_kernel_key key = {
        .p = *p,
        .dtype = dtypes[combo % 3],
        .trans_a = (int)(combo / 3 % 2),
        .trans_b = (int)(combo / 6 % 2),
        .dialect = combo / 12 % 2 ? OG_HLSL : OG_GLSL,
    };
    return key;
}

/* The standard space past the quick one adds tile and workgroup sizes to
 * the same template paths (load, acc, vec, src, pad, split), and those
 * candidates are the slowest to compile (up to 20 s for a direct-load 128x32
 * tile of 8x16 registers; 7 s on average, against 0.4 s for the default):
 * every 20th, 59 modules, took half of the module test's time. Every 40th,
 * with the first of every parameter value (new_value) and every (dtype,
 * op(A), op(B), dialect) combination among them, keeps each path and each
 * size (every split too, which every 20th missed) in 41 modules, most of
 * them cheap (test_gen: 444 CPU seconds cold before, 341 after). Every
 * 80th (2026-12-05, for CI's 45 minutes): new_value still builds every
 * parameter value; the stride only thins the repeats of large tiles. */
#define SAMPLE_STRIDE 80

/* Int8Gemm's standard tiles: every INT8_STRIDE-th past the quick ones (which
 * lead the standard space and are built from it), their combinations
 * rotating with their order in the sample. Every 4th with the combination
 * of the index built only uint8 x int8 (index + 1 = 1 mod 4) in 207 modules;
 * every 8th rotates through every type pair in 104, every 16th in 52 (the
 * combination follows the order in the sample, not the index). */
#define INT8_STRIDE 16

/* Whether p, a candidate of the float tile, has a value of some parameter
 * that none of cases[0..count) has: the sample then builds it, so that no
 * tile size, workgroup shape or option of the space goes unbuilt whatever
 * the stride. */
static int new_value(const og_params *p, const module_case *cases, size_t count)
{
#define OG_FIELDS(q)                                                                              \
    {(q)->bm, (q)->bn, (q)->bk, (q)->tm, (q)->tn, (q)->wgx, (q)->wgy, (q)->pad, (int)(q)->load,     \
     (int)(q)->acc, (q)->vec, (int)(q)->src, (q)->split}
    const int mine[] = OG_FIELDS(p);
    enum { N_FIELDS = sizeof mine / sizeof mine[0] };
    for (size_t f = 0; f < N_FIELDS; f++) {
        size_t i = 0;
        for (; i < count; i++) {
            const int theirs[N_FIELDS] = OG_FIELDS(&cases[i].key.p);
            if (theirs[f] == mine[f])
                break;
        }
        if (i == count)
            return 1;
    }
    return 0;
#undef OG_FIELDS
}

/* Int8Gemm's operand types, op(A), op(B) and dialect rotate with the index;
 * packed dot products and the matrix tile (on devices listing int8
 * matrices) are GLSL-only, the skinny kernel's B stored K x N not
 * transposed. */
static og_kernel_key int8_key(const og_params *p, size_t combo)
{
    static const og_dtype types[] = {OG_INT8, OG_UINT8};
    int skinny = p->variant == OG_VARIANT_INT8_SKINNY;
    og_kernel_key key = {
        .p = *p,
        .dtype = types[combo % 2],
        .dtype_b = types[combo / 2 % 2],
        .trans_a = (int)(combo / 4 % 2),
        .trans_b = skinny ? 0 : (int)(combo / 8 % 2),
        .dialect = p->dot || og_params_matrix(p) || combo / 16 % 2 == 0 ? OG_GLSL : OG_HLSL,
    };
    return key;
}

/* Modules of qdecode_cases: the low-bit decode kernel, the prefill tile and
 * the decode kernel's integer path. */
#define N_QDECODE (12 + 6 + 4)

/* The low-bit weight product's kernels: the decode kernel
 * (templates/qgemm_decode.tmpl) in every format, INT4 with each scale type
 * and zero-point kind, rows of A from 1 to 16, float32, float16 and
 * bfloat16 A, word and 16-byte loads; then the prefill tile (gemm_tile with
 * qweights_element.tmpl), staged and direct, in every format; then the
 * integer path (dot=1, OpSDot/OpSUDot, and dot=2, the emulation) with
 * E2M1, INT4 float zero points, Q4_K and Q6_K codes. */
static size_t qdecode_cases(module_case *cases)
{
    static const int formats[12][3] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {2, 1, 0},
                                              {2, 0, 1}, {2, 1, 2}, {3, 0, 0}, {0, 0, 0},
                                              {1, 0, 0}, {2, 0, 2}, {2, 1, 1}, {3, 0, 0}};
    static const og_dtype types[3] = {OG_F32, OG_F16, OG_BF16};
    for (size_t i = 0; i < 18; i++) {
        og_params p = og_params_qdecode((int64_t)1 << (i % 5));
        p.vec = i < 7 ? 4 : 1;
        if (i >= 12) {
            p = og_params_qprefill();
            if (i % 2) {
                p.load = OG_LOAD_DIRECT;
                p.pad = 0;
            }
        }
        cases[i] = (module_case){
            i,
            {.kernel = OG_KERNEL_GEMM,
             .p = p,
             .dtype = types[i % 3],
             .trans_b = i >= 12,
             .qformat = OG_QFORMAT_KEY(formats[i % 12][0], formats[i % 12][1],
                                       formats[i % 12][2])}};
    }
    static const int integer[4][3] = {{1, 0, 0}, {2, 1, 2}, {4, 0, 0}, {5, 0, 0}};
    for (size_t i = 18; i < N_QDECODE; i++) {
        og_params p = og_params_qdecode(4);
        p.dot = 1 + (int)i % 2;
        p.tn = i == 20 ? 4 : 1;
        p.cols *= p.tn;
        cases[i] = (module_case){i,
                                 {.kernel = OG_KERNEL_GEMM,
                                  .p = p,
                                  .dtype = types[i % 3],
                                  .qformat = OG_QFORMAT_KEY(integer[i - 18][0], integer[i - 18][1],
                                                            integer[i - 18][2])}};
    }
    return N_QDECODE;
}

/* Modules of numeric_cases. */
#define N_NUMERIC (24 + 16 + 8)

/* FP8 inputs (four type pairs: the tile, its split-k pass and the few-rows
 * kernel) and recovered float32 (shift 11 and 12, with and without scaling,
 * and the scaling's exponent pass), in both dialects and rotating layouts. */
static size_t numeric_cases(module_case *cases)
{
    static const og_dtype pairs[4][2] = {{OG_FP8_E4M3, OG_F32},
                                         {OG_F32, OG_FP8_E5M2},
                                         {OG_FP8_E5M2, OG_FP8_E4M3},
                                         {OG_FP8_E4M3, OG_FP8_E4M3}};
    size_t count = 0;
    og_params tile = og_params_default(), rows = og_params_fewrows(0, 4096);
    tile.vec = 1;
    for (int p = 0; p < 4; p++)
        for (int d = 0; d < 2; d++)
            for (int k = 0; k < 3; k++) {
                og_kernel_key key = {.kernel = k == 1 ? OG_KERNEL_PLANES : OG_KERNEL_GEMM,
                                     .p = k == 2 ? rows : tile,
                                     .dtype = pairs[p][0],
                                     .dtype_b = og_dtype_is_fp8(pairs[p][1]) ? pairs[p][1] : 0,
                                     .trans_a = k != 2 && (p + d) % 2,
                                     .trans_b = (p + k) % 2,
                                     .dialect = (og_dialect)d};
                cases[count++] = (module_case){(size_t)-1, key};
            }
    og_params recovered = og_params_default();
    recovered.split = 1;
    for (int v = 0; v < 8; v++)
        for (int d = 0; d < 2; d++) {
            og_kernel_key key = {.p = recovered,
                                 .dtype = OG_F32,
                                 .trans_a = v & 1,
                                 .trans_b = (v >> 1) & 1,
                                 .dialect = (og_dialect)d,
                                 .recover = v < 4 ? OG_RECOVER_SHIFT : OG_RECOVER_SHIFT_MAX,
                                 .scaled = (v >> 2) & 1};
            cases[count++] = (module_case){(size_t)-1, key};
        }
    for (int t = 0; t < 4; t++)
        for (int d = 0; d < 2; d++)
            cases[count++] = (module_case){(size_t)-1,
                                           {.kernel = OG_KERNEL_EXPONENTS,
                                            .dtype = OG_F32,
                                            .trans_a = t & 1,
                                            .trans_b = t >> 1,
                                            .dialect = (og_dialect)d}};
    return count;
}

ParameterizedTestParameters(gen, module)
{
    size_t n, n_quick = 0, count = 0, n_rows[2];
    og_params *space = standard_space(&n);
    og_params *rows[2] = {fewrows_space(0, &n_rows[0]), fewrows_space(1, &n_rows[1])};
    og_limits lim = generous_limits();
    og_params *quick = NULL;
    og_shape cube = {1024, 1024, 1024, 1};
    if (og_space(&lim, OG_PRESET_QUICK, OG_F32, 0, 0, &cube, &quick, &n_quick) != OG_OK)
        n_quick = 0;
    const char *full = getenv("OG_TEST_FULL_SPACE");
    size_t stride = full && strcmp(full, "1") == 0 ? 1 : SAMPLE_STRIDE;
    og_params def = og_params_default();
    size_t n_int8[3];
    og_params *int8[3] = {int8_space(OG_PRESET_QUICK, 0, &n_int8[0]),
                          int8_space(OG_PRESET_STANDARD, 0, &n_int8[1]),
                          int8_space(OG_PRESET_STANDARD, 1, &n_int8[2])};
    module_case *cases = cr_malloc((n + n_rows[0] + n_rows[1] + n_int8[0] + n_int8[1] + n_int8[2] +
                                    2 * N_COMBOS + 8 + N_NUMERIC + N_QDECODE) *
                                   sizeof *cases);
    /* The standard space starts with the quick one; the combination rotates
     * with the order in the sample (with the index, every 40th took
     * only 3 of the 24). */
    for (size_t i = 0; i < n; i++)
        if (i < n_quick || i % stride == 0 || new_value(&space[i], cases, count)) {
            cases[count] = (module_case){i, combo_key(&space[i], count % N_COMBOS)};
            count++;
        }
    for (size_t c = 0; c < N_COMBOS; c++) {
        cases[count++] = (module_case){(size_t)-1, combo_key(&def, c)};
        /* The split-k pass of the same tile. */
        cases[count] = (module_case){(size_t)-1, combo_key(&def, c)};
        cases[count++].key.kernel = OG_KERNEL_PLANES;
    }
    /* Every few-rows shape (float32, A not transposed) in both dialects. */
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < n_rows[t]; i++)
            cases[count++] = (module_case){
                i,
                {.p = rows[t][i], .dtype = OG_F32, .trans_b = t, .dialect = (og_dialect)(i % 2)}};
    /* Int8Gemm: every quick tile and skinny shape, every INT8_STRIDE-th
     * standard tile (the whole space with OG_TEST_FULL_SPACE=1). */
    size_t sampled = 0;
    for (int t = 0; t < 3; t++) {
        for (size_t i = 0; i < n_int8[t]; i++)
            if (t != 1 || stride == 1)
                cases[count++] = (module_case){i, int8_key(&int8[t][i], i + (size_t)t)};
            else if (i >= n_int8[0] && i % INT8_STRIDE == 0)
                cases[count++] = (module_case){i, int8_key(&int8[t][i], sampled++)};
        free(int8[t]);
    }
    count += numeric_cases(cases + count);
    count += qdecode_cases(cases + count);
    /* The split-k reduction, the standalone epilogue kernels and the GEMM
     * with alpha = 0 or K = 0. */
    static const og_kernel passes[] = {OG_KERNEL_REDUCE, OG_KERNEL_BIAS, OG_KERNEL_ACTIVATE,
                                       OG_KERNEL_SCALE};
    for (size_t k = 0; k < sizeof passes / sizeof passes[0]; k++)
        for (int d = 0; d < 2; d++)
            cases[count++] = (module_case){
                (size_t)-1, {.kernel = passes[k], .dtype = OG_F32, .dialect = (og_dialect)d}};
    free(rows[0]);
    free(rows[1]);
    const char *cap = getenv("OG_TEST_GEN_MODULES");
    size_t keep = cap ? (size_t)strtoul(cap, NULL, 10) : count;
    if (keep > 0 && keep < count) {
        for (size_t i = 0; i < keep; i++)
            cases[i] = cases[i * count / keep];
        count = keep;
    }
    free(space);
    free(quick);
    return cr_make_param_array(module_case, cases, count);
}

ParameterizedTest(module_case *c, gen, module)
{
    char what[OG_PARAMS_MAX + 96], err[8192];
    og_params_format(&c->key.p, what, sizeof what);
    snprintf(what + strlen(what), sizeof what - strlen(what), " %s %s%s%s %c%c %s (candidate %zd)",
             og_kernel_template(&c->key), og_dtype_name(c->key.dtype), c->key.dtype_b ? "x" : "",
             c->key.dtype_b ? og_dtype_name(c->key.dtype_b) : "", c->key.trans_a ? 'T' : 'N',
             c->key.trans_b ? 'T' : 'N', c->key.dialect == OG_HLSL ? "hlsl" : "glsl",
             (ssize_t)c->index);

    char *src = NULL;
    og_status st = og_gen_source(&c->key, &src, err, sizeof err);
    cr_assert_eq(st, OG_OK, "%s: og_gen_source: %s", what, err);
    uint32_t *words = NULL;
    size_t count = 0;
    st = og_compile(src, c->key.dialect, 0, &words, &count, err, sizeof err);
    free(src);
    cr_assert_eq(st, OG_OK, "%s: og_compile: %s", what, err);
    cr_assert_gt(count, 5, "%s: %zu words", what, count);
    cr_assert_eq(words[0], 0x07230203u, "%s: no SPIR-V magic number", what);

    cr_expect_eq(spirv_val(words, count), 0, "%s: spirv-val rejects the module", what);

    og_reflection r;
    st = og_reflect(words, count, &r, err, sizeof err);
    free(words);
    cr_assert_eq(st, OG_OK, "%s: og_reflect: %s", what, err);
    uint32_t size[3];
    og_kernel_local_size(&c->key, size);
    for (int i = 0; i < 3; i++)
        cr_expect_eq(r.local_size[i], size[i], "%s: local_size[%d] %u, the formula %u", what, i,
                     r.local_size[i], size[i]);
    cr_expect_eq(r.shared_bytes, og_kernel_shared_bytes(&c->key),
                 "%s: reflection gives %u shared bytes, the formula %u", what, r.shared_bytes,
                 og_kernel_shared_bytes(&c->key));
}

/* ---- parameter text form ---- */

Test(gen, params_round_trip_every_candidate)
{
    size_t n;
    og_params *space = standard_space(&n);
    og_limits lim = generous_limits();
    /* Also guards the module test, whose parameters come from og_space too. */
    cr_assert_gt(n, 1, "the standard space holds %zu candidates", n);
    for (size_t i = 0; i < n; i++) {
        char text[OG_PARAMS_MAX], again[OG_PARAMS_MAX], why[256] = "";
        og_params p;
        og_params_format(&space[i], text, sizeof text);
        cr_assert_eq(og_params_parse(text, &p, why, sizeof why), 0, "candidate %zu '%s': %s", i,
                     text, why);
        og_params_format(&p, again, sizeof again);
        cr_expect_str_eq(again, text, "candidate %zu does not round-trip", i);
        cr_expect_eq(og_params_check(&p, &lim, why, sizeof why), 0,
                     "parsed '%s' fails its check: %s", text, why);
    }
    free(space);
}

/* The default's text form with its items in reverse order. */
static void reversed_default(char *out, size_t len)
{
    og_params def = og_params_default();
    char text[OG_PARAMS_MAX];
    og_params_format(&def, text, sizeof text);
    out[0] = '\0';
    for (char *comma; (comma = strrchr(text, ',')) != NULL; *comma = '\0')
        snprintf(out + strlen(out), len - strlen(out), "%s,", comma + 1);
    snprintf(out + strlen(out), len - strlen(out), "%s", text);
}

Test(gen, params_round_trip_int8_candidates)
{
    og_limits lim = generous_limits();
    size_t total = 0;
    for (int skinny = 0; skinny < 2; skinny++) {
        size_t n;
        og_params *space = int8_space(OG_PRESET_STANDARD, skinny, &n);
        cr_assert_gt(n, 8, "the standard Int8Gemm space holds %zu candidates", n);
        og_params first = skinny ? og_params_int8_skinny() : og_params_int8_tile();
        cr_expect(memcmp(&space[0], &first, sizeof first) == 0, "the default comes first");
        for (size_t i = 0; i < n; i++) {
            char text[OG_PARAMS_MAX], again[OG_PARAMS_MAX], why[256] = "";
            og_params p;
            og_params_format(&space[i], text, sizeof text);
            cr_assert_eq(og_params_parse(text, &p, why, sizeof why), 0, "'%s': %s", text, why);
            cr_expect(memcmp(&p, &space[i], sizeof p) == 0, "'%s' parses differently", text);
            og_params_format(&p, again, sizeof again);
            cr_expect_str_eq(again, text);
            cr_expect_eq(og_params_check(&p, &lim, why, sizeof why), 0, "'%s': %s", text, why);
        }
        total += n;
        free(space);
    }
    cr_expect_gt(total, 20);
}

Test(gen, params_parse_accepts_any_key_order)
{
    og_params p, def = og_params_default();
    char reversed[OG_PARAMS_MAX], text[OG_PARAMS_MAX], expect[OG_PARAMS_MAX], why[256] = "";
    reversed_default(reversed, sizeof reversed);
    cr_assert_eq(og_params_parse(reversed, &p, why, sizeof why), 0, "'%s': %s", reversed, why);
    og_params_format(&p, text, sizeof text);
    og_params_format(&def, expect, sizeof expect);
    cr_expect_str_eq(text, expect, "'%s' parses differently", reversed);
}

/* The default's text form with the value of key replaced by value. */
static void default_with(const char *key, const char *value, char *out, size_t len)
{
    og_params def = og_params_default();
    char text[OG_PARAMS_MAX], item[32];
    og_params_format(&def, text, sizeof text);
    snprintf(item, sizeof item, "%s=", key);
    char *at = strstr(text, item);
    cr_assert(at == text || (at && at[-1] == ','), "no %s in '%s'", key, text);
    at += strlen(item);
    snprintf(out, len, "%.*s%s%s", (int)(at - text), text, value, at + strcspn(at, ","));
}

/* Parses text, expecting a failure whose reason contains reason, and *out untouched. */
static void expect_parse_error(const char *text, const char *reason)
{
    og_params p, sentinel;
    memset(&sentinel, 0x5a, sizeof sentinel);
    p = sentinel;
    char why[256] = "";
    cr_expect_eq(og_params_parse(text, &p, why, sizeof why), -1, "'%s' parsed", text);
    cr_expect_not_null(strstr(why, reason), "'%s': reason '%s' lacks '%s'", text, why, reason);
    cr_expect_eq(memcmp(&p, &sentinel, sizeof p), 0, "'%s': output written on failure", text);
}

Test(gen, params_parse_errors)
{
    og_params def = og_params_default();
    char good[OG_PARAMS_MAX], text[2 * OG_PARAMS_MAX];
    og_params_format(&def, good, sizeof good);

    /* Missing keys: drop src (the item before the optional split), or the first. */
    snprintf(text, sizeof text, "%s", good);
    char *src = strstr(text, ",src=");
    memmove(src, strstr(src + 1, ","), strlen(strstr(src + 1, ",")) + 1);
    expect_parse_error(text, "needs exactly");
    expect_parse_error(strchr(good, ',') + 1, "needs exactly");
    expect_parse_error("", "needs exactly");
    expect_parse_error("variant=fewrows,cols=16", "needs exactly cols and slices (and vec)");
    expect_parse_error("variant=fewrows,cols=16,slices=16,bm=64", "needs exactly cols and slices");
    default_with("split", "17", text, sizeof text);
    expect_parse_error(text, "split=17 is not 'rule' or 1..16");
    snprintf(text, sizeof text, "%s,foo=1", good);
    expect_parse_error(text, "unknown item foo=1");
    default_with("load", "sideways", text, sizeof text);
    expect_parse_error(text, "unknown item load=sideways");
    default_with("bm", "abc", text, sizeof text);
    expect_parse_error(text, "bm=abc is not a small integer");
    default_with("bn", "6x4", text, sizeof text);
    expect_parse_error(text, "bn=6x4 is not a small integer");
    default_with("bk", "", text, sizeof text);
    expect_parse_error(text, "bk= is not a small integer");
    default_with("tm", "-4", text, sizeof text);
    expect_parse_error(text, "tm=-4 is not a small integer");
    expect_parse_error("bm=64,,bn=64", "malformed item");
    expect_parse_error("bm64,bn=64", "has no '='");
}

/* split is optional (records written before split-k existed name no split)
 * and means the rule; few-rows parameters round-trip. */
Test(gen, params_split_optional_and_fewrows)
{
    og_params p, def = og_params_default();
    char good[OG_PARAMS_MAX], why[256] = "";
    og_params_format(&def, good, sizeof good);
    *strstr(good, ",split=") = '\0';
    cr_assert_eq(og_params_parse(good, &p, why, sizeof why), 0, "'%s': %s", good, why);
    cr_expect_eq(p.split, OG_SPLIT_RULE);
    og_params rows = og_params_fewrows(1, 100), back;
    og_params_format(&rows, good, sizeof good);
    cr_expect_str_eq(good, "variant=fewrows,cols=8,slices=32,vec=4");
    cr_assert_eq(og_params_parse(good, &back, why, sizeof why), 0, "'%s': %s", good, why);
    cr_expect(memcmp(&back, &rows, sizeof rows) == 0, "'%s' does not round-trip", good);
    cr_expect_eq(og_params_check(&back, NULL, why, sizeof why), 0, "%s", why);
    /* Records written before vec existed read one element at a time. */
    cr_assert_eq(og_params_parse("variant=fewrows,cols=16,slices=16", &back, why, sizeof why), 0,
                 "%s", why);
    cr_expect_eq(back.vec, 1);
    /* Four elements need four columns (B K x N) and four slices (N x K). */
    back.vec = 4;
    back.cols = 2;
    cr_expect_neq(og_params_check(&back, NULL, why, sizeof why), 0);
    cr_expect(strstr(why, "cols and slices >= vec"), "%s", why);
    back.cols = 16;
    back.vec = 2;
    cr_expect_neq(og_params_check(&back, NULL, why, sizeof why), 0);
}

/* ---- checks against the template's rules and the device's limits ---- */

static void expect_check_error(const og_params *p, const og_limits *lim, const char *reason)
{
    char text[OG_PARAMS_MAX], why[256] = "";
    og_params_format(p, text, sizeof text);
    cr_expect_eq(og_params_check(p, lim, why, sizeof why), -1, "'%s' passes the check", text);
    cr_expect_not_null(strstr(why, reason), "'%s': reason '%s' lacks '%s'", text, why, reason);
}

Test(gen, params_check_rules)
{
    og_limits lim = generous_limits();
    og_params def = og_params_default(), p;
    char why[256] = "";
    cr_assert_eq(og_params_check(&def, &lim, why, sizeof why), 0, "the default fails: %s", why);
    cr_assert_eq(og_params_check(&def, NULL, why, sizeof why), 0, "the default fails: %s", why);

    p = def;
    p.wgx = 8; /* 8 x tn 4 != bn 64 */
    expect_check_error(&p, NULL, "is not the tile");
    p = def;
    p.wgy = 32; /* 32 x tm 4 != bm 64 */
    expect_check_error(&p, NULL, "is not the tile");
    p = def;
    p.tn = 8; /* register tile changed, workgroup not */
    expect_check_error(&p, NULL, "is not the tile");
    for (int bk = 8; bk <= 64; bk *= 2) {
        p = def;
        p.bk = bk;
        if (bk == 16 || bk == 32)
            cr_expect_eq(og_params_check(&p, &lim, why, sizeof why), 0, "bk=%d: %s", bk, why);
        else
            expect_check_error(&p, &lim, "is not 16 or 32");
    }
    /* The low-bit decode kernel: powers of two within their bounds, 32 to
     * 1024 invocations, word or 16-byte loads; its text form round-trips. */
    og_params q = og_params_qdecode(5);
    cr_assert_eq(q.rows, 8, "M = 5 takes 8 rows a workgroup, not %d", q.rows);
    cr_assert_eq(og_params_check(&q, &lim, why, sizeof why), 0, "the qdecode default fails: %s", why);
    char text[OG_PARAMS_MAX];
    og_params_format(&q, text, sizeof text);
    cr_assert_str_eq(text, "variant=qdecode,rows=8,cols=4,slices=32,vec=4");
    cr_assert_eq(og_params_parse("variant=qdecode,rows=2,cols=8,slices=16", &p, why, sizeof why), 0,
                 "%s", why);
    cr_assert(p.variant == OG_VARIANT_QDECODE && p.rows == 2 && p.cols == 8 && p.slices == 16 &&
                  p.vec == 1,
              "parsed qdecode rows=%d cols=%d slices=%d vec=%d", p.rows, p.cols, p.slices, p.vec);
    static const int bad[][4] = {{32, 4, 32, 4}, {3, 4, 32, 4}, {1, 2, 8, 4}, {1, 64, 32, 4},
                                 {1, 4, 32, 2}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p = q;
        p.rows = bad[i][0];
        p.cols = bad[i][1];
        p.slices = bad[i][2];
        p.vec = bad[i][3];
        expect_check_error(&p, NULL, "params: qdecode");
    }
    /* A weight format belongs to the decode kernel and the decode kernel to one. */
    og_kernel_key k = {.kernel = OG_KERNEL_GEMM, .p = q, .dtype = OG_F32};
    cr_assert_neq(og_kernel_check(&k, NULL, why, sizeof why), 0, "qdecode without a format passed");
    k.qformat = OG_QFORMAT_KEY(0, 0, 0);
    cr_assert_eq(og_kernel_check(&k, NULL, why, sizeof why), 0, "%s", why);
    k.dialect = OG_HLSL;
    cr_assert_neq(og_kernel_check(&k, NULL, why, sizeof why), 0, "qdecode in HLSL passed");
    /* The tile takes one for its prefill loads: B (the weights) transposed,
     * element loads from storage buffers, the gemm pass. */
    k = (og_kernel_key){.kernel = OG_KERNEL_GEMM,
                        .p = og_params_qprefill(),
                        .trans_b = 1,
                        .qformat = OG_QFORMAT_KEY(0, 0, 0)};
    cr_assert_eq(og_kernel_check(&k, NULL, why, sizeof why), 0, "the prefill tile: %s", why);
    k.trans_b = 0;
    cr_assert_neq(og_kernel_check(&k, NULL, why, sizeof why), 0, "W not transposed passed");
    k.trans_b = 1;
    k.p.vec = 4;
    cr_assert_neq(og_kernel_check(&k, NULL, why, sizeof why), 0, "the prefill with vec=4 passed");
    k.p.vec = 1;
    k.kernel = OG_KERNEL_PLANES;
    cr_assert_neq(og_kernel_check(&k, NULL, why, sizeof why), 0, "the prefill's planes passed");
}

Test(gen, params_check_limits)
{
    og_params def = og_params_default();
    uint32_t shared = og_params_shared_bytes(&def);
    char why[256] = "";
    cr_assert_gt(shared, 0, "staged default declares no workgroup memory");

    const og_limits gen = generous_limits();
    og_limits lim = gen;
    lim.max_invocations = (uint32_t)(def.wgx * def.wgy);
    cr_expect_eq(og_params_check(&def, &lim, why, sizeof why), 0, "at the limit: %s", why);
    lim.max_invocations--;
    expect_check_error(&def, &lim, "invocations per workgroup exceed");

    lim = gen;
    lim.max_shared_bytes = shared;
    cr_expect_eq(og_params_check(&def, &lim, why, sizeof why), 0, "at the limit: %s", why);
    lim.max_shared_bytes = shared - 1;
    expect_check_error(&def, &lim, "bytes of workgroup memory exceed");

    /* Direct loads declare no workgroup memory, so no shared limit binds them. */
    og_params direct = def;
    direct.load = OG_LOAD_DIRECT;
    cr_expect_eq(og_params_shared_bytes(&direct), 0u);
    cr_expect_eq(og_params_check(&direct, &lim, why, sizeof why), 0, "direct: %s", why);
}

Test(gen, int8_params_and_kernel_checks)
{
    og_limits lim = generous_limits();
    og_params tile = og_params_int8_tile(), skinny = og_params_int8_skinny(), p;
    char text[OG_PARAMS_MAX], why[256] = "";
    og_params_format(&skinny, text, sizeof text);
    cr_expect_str_eq(text, "variant=int8skinny,rows=4,cols=32,slices=16,dot=0");
    expect_parse_error("variant=int8skinny,rows=4,cols=32,dot=0",
                       "needs exactly rows, cols, slices and dot");
    expect_parse_error("variant=int8tile,bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0",
                       "needs exactly bm,bn,bk,tm,tn,wgx,wgy,pad,dot");
    expect_parse_error("variant=int8skinny,rows=4,cols=32,slices=16,dot=0,split=2",
                       "needs exactly");
    expect_parse_error("variant=int8tile,bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,dot=0,"
                       "load=direct",
                       "needs exactly");

    p = tile;
    p.dot = 2;
    expect_check_error(&p, NULL, "dot=2 is not 0 or 1");
    p = tile;
    p.dot = 1;
    og_limits no_dot = lim;
    no_dot.integer_dot = 0;
    expect_check_error(&p, &no_dot, "VK_KHR_shader_integer_dot_product");
    no_dot.integer_dot = 1;
    cr_expect_eq(og_params_check(&p, &no_dot, why, sizeof why), 0, "%s", why);
    p = tile;
    p.wgx = 8;
    expect_check_error(&p, NULL, "is not the tile");
    p = skinny;
    p.rows = 3;
    expect_check_error(&p, NULL, "must be powers of two");
    p = skinny;
    p.slices = 64; /* 32 x 64 = 2048 invocations */
    expect_check_error(&p, NULL, "32..1024 invocations");
    og_limits small = lim;
    small.max_invocations = 256;
    expect_check_error(&skinny, &small, "invocations per workgroup exceed");
    small = lim;
    small.max_shared_bytes = og_params_shared_bytes(&tile) - 1;
    expect_check_error(&tile, &small, "bytes of workgroup memory exceed");
    cr_expect_eq(og_params_shared_bytes(&skinny), 4u * 4 * 32 * 16);
    p = tile;
    p.dot = 1;
    cr_expect_eq(og_params_shared_bytes(&p), og_params_shared_bytes(&tile) / 4,
                 "packed words take a quarter of the ints");

    /* Kernel keys: the 8-bit variants take 8-bit inputs and nothing else
     * does; the skinny kernel takes B not transposed; dot=1 is GLSL only. */
    og_kernel_key good = {.p = tile, .dtype = OG_INT8, .dtype_b = OG_UINT8};
    cr_expect_eq(og_kernel_check(&good, &lim, why, sizeof why), 0, "%s", why);
    og_kernel_key key = good;
    key.dtype = OG_F32;
    cr_expect_eq(og_kernel_check(&key, &lim, why, sizeof why), -1);
    cr_expect_not_null(strstr(why, "take int8 or uint8 inputs"), "%s", why);
    key = (og_kernel_key){.p = og_params_default(), .dtype = OG_INT8, .dtype_b = OG_INT8};
    cr_expect_eq(og_kernel_check(&key, &lim, why, sizeof why), -1, "a float tile on int8 inputs");
    key = (og_kernel_key){.p = skinny, .dtype = OG_INT8, .dtype_b = OG_INT8, .trans_b = 1};
    cr_expect_eq(og_kernel_check(&key, &lim, why, sizeof why), -1);
    cr_expect_not_null(strstr(why, "B not transposed"), "%s", why);
    key = good;
    key.p.dot = 1;
    key.dialect = OG_HLSL;
    cr_expect_eq(og_kernel_check(&key, &lim, why, sizeof why), -1);
    cr_expect_not_null(strstr(why, "GLSL only"), "%s", why);
}

/* og_build_kernel refuses parameters beyond the limits before compiling: the
 * reason is the check's, not the post-reflection one ("kernel needs"). */
static void expect_build_refused(const og_limits *lim, const char *reason)
{
    og_kernel_key key = {.p = og_params_default(), .dtype = OG_F32, .dialect = OG_GLSL};
    uint32_t *words = NULL;
    size_t count = 99;
    og_reflection r;
    char err[1024] = "";
    cr_expect_eq(og_build_kernel(&key, lim, &words, &count, &r, err, sizeof err),
                 OG_ERROR_UNSUPPORTED, "built beyond the limits: %s", err);
    cr_expect_null(words);
    cr_expect_eq(count, 0);
    cr_expect_not_null(strstr(err, reason), "reason '%s' lacks '%s'", err, reason);
    free(words);
}

Test(gen, build_kernel_refuses_beyond_limits)
{
    og_params def = og_params_default();
    const og_limits gen = generous_limits();
    og_limits lim = gen;
    lim.max_invocations = (uint32_t)(def.wgx * def.wgy) / 2;
    expect_build_refused(&lim, "invocations per workgroup exceed");
    lim = gen;
    lim.max_shared_bytes = og_params_shared_bytes(&def) / 2;
    expect_build_refused(&lim, "bytes of workgroup memory exceed");
}

Test(gen, build_kernel_within_limits)
{
    og_kernel_key key = {.p = og_params_default(), .dtype = OG_F16, .dialect = OG_HLSL};
    og_limits lim = generous_limits();
    uint32_t *words = NULL;
    size_t count = 0;
    og_reflection r;
    char err[8192] = "";
    cr_assert_eq(og_build_kernel(&key, &lim, &words, &count, &r, err, sizeof err), OG_OK, "%s",
                 err);
    cr_expect_not_null(words);
    cr_expect_gt(count, 5);
    cr_expect_eq(r.local_size[0], (uint32_t)key.p.wgx);
    cr_expect_eq(r.local_size[1], (uint32_t)key.p.wgy);
    cr_expect_eq(r.shared_bytes, og_params_shared_bytes(&key.p));
    free(words);
}

/* The convolution's kernels compile in GLSL and HLSL (glslang's HLSL front
 * end): the tile and its planes of every input and weight layout, float16,
 * and the reduction; a direct tile with vector loads from texel buffers in
 * every layout (NHWC/KRSC's four channels a load), the three types in
 * turn; recovered float32 is refused by name. */
Test(gen, conv_kernels_compile)
{
    og_limits lim = generous_limits();
    const og_kernel kernels[] = {OG_KERNEL_GEMM, OG_KERNEL_PLANES, OG_KERNEL_REDUCE};
    for (int c = 0; c < 2 * 4 * 3; c++) {
        og_kernel_key key = {.kernel = kernels[c % 3], .p = og_params_default(), .dtype = OG_F16,
                             .trans_b = 1, .dialect = c / 12 ? OG_HLSL : OG_GLSL,
                             .conv = OG_CONV_KEY(c / 3 % 2, c / 6 % 2)};
        uint32_t *words = NULL;
        size_t count = 0;
        og_reflection r;
        char err[8192] = "";
        cr_expect_eq(og_build_kernel(&key, &lim, &words, &count, &r, err, sizeof err), OG_OK,
                     "kernel %d, %s, conv %d: %s", (int)key.kernel,
                     key.dialect == OG_HLSL ? "HLSL" : "GLSL", key.conv, err);
        free(words);
    }
    og_params direct = og_params_default();
    direct.load = OG_LOAD_DIRECT, direct.vec = 4, direct.src = OG_SRC_TEXEL;
    const og_dtype types[] = {OG_F32, OG_F16, OG_BF16};
    for (int c = 0; c < 2 * 4; c++) {
        og_kernel_key key = {.p = direct, .dtype = types[c % 3], .trans_b = 1,
                             .dialect = c / 4 ? OG_HLSL : OG_GLSL,
                             .conv = OG_CONV_KEY(c % 2, c / 2 % 2)};
        uint32_t *words = NULL;
        size_t count = 0;
        og_reflection r;
        char err[8192] = "";
        cr_expect_eq(og_build_kernel(&key, &lim, &words, &count, &r, err, sizeof err), OG_OK,
                     "vec=4 texel, %s, conv %d: %s", key.dialect == OG_HLSL ? "HLSL" : "GLSL",
                     key.conv, err);
        free(words);
    }
    og_kernel_key key = {.p = og_params_default(), .dtype = OG_F32, .trans_b = 1, .recover = 11,
                         .conv = OG_CONV_KEY(0, 0)};
    char why[512] = "";
    cr_expect_eq(og_kernel_check(&key, &lim, why, sizeof why), -1);
    cr_expect_not_null(strstr(why, "a convolution takes native products"), "%s", why);
}

/* ---- other outputs ---- */

/* The default kernel's source, compiled (assembly non-zero: SPIR-V text). */
static uint32_t *default_module(int assembly, size_t *count)
{
    og_kernel_key key = {.p = og_params_default(), .dtype = OG_F32, .dialect = OG_GLSL};
    char *src = NULL, err[8192] = "";
    cr_assert_eq(og_gen_source(&key, &src, err, sizeof err), OG_OK, "%s", err);
    uint32_t *words = NULL;
    og_status st = og_compile(src, key.dialect, assembly, &words, count, err, sizeof err);
    free(src);
    cr_assert_eq(st, OG_OK, "%s", err);
    return words;
}

Test(gen, export_msl)
{
    size_t count;
    uint32_t *words = default_module(0, &count);
    char *msl = NULL, err[4096] = "";
    og_status st = og_export_msl(words, count, &msl, err, sizeof err);
    free(words);
    cr_assert_eq(st, OG_OK, "%s", err);
    cr_expect_not_null(strstr(msl, "kernel void"), "no 'kernel void' in:\n%s", msl);
    free(msl);
}

Test(gen, compile_assembly)
{
    size_t count;
    char *text = (char *)default_module(1, &count);
    cr_expect_eq(strlen(text), count, "count is not the text's length");
    cr_expect_not_null(strstr(text, "OpEntryPoint GLCompute"), "no entry point in:\n%.2000s", text);
    free(text);
}

/* Int8Gemm's packed dot products are the plain OpSDot, OpUDot and OpSUDot:
 * the AccSat forms saturate, where the definition wraps modulo 2^32. */
Test(gen, int8_dot_products_never_saturate)
{
    static const og_dtype types[2] = {OG_INT8, OG_UINT8};
    static const char *const ops[2][2] = {{"OpSDot", "OpSUDot"}, {"OpSUDot", "OpUDot"}};
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            og_kernel_key key = {
                .p = og_params_int8_tile(), .dtype = types[a], .dtype_b = types[b]};
            key.p.dot = 1;
            char *src = NULL, err[8192] = "";
            cr_assert_eq(og_gen_source(&key, &src, err, sizeof err), OG_OK, "%s", err);
            char *text = NULL;
            size_t count;
            og_status st = og_compile(src, OG_GLSL, 1, (uint32_t **)&text, &count, err, sizeof err);
            free(src);
            cr_assert_eq(st, OG_OK, "%s", err);
            cr_expect_not_null(strstr(text, ops[a][b]), "%s x %s: no %s", og_dtype_name(types[a]),
                               og_dtype_name(types[b]), ops[a][b]);
            cr_expect_null(strstr(text, "AccSat"), "%s x %s uses a saturating dot product",
                           og_dtype_name(types[a]), og_dtype_name(types[b]));
            free(text);
        }
}

Test(gen, template_hash)
{
    uint64_t h = og_template_hash(OG_TEMPLATE_TILE);
    /* Every template hashes to its own version. */
    const char *names[] = {OG_TEMPLATE_FEWROWS, OG_TEMPLATE_REDUCE, OG_TEMPLATE_ELEMENTWISE,
                           OG_TEMPLATE_INT8_TILE, OG_TEMPLATE_INT8_SKINNY};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        cr_expect_neq(og_template_hash(names[i]), h, "%s", names[i]);
    cr_expect_neq(og_template_hash(OG_TEMPLATE_INT8_TILE),
                  og_template_hash(OG_TEMPLATE_INT8_SKINNY));
    cr_expect_neq(h, 0);
    cr_expect_eq(og_template_hash(OG_TEMPLATE_TILE), h, "hash changes between calls");
    /* It hashes the template's text: an unknown template (no text) differs. */
    cr_expect_neq(og_template_hash("no_such_template"), h);
}

/* Kernel keys of the numeric options: FP8 pairs, recovered float32. */
static void expect_key_refused(const og_kernel_key *key, const char *reason)
{
    char why[256] = "";
    cr_expect_eq(og_kernel_check(key, NULL, why, sizeof why), -1, "accepted, expected '%s'",
                 reason);
    cr_expect(strstr(why, reason), "'%s' does not say '%s'", why, reason);
}

Test(gen, numeric_kernel_checks)
{
    og_params tile = og_params_default();
    tile.vec = 1;
    char why[256] = "";
    og_kernel_key key = {.p = tile, .dtype = OG_F32, .dtype_b = OG_FP8_E4M3};
    cr_expect_eq(og_kernel_check(&key, NULL, why, sizeof why), 0, "%s", why);
    cr_expect_eq(og_kernel_b_type(&key), OG_FP8_E4M3);
    key = (og_kernel_key){.p = tile, .dtype = OG_FP8_E5M2};
    cr_expect_eq(og_kernel_b_type(&key), OG_F32, "dtype_b 0 beside an FP8 A is float32");
    key = (og_kernel_key){.p = tile, .dtype = OG_F16};
    cr_expect_eq(og_kernel_b_type(&key), OG_F16, "dtype_b 0 is A's type otherwise");

    key = (og_kernel_key){.p = og_params_default(), .dtype = OG_FP8_E4M3};
    key.p.vec = 4;
    expect_key_refused(&key, "one element at a time");
    key = (og_kernel_key){.p = tile, .dtype = OG_FP8_E4M3, .dtype_b = OG_F16};
    expect_key_refused(&key, "pairs with FP8 or float32");
    key = (og_kernel_key){.p = tile, .dtype = OG_F32, .dtype_b = OG_F16};
    expect_key_refused(&key, "differ without an FP8 operand");
    key = (og_kernel_key){.p = og_params_coopmat(8), .dtype = OG_FP8_E4M3};
    expect_key_refused(&key, "portable tile, the few-rows or the decode kernel");
    key = (og_kernel_key){.p = tile, .dtype = (og_dtype)9};
    expect_key_refused(&key, "unknown input type");
    key = (og_kernel_key){.p = tile, .dtype = OG_F32, .dtype_b = OG_INT8};
    expect_key_refused(&key, "Int8Gemm variants, and only they");

    og_params rec = og_params_default();
    rec.split = 1;
    key = (og_kernel_key){.p = rec, .dtype = OG_F32, .recover = 11, .scaled = 1};
    cr_expect_eq(og_kernel_check(&key, NULL, why, sizeof why), 0, "%s", why);
    cr_expect_eq(og_kernel_shared_bytes(&key), 2 * og_params_shared_bytes(&rec));
    key.recover = OG_RECOVER_SHIFT_MAX + 1;
    expect_key_refused(&key, "residual shift 13 is outside");
    key = (og_kernel_key){.p = og_params_fewrows(0, 64), .dtype = OG_F32, .recover = 11};
    expect_key_refused(&key, "recovered float32 runs the staged tile");
    key = (og_kernel_key){.p = rec, .dtype = OG_F16, .recover = 11};
    expect_key_refused(&key, "recovered float32 takes float32 inputs");
    key = (og_kernel_key){.kernel = OG_KERNEL_PLANES, .p = rec, .dtype = OG_F32, .recover = 11};
    expect_key_refused(&key, "recovered float32 runs the staged tile");
    og_limits lim = {.max_invocations = 1024,
                     .max_size = {1024, 1024, 64},
                     .max_count = {65535, 65535, 65535},
                     .max_shared_bytes = og_params_shared_bytes(&rec) + 1,
                     .max_storage_range = 1u << 30,
                     .max_push_bytes = 128};
    key = (og_kernel_key){.p = rec, .dtype = OG_F32, .recover = 11};
    cr_expect_eq(og_kernel_check(&key, &lim, why, sizeof why), -1,
                 "the doubled staging must be held against the limit");
}
