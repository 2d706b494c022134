/* ogtune tune: enumerate, verify, time and store every candidate. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "og_tuner.h"

/* A tile candidate (split-k by the rule); wgx and wgy follow from the tiles. */
static og_params tile(int bm, int bn, int bk, int tm, int tn, int pad, og_load load, og_acc acc,
                      int vec, og_src src)
{
    return (og_params){.variant = OG_VARIANT_TILE,
                       .bm = bm,
                       .bn = bn,
                       .bk = bk,
                       .tm = tm,
                       .tn = tn,
                       .wgx = bn / tn,
                       .wgy = bm / tm,
                       .pad = pad,
                       .load = load,
                       .acc = acc,
                       .vec = vec,
                       .src = src,
                       .split = OG_SPLIT_RULE};
}

/* The quick preset: the default and a few of each kind the space holds
 * (staged and direct loads, storage and texel buffers, element and vector
 * loads, larger register tiles, padding, one fma chain) so a first run finds
 * what suits the device in minutes. */
static og_params quick_tile(size_t i)
{
    const og_load S = OG_LOAD_STAGED, D = OG_LOAD_DIRECT;
    const og_acc B = OG_ACC_BLOCKED, C = OG_ACC_CHAIN;
    const og_src M = OG_SRC_STORAGE, T = OG_SRC_TEXEL;
    const og_params quick[] = {
        tile(64, 64, 16, 4, 4, 0, S, B, 1, M), /* the default */
        tile(64, 64, 16, 4, 4, 1, S, B, 1, M),   tile(128, 64, 16, 8, 4, 0, S, B, 1, M),
        tile(64, 64, 16, 8, 8, 0, D, B, 1, M),   tile(64, 64, 16, 8, 8, 0, D, B, 4, M),
        tile(64, 64, 16, 8, 8, 0, D, B, 1, T),   tile(64, 64, 16, 8, 8, 0, D, B, 4, T),
        tile(128, 64, 16, 16, 8, 0, D, B, 4, T), tile(64, 64, 16, 8, 8, 0, D, C, 4, T),
        tile(128, 64, 16, 16, 8, 0, D, C, 4, T),
    };
    return quick[i];
}
#define OG_QUICK_TILES 10

typedef struct candidates {
    og_params *list;
    size_t n, cap;
    const og_limits *lim;
} candidates;

/* Adds p when the device allows it and it is not there yet. */
static og_status add(candidates *c, og_params p)
{
    char why[256];
    if (og_params_check(&p, c->lim, why, sizeof why) != 0)
        return OG_OK;
    for (size_t i = 0; i < c->n; i++)
        if (memcmp(&c->list[i], &p, sizeof p) == 0)
            return OG_OK;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        og_params *grown = realloc(c->list, cap * sizeof *grown);
        if (!grown)
            return OG_ERROR_OUT_OF_MEMORY;
        c->list = grown;
        c->cap = cap;
    }
    c->list[c->n++] = p;
    return OG_OK;
}

/* Few rows: the rule's shape first, then the column and slice counts
 * around it (256 invocations and half and twice that). */
static og_status fewrows_space(candidates *c, int trans_b, const og_shape *s, og_preset preset)
{
    static const int counts[] = {2, 4, 8, 16, 32, 64};
    og_status st = add(c, og_params_fewrows(trans_b, s->n));
    for (int i = 0; i < 6 && st == OG_OK; i++)
        for (int j = 0; j < 6 && st == OG_OK; j++) {
            int threads = counts[i] * counts[j];
            int keep =
                preset == OG_PRESET_STANDARD ? threads >= 128 && threads <= 512 : threads == 256;
            /* B stored N x K wants whole subgroups of lanes on one column. */
            if (trans_b && counts[j] < 16)
                keep = 0;
            if (keep)
                st = add(c, (og_params){.variant = OG_VARIANT_FEWROWS,
                                        .cols = counts[i],
                                        .slices = counts[j]});
        }
    return st;
}

og_status og_space(const og_limits *lim, og_preset preset, og_dtype dtype, int trans_a, int trans_b,
                   const og_shape *s, og_params **out, size_t *n)
{
    static const int tiles[] = {32, 64, 128}, steps[] = {16, 32}, regs[] = {2, 4, 8, 16};
    candidates c = {.lim = lim};
    og_status st = OG_OK;
    *n = 0;
    og_gemm_args shape = {.trans_a = trans_a, .m = s->m};
    if (og_fewrows_eligible(dtype, &shape)) {
        st = fewrows_space(&c, trans_b, s, preset);
        goto done;
    }
    /* The default always comes first, whatever the preset. */
    for (size_t i = 0; i < OG_QUICK_TILES && st == OG_OK; i++)
        st = add(&c, quick_tile(i));
    /* The standard preset: every tile, k step and register tile, each staged
     * (with and without padding) and direct (storage or texel buffers,
     * element or vector loads). */
    for (int a = 0; preset == OG_PRESET_STANDARD && a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int k = 0; k < 2; k++)
                for (int x = 0; x < 4; x++)
                    for (int y = 0; y < 4; y++)
                        for (int v = 0; v < 6 && st == OG_OK; v++) {
                            og_params p = tile(tiles[a], tiles[b], steps[k], regs[x], regs[y],
                                               v == 1, v < 2 ? OG_LOAD_STAGED : OG_LOAD_DIRECT,
                                               OG_ACC_BLOCKED, v >= 2 && v % 2 ? 4 : 1,
                                               v >= 4 ? OG_SRC_TEXEL : OG_SRC_STORAGE);
                            /* Fewer than 32 invocations leave most devices' lanes idle. */
                            if (p.wgx * p.wgy >= 32)
                                st = add(&c, p);
                        }
    /* Split-k in Fast mode: where k is long enough to cut, tiles also run
     * unsplit and with 2 to 16 ranges, whatever the rule says: the default
     * and the vector texel tile in the quick preset, every quick tile in the
     * standard one. */
    static const int splits[] = {1, 2, 4, 8, 16}, quick_split_tiles[] = {0, 7};
    size_t n_split_tiles = preset == OG_PRESET_STANDARD ? OG_QUICK_TILES : 2;
    for (size_t i = 0; s->k >= 128 && i < n_split_tiles && st == OG_OK; i++)
        for (int j = 0; j < 5 && st == OG_OK; j++) {
            og_params p =
                quick_tile(preset == OG_PRESET_STANDARD ? i : (size_t)quick_split_tiles[i]);
            p.split = splits[j];
            if (s->k / splits[j] >= 32)
                st = add(&c, p);
        }
done:
    if (st != OG_OK) {
        free(c.list);
        *n = 0;
        return st;
    }
    *out = c.list;
    *n = c.n;
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
static og_status time_candidate(og_gemm *g, og_problem *pr, const og_params *p, int *samples,
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
                            og_dtype t, const og_shape *s, double share_s)
{
    double deadline = share_s > 0 ? now_s() + share_s : 0;
    og_gemm *g;
    og_problem *pr;
    og_params *space;
    size_t n;
    char err[1024];
    og_status st = og_space(&ctx->limits, o->preset, t, o->trans_a, o->trans_b, s, &space, &n);
    if (st != OG_OK)
        return og_fail(ctx, st, "tune: out of memory");
    /* Deterministic mode has one kernel per shape, fixed by the rule: it is
     * measured and recorded under its own key, never selected from. */
    if (o->mode == OG_MODE_DETERMINISTIC)
        n = 1;
    if ((st = og_gemm_create(ctx, t, o->mode, &g)) != OG_OK) {
        free(space);
        return st;
    }
    if ((st = og_problem_create(ctx, t, o->trans_a, o->trans_b, s->m, s->n, s->k, s->batch, 1234,
                                &pr)) != OG_OK) {
        og_gemm_destroy(g);
        free(space);
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
        r.key = (og_record_key){"gemm", t, o->mode, o->trans_a, o->trans_b};
        r.m = s->m;
        r.n = s->n;
        r.k = s->k;
        r.batch = s->batch;
        const char *template_name = og_params_template(&space[i]);
        snprintf(r.template_name, sizeof r.template_name, "%s", template_name);
        r.template_hash = og_template_hash(template_name);
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
    free(space);
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
    /* The budget is shared evenly by the (dtype, shape) pairs. */
    double share = o->budget_s > 0 ? o->budget_s / (double)(o->n_dtypes * o->n_shapes) : 0;
    for (size_t d = 0; d < o->n_dtypes && st == OG_OK; d++)
        for (size_t s = 0; s < o->n_shapes && st == OG_OK; s++)
            st = tune_shape(ctx, db, device, o, o->dtypes[d], &o->shapes[s], share);
    og_db_close(db);
    return st;
}
