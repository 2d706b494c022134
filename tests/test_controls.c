/* Negative controls of the float checks (issue 15, item 2). The suite's two
 * comparisons of a float GEMM, og_compare against the float64 reference
 * (within the design's bound, nothing written outside C's region) and
 * bits_differ against a documented order, reject a wrong result. Faults
 * planted in copies of the float templates, read through OG_TEMPLATE_DIR
 * (a dropped k tail, a wrong leading dimension on one operand, the epilogue
 * applied twice, one element of each product written past the edge of C),
 * in the tile (the
 * staged default and the one-chain direct tile), the few-rows kernel and
 * split-k (its planes pass and gemm_reduce), are each rejected by the tuner's
 * verification (og_subject_measure, what its workers run) as "wrong result"
 * and caught by both comparisons on a call like the suite's, where the
 * built-in templates pass the same checks. Each plant is asserted to change
 * the text of the kernel it targets, so a template edit cannot leave it
 * without effect. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_test.h"
#include "og_text.h"
#include "og_tmpdir.h"

TestSuite(controls, .init = make_tmpdir, .fini = remove_tmpdir);

/* A fault: one or two substitutions in one template, each at an anchor the
 * template holds exactly once. */
typedef struct plant {
    const char *tmpl;   /* the template's name */
    og_kernel kernel;   /* the kernel whose text it changes */
    const char *at[2];  /* anchors (at[1] may be NULL) */
    const char *put[2]; /* what replaces them */
} plant;

/* A candidate the plant is tried on: the tuner's shape, and the suite's call
 * (alpha = 1.5, beta = -0.5: C read, the epilogue loop everywhere). */
typedef struct config {
    const char *name;
    og_params p;
    og_shape tuning;
    int64_t m, n, k, batch;
} config;

/* The one-chain tile of the quick space: direct vector loads from texel
 * buffers, 8 x 8 register tiles. */
static og_params chain_tile(void)
{
    og_params p = og_params_default();
    p.tm = p.tn = 8;
    p.wgx = p.wgy = 8;
    p.load = OG_LOAD_DIRECT;
    p.acc = OG_ACC_CHAIN;
    p.vec = 4;
    p.src = OG_SRC_TEXEL;
    return p;
}

/* The staged default tile and the one-chain direct tile. Like the
 * few-rows and split-k configs below, the suite's call has K not a multiple
 * of 16 (a ragged step of k or of the slices), leading dimensions rounded up
 * past K and N (og_problem_create: a wrong one reads other elements, a
 * column past N is outside C's region) and two products; the tile's has
 * workgroups wholly inside C too (vector loads), split-k's cuts K = 300 into
 * 4 ranges of 75. */
static void tile_configs(config out[2])
{
    out[0] = (config){"the default tile", og_params_default(), {64, 64, 64, 1}, 70, 75, 37, 2};
    out[1] = (config){"the one-chain tile", chain_tile(), {64, 64, 64, 1}, 70, 75, 37, 2};
}

/* dir/<tmpl>.tmpl: the built-in template with the plant's substitutions. */
static void write_planted(const plant *pl, const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.tmpl", OG_TEMPLATES, pl->tmpl);
    char *text = read_text(path);
    for (int i = 0; i < 2 && pl->at[i]; i++) {
        cr_assert_eq(count(text, pl->at[i]), 1, "%s.tmpl holds \"%s\" %zu times, not once",
                     pl->tmpl, pl->at[i], count(text, pl->at[i]));
        text = replaced(text, pl->at[i], pl->put[i]);
    }
    snprintf(path, sizeof path, "%s/%s.tmpl", dir, pl->tmpl);
    write_text(path, text);
    free(text);
}

/* The plant changes the GLSL of the kernel it targets for p. Leaves
 * OG_TEMPLATE_DIR unset. */
static void expect_text_changes(const plant *pl, const og_params *p, const char *dir)
{
    og_kernel_key key = {.kernel = pl->kernel, .dtype = OG_F32, .dialect = OG_GLSL};
    if (pl->kernel != OG_KERNEL_REDUCE) {
        key.p = *p;
        key.p.split = OG_SPLIT_RULE; /* as the runtime keys its pipelines */
    }
    char err[512], *builtin, *planted;
    unsetenv("OG_TEMPLATE_DIR");
    cr_assert_eq(og_gen_source(&key, &builtin, err, sizeof err), OG_OK, "%s", err);
    cr_assert_eq(setenv("OG_TEMPLATE_DIR", dir, 1), 0);
    cr_assert_eq(og_gen_source(&key, &planted, err, sizeof err), OG_OK, "planted %s: %s", pl->tmpl,
                 err);
    unsetenv("OG_TEMPLATE_DIR");
    cr_assert(strcmp(builtin, planted) != 0,
              "the plant in %s.tmpl leaves the kernel's text as it was", pl->tmpl);
    free(builtin);
    free(planted);
}

/* The suite's checks of c's call (check_problem's): *within: og_problem_verify
 * accepts it (og_compare against the float64 reference, within the bound,
 * nothing written outside C's region; why says otherwise); returns how many
 * elements differ from the documented order (og_reference_ordered, the
 * ranges from documented_ranges). */
static size_t suite_checks(og_context *ctx, const config *c, int fused, int *within, char *why,
                           size_t len)
{
    og_gemm *g;
    og_problem *pr;
    double metric;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    cr_assert_eq(og_problem_create(ctx, OG_F32, 0, 0, c->m, c->n, c->k, c->batch, 31, &pr), OG_OK);
    problem_scalars(pr, 1.5f, -0.5f);
    why[0] = '\0';
    cr_assert_eq(og_problem_verify(g, pr, &c->p, within, &metric, why, len), OG_OK, "%s: %s",
                 c->name, og_context_last_error(ctx));
    og_order order = {.variant = c->p.variant,
                      .acc = c->p.acc,
                      .ranges = 1,
                      .range_len = (uint32_t)c->k,
                      .slices = c->p.slices};
    if (c->p.variant == OG_VARIANT_TILE)
        documented_ranges(c->p.split, c->m, c->n, c->k, c->batch, g->scratch_bytes / 4,
                          &order.ranges, &order.range_len);
    float *want = malloc(pr->nc * sizeof *want);
    cr_assert_not_null(want);
    og_reference_ordered(OG_F32, &pr->args, pr->a, pr->b, pr->c0, NULL, fused, &order, want);
    size_t first, differ = bits_differ(pr->c, want, pr->nc, &first);
    free(want);
    og_problem_destroy(pr);
    og_gemm_destroy(g);
    return differ;
}

/* The built-in templates pass the tuner's verification and the suite's
 * checks for c (so the plant is what fails them); the plant in dir fails
 * all three. */
static void check_config(const plant *pl, const config *c, const char *dir)
{
    og_subject_job job = {.dtype = OG_F32, .mode = OG_MODE_FAST, .shape = c->tuning};
    og_subject sub;
    int accepted, within;
    double metric;
    char why[512];
    og_context *ctx = open_context();
    int fused = device_fuses(ctx); /* before the plant: the probe runs few rows */
    cr_assert_eq(og_subject_create(ctx, &job, &sub), OG_OK);
    cr_assert_eq(og_candidate_verify(sub.g, sub.pr, &c->p, &accepted, &metric, why, sizeof why),
                 OG_OK);
    cr_assert(accepted, "%s, built-in: the tuner rejects it: %s", c->name, why);
    og_subject_destroy(&sub);
    size_t differ = suite_checks(ctx, c, fused, &within, why, sizeof why);
    cr_assert(within && differ == 0, "%s, built-in: %s, %zu elements off the documented order",
              c->name, why, differ);
    close_context(ctx);

    cr_assert_eq(setenv("OG_TEMPLATE_DIR", dir, 1), 0);
    ctx = open_context(); /* a context's pipelines are keyed without the template */
    og_record r;
    memset(&r, 0, sizeof r);
    cr_assert_eq(og_subject_create(ctx, &job, &sub), OG_OK);
    cr_assert_eq(og_subject_measure(&sub, &c->p, &r), OG_OK, "%s", og_context_last_error(ctx));
    og_subject_destroy(&sub);
    cr_log_info("%s, planted in %s.tmpl: the tuner: %s", c->name, pl->tmpl,
                r.accepted ? "accepted" : r.reason);
    cr_expect(
        !r.accepted && strncmp(r.reason, OG_REJECT_WRONG ": ", strlen(OG_REJECT_WRONG) + 2) == 0,
        "%s, planted in %s.tmpl: the tuner should reject it as \"" OG_REJECT_WRONG "\"; got %s",
        c->name, pl->tmpl, r.accepted ? "accepted" : r.reason);
    differ = suite_checks(ctx, c, fused, &within, why, sizeof why);
    cr_log_info("%s, planted in %s.tmpl: og_compare: %s; %zu elements off the documented order",
                c->name, pl->tmpl, within ? "accepted" : why, differ);
    cr_expect(!within, "%s, planted in %s.tmpl: og_compare accepts it", c->name, pl->tmpl);
    cr_expect_gt(differ, 0, "%s, planted in %s.tmpl: every bit is the documented order's", c->name,
                 pl->tmpl);
    close_context(ctx);
    unsetenv("OG_TEMPLATE_DIR");
}

static void check_plant(const plant *pl, const config *configs, size_t n)
{
    char dir[512];
    tmp_path(dir, sizeof dir, "templates");
    cr_assert_eq(mkdir(dir, 0700), 0);
    write_planted(pl, dir);
    for (size_t i = 0; i < n; i++) {
        expect_text_changes(pl, &configs[i].p, dir);
        check_config(pl, &configs[i], dir);
    }
}

/* ---- the comparisons themselves ---- */

/* On a real result (the default kernel's, which both accept): one element
 * one ulp off fails the bit comparison, while og_compare, a tolerance,
 * takes it; an error of twice the float32 bound (relative to the largest
 * reference element) fails og_compare and half of it passes, so the bound
 * is where the design puts it; a NaN in C or a changed element outside C's
 * region fails og_compare by count; -0 for +0 fails the bit comparison. */
Test(controls, the_comparisons_reject_a_wrong_float_result)
{
    og_context *ctx = open_context();
    int fused = device_fuses(ctx);
    og_gemm *g;
    og_problem *pr;
    cr_assert_eq(og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g), OG_OK);
    cr_assert_eq(og_problem_create(ctx, OG_F32, 0, 0, 37, 45, 70, 2, 8, &pr), OG_OK);
    problem_scalars(pr, 1.5f, -0.5f);
    og_params p = og_params_default();
    int accepted;
    double metric, max_rel, bound = og_dtype_bound(OG_F32);
    char why[256];
    cr_assert_eq(og_problem_verify(g, pr, &p, &accepted, &metric, why, sizeof why), OG_OK);
    cr_assert(accepted, "%s", why);
    og_order order = {
        .variant = OG_VARIANT_TILE, .acc = OG_ACC_BLOCKED, .ranges = 1, .range_len = 70};
    float *want = malloc(pr->nc * sizeof *want), *c = malloc(pr->nc * sizeof *c);
    cr_assert(want && c);
    og_reference_ordered(OG_F32, &pr->args, pr->a, pr->b, pr->c0, NULL, fused, &order, want);
    size_t first = 0;
    cr_assert_eq(bits_differ(pr->c, want, pr->nc, &first), 0,
                 "the default kernel is off its order");

    /* Element (1, 3, 7), and the largest reference element of the region. */
    const og_gemm_args *a = &pr->args;
    size_t e = (size_t)(a->stride_c + 3 * a->ldc + 7), outside = (size_t)a->n;
    cr_assert_gt(a->ldc, a->n, "no element outside the region in a row");
    double max_ref = 0;
    for (int64_t b = 0; b < a->batch; b++)
        for (int64_t i = 0; i < a->m; i++)
            for (int64_t j = 0; j < a->n; j++)
                max_ref = fmax(max_ref, fabs(pr->ref[b * a->stride_c + i * a->ldc + j]));

    memcpy(c, pr->c, pr->nc * sizeof *c);
    c[e] = nextafterf(c[e], INFINITY);
    cr_expect(bits_differ(c, want, pr->nc, &first) == 1 && first == e,
              "one ulp off at %zu: the bit comparison misses it", e);
    cr_expect(og_compare(a, pr->ref, c, pr->c0, &metric, &max_rel) == 0 && metric <= bound,
              "one ulp off: og_compare rejects it (error %.3g)", metric);

    c[e] = (float)(pr->c[e] + 2 * bound * max_ref);
    cr_expect(og_compare(a, pr->ref, c, pr->c0, &metric, &max_rel) == 0 && metric > bound,
              "twice the bound off: og_compare gives error %.3g, bound %.0e", metric, bound);
    c[e] = (float)(pr->c[e] + 0.5 * bound * max_ref);
    cr_expect(og_compare(a, pr->ref, c, pr->c0, &metric, &max_rel) == 0 && metric <= bound,
              "half the bound off: og_compare gives error %.3g, bound %.0e", metric, bound);

    c[e] = NAN;
    cr_expect_eq(og_compare(a, pr->ref, c, pr->c0, &metric, &max_rel), 1, "a NaN in C passes");
    c[e] = pr->c[e];
    c[outside] = nextafterf(c[outside], INFINITY);
    cr_expect_eq(og_compare(a, pr->ref, c, pr->c0, &metric, &max_rel), 1,
                 "an element outside C's region changed by one ulp passes");
    cr_expect_eq(bits_differ(c, want, pr->nc, &first), 1);

    const float zero = 0.0f, negative_zero = -0.0f;
    cr_expect_eq(bits_differ(&negative_zero, &zero, 1, &first), 1, "-0 passes for +0");
    free(want);
    free(c);
    og_problem_destroy(pr);
    og_gemm_destroy(g);
    close_context(ctx);
}

/* ---- the tile: the staged default and the one-chain direct tile ---- */

/* The k loops stop at the last whole step of BK: the ragged tail of k,
 * staged and direct, is never summed. */
Test(controls, tile_drops_the_k_tail, .timeout = 600)
{
    const plant pl = {
        "gemm_tile",
        OG_KERNEL_GEMM,
        {"    for (${UV}k0 = 0u; k0 < K; k0 += ${BK}u) {", "    for (; k0 < K; k0 += ${BK}u) {"},
        {"    for (${UV}k0 = 0u; k0 + ${BK}u <= K; k0 += ${BK}u) {",
         "    for (; k0 + ${BK}u <= K; k0 += ${BK}u) {"}};
    config c[2];
    tile_configs(c);
    check_plant(&pl, c, 2);
}

/* A stored row by row is read with K for its leading dimension. */
Test(controls, tile_reads_a_with_k_for_lda, .timeout = 600)
{
    const plant pl = {"gemm_tile",
                      OG_KERNEL_GEMM,
                      {"or (\"a_base + (%s) * pc.lda + (%s)\"):format(gi, gk)"},
                      {"or (\"a_base + (%s) * pc.K + (%s)\"):format(gi, gk)"}};
    config c[2];
    tile_configs(c);
    check_plant(&pl, c, 2);
}

/* alpha * sum + beta * C, then alpha and beta once more; workgroups that
 * store directly (beta = 0) scale by alpha twice. */
Test(controls, tile_applies_the_epilogue_twice, .timeout = 600)
{
    const plant pl = {
        "gemm_tile",
        OG_KERNEL_GEMM,
        {"            c_data[ci] = og_epilogue(r, ${bias_col(\"gj\")});\n",
         "{ ${PF}r = pc.alpha * res[${i * TN + j}];"},
        {"            r = pc.alpha * r;\n"
         "            if (pc.beta != 0.0) { precise float again = pc.beta * c_data[ci]; r = r + "
         "again; }\n"
         "            c_data[ci] = og_epilogue(r, ${bias_col(\"gj\")});\n",
         "{ ${PF}r = pc.alpha * (pc.alpha * res[${i * TN + j}]);"}};
    config c[2];
    tile_configs(c);
    check_plant(&pl, c, 2);
}

/* Row 0's last element is written once more one column past the edge. */
Test(controls, tile_writes_past_the_edge_of_c, .timeout = 600)
{
    const plant pl = {"gemm_tile",
                      OG_KERNEL_GEMM,
                      {"            c_data[ci] = og_epilogue(r, ${bias_col(\"gj\")});\n"},
                      {"            c_data[ci] = og_epilogue(r, ${bias_col(\"gj\")});\n"
                       "            if (gi == 0u && gj + 1u == pc.N) { c_data[ci + 1u] = r; }\n"}};
    config c[2];
    tile_configs(c);
    check_plant(&pl, c, 2);
}

/* ---- few rows (the rule's shape for B stored K x N) ---- */

static void check_fewrows_plant(const plant *pl)
{
    config c = {"few rows", og_params_fewrows(0, 45), {4, 256, 64, 1}, 3, 45, 37, 2};
    check_plant(pl, &c, 1);
}

/* The ragged last step of slices is never summed. */
Test(controls, fewrows_drops_the_k_tail, .timeout = 600)
{
    const plant pl = {
        "gemm_fewrows", OG_KERNEL_GEMM, {"@   terms(R, \"kb\", false, true)\n"}, {""}};
    check_fewrows_plant(&pl);
}

Test(controls, fewrows_reads_a_with_k_for_lda, .timeout = 600)
{
    const plant pl = {"gemm_fewrows",
                      OG_KERNEL_GEMM,
                      {"${F}a${i} = load_a(a_base + ${i}u * pc.lda + k);"},
                      {"${F}a${i} = load_a(a_base + ${i}u * pc.K + k);"}};
    check_fewrows_plant(&pl);
}

Test(controls, fewrows_applies_the_epilogue_twice, .timeout = 600)
{
    const plant pl = {
        "gemm_fewrows",
        OG_KERNEL_GEMM,
        {"            c_data[ci] = og_epilogue(r, j);\n"},
        {"            r = pc.alpha * r;\n"
         "            if (pc.beta != 0.0) { precise float again = pc.beta * c_data[ci]; r = r + "
         "again; }\n"
         "            c_data[ci] = og_epilogue(r, j);\n"}};
    check_fewrows_plant(&pl);
}

Test(controls, fewrows_writes_past_the_edge_of_c, .timeout = 600)
{
    const plant pl = {"gemm_fewrows",
                      OG_KERNEL_GEMM,
                      {"            c_data[ci] = og_epilogue(r, j);\n"},
                      {"            c_data[ci] = og_epilogue(r, j);\n"
                       "@   if i == 0 then\n"
                       "            if (j + 1u == pc.N) { c_data[ci + 1u] = r; }\n"
                       "@   end\n"}};
    check_fewrows_plant(&pl);
}

/* ---- split-k: the default tile in 4 ranges (a quick-space candidate) ---- */

static void check_split_plant(const plant *pl)
{
    config c = {"split-k", og_params_default(), {64, 64, 256, 1}, 70, 75, 300, 2};
    c.p.split = 4;
    check_plant(pl, &c, 1);
}

/* The reduce pass leaves out the last range: the tail of k. */
Test(controls, split_drops_the_k_tail, .timeout = 600)
{
    const plant pl = {"gemm_reduce",
                      OG_KERNEL_REDUCE,
                      {"for (${UV}r = 1u; r < pc.ranges; r++)"},
                      {"for (${UV}r = 1u; r + 1u < pc.ranges; r++)"}};
    check_split_plant(&pl);
}

/* The planes pass (only it) reads B, stored K x N, with N for its leading
 * dimension. */
Test(controls, split_reads_b_with_n_for_ldb, .timeout = 600)
{
    const plant pl = {
        "gemm_tile",
        OG_KERNEL_PLANES,
        {"(\"b_base + (%s) * pc.ldb + (%s)\"):format(gk, gj) end"},
        {"(\"b_base + (%s) * \" .. (KERNEL == \"planes\" and \"pc.N\" or \"pc.ldb\") .. "
         "\" + (%s)\"):format(gk, gj) end"}};
    check_split_plant(&pl);
}

/* The planes pass scales its range sums by alpha, which gemm_reduce applies
 * again. */
Test(controls, split_applies_the_epilogue_twice, .timeout = 600)
{
    const plant pl = {"gemm_tile",
                      OG_KERNEL_PLANES,
                      {"c_data[c_base + gi * pc.ldc + gj] = ${acc(\"tot\", i, j)};"},
                      {"c_data[c_base + gi * pc.ldc + gj] = pc.alpha * ${acc(\"tot\", i, j)};"}};
    check_split_plant(&pl);
}

Test(controls, split_writes_past_the_edge_of_c, .timeout = 600)
{
    const plant pl = {
        "gemm_reduce",
        OG_KERNEL_REDUCE,
        {"                c_data[ci] = og_epilogue(v, ${CONV and \"grp * pc.N + j\" or \"j\"});\n"},
        {"                c_data[ci] = og_epilogue(v, ${CONV and \"grp * pc.N + j\" or \"j\"});\n"
         "                if (i == 0u && j + 1u == pc.N) { c_data[ci + 1u] = v; }\n"}};
    check_split_plant(&pl);
}
