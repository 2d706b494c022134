/* What one (dtype, shape) is tuned on, and the measurement of one candidate
 * on it: verification, then timing. Used in the tuner's own process and in
 * its worker processes (og_worker.c). */
#include <stdio.h>
#include <string.h>

#include "og_tuner.h"

og_status og_subject_create(og_context *ctx, const og_subject_job *job, og_subject *out)
{
    memset(out, 0, sizeof *out);
    out->ctx = ctx;
    const og_shape *s = &job->shape;
    og_status st;
    if (job->qgemm) {
        st = og_qgemm_create(ctx, job->dtype, &job->qformat, job->mode, &out->qg);
        if (st == OG_OK)
            st = og_qgemm_problem_create(ctx, job->dtype, &job->qformat, s->m, s->n, s->k, s->batch,
                                         1234, &out->qpr);
    } else if (job->conv) {
        st = og_conv_create(ctx, job->dtype, job->mode, &out->cv);
        if (st == OG_OK)
            st = og_conv_problem_create(ctx, job->dtype, &job->geometry, 1234, &out->cpr);
    } else if (og_dtype_is_int8(job->dtype)) {
        st = og_int8gemm_create(ctx, &out->ig);
        if (st == OG_OK)
            st = og_int8_problem_create_words(ctx, OG_INT8, OG_INT8, job->trans_a, job->trans_b,
                                              s->m, s->n, s->k, s->batch, 1234, &out->ipr);
    } else {
        og_gemm_desc d = {.a_type = job->dtype,
                          .b_type = job->dtype,
                          .mode = job->mode,
                          .precision =
                              job->recovered ? OG_PRECISION_RECOVERED : OG_PRECISION_NATIVE};
        st = og_gemm_create_desc(ctx, &d, &out->g);
        if (st == OG_OK)
            st = og_problem_create(ctx, job->dtype, job->trans_a, job->trans_b, s->m, s->n, s->k,
                                   s->batch, 1234, &out->pr);
    }
    if (st != OG_OK)
        og_subject_destroy(out);
    return st;
}

void og_subject_destroy(og_subject *s)
{
    og_problem_destroy(s->pr);
    og_gemm_destroy(s->g);
    og_int8_problem_destroy(s->ipr);
    og_int8gemm_destroy(s->ig);
    og_conv_problem_destroy(s->cpr);
    og_conv_destroy(s->cv);
    og_qgemm_problem_destroy(s->qpr);
    og_qgemm_destroy(s->qg);
    memset(s, 0, sizeof *s);
}

static og_status subject_time(og_subject *s, const og_params *p, og_timing *t)
{
    og_timing_plan plan = OG_TIMING_DEFAULT;
    if (s->cv)
        return og_conv_time(s->cv, &s->cpr->args, p, &plan, t);
    if (s->qg)
        return og_qgemm_time(s->qg, &s->qpr->args, p, &plan, t);
    if (s->ig)
        return og_int8gemm_time(s->ig, &s->ipr->args, p, &plan, t);
    return og_gemm_time(s->g, &s->pr->args, p, &plan, t);
}

/* GFLOP/s, or GOP/s of Int8Gemm: 2*M*N*K*batch operations in us microseconds. */
static double subject_rate(const og_subject *s, double us)
{
    if (s->cv)
        return og_conv_gflops(&s->cpr->args, us);
    if (s->qg) {
        const og_qgemm_args *a = &s->qpr->args;
        og_gemm_args shape = {.m = a->m, .n = a->n, .k = a->k, .batch = a->batch};
        return og_gflops(&shape, us);
    }
    if (!s->ig)
        return og_gflops(&s->pr->args, us);
    const og_int8gemm_args *a = &s->ipr->args;
    og_gemm_args shape = {.m = a->m, .n = a->n, .k = a->k, .batch = a->batch};
    return og_gflops(&shape, us);
}

const char *og_rate_unit(const char *op)
{
    return strcmp(op, "int8gemm") == 0 ? "GOP/s" : "GFLOP/s";
}

/* Times a verified candidate in the memory applications' buffers live in
 * (og_context_memory_placement): after a warm-up, one call to estimate,
 * then enough calls to cover 0.2 s of GPU time (3 to 1000, OG_TIMING_DEFAULT);
 * the record keeps their median, count and spread, and the memory. */
static og_status time_candidate(og_subject *s, const og_params *p, og_record *r)
{
    og_timing t;
    og_status st = subject_time(s, p, &t);
    if (st != OG_OK)
        return st;
    r->samples = t.reps;
    r->median_us = t.median_us;
    r->spread = t.spread;
    snprintf(r->memory, sizeof r->memory, "%s", og_context_memory_placement(s->ctx));
    return OG_OK;
}

/* The class a failure's status puts at the head of its reason. */
static const char *failure_class(og_status st)
{
    switch (st) {
    case OG_ERROR_COMPILE:
        return OG_REJECT_COMPILE;
    case OG_ERROR_UNSUPPORTED:
        return OG_REJECT_LIMIT;
    case OG_ERROR_DEVICE_LOST:
        return OG_REJECT_DEVICE_LOST;
    default:
        return "failed";
    }
}

/* A reason on one line: a compiler's log has several. */
static void one_line(char *text)
{
    size_t n = 0;
    for (char *c = text; *c; c++) {
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
        if (*c != ' ' || (n && text[n - 1] != ' '))
            text[n++] = *c;
    }
    while (n && text[n - 1] == ' ')
        n--;
    text[n] = '\0';
}

og_status og_subject_measure(og_subject *s, const og_params *p, og_record *r)
{
    char why[sizeof r->reason] = "";
    og_status st;
    r->accepted = 0;
    r->max_error = 0;
    r->samples = 0;
    r->median_us = 0;
    r->gflops = 0;
    if (s->qg)
        st = og_qgemm_candidate_verify(s->qg, s->qpr, p, &r->accepted, &r->max_error, why,
                                       sizeof why);
    else if (s->cv)
        st = og_conv_candidate_verify(s->cv, s->cpr, p, &r->accepted, &r->max_error, why,
                                      sizeof why);
    else if (s->ig)
        st = og_int8_candidate_verify(s->ig, s->ipr, p, &r->accepted, why, sizeof why);
    else
        st = og_candidate_verify(s->g, s->pr, p, &r->accepted, &r->max_error, why, sizeof why);
    if (st == OG_OK && !r->accepted) {
        snprintf(r->reason, sizeof r->reason, "%s: %s", OG_REJECT_WRONG, why);
        return OG_OK;
    }
    if (st == OG_OK)
        st = time_candidate(s, p, r);
    if (st != OG_OK) {
        r->accepted = 0;
        snprintf(r->reason, sizeof r->reason, "%s: %s", failure_class(st),
                 why[0] ? why : og_context_last_error(s->ctx));
        one_line(r->reason);
        return st == OG_ERROR_DEVICE_LOST ? st : OG_OK;
    }
    r->reason[0] = '\0';
    r->gflops = subject_rate(s, r->median_us);
    return OG_OK;
}
