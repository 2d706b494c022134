/* A low-bit weight product's data, its float64 reference and the
 * verification of a decode kernel on it and on ragged neighbours: what
 * ogtune tune --op qgemm measures and ogtune bench --op qgemm times. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "og_tuner.h"

/* The K step every neighbour keeps: the layout's block (INT4's group, a
 * K-quant's super-block), at least the 32 every format's K is a multiple of. */
static int64_t k_step(const og_qweights_format *f, int64_t k)
{
    og_qweights_layout lay;
    char why[8];
    if (og_qweights_layout_of(f, 1, k, &lay, why, sizeof why) != 0 || lay.block < 32)
        return 32;
    return lay.block;
}

og_status og_qgemm_problem_create(og_context *ctx, og_dtype t, const og_qweights_format *f,
                                  int64_t m, int64_t n, int64_t k, int64_t batch, uint64_t seed,
                                  og_qgemm_problem **out)
{
    *out = NULL;
    og_qweights_layout lay;
    char why[256];
    if (m < 1 || n < 1 || batch < 1 || og_qweights_layout_of(f, n, k, &lay, why, sizeof why) != 0)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "tune: qgemm %lldx%lldx%lld x %lld: %s",
                       (long long)m, (long long)n, (long long)k, (long long)batch,
                       m < 1 || n < 1 || batch < 1 ? "M, N and batch must be at least 1" : why);
    og_qgemm_problem *pr = calloc(1, sizeof *pr);
    if (!pr)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "tune: out of memory");
    pr->dtype = t;
    pr->format = *f;
    pr->image_bytes = lay.bytes;
    pr->na = (size_t)(m * k * batch);
    pr->nw = (size_t)(n * k);
    pr->nc = (size_t)(m * n * batch);
    /* NVFP4's tensor scale as a model's: the largest weight (1) maps to
     * the largest block value. */
    float tensor_scale = f->format == OG_QFORMAT_NVFP4 ? og_nvfp4_tensor_scale(1.0f) : 1.0f;
    pr->args = (og_qgemm_args){.m = m,
                               .n = n,
                               .k = k,
                               .batch = batch,
                               .lda = k,
                               .stride_a = m * k,
                               .stride_w = batch > 1 ? (int64_t)lay.bytes : 0,
                               .tensor_scale = tensor_scale,
                               .ldc = n,
                               .stride_c = m * n};
    size_t eb = og_dtype_bytes(t);
    pr->a = malloc(pr->na * eb + 4);
    pr->image = malloc((size_t)lay.bytes * (size_t)batch);
    pr->w = malloc(pr->nw * sizeof(float) * (size_t)batch);
    pr->bias = malloc((size_t)n * sizeof(float));
    pr->c0 = malloc(pr->nc * sizeof(float));
    pr->c = malloc(pr->nc * sizeof(float));
    og_status st = OG_OK;
    if (!pr->a || !pr->image || !pr->w || !pr->bias || !pr->c0 || !pr->c)
        st = og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "tune: out of memory for a qgemm problem");
    /* Weights uniform in [-1, 1), encoded, then decoded: W as the kernel
     * must read it (og_qweights_decode is the kernels' reference). */
    for (int64_t b = 0; b < batch && st == OG_OK; b++) {
        float *w = pr->w + (size_t)b * pr->nw;
        uint8_t *img = pr->image + (size_t)b * lay.bytes;
        og_fill_random(OG_F32, w, pr->nw, &seed);
        if (og_qweights_encode(f, n, k, w, tensor_scale, img, why, sizeof why) != 0 ||
            og_qweights_decode(f, n, k, img, tensor_scale, w, why, sizeof why) != 0)
            st = og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "tune: qgemm weights: %s", why);
    }
    if (st == OG_OK) {
        og_fill_random(t, pr->a, pr->na, &seed);
        og_fill_random(OG_F32, pr->bias, (size_t)n, &seed);
        og_fill_random(OG_F32, pr->c0, pr->nc, &seed);
        st = og_buffer_create(ctx, pr->na * eb, &pr->args.a);
    }
    if (st == OG_OK)
        st = og_buffer_create(ctx, lay.bytes * (uint64_t)batch, &pr->args.w);
    if (st == OG_OK)
        st = og_buffer_create(ctx, pr->nc * sizeof(float), &pr->args.c);
    if (st == OG_OK)
        st = og_buffer_create(ctx, (size_t)n * sizeof(float), &pr->bias_buf);
    if (st == OG_OK)
        st = og_buffer_write(pr->args.a, 0, pr->a, pr->na * eb);
    if (st == OG_OK)
        st = og_buffer_write(pr->args.w, 0, pr->image, lay.bytes * (uint64_t)batch);
    if (st == OG_OK)
        st = og_buffer_write(pr->bias_buf, 0, pr->bias, (size_t)n * sizeof(float));
    if (st != OG_OK) {
        og_qgemm_problem_destroy(pr);
        return st;
    }
    *out = pr;
    return OG_OK;
}

void og_qgemm_problem_destroy(og_qgemm_problem *pr)
{
    if (!pr)
        return;
    og_buffer_destroy(pr->args.a);
    og_buffer_destroy(pr->args.w);
    og_buffer_destroy(pr->args.c);
    og_buffer_destroy(pr->bias_buf);
    free(pr->a);
    free(pr->image);
    free(pr->w);
    free(pr->bias);
    free(pr->c0);
    free(pr->c);
    free(pr);
}

/* C(i, j) of product b in double: the decoded weights times the stored A,
 * then beta * C, the bias and the activation (onegpu.h's formula). */
static double reference(const og_qgemm_problem *pr, int64_t b, int64_t i, int64_t j)
{
    const og_qgemm_args *a = &pr->args;
    const float *w = pr->w + (size_t)b * pr->nw + (size_t)(j * a->k);
    size_t row = (size_t)(b * a->m * a->k + i * a->k);
    double sum = 0;
    for (int64_t k = 0; k < a->k; k++)
        sum += og_elem(pr->dtype, pr->a, row + (size_t)k) * (double)w[k];
    size_t ci = (size_t)(b * a->m * a->n + i * a->n + j);
    if (a->beta != 0.0f)
        sum += (double)a->beta * (double)pr->c0[ci];
    if (a->bias)
        sum += (double)pr->bias[j];
    if (a->activation == OG_ACTIVATION_RELU)
        return sum > 0 ? sum : 0;
    if (a->activation != OG_ACTIVATION_NONE)
        return (double)og_reference_activation(a->activation, (float)sum);
    return sum;
}

/* The integer path's quantisation bound on C(i, j) of product b
 * (docs/decode.md, "The integer path"): each int8 activation lies within
 * half a step (amax / 254) of its value, so a block of 32 adds at most
 * (amax / 254) * (1 + 2^-8) * sum |w| to the error. */
static double int8_bound(const og_qgemm_problem *pr, int64_t b, int64_t i, int64_t j)
{
    const og_qgemm_args *a = &pr->args;
    const float *w = pr->w + (size_t)b * pr->nw + (size_t)(j * a->k);
    size_t row = (size_t)(b * a->m * a->k + i * a->k);
    double bound = 0;
    for (int64_t u = 0; u + 32 <= a->k; u += 32) {
        double amax = 0, wsum = 0;
        for (int64_t k = u; k < u + 32; k++) {
            amax = fmax(amax, fabs(og_elem(pr->dtype, pr->a, row + (size_t)k)));
            wsum += fabs((double)w[k]);
        }
        bound += amax / 254 * (1 + 1.0 / 256) * wsum;
    }
    return bound;
}

og_status og_qgemm_problem_verify(og_qgemm *q, og_qgemm_problem *pr, const og_params *p,
                                  int *accepted, double *metric, char *why, size_t len)
{
    og_context *ctx = og_qgemm_context(q);
    *accepted = 0;
    *metric = 0;
    og_status st = og_buffer_write(pr->args.c, 0, pr->c0, pr->nc * sizeof(float));
    if (st != OG_OK)
        return st;
    if ((st = og_qgemm_run_with(q, &pr->args, p)) != OG_OK) {
        snprintf(why, len, "%s", og_context_last_error(ctx));
        return st;
    }
    if ((st = og_buffer_read(pr->args.c, 0, pr->c, pr->nc * sizeof(float))) != OG_OK)
        return st;
    /* The design's metric over every element, with float32's bound: A's
     * values and the decoded weights are exact in float32, so only the
     * float32 sums round, whatever A's type. The integer path (dot) may
     * also be off by each element's quantisation bound (int8_bound); its
     * excess over that bound is what float32's bound must hold. */
    const og_qgemm_args *a = &pr->args;
    double err = 0, excess = 0, top = 0;
    size_t bad = 0;
    for (int64_t b = 0; b < a->batch; b++)
        for (int64_t i = 0; i < a->m; i++)
            for (int64_t j = 0; j < a->n; j++) {
                double want = reference(pr, b, i, j);
                float got = pr->c[(size_t)(b * a->m * a->n + i * a->n + j)];
                if (!isfinite(got))
                    bad++;
                double e = fabs(got - want);
                err = fmax(err, e);
                excess = fmax(excess, p->dot ? e - int8_bound(pr, b, i, j) : e);
                top = fmax(top, fabs(want));
            }
    *metric = top > 0 ? err / top : err;
    double bound = og_dtype_bound(OG_F32), over = top > 0 ? excess / top : excess;
    if (bad)
        snprintf(why, len, "%zu elements non-finite", bad);
    else if (!(over <= bound))
        snprintf(why, len, "error %.3g above the %s bound %.0e", over,
                 p->dot ? "integer path's quantisation bound plus float32's" : "float32", bound);
    else
        *accepted = 1;
    return OG_OK;
}

og_status og_qgemm_candidate_verify(og_qgemm *q, og_qgemm_problem *pr, const og_params *p,
                                    int *accepted, double *metric, char *why, size_t len)
{
    og_status st = og_qgemm_problem_verify(q, pr, p, accepted, metric, why, len);
    /* Ragged neighbours (docs/reference-design.md, invariant 3), small so verifying stays
     * cheap: for the decode kernel rows off the workgroup's ROWS (a second
     * tile of rows), columns off its COLS, K one block past a whole round of
     * the slices' units, then fewer units than slices (a per-channel INT4
     * group is all of K); for the tile, rows, columns and K off its tile;
     * the first batched with a bias, beta = 1 and ReLU, the second GELU. */
    const int64_t step = k_step(&pr->format, pr->args.k);
    const int64_t units = (int64_t)p->slices * 32;
    int64_t shapes[2][4] = {
        {p->rows + 1, 2 * p->cols + 1, (units / step + 1) * step, 2},
        {p->rows > 1 ? p->rows - 1 : 3, 3 * p->cols - 1, step * (units > step ? 1 : 2), 1}};
    if (og_family_can(p, OG_FAMILY_PREFILL)) {
        /* The prefill tile (portable or matrix): rows and columns off BM
         * and BN, K off BK. */
        const int64_t tile[2][4] = {{p->bm + 1, p->bn + 3, (p->bk / step + 2) * step, 2},
                                    {2 * p->bm - 1, p->bn - 1, step, 1}};
        memcpy(shapes, tile, sizeof shapes);
    }
    for (int i = 0; i < 2 && st == OG_OK && *accepted; i++) {
        og_qgemm_problem *small;
        double m2;
        const int64_t *s = shapes[i];
        st = og_qgemm_problem_create(og_qgemm_context(q), pr->dtype, &pr->format, s[0], s[1], s[2],
                                     s[3], 77 + (uint64_t)i, &small);
        if (st != OG_OK)
            break;
        small->args.bias = small->bias_buf;
        small->args.beta = i == 0 ? 1.0f : 0.0f;
        small->args.activation = i == 0 ? OG_ACTIVATION_RELU : OG_ACTIVATION_GELU_ERF;
        st = og_qgemm_problem_verify(q, small, p, accepted, &m2, why, len);
        if (st == OG_OK && !*accepted) {
            size_t used = strlen(why);
            snprintf(why + used, len - used, " at %lldx%lldx%lld x %lld", (long long)s[0],
                     (long long)s[1], (long long)s[2], (long long)s[3]);
        }
        og_qgemm_problem_destroy(small);
    }
    return st;
}

double og_qgemm_weight_gbs(const og_qgemm_problem *pr, double us)
{
    return us > 0 ? (double)pr->image_bytes * (double)pr->args.batch / (us * 1e3) : 0.0;
}
