/* Deterministic mode (docs/reference-design.md "Invariants" 1, reference design "Deterministic
 * mode"): for every input type and every K of the list, the tile, split-k
 * and few-rows paths give the bits of the host emulation of the documented
 * order (docs/accumulation-order.md), and a tuning database changes nothing:
 * records of other kernels for the very shapes (Fast and Deterministic
 * keys) leave the choice and the bits as they are, while Fast mode takes
 * them (so the database was read). */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <stdlib.h>
#include <string.h>

#include "og_test.h"
#include "og_tmpdir.h"

static const int64_t ks[] = {1, 15, 16, 17, 31, 32, 33, 127, 128, 129, 1000, 4096};
#define N_K (sizeof ks / sizeof ks[0])

typedef enum path { TILE, SPLIT, FEWROWS } path;

static const char *path_name(path p)
{
    return p == TILE ? "tile" : p == SPLIT ? "split-k" : "few rows";
}

/* The three paths of one input type over every K. The tile path runs with a
 * scratch too small for two planes, so the rule falls back to one range. */
static void check_paths(og_dtype t)
{
    og_context *ctx = open_context();
    int fused = device_fuses(ctx);
    for (int p = TILE; p <= FEWROWS; p++) {
        if (p == FEWROWS && t != OG_F32)
            continue; /* float16 and bfloat16 keep the tile */
        og_gemm *g;
        cr_assert_eq(og_gemm_create(ctx, t, OG_MODE_DETERMINISTIC, &g), OG_OK);
        if (p == TILE)
            g->scratch_bytes = 4;
        for (size_t i = 0; i < N_K; i++) {
            int64_t m = p == FEWROWS ? 3 : 33;
            /* Every op(A), op(B) in turn; few rows reads A not transposed. */
            int trans_a = p == FEWROWS ? 0 : (int)(i % 2), trans_b = (int)(i / 2 % 2);
            og_problem *pr;
            cr_assert_eq(og_problem_create(ctx, t, trans_a, trans_b, m, 40, ks[i], 2, 500 + i, &pr),
                         OG_OK);
            problem_scalars(pr, 1.5f, -0.75f);
            og_params chosen;
            og_order order;
            cr_assert_eq(og_gemm_choose(g, &pr->args, &chosen), OG_OK);
            documented_order(g, &pr->args, &chosen, &order);
            if (p == SPLIT && ks[i] >= 128)
                cr_expect_gt(order.ranges, 1u, "K = %lld is not split", (long long)ks[i]);
            if (p != SPLIT)
                cr_expect_eq(order.ranges, 1u, "K = %lld is split on the %s path", (long long)ks[i],
                             path_name((path)p));
            cr_expect_eq(chosen.variant, p == FEWROWS ? OG_VARIANT_FEWROWS : OG_VARIANT_TILE);
            char what[96];
            snprintf(what, sizeof what, "%s %s K = %lld %c%c", og_dtype_name(t), path_name((path)p),
                     (long long)ks[i], pr->args.trans_a ? 'T' : 'N', pr->args.trans_b ? 'T' : 'N');
            check_problem(g, pr, NULL, fused, what);
            og_problem_destroy(pr);
        }
        og_gemm_destroy(g);
    }
    close_context(ctx);
}

Test(deterministic, f32_every_k_every_path, .timeout = 600)
{
    check_paths(OG_F32);
}

Test(deterministic, f16_every_k_every_path, .timeout = 600)
{
    check_paths(OG_F16);
}

Test(deterministic, bf16_every_k_every_path, .timeout = 600)
{
    check_paths(OG_BF16);
}

/* A record of params for dtype t at m x n x k x batch in mode, measured as
 * the fastest there is. */
static void insert_record(og_db *db, int64_t dev, og_mode mode, int64_t m, int64_t n, int64_t k,
                          int64_t batch, const char *params)
{
    og_params p;
    char why[256] = "";
    cr_assert_eq(og_params_parse(params, &p, why, sizeof why), 0, "%s", why);
    og_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.key.op, sizeof r.key.op, "gemm");
    r.key.dtype = OG_F32;
    r.key.mode = mode;
    r.m = m, r.n = n, r.k = k, r.batch = batch;
    snprintf(r.template_name, sizeof r.template_name, "%s", og_params_template(&p));
    r.template_hash = og_template_hash(r.template_name);
    snprintf(r.params, sizeof r.params, "%s", params);
    r.gflops = 1e6;
    r.median_us = 1;
    r.samples = 5;
    r.accepted = 1;
    r.created = 1700000000;
    cr_assert_eq(og_db_insert(db, dev, &r, why, sizeof why), OG_OK, "%s", why);
}

TestSuite(deterministic_db, .init = make_tmpdir, .fini = remove_tmpdir);

Test(deterministic_db, a_tuning_database_changes_nothing, .timeout = 300)
{
    static const struct {
        int64_t m, k;
        const char *params; /* a kernel the rule would not take */
    } cases[] = {
        {33, 1000,
         "bm=128,bn=64,bk=16,tm=16,tn=8,wgx=8,wgy=8,pad=0,load=direct,acc=chain,vec=4,"
         "src=texel,split=4"},
        {3, 1000, "variant=fewrows,cols=64,slices=4,vec=4"},
    };
    char db_path[512], why[256] = "";
    tmp_path(db_path, sizeof db_path, "tuned.db");
    og_context *plain = open_context();
    og_db *db;
    cr_assert_eq(og_db_open(db_path, 1, &db, why, sizeof why), OG_OK, "%s", why);
    int64_t dev = 0;
    cr_assert_eq(og_db_device(db, &plain->info, &dev, why, sizeof why), OG_OK, "%s", why);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (og_mode mode = OG_MODE_FAST; mode <= OG_MODE_DETERMINISTIC; mode++)
            insert_record(db, dev, mode, cases[i].m, 40, cases[i].k, 2, cases[i].params);
    og_db_close(db);
    og_context *tuned;
    cr_assert_eq(og_context_create(&(og_context_desc){.tuning_db = db_path}, &tuned), OG_OK, "%s",
                 og_last_error());
    int fused = device_fuses(tuned);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        og_gemm *fast, *det, *det_plain;
        cr_assert_eq(og_gemm_create(tuned, OG_F32, OG_MODE_FAST, &fast), OG_OK);
        cr_assert_eq(og_gemm_create(tuned, OG_F32, OG_MODE_DETERMINISTIC, &det), OG_OK);
        cr_assert_eq(og_gemm_create(plain, OG_F32, OG_MODE_DETERMINISTIC, &det_plain), OG_OK);
        og_problem *pr;
        cr_assert_eq(og_problem_create(tuned, OG_F32, 0, 0, cases[i].m, 40, cases[i].k, 2, 77, &pr),
                     OG_OK);
        problem_scalars(pr, 1.5f, -0.75f);
        og_params pf, pd, pp;
        char tf[OG_PARAMS_MAX], td[OG_PARAMS_MAX], tp[OG_PARAMS_MAX];
        cr_assert_eq(og_gemm_choose(fast, &pr->args, &pf), OG_OK);
        cr_assert_eq(og_gemm_choose(det, &pr->args, &pd), OG_OK);
        cr_assert_eq(og_gemm_choose(det_plain, &pr->args, &pp), OG_OK);
        og_params_format(&pf, tf, sizeof tf);
        og_params_format(&pd, td, sizeof td);
        og_params_format(&pp, tp, sizeof tp);
        cr_expect_str_eq(tf, cases[i].params, "Fast mode did not take the record");
        cr_expect_str_eq(td, tp, "Deterministic mode took %s with a database, %s without", td, tp);
        char what[64];
        snprintf(what, sizeof what, "Deterministic %lldx40x%lld with a database",
                 (long long)cases[i].m, (long long)cases[i].k);
        check_problem(det, pr, NULL, fused, what);
        og_problem_destroy(pr);
        og_gemm_destroy(fast);
        og_gemm_destroy(det);
        og_gemm_destroy(det_plain);
    }
    close_context(tuned);
    close_context(plain);
}
