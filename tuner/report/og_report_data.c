/* ogtune report: the records of a database, grouped by tuned shape, with
 * the best and the default kernel of each group. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "og_report.h"

typedef struct collector {
    og_report *rep;
    size_t cap;
    int out_of_memory;
} collector;

static int collect(void *user, const og_record *rec, const char *device)
{
    collector *c = user;
    og_report *rep = c->rep;
    if (rep->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 256;
        og_report_rec *grown = realloc(rep->recs, cap * sizeof *grown);
        if (!grown) {
            c->out_of_memory = 1;
            return 1;
        }
        rep->recs = grown;
        c->cap = cap;
    }
    og_report_rec *r = &rep->recs[rep->n++];
    r->r = *rec;
    snprintf(r->device, sizeof r->device, "%s", device);
    r->stale = rec->template_hash != og_template_hash(rec->template_name);
    r->usable = rec->accepted && isfinite(rec->gflops) && rec->gflops >= 0;
    rep->stale += r->stale;
    return 0;
}

/* The order of groups: device, op, dtype, mode, transposes, shape. */
static int group_cmp(const og_report_rec *a, const og_report_rec *b)
{
    int c = strcmp(a->device, b->device);
    if (c == 0)
        c = strcmp(a->r.key.op, b->r.key.op);
    const int64_t x[] = {a->r.key.dtype, a->r.key.mode, a->r.key.trans_a, a->r.key.trans_b,
                         a->r.m,         a->r.n,        a->r.k,           a->r.batch};
    const int64_t y[] = {b->r.key.dtype, b->r.key.mode, b->r.key.trans_a, b->r.key.trans_b,
                         b->r.m,         b->r.n,        b->r.k,           b->r.batch};
    for (size_t i = 0; c == 0 && i < sizeof x / sizeof x[0]; i++)
        c = (x[i] > y[i]) - (x[i] < y[i]);
    return c;
}

/* Within a group: usable records first, fastest first, then by params. */
static int record_cmp(const void *pa, const void *pb)
{
    const og_report_rec *a = *(const og_report_rec *const *)pa;
    const og_report_rec *b = *(const og_report_rec *const *)pb;
    int c = group_cmp(a, b);
    if (c == 0)
        c = b->usable - a->usable;
    if (c == 0 && a->usable)
        c = (a->r.gflops < b->r.gflops) - (a->r.gflops > b->r.gflops);
    if (c == 0)
        c = strcmp(a->r.params, b->r.params);
    return c != 0 ? c : (a > b) - (a < b);
}

/* What the runtime runs for this key and shape without a database: the
 * tuner's first candidate (the portable kernel; a device whose float16
 * qualifies for the cooperative-matrix kernel runs that one instead). */
static og_status default_params(const og_record *r, char *buf, size_t len)
{
    og_shape s = {r->m, r->n, r->k, r->batch};
    og_params *space = NULL;
    size_t n = 0;
    og_status st = og_space(NULL, OG_PRESET_QUICK, r->key.dtype, r->key.trans_a, r->key.trans_b, &s,
                            &space, &n);
    buf[0] = '\0';
    if (st == OG_OK && n > 0)
        og_params_format(&space[0], buf, len);
    free(space);
    return st;
}

static void fill_group(og_report_group *g)
{
    for (size_t i = 0; i < g->n; i++) {
        const og_report_rec *r = g->recs[i];
        g->bars += r->usable;
        g->stale += r->stale;
        if (!r->usable || r->stale)
            continue;
        g->current++;
        if (!g->best)
            g->best = r;
        if (!g->def && strcmp(r->r.params, g->default_params) == 0)
            g->def = r;
    }
}

og_status og_report_load(og_db *db, og_report *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    collector c = {.rep = out};
    og_status st = og_db_each(db, collect, &c, err, errlen);
    if (st == OG_OK && c.out_of_memory) {
        snprintf(err, errlen, "out of memory reading the records");
        st = OG_ERROR_OUT_OF_MEMORY;
    }
    if (st == OG_OK && out->n > 0) {
        out->sorted = malloc(out->n * sizeof *out->sorted);
        out->groups = calloc(out->n, sizeof *out->groups);
        if (!out->sorted || !out->groups) {
            snprintf(err, errlen, "out of memory grouping %zu records", out->n);
            st = OG_ERROR_OUT_OF_MEMORY;
        }
    }
    if (st == OG_OK && out->n > 0) {
        for (size_t i = 0; i < out->n; i++)
            out->sorted[i] = &out->recs[i];
        qsort(out->sorted, out->n, sizeof *out->sorted, record_cmp);
        for (size_t i = 0; i < out->n && st == OG_OK; i++) {
            if (i == 0 || group_cmp(out->sorted[i - 1], out->sorted[i]) != 0) {
                og_report_group *g = &out->groups[out->n_groups++];
                g->recs = &out->sorted[i];
                st =
                    default_params(&out->sorted[i]->r, g->default_params, sizeof g->default_params);
                if (st != OG_OK)
                    snprintf(err, errlen, "out of memory listing the default kernel");
            }
            out->groups[out->n_groups - 1].n++;
        }
        for (size_t i = 0; i < out->n_groups && st == OG_OK; i++)
            fill_group(&out->groups[i]);
    }
    if (st != OG_OK)
        og_report_free(out);
    return st;
}

void og_report_free(og_report *rep)
{
    free(rep->recs);
    free(rep->sorted);
    free(rep->groups);
    memset(rep, 0, sizeof *rep);
}

void og_report_shape_text(const og_record *r, char *buf, size_t len)
{
    snprintf(buf, len, "%s %s %s %s%s %lldx%lldx%lldx%lld", r->key.op, og_dtype_name(r->key.dtype),
             r->key.mode == OG_MODE_DETERMINISTIC ? "deterministic" : "fast",
             r->key.trans_a ? "T" : "N", r->key.trans_b ? "T" : "N", (long long)r->m,
             (long long)r->n, (long long)r->k, (long long)r->batch);
}
