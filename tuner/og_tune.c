/* ogtune tune: enumerate, verify, time and store every candidate. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "og_tuner.h"

/* The quick preset: the default and a few of each kind the space holds
 * (staged and direct loads, storage and texel buffers, element and vector
 * loads, larger register tiles, padding, one fma chain) so a first run finds
 * what suits the device in minutes. */
static const og_tile_params quick_space[] = {
    {64, 64, 16, 4, 4, 16, 16, 0, OG_LOAD_STAGED, OG_ACC_BLOCKED, 1,
     OG_SRC_STORAGE}, /* the default */
    {64, 64, 16, 4, 4, 16, 16, 1, OG_LOAD_STAGED, OG_ACC_BLOCKED, 1, OG_SRC_STORAGE},
    {128, 64, 16, 8, 4, 16, 16, 0, OG_LOAD_STAGED, OG_ACC_BLOCKED, 1, OG_SRC_STORAGE},
    {64, 64, 16, 8, 8, 8, 8, 0, OG_LOAD_DIRECT, OG_ACC_BLOCKED, 1, OG_SRC_STORAGE},
    {64, 64, 16, 8, 8, 8, 8, 0, OG_LOAD_DIRECT, OG_ACC_BLOCKED, 4, OG_SRC_STORAGE},
    {64, 64, 16, 8, 8, 8, 8, 0, OG_LOAD_DIRECT, OG_ACC_BLOCKED, 1, OG_SRC_TEXEL},
    {64, 64, 16, 8, 8, 8, 8, 0, OG_LOAD_DIRECT, OG_ACC_BLOCKED, 4, OG_SRC_TEXEL},
    {128, 64, 16, 16, 8, 8, 8, 0, OG_LOAD_DIRECT, OG_ACC_BLOCKED, 4, OG_SRC_TEXEL},
    {64, 64, 16, 8, 8, 8, 8, 0, OG_LOAD_DIRECT, OG_ACC_CHAIN, 4, OG_SRC_TEXEL},
    {128, 64, 16, 16, 8, 8, 8, 0, OG_LOAD_DIRECT, OG_ACC_CHAIN, 4, OG_SRC_TEXEL},
};

static og_status push_candidate(og_tile_params **list, size_t *n, size_t *cap, og_tile_params p)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        og_tile_params *grown = realloc(*list, c * sizeof *grown);
        if (!grown)
            return OG_ERROR_OUT_OF_MEMORY;
        *list = grown;
        *cap = c;
    }
    (*list)[(*n)++] = p;
    return OG_OK;
}

og_status og_space(const og_limits *lim, og_preset preset, og_tile_params **out, size_t *n)
{
    static const int tiles[] = {32, 64, 128}, steps[] = {16, 32}, regs[] = {2, 4, 8, 16};
    og_tile_params *list = NULL;
    size_t cap = 0;
    char why[256];
    og_status st = OG_OK;
    *n = 0;
    /* The default always comes first, whatever the preset. */
    for (size_t i = 0; i < sizeof quick_space / sizeof quick_space[0] && st == OG_OK; i++)
        if (og_params_check(&quick_space[i], lim, why, sizeof why) == 0)
            st = push_candidate(&list, n, &cap, quick_space[i]);
    /* The standard preset: every tile, k step and register tile, each staged
     * (with and without padding) and direct (storage or texel buffers,
     * element or vector loads). */
    for (int a = 0; preset == OG_PRESET_STANDARD && a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int s = 0; s < 2; s++)
                for (int x = 0; x < 4; x++)
                    for (int y = 0; y < 4; y++)
                        for (int v = 0; v < 6 && st == OG_OK; v++) {
                            og_tile_params p = {tiles[a],
                                                tiles[b],
                                                steps[s],
                                                regs[x],
                                                regs[y],
                                                tiles[b] / regs[y],
                                                tiles[a] / regs[x],
                                                v == 1,
                                                v < 2 ? OG_LOAD_STAGED : OG_LOAD_DIRECT,
                                                OG_ACC_BLOCKED,
                                                v >= 2 && v % 2 ? 4 : 1,
                                                v >= 4 ? OG_SRC_TEXEL : OG_SRC_STORAGE};
                            int dup = 0;
                            for (size_t i = 0; i < sizeof quick_space / sizeof quick_space[0]; i++)
                                dup |= memcmp(&p, &quick_space[i], sizeof p) == 0;
                            /* Fewer than 32 invocations leave most devices' lanes idle. */
                            if (!dup && p.wgx * p.wgy >= 32 &&
                                og_params_check(&p, lim, why, sizeof why) == 0)
                                st = push_candidate(&list, n, &cap, p);
                        }
    if (st != OG_OK) {
        free(list);
        *n = 0;
        return st;
    }
    *out = list;
    return OG_OK;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Times a verified candidate: one call to estimate, then enough calls for
 * about 0.3 s (3 to 15), median of the timestamps. */
static og_status time_candidate(og_gemm *g, og_problem *pr, const og_tile_params *p, int *samples,
                                double *median_us)
{
    double first;
    og_status st = og_gemm_time(g, &pr->args, p, 0, 1, &first);
    if (st != OG_OK)
        return st;
    int reps = first > 0 ? (int)(3e5 / first) : 15;
    reps = reps < 3 ? 3 : reps > 15 ? 15 : reps;
    *samples = reps;
    return og_gemm_time(g, &pr->args, p, 1, reps, median_us);
}

static void report(const og_tune_opts *o, const og_record *r, size_t i, size_t n)
{
    if (o->json) {
        fprintf(o->out,
                "{\"event\":\"candidate\",\"dtype\":\"%s\",\"shape\":[%lld,%lld,%lld,%lld],"
                "\"index\":%zu,\"total\":%zu,\"params\":\"%s\",\"accepted\":%s,"
                "\"gflops\":%.3f,\"median_us\":%.3f,\"max_error\":%.3g,\"reason\":",
                og_dtype_name(r->key.dtype), (long long)r->m, (long long)r->n, (long long)r->k,
                (long long)r->batch, i + 1, n, r->params, r->accepted ? "true" : "false", r->gflops,
                r->median_us, r->max_error);
        og_json_string(o->out, r->reason);
        fputs("}\n", o->out);
    } else if (r->accepted) {
        fprintf(o->out, "  [%zu/%zu] %-70s %8.2f GFLOP/s  error %.2g\n", i + 1, n, r->params,
                r->gflops, r->max_error);
    } else {
        fprintf(o->out, "  [%zu/%zu] %-70s rejected: %s\n", i + 1, n, r->params, r->reason);
    }
    fflush(o->out);
}

static og_status tune_shape(og_context *ctx, og_db *db, int64_t device, const og_tune_opts *o,
                            og_dtype t, const og_shape *s, const og_tile_params *space, size_t n,
                            double share_s)
{
    double deadline = share_s > 0 ? now_s() + share_s : 0;
    og_gemm *g;
    og_problem *pr;
    char err[1024];
    og_status st = og_gemm_create(ctx, t, OG_MODE_FAST, &g);
    if (st != OG_OK)
        return st;
    if ((st = og_problem_create(ctx, t, o->trans_a, o->trans_b, s->m, s->n, s->k, s->batch, 1234,
                                &pr)) != OG_OK) {
        og_gemm_destroy(g);
        return st;
    }
    if (!o->json)
        fprintf(o->out, "%s %lldx%lldx%lld batch %lld%s%s: %zu candidates\n", og_dtype_name(t),
                (long long)s->m, (long long)s->n, (long long)s->k, (long long)s->batch,
                o->trans_a ? " op(A)=A^T" : "", o->trans_b ? " op(B)=B^T" : "", n);
    for (size_t i = 0; i < n && st == OG_OK; i++) {
        /* The default (first) is always measured; the budget stops the rest. */
        if (i > 0 && deadline > 0 && now_s() > deadline) {
            if (!o->json)
                fprintf(o->out, "  budget spent after %zu of %zu candidates\n", i, n);
            break;
        }
        og_record r;
        memset(&r, 0, sizeof r);
        r.key = (og_record_key){"gemm", t, OG_MODE_FAST, o->trans_a, o->trans_b};
        r.m = s->m;
        r.n = s->n;
        r.k = s->k;
        r.batch = s->batch;
        snprintf(r.template_name, sizeof r.template_name, "%s", OG_TEMPLATE_TILE);
        r.template_hash = og_template_hash(OG_TEMPLATE_TILE);
        og_params_format(&space[i], r.params, sizeof r.params);
        /* A candidate that fails to build or run is rejected, not fatal. */
        og_status vs = og_candidate_verify(g, pr, &space[i], &r.accepted, &r.max_error, r.reason,
                                           sizeof r.reason);
        if (vs != OG_OK) {
            r.accepted = 0;
            if (!r.reason[0])
                snprintf(r.reason, sizeof r.reason, "%s", ctx->error);
        }
        if (r.accepted) {
            og_status ts = time_candidate(g, pr, &space[i], &r.samples, &r.median_us);
            if (ts != OG_OK) {
                r.accepted = 0;
                snprintf(r.reason, sizeof r.reason, "timing failed: %s", ctx->error);
            }
            r.gflops = og_gflops(&pr->args, r.median_us);
        }
        st = og_db_insert(db, device, &r, err, sizeof err);
        if (st != OG_OK)
            og_fail(ctx, st, "%s", err);
        else
            report(o, &r, i, n);
    }
    og_problem_destroy(pr);
    og_gemm_destroy(g);
    return st;
}

og_status og_tune(og_context *ctx, const og_tune_opts *o)
{
    og_db *db;
    int64_t device;
    char err[1024];
    og_status st = og_db_open(o->db_path, 1, &db, err, sizeof err);
    if (st != OG_OK)
        return og_fail(ctx, st, "%s", err);
    if ((st = og_db_device(db, &ctx->info, &device, err, sizeof err)) != OG_OK) {
        og_db_close(db);
        return og_fail(ctx, st, "%s", err);
    }
    og_tile_params *space;
    size_t n;
    if ((st = og_space(&ctx->limits, o->preset, &space, &n)) != OG_OK) {
        og_db_close(db);
        return og_fail(ctx, st, "tune: out of memory");
    }
    /* The budget is shared evenly by the (dtype, shape) pairs. */
    double share = o->budget_s > 0 ? o->budget_s / (double)(o->n_dtypes * o->n_shapes) : 0;
    for (size_t d = 0; d < o->n_dtypes && st == OG_OK; d++)
        for (size_t s = 0; s < o->n_shapes && st == OG_OK; s++)
            st = tune_shape(ctx, db, device, o, o->dtypes[d], &o->shapes[s], space, n, share);
    free(space);
    og_db_close(db);
    return st;
}
