/* A convolution's data, its float64 reference, and the verification of a
 * candidate tile on it (og_tuner.h, "a convolution"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_tuner.h"

static int64_t or_one(int64_t v)
{
    return v == 0 ? 1 : v;
}

/* Element counts of x, wt and y (a checked geometry). */
static void extents(const og_conv_args *a, int64_t p, int64_t q, size_t *nx, size_t *nw, size_t *ny)
{
    *nx = (size_t)(a->n * a->c * a->h * a->w);
    *nw = (size_t)(a->k * (a->c / or_one(a->groups)) * a->r * a->s);
    *ny = (size_t)(a->n * a->k * p * q);
}

void og_reference_conv(og_dtype t, const og_conv_args *a, const void *x, const void *wt,
                       const float *bias, const float *y_in, double *ref)
{
    int64_t P, Q, g = or_one(a->groups), cg = a->c / g, kg = a->k / g;
    og_conv_output_size(a, &P, &Q);
    int nchw = a->layout == OG_CONV_NCHW, kcrs = a->weights == OG_CONV_KCRS;
    for (int64_t img = 0; img < a->n; img++)
        for (int64_t kk = 0; kk < a->k; kk++)
            for (int64_t p = 0; p < P; p++)
                for (int64_t q = 0; q < Q; q++) {
                    double sum = 0.0;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t r = 0; r < a->r; r++)
                            for (int64_t s = 0; s < a->s; s++) {
                                int64_t h = p * or_one(a->stride_h) + r * or_one(a->dilation_h) -
                                            a->pad_top;
                                int64_t w = q * or_one(a->stride_w) + s * or_one(a->dilation_w) -
                                            a->pad_left;
                                if (h < 0 || h >= a->h || w < 0 || w >= a->w)
                                    continue;
                                int64_t ch = kk / kg * cg + c;
                                int64_t xi = nchw ? ((img * a->c + ch) * a->h + h) * a->w + w
                                                  : ((img * a->h + h) * a->w + w) * a->c + ch;
                                int64_t wi = kcrs ? ((kk * cg + c) * a->r + r) * a->s + s
                                                  : ((kk * a->r + r) * a->s + s) * cg + c;
                                sum += og_elem(t, x, (size_t)xi) * og_elem(t, wt, (size_t)wi);
                            }
                    int64_t yi = nchw ? ((img * a->k + kk) * P + p) * Q + q
                                      : ((img * P + p) * Q + q) * a->k + kk;
                    if (a->beta != 0.0f)
                        sum += (double)a->beta * y_in[yi];
                    if (bias)
                        sum += bias[kk];
                    ref[yi] = a->activation == OG_ACTIVATION_NONE
                                  ? sum
                                  : og_reference_activation(a->activation, (float)sum);
                }
}

og_status og_conv_problem_create(og_context *ctx, og_dtype t, const og_conv_args *geometry,
                                 uint64_t seed, og_conv_problem **out)
{
    *out = NULL;
    og_conv_problem *pr = calloc(1, sizeof *pr);
    if (!pr)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "tune: out of memory");
    pr->dtype = t;
    pr->args = *geometry;
    og_conv_args *a = &pr->args;
    a->x = a->wt = a->y = a->bias = NULL;
    a->x_offset = a->w_offset = a->y_offset = a->bias_offset = 0;
    og_conv_shape shape;
    char err[OG_ERROR_MAX];
    og_status st = og_conv_geometry_check(err, a, &shape);
    if (st != OG_OK)
        st = og_fail(ctx, st, "tune: %s", err);
    else if (shape.empty || shape.gemm)
        st = og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "tune: %s",
                     shape.empty ? "conv: no image or no output channel: nothing to tune"
                                 : "conv: a 1x1 NHWC convolution is a GEMM: tune it with --op gemm "
                                   "--trans-b");
    if (st != OG_OK) {
        free(pr);
        return st;
    }
    og_conv_output_size(a, &pr->p, &pr->q);
    extents(a, pr->p, pr->q, &pr->nx, &pr->nw, &pr->ny);
    size_t eb = og_dtype_bytes(t);
    pr->x = malloc(pr->nx * eb + 4);
    pr->wt = malloc(pr->nw * eb + 4);
    pr->bias = malloc((size_t)a->k * sizeof(float) + 4);
    pr->y0 = malloc(pr->ny * sizeof(float) + 4);
    pr->y = malloc(pr->ny * sizeof(float) + 4);
    pr->ref = malloc(pr->ny * sizeof(double) + 8);
    if (!pr->x || !pr->wt || !pr->bias || !pr->y0 || !pr->y || !pr->ref)
        st = og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "tune: out of memory for a convolution");
    if (st == OG_OK) {
        og_fill_random(t, pr->x, pr->nx, &seed);
        og_fill_random(t, pr->wt, pr->nw, &seed);
        og_fill_random(OG_F32, pr->bias, (size_t)a->k, &seed);
        og_fill_random(OG_F32, pr->y0, pr->ny, &seed);
        st = og_buffer_create(ctx, pr->nx * eb, &a->x);
    }
    if (st == OG_OK)
        st = og_buffer_create(ctx, pr->nw * eb, &a->wt);
    if (st == OG_OK)
        st = og_buffer_create(ctx, pr->ny * sizeof(float), &a->y);
    if (st == OG_OK)
        st = og_buffer_create(ctx, (size_t)a->k * sizeof(float), &pr->bias_buf);
    if (st == OG_OK)
        st = og_buffer_write(a->x, 0, pr->x, pr->nx * eb);
    if (st == OG_OK)
        st = og_buffer_write(a->wt, 0, pr->wt, pr->nw * eb);
    if (st == OG_OK)
        st = og_buffer_write(pr->bias_buf, 0, pr->bias, (size_t)a->k * sizeof(float));
    if (st != OG_OK) {
        og_conv_problem_destroy(pr);
        return st;
    }
    og_conv_problem_reference(pr);
    *out = pr;
    return OG_OK;
}

void og_conv_problem_reference(og_conv_problem *pr)
{
    og_reference_conv(pr->dtype, &pr->args, pr->x, pr->wt, pr->args.bias ? pr->bias : NULL, pr->y0,
                      pr->ref);
}

void og_conv_problem_destroy(og_conv_problem *pr)
{
    if (!pr)
        return;
    og_buffer_destroy(pr->args.x);
    og_buffer_destroy(pr->args.wt);
    og_buffer_destroy(pr->args.y);
    og_buffer_destroy(pr->bias_buf);
    free(pr->x);
    free(pr->wt);
    free(pr->bias);
    free(pr->y0);
    free(pr->y);
    free(pr->ref);
    free(pr);
}

og_status og_conv_problem_verify(og_conv *cv, og_conv_problem *pr, const og_params *p,
                                 int *accepted, double *metric, char *why, size_t len)
{
    og_context *ctx = og_conv_context(cv);
    *accepted = 0;
    *metric = 0;
    og_status st = og_buffer_write(pr->args.y, 0, pr->y0, pr->ny * sizeof(float));
    if (st != OG_OK)
        return st;
    if ((st = og_conv_run_with(cv, &pr->args, p)) != OG_OK) {
        snprintf(why, len, "%s", og_context_last_error(ctx));
        return st;
    }
    if ((st = og_buffer_read(pr->args.y, 0, pr->y, pr->ny * sizeof(float))) != OG_OK)
        return st;
    /* The design's metric: max |y - ref| / max |ref| over the whole output. */
    double err = 0, top = 0;
    size_t bad = 0;
    for (size_t i = 0; i < pr->ny; i++) {
        if (!isfinite(pr->y[i]))
            bad++;
        err = fmax(err, fabs(pr->y[i] - pr->ref[i]));
        top = fmax(top, fabs(pr->ref[i]));
    }
    *metric = top > 0 ? err / top : err;
    double bound = og_dtype_bound(pr->dtype);
    if (bad)
        snprintf(why, len, "%zu elements non-finite", bad);
    else if (!(*metric <= bound))
        snprintf(why, len, "error %.3g above the %s bound %.0e", *metric, og_dtype_name(pr->dtype),
                 bound);
    else
        *accepted = 1;
    return OG_OK;
}

og_status og_conv_candidate_verify(og_conv *cv, og_conv_problem *pr, const og_params *p,
                                   int *accepted, double *metric, char *why, size_t len)
{
    og_status st = og_conv_problem_verify(cv, pr, p, accepted, metric, why, len);
    /* Ragged neighbours, as the GEMM's (docs/reference-design.md, invariant 3): a record
     * serves nearby geometries too. Small ones, so verifying stays cheap: the
     * same filter, strides, dilations, padding, groups and layouts, on an
     * input whose output is 9 x 9, then 13 x 13 pixels in 2 images (rows
     * off the 64-pixel tiles), with 1, then 3 channels a group (C*R*S off
     * the k step); the first with a bias, beta = 1 and ReLU, the second with
     * GELU. */
    for (int i = 0; i < 2 && st == OG_OK && *accepted; i++) {
        og_conv_args g = pr->args;
        int64_t out = 9 + 4 * i, groups = or_one(g.groups);
        g.n = 1 + i;
        g.c = groups * (1 + 2 * i);
        g.h = (out - 1) * or_one(g.stride_h) + (g.r - 1) * or_one(g.dilation_h) + 1 - g.pad_top -
              g.pad_bottom;
        g.w = (out - 1) * or_one(g.stride_w) + (g.s - 1) * or_one(g.dilation_w) + 1 - g.pad_left -
              g.pad_right;
        g.h = g.h < 1 ? 1 : g.h;
        g.w = g.w < 1 ? 1 : g.w;
        g.beta = i == 0 ? 1.0f : 0.0f;
        g.activation = i == 0 ? OG_ACTIVATION_RELU : OG_ACTIVATION_GELU_ERF;
        og_conv_shape shape;
        char err[OG_ERROR_MAX];
        /* A geometry the calls would hand to the GEMM (1x1 of more pixels)
         * or cannot take is not the convolution's to check. */
        if (og_conv_geometry_check(err, &g, &shape) != OG_OK || shape.gemm)
            continue;
        og_conv_problem *small;
        double m2;
        st = og_conv_problem_create(og_conv_context(cv), pr->dtype, &g, 77 + (uint64_t)i, &small);
        if (st != OG_OK)
            break;
        small->args.bias = small->bias_buf;
        og_conv_problem_reference(small);
        st = og_conv_problem_verify(cv, small, p, accepted, &m2, why, len);
        if (st == OG_OK && !*accepted) {
            size_t used = strlen(why);
            snprintf(why + used, len - used, " at C %lld, %lldx%lld", (long long)g.c,
                     (long long)g.h, (long long)g.w);
        }
        og_conv_problem_destroy(small);
    }
    return st;
}

double og_conv_gflops(const og_conv_args *a, double us)
{
    int64_t P, Q;
    og_conv_output_size(a, &P, &Q);
    double terms = (double)(a->c / or_one(a->groups)) * (double)a->r * (double)a->s;
    return us > 0 ? 2.0 * (double)a->n * (double)a->k * (double)P * (double)Q * terms / (us * 1e3)
                  : 0.0;
}
