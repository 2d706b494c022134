/* Deterministic mode (DESIGN.md invariant 1, reference design "Deterministic
 * mode"): for every input type and every K of the list, the tile, split-k
 * and few-rows paths give the bits of the host emulation of the documented
 * order (docs/accumulation-order.md), and a tuning database changes nothing. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <stdlib.h>
#include <string.h>

#include "og_test.h"

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
