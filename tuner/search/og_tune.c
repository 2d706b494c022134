/* ogtune tune: verify, time and store every candidate of the space. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "og_tuner.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void report(const og_tune_opts *o, const og_record *r, size_t i, size_t n, int resumed)
{
    if (o->json) {
        fprintf(o->out,
                "{\"event\":\"candidate\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":[%lld,%lld,%lld,"
                "%lld],"
                "\"index\":%zu,\"total\":%zu,\"params\":\"%s\",\"accepted\":%s,"
                "\"gflops\":%.3f,\"median_us\":%.3f,\"max_error\":%.3g,\"resumed\":%s,"
                "\"reason\":",
                r->key.op, og_dtype_name(r->key.dtype), (long long)r->m, (long long)r->n,
                (long long)r->k, (long long)r->batch, i + 1, n, r->params,
                r->accepted ? "true" : "false", r->gflops, r->median_us, r->max_error,
                resumed ? "true" : "false");
        og_json_string(o->out, r->reason);
        fputs("}\n", o->out);
    } else if (r->accepted) {
        fprintf(o->out, "  [%zu/%zu] %-70s %8.2f %-7s  error %.2g%s\n", i + 1, n, r->params,
                r->gflops, og_rate_unit(r->key.op), r->max_error, resumed ? "  (earlier run)" : "");
    } else {
        fprintf(o->out, "  [%zu/%zu] %-70s rejected: %s%s\n", i + 1, n, r->params, r->reason,
                resumed ? "  (earlier run)" : "");
    }
    fflush(o->out);
}

void og_progress_text(char *buf, size_t len, size_t done, size_t total, double elapsed_s,
                      double budget_left_s, double best, const char *unit)
{
    double left = done ? elapsed_s / (double)done * (double)(total - done) : 0;
    if (budget_left_s >= 0 && left > budget_left_s)
        left = budget_left_s;
    snprintf(buf, len, "[%zu/%zu] best %.2f %s, about %.0f s left", done, total, best, unit, left);
}

/* One (dtype, shape) being tuned: what the search's callback needs. */
typedef struct tune_run {
    og_context *ctx;
    og_db *db;
    int64_t device;
    const og_tune_opts *o;
    og_subject_job job;
    og_subject sub;   /* measuring in this process: created at the first candidate */
    og_worker worker; /* measuring in a worker: started when the last one stopped */
    const og_params *space;
    og_record proto;    /* key and shape of every record */
    double deadline;    /* 0: no time budget */
    size_t visited;     /* candidates taken by the search so far */
    size_t total;       /* how many the search may take */
    size_t resumed;     /* of them, found in the database */
    double start, best; /* when the shape started; its best rate so far */
    int tty;            /* progress as one line rewritten in place */
    og_status st;       /* the first error, which ends the run */
} tune_run;

/* Verifies and times candidate p into r (a failure rejects it, with the
 * reason), in a worker process when the options name one. Errors end the
 * run: a device lost in this process, a sanitizer's report in a worker. */
static og_status measure_in(tune_run *t, const og_params *p, og_record *r)
{
    og_status st;
    if (t->o->worker_exe) {
        char err[1024];
        st = og_worker_measure(&t->worker, p, r, err, sizeof err);
        return st == OG_OK ? OG_OK : og_fail(t->ctx, st, "%s", err);
    }
    st = og_subject_measure(&t->sub, p, r);
    if (st == OG_ERROR_DEVICE_LOST)
        return og_fail(t->ctx, st,
                       "tune: the device was lost measuring %s (%s); run again to resume, or "
                       "let ogtune measure in worker processes, which recover",
                       r->params, r->reason);
    return st;
}

/* measure_in, once the worker or the in-process subject is ready. A
 * candidate the validation layer reported errors for while it was measured
 * (on the tuner's context, where a worker's count arrives too) is not
 * accepted: its run broke a rule of Vulkan, so another driver may run it
 * differently. One rejected already keeps its reason. */
static og_status measure_into(tune_run *t, const og_params *p, og_record *r)
{
    const og_tune_opts *o = t->o;
    char err[1024];
    og_status st = OG_OK;
    if (o->worker_exe && !t->worker.pid &&
        (st = og_worker_start(t->ctx, o->worker_exe, &t->job, o->timeout_s, &t->worker, err,
                              sizeof err)) != OG_OK)
        return og_fail(t->ctx, st, "%s", err);
    if (!o->worker_exe && !t->sub.ctx &&
        (st = og_subject_create(t->ctx, &t->job, &t->sub)) != OG_OK)
        return st;
    uint32_t before = og_context_validation_errors(t->ctx);
    st = measure_in(t, p, r);
    uint32_t errors = og_context_validation_errors(t->ctx) - before;
    if (st == OG_OK && errors && r->accepted) {
        r->accepted = 0;
        r->gflops = r->median_us = r->spread = 0;
        r->samples = 0;
        snprintf(r->reason, sizeof r->reason,
                 "%s: the validation layer reported %" PRIu32
                 " error%s while it was measured (on standard error)",
                 OG_REJECT_VALIDATION, errors, errors == 1 ? "" : "s");
    }
    return st;
}

/* og_measure_fn: candidate i from the database when a run measured it
 * before (resuming), else measured and committed at once, so a run killed at
 * any point loses at most the candidate in flight. */
static int measure_candidate(void *user, size_t i, double *rate)
{
    tune_run *t = user;
    /* The default (first) is always measured; the budget stops the rest. */
    if (i > 0 && t->deadline > 0 && now_s() > t->deadline)
        return 1;
    og_record r = t->proto, old;
    const char *template_name = og_params_template(&t->space[i]);
    snprintf(r.template_name, sizeof r.template_name, "%s", template_name);
    r.template_hash = og_template_hash(template_name);
    og_params_format(&t->space[i], r.params, sizeof r.params);
    char err[1024];
    int found;
    og_status st = og_db_find(t->db, t->device, &r, &old, &found, err, sizeof err);
    if (st == OG_OK && found) {
        t->resumed++;
        r = old;
    } else if (st == OG_OK) {
        if ((st = measure_into(t, &t->space[i], &r)) != OG_OK) {
            t->st = st;
            return 1;
        }
        st = og_db_insert(t->db, t->device, &r, err, sizeof err);
    }
    if (st != OG_OK) {
        t->st = og_fail(t->ctx, st, "%s", err);
        return 1;
    }
    *rate = r.accepted ? r.gflops : 0;
    if (!t->tty) {
        report(t->o, &r, t->visited++, t->total, found);
        return 0;
    }
    /* A terminal: new bests stay on screen, the progress line is rewritten. */
    const char *unit = og_rate_unit(r.key.op);
    t->visited++;
    if (*rate > t->best) {
        t->best = *rate;
        fprintf(t->o->out, "\r\033[K  best so far %.2f %s  %s\n", r.gflops, unit, r.params);
    }
    char line[160];
    og_progress_text(line, sizeof line, t->visited, t->total, now_s() - t->start,
                     t->deadline > 0 ? t->deadline - now_s() : -1, t->best, unit);
    fprintf(t->o->out, "\r\033[K  %s", line);
    fflush(t->o->out);
    return 0;
}

/* Tunes dtype t on GEMM shape s, or on convolution conv (not NULL) whose
 * implicit GEMM s is (depthwise: og_conv_depthwise_eligible of it). */
static og_status tune_shape(og_context *ctx, og_db *db, int64_t device, const og_tune_opts *o,
                            og_dtype t, const og_shape *s, const og_conv_args *conv, int depthwise,
                            double share_s)
{
    int int8 = og_dtype_is_int8(t);
    og_params *space;
    size_t n;
    const og_limits *lim = og_context_limits(ctx);
    og_status st =
        o->qformat ? og_space_qgemm(lim, o->preset, s, &space, &n)
        : conv     ? og_space_conv(lim, o->preset, t, s, depthwise, &space, &n)
        : o->recovered
            ? og_space_recovered(lim, og_context_dialect(ctx), o->preset, o->mode, s, &space, &n)
            : og_space_in(lim, og_context_dialect(ctx), o->preset, t, o->trans_a, o->trans_b, s,
                          &space, &n);
    if (st != OG_OK)
        return og_fail(ctx, st, "tune: out of memory");
    /* Deterministic mode has one kernel per shape, fixed by the rule: it is
     * measured and recorded under its own key, never selected from. */
    if (o->mode == OG_MODE_DETERMINISTIC)
        n = 1;
    tune_run run = {.ctx = ctx,
                    .db = db,
                    .device = device,
                    .o = o,
                    .job = {.dtype = t,
                            .mode = o->mode,
                            .recovered = o->recovered,
                            .trans_a = o->trans_a,
                            .trans_b = o->trans_b,
                            .shape = *s},
                    .space = space,
                    .deadline = share_s > 0 ? now_s() + share_s : 0,
                    .start = now_s(),
                    .tty = !o->json && isatty(fileno(o->out)),
                    .total = o->budget_candidates && o->budget_candidates < n ? o->budget_candidates
                                                                              : n};
    /* Int8Gemm: one record serves every signedness (og_select_int8). */
    run.proto.key = (og_record_key){"gemm", int8 ? OG_INT8 : t, int8 ? OG_MODE_FAST : o->mode,
                                    o->trans_a, o->trans_b};
    if (int8 || o->recovered)
        snprintf(run.proto.key.op, sizeof run.proto.key.op, "%s",
                 int8 ? "int8gemm" : OG_OP_GEMM_RECOVERED);
    if (conv) {
        run.job.conv = 1;
        run.job.geometry = *conv;
        run.job.trans_a = run.job.trans_b = 0;
        og_conv_op(conv, run.proto.key.op, sizeof run.proto.key.op);
        run.proto.key.trans_a = conv->layout == OG_CONV_NCHW;
        run.proto.key.trans_b = conv->weights == OG_CONV_KCRS;
    }
    if (o->qformat) {
        run.job.qgemm = 1;
        run.job.qformat = *o->qformat;
        run.job.trans_a = 0;
        run.job.trans_b = 1;
        og_qgemm_op(o->qformat, run.proto.key.op, sizeof run.proto.key.op);
        run.proto.key.trans_a = 0;
        run.proto.key.trans_b = 1;
    }
    run.proto.m = s->m;
    run.proto.n = s->n;
    run.proto.k = s->k;
    run.proto.batch = s->batch;
    if (!o->json && conv)
        fprintf(o->out,
                "%s %s %s %s, implicit GEMM %lldx%lldx%lld batch %lld: %zu candidates, %s search "
                "of %zu\n",
                og_dtype_name(t), run.proto.key.op, conv->layout == OG_CONV_NCHW ? "NCHW" : "NHWC",
                conv->weights == OG_CONV_KCRS ? "KCRS" : "KRSC", (long long)s->m, (long long)s->n,
                (long long)s->k, (long long)s->batch, n, og_strategy_name(o->strategy), run.total);
    else if (!o->json && o->qformat)
        fprintf(o->out, "%s, A %s, %lldx%lldx%lld batch %lld: %zu candidates, %s search of %zu\n",
                run.proto.key.op, og_dtype_name(t), (long long)s->m, (long long)s->n,
                (long long)s->k, (long long)s->batch, n, og_strategy_name(o->strategy), run.total);
    else if (!o->json)
        fprintf(o->out, "%s %lldx%lldx%lld batch %lld%s%s: %zu candidates, %s search of %zu\n",
                int8 || o->recovered ? run.proto.key.op : og_dtype_name(t), (long long)s->m,
                (long long)s->n, (long long)s->k, (long long)s->batch,
                o->trans_a ? " op(A)=A^T" : "", o->trans_b ? " op(B)=B^T" : "", n,
                og_strategy_name(o->strategy), run.total);
    /* The seed follows the shape, so a resumed run takes the same path. */
    uint64_t seed = (uint64_t)(s->m * 31 + s->n * 37 + s->k * 41 + s->batch * 43) + (uint64_t)t;
    size_t measured;
    st = og_search(o->strategy, space, n, run.total, seed, measure_candidate, &run, &measured);
    if (st == OG_OK)
        st = run.st;
    if (run.tty)
        fputs("\n", o->out);
    if (st == OG_OK && !o->json && measured < run.total)
        fprintf(o->out, "  budget spent after %zu of %zu candidates\n", measured, run.total);
    if (st == OG_OK && !o->json && run.resumed)
        fprintf(o->out, "  %zu candidates measured by an earlier run, not measured again\n",
                run.resumed);
    og_subject_destroy(&run.sub);
    char err[1024];
    og_status ended = og_worker_stop(&run.worker, err, sizeof err);
    if (st == OG_OK && ended != OG_OK)
        st = og_fail(ctx, ended, "%s", err);
    free(space);
    return st;
}

og_status og_tune(og_context *ctx, const og_tune_opts *o)
{
    og_db *db;
    int64_t device;
    char err[1024];
    /* The workers make their own contexts on the same device and queue family choice. */
    og_context_facts facts;
    og_context_facts_of(ctx, &facts);
    if (facts.timestamp_bits == 0)
        return og_fail(ctx, OG_ERROR_UNSUPPORTED,
                       "tune: queue family %u of %s has no valid timestamp bits "
                       "(timestampValidBits 0): tuning needs a queue that can time its work",
                       facts.queue_family, og_context_device_name(ctx));
    og_status st = og_db_open(o->db_path, 1, &db, err, sizeof err);
    if (st != OG_OK)
        return og_fail(ctx, st, "%s", err);
    if ((st = og_db_device(db, og_context_device_info(ctx), &device, err, sizeof err)) != OG_OK) {
        og_db_close(db);
        return og_fail(ctx, st, "%s", err);
    }
    /* The budget is shared evenly by the (dtype, shape) pairs. */
    size_t shapes = o->n_convs ? o->n_convs : o->n_shapes;
    double share = o->budget_s > 0 ? o->budget_s / (double)(o->n_dtypes * shapes) : 0;
    for (size_t d = 0; d < o->n_dtypes && st == OG_OK; d++)
        for (size_t s = 0; s < shapes && st == OG_OK; s++) {
            if (!o->n_convs) {
                st = tune_shape(ctx, db, device, o, o->dtypes[d], &o->shapes[s], NULL, 0, share);
                continue;
            }
            og_conv_shape cs;
            if ((st = og_conv_geometry_check(err, &o->convs[s], &cs)) != OG_OK) {
                og_fail(ctx, st, "%s", err);
                break;
            }
            og_shape gemm = {cs.m, cs.n, cs.k, cs.batch};
            st = tune_shape(ctx, db, device, o, o->dtypes[d], &gemm, &o->convs[s],
                            og_conv_depthwise_eligible(&cs), share);
        }
    og_db_close(db);
    return st;
}

void og_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}
