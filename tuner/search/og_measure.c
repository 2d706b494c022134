/* One shape's data, verification of a candidate, and timing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_tuner.h"

/* A leading dimension: x rounded up to a multiple of 4, at least 4. */
static int64_t round4(int64_t x)
{
    return x < 1 ? 4 : (x + 3) / 4 * 4;
}

og_status og_problem_create(og_context *ctx, og_dtype t, int trans_a, int trans_b, int64_t m,
                            int64_t n, int64_t k, int64_t batch, uint64_t seed, og_problem **out)
{
    *out = NULL;
    og_problem *pr = calloc(1, sizeof *pr);
    if (!pr)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "tune: out of memory");
    og_gemm_args *g = &pr->args;
    pr->dtype = t;
    g->trans_a = trans_a;
    g->trans_b = trans_b;
    g->m = m;
    g->n = n;
    g->k = k;
    g->batch = batch;
    g->alpha = 1.0f;
    g->beta = 0.0f;
    /* Leading dimensions rounded up to multiples of 4, so ragged shapes still
     * run the vector-load paths of the kernels they verify. */
    g->lda = round4(trans_a ? m : k);
    g->ldb = round4(trans_b ? k : n);
    g->ldc = round4(n);
    g->stride_a = (trans_a ? k : m) * g->lda;
    g->stride_b = (trans_b ? n : k) * g->ldb;
    g->stride_c = m * g->ldc;
    og_gemm_extents(g, &pr->na, &pr->nb, &pr->nc);
    size_t eb = og_dtype_bytes(t);
    pr->a = malloc(pr->na * eb + 4);
    pr->b = malloc(pr->nb * eb + 4);
    pr->c0 = malloc(pr->nc * sizeof(float) + 4);
    pr->c = malloc(pr->nc * sizeof(float) + 4);
    pr->ref = malloc(pr->nc * sizeof(double) + 8);
    og_status st = OG_OK;
    if (!pr->a || !pr->b || !pr->c0 || !pr->c || !pr->ref)
        st =
            og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "tune: out of memory for a %lldx%lldx%lld problem",
                    (long long)m, (long long)n, (long long)k);
    if (st == OG_OK) {
        og_fill_random(t, pr->a, pr->na, &seed);
        og_fill_random(t, pr->b, pr->nb, &seed);
        og_fill_random(OG_F32, pr->c0, pr->nc, &seed);
        og_reference_gemm(t, g, pr->a, pr->b, pr->c0, pr->ref);
        st = og_buffer_create(ctx, pr->na * eb, &g->a);
    }
    if (st == OG_OK)
        st = og_buffer_create(ctx, pr->nb * eb, &g->b);
    if (st == OG_OK)
        st = og_buffer_create(ctx, pr->nc * sizeof(float), &g->c);
    if (st == OG_OK)
        st = og_buffer_write(g->a, 0, pr->a, pr->na * eb);
    if (st == OG_OK)
        st = og_buffer_write(g->b, 0, pr->b, pr->nb * eb);
    if (st != OG_OK) {
        og_problem_destroy(pr);
        return st;
    }
    *out = pr;
    return OG_OK;
}

void og_problem_destroy(og_problem *pr)
{
    if (!pr)
        return;
    og_buffer_destroy(pr->args.a);
    og_buffer_destroy(pr->args.b);
    og_buffer_destroy(pr->args.c);
    free(pr->a);
    free(pr->b);
    free(pr->c0);
    free(pr->c);
    free(pr->ref);
    free(pr);
}

og_status og_problem_verify(og_gemm *g, og_problem *pr, const og_params *p, int *accepted,
                            double *metric, char *why, size_t len)
{
    og_context *ctx = og_gemm_context(g);
    *accepted = 0;
    *metric = 0;
    og_status st = og_buffer_write(pr->args.c, 0, pr->c0, pr->nc * sizeof(float));
    if (st != OG_OK)
        return st;
    st = p ? og_gemm_run_with(g, &pr->args, p) : og_gemm_run(g, &pr->args);
    if (st != OG_OK) {
        snprintf(why, len, "%s", og_context_last_error(ctx));
        return st;
    }
    if ((st = og_buffer_read(pr->args.c, 0, pr->c, pr->nc * sizeof(float))) != OG_OK)
        return st;
    double max_rel;
    size_t bad = og_compare(&pr->args, pr->ref, pr->c, pr->c0, metric, &max_rel);
    double bound = og_dtype_bound(pr->dtype);
    if (bad)
        snprintf(why, len, "%zu elements non-finite or written outside C's region", bad);
    else if (!(*metric <= bound))
        snprintf(why, len, "error %.3g above the %s bound %.0e", *metric, og_dtype_name(pr->dtype),
                 bound);
    else
        *accepted = 1;
    return OG_OK;
}

og_status og_candidate_verify(og_gemm *g, og_problem *pr, const og_params *p, int *accepted,
                              double *metric, char *why, size_t len)
{
    og_status st = og_problem_verify(g, pr, p, accepted, metric, why, len);
    /* Ragged shapes around the tile boundaries, batched: a record will serve
     * nearby shapes too, so it must be right there as well. Few-rows shapes
     * keep M <= 4 and cut columns and k slices raggedly instead. The tuning
     * problem keeps alpha = 1 and beta = 0 (the call it is timed as), where
     * an epilogue applied twice or not at all goes unseen; the ragged ones
     * scale: the first reads C (beta != 0: every workgroup runs the epilogue
     * loop), the second has workgroups wholly inside C that store alpha * sum
     * directly (beta = 0). Rows 1 and 4 where the family takes them (the
     * decode kernel's float32 starts at 5 rows), else the problem's own. */
    int64_t ragged[2][4] = {{p->bm + 1, p->bn - 1, p->bk + 3, 2},
                            {2 * p->bm - 1, 2 * p->bn + 1, 2 * p->bk + 17, 1}};
    static const float scalars[2][2] = {{-1.5f, 0.5f}, {1.5f, 0.0f}};
    if (!og_family_can(p, OG_FAMILY_TILED)) {
        const og_family *f = og_family_of(p);
        og_dtype t = pr->dtype;
        int64_t m1 = !f->takes || f->takes(t, 1, 0) ? 1 : pr->args.m;
        int64_t m4 = !f->takes || f->takes(t, 4, 0) ? 4 : pr->args.m;
        int64_t rows[2][4] = {{m1, p->cols + 1, 3 * p->slices + 5, 2},
                              {m4, 2 * p->cols - 1, p->slices - 1, 1}};
        memcpy(ragged, rows, sizeof ragged);
    }
    for (int i = 0; i < 2 && st == OG_OK && *accepted; i++) {
        og_problem *small;
        double m2;
        st = og_problem_create(og_gemm_context(g), pr->dtype, pr->args.trans_a, pr->args.trans_b,
                               ragged[i][0], ragged[i][1], ragged[i][2], ragged[i][3],
                               77 + (uint64_t)i, &small);
        if (st != OG_OK)
            break;
        small->args.alpha = scalars[i][0];
        small->args.beta = scalars[i][1];
        og_reference_gemm(small->dtype, &small->args, small->a, small->b, small->c0, small->ref);
        st = og_problem_verify(g, small, p, accepted, &m2, why, len);
        if (st == OG_OK && !*accepted) {
            size_t used = strlen(why);
            snprintf(why + used, len - used, " at %lldx%lldx%lld", (long long)ragged[i][0],
                     (long long)ragged[i][1], (long long)ragged[i][2]);
        }
        og_problem_destroy(small);
    }
    return st;
}

double og_gflops(const og_gemm_args *g, double us)
{
    double batch = g->batch ? (double)g->batch : 1.0;
    return us > 0 ? 2.0 * (double)g->m * (double)g->n * (double)g->k * batch / (us * 1e3) : 0.0;
}
