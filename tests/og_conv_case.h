/* A convolution test case and its checks (included by test_conv.c and
 * test_conv_lane.c): the float64 direct convolution written from the
 * formulas of onegpu.h alone (not from the kernel's index math), operands of
 * quarter-integer values, and a run of a case through og_conv_run or with
 * given kernel parameters, compared element by element. */
#ifndef OG_CONV_CASE_H
#define OG_CONV_CASE_H

#include <math.h>
#include <stdio.h>

#include "og_test.h"
#include "onegpu_formats.h"

typedef struct conv_case {
    og_conv_layout layout;
    og_conv_weights weights;
    og_dtype dtype;
    int64_t n, c, h, w, k, r, s, groups;
    int64_t sh, sw, dh, dw, pt, pb, pl, pr;
    int bias;
    og_activation act;
    float beta;
} conv_case;

static inline int64_t one(int64_t v)
{
    return v ? v : 1;
}

/* P or Q from the definition: the positions of the dilated window that
 * fit the padded input, counted one by one. */
static inline int64_t positions(int64_t size, int64_t pad0, int64_t pad1, int64_t taps, int64_t dil,
                                int64_t stride)
{
    int64_t count = 0;
    for (int64_t start = 0; start + (taps - 1) * dil < size + pad0 + pad1; start += stride)
        count++;
    return count;
}

/* Element indices of onegpu.h's layouts. */
static inline int64_t x_at(const conv_case *t, int64_t img, int64_t c, int64_t h, int64_t w)
{
    return t->layout == OG_CONV_NHWC ? ((img * t->h + h) * t->w + w) * t->c + c
                                     : ((img * t->c + c) * t->h + h) * t->w + w;
}

static inline int64_t w_at(const conv_case *t, int64_t kk, int64_t c, int64_t r, int64_t s)
{
    int64_t cg = t->c / one(t->groups);
    return t->weights == OG_CONV_KRSC ? ((kk * t->r + r) * t->s + s) * cg + c
                                      : ((kk * cg + c) * t->r + r) * t->s + s;
}

static inline int64_t y_at(const conv_case *t, int64_t P, int64_t Q, int64_t img, int64_t kk,
                           int64_t p, int64_t q)
{
    return t->layout == OG_CONV_NHWC ? ((img * P + p) * Q + q) * t->k + kk
                                     : ((img * t->k + kk) * P + p) * Q + q;
}

/* The float64 direct convolution with the epilogue (bias, beta * y, act),
 * of every `every`-th output element (by index; the others are left). */
static inline void reference(const conv_case *t, int64_t P, int64_t Q, const float *x,
                             const float *wt, const float *bias, const float *y0, float *y,
                             int64_t every)
{
    int64_t g = one(t->groups), cg = t->c / g, kg = t->k / g;
    for (int64_t img = 0; img < t->n; img++)
        for (int64_t kk = 0; kk < t->k; kk++)
            for (int64_t p = 0; p < P; p++)
                for (int64_t q = 0; q < Q; q++) {
                    if (y_at(t, P, Q, img, kk, p, q) % every != 0)
                        continue;
                    double sum = 0.0;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t r = 0; r < t->r; r++)
                            for (int64_t s = 0; s < t->s; s++) {
                                int64_t h = p * one(t->sh) + r * one(t->dh) - t->pt;
                                int64_t w = q * one(t->sw) + s * one(t->dw) - t->pl;
                                if (h < 0 || h >= t->h || w < 0 || w >= t->w)
                                    continue;
                                sum += (double)x[x_at(t, img, kk / kg * cg + c, h, w)] *
                                       (double)wt[w_at(t, kk, c, r, s)];
                            }
                    int64_t at = y_at(t, P, Q, img, kk, p, q);
                    if (t->beta != 0.0f)
                        sum += (double)t->beta * y0[at];
                    if (bias)
                        sum += bias[kk];
                    y[at] = og_reference_activation(t->act, (float)sum);
                }
}

/* The explicit im2col matrix of t, on the host: row p*Q + q of image img, column
 * g * Cg*R*S + kk with kk in the weights' order, 0 in the padding. */
static inline void im2col(const conv_case *t, int64_t P, int64_t Q, const float *x, float *cols)
{
    int64_t g = one(t->groups), cg = t->c / g, crs = cg * t->r * t->s;
    for (int64_t img = 0; img < t->n; img++)
        for (int64_t pix = 0; pix < P * Q; pix++)
            for (int64_t grp = 0; grp < g; grp++)
                for (int64_t c = 0; c < cg; c++)
                    for (int64_t r = 0; r < t->r; r++)
                        for (int64_t s = 0; s < t->s; s++) {
                            int64_t p = pix / Q, q = pix % Q;
                            int64_t h = p * one(t->sh) + r * one(t->dh) - t->pt;
                            int64_t w = q * one(t->sw) + s * one(t->dw) - t->pl;
                            int64_t kk = t->weights == OG_CONV_KRSC ? (r * t->s + s) * cg + c
                                                                    : (c * t->r + r) * t->s + s;
                            int64_t at = ((img * P * Q + pix) * g + grp) * crs + kk;
                            cols[at] = h < 0 || h >= t->h || w < 0 || w >= t->w
                                           ? 0.0f
                                           : x[x_at(t, img, grp * cg + c, h, w)];
                        }
}

/* Values of the type in quarters of small integers, exact in float16 and
 * bfloat16, so the sums are exact in float32 too. */
static inline float quarter(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (float)((int)(*state >> 24) % 9 - 4) * 0.25f;
}

/* The host values as the type's bits. */
static inline void *stored(og_dtype t, const float *v, size_t n, size_t *bytes)
{
    *bytes = n * og_dtype_bytes(t);
    void *out = malloc(*bytes ? *bytes : 1);
    cr_assert_not_null(out);
    for (size_t i = 0; i < n; i++) {
        if (t == OG_F32)
            ((float *)out)[i] = v[i];
        else if (t == OG_F16)
            ((uint16_t *)out)[i] = og_f32_to_f16(v[i], OG_ROUND_NEAREST_EVEN);
        else
            ((uint16_t *)out)[i] = og_f32_to_bf16(v[i], OG_ROUND_NEAREST_EVEN);
    }
    return out;
}

static inline og_conv_args args_of(const conv_case *t)
{
    return (og_conv_args){.layout = t->layout,
                          .weights = t->weights,
                          .n = t->n,
                          .c = t->c,
                          .h = t->h,
                          .w = t->w,
                          .k = t->k,
                          .r = t->r,
                          .s = t->s,
                          .groups = t->groups,
                          .stride_h = t->sh,
                          .stride_w = t->sw,
                          .dilation_h = t->dh,
                          .dilation_w = t->dw,
                          .pad_top = t->pt,
                          .pad_bottom = t->pb,
                          .pad_left = t->pl,
                          .pad_right = t->pr,
                          .beta = t->beta,
                          .activation = t->act};
}

/* Records the convolution a with kernel parameters p (og_conv_encode_params)
 * into ctx's command buffer, submits it and waits; what names the call in
 * a failure. */
static inline void run_conv_params(og_context *ctx, og_conv *cv, const og_conv_args *a,
                                   const og_params *p, const char *what)
{
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    cr_assert_eq(ctx->vk.vkBeginCommandBuffer(ctx->cmd, &begin), VK_SUCCESS);
    og_status st = og_conv_encode_params(cv, ctx->cmd, a, p);
    cr_assert_eq(ctx->vk.vkEndCommandBuffer(ctx->cmd), VK_SUCCESS);
    cr_assert_eq(st, OG_OK, "%s: %s", what, og_context_last_error(ctx));
    cr_assert_eq(og_submit_wait(ctx, ctx->cmd), OG_OK);
}

/* Runs case t on ctx in mode, through og_conv_run (p NULL) or with kernel
 * parameters p (og_conv_encode_params), with x, the weights and y at
 * element offsets off[0], off[1] and off[2], and compares with the float64
 * reference (every `every`-th element of y; all of y's guard elements
 * around it, which must stay): bit for bit where the epilogue is exact,
 * else within 1e-5. Returns the elements that differ, the first described
 * in first. */
static inline size_t conv_mismatches_at(og_context *ctx, og_mode mode, const conv_case *t,
                                        const og_params *params, uint32_t seed, int64_t every,
                                        const size_t off[3], char *first, size_t len)
{
    int64_t P = positions(t->h, t->pt, t->pb, t->r, one(t->dh), one(t->sh));
    int64_t Q = positions(t->w, t->pl, t->pr, t->s, one(t->dw), one(t->sw));
    og_conv_args a = args_of(t);
    int64_t p, q;
    og_conv_output_size(&a, &p, &q);
    cr_assert(p == P && q == Q,
              "output %" PRId64 "x%" PRId64 ", the definition gives %" PRId64 "x%" PRId64, p, q, P,
              Q);
    size_t nx = (size_t)(t->n * t->c * t->h * t->w),
           nw = (size_t)(t->k * t->c / one(t->groups) * t->r * t->s);
    size_t ny = (size_t)(t->n * t->k * P * Q), off_x = off[0], off_w = off[1], off_y = off[2];
    float *x = calloc(nx + off_x, sizeof *x), *wt = calloc(nw + off_w, sizeof *wt);
    float *y0 = malloc((ny + 2 * off_y) * sizeof *y0),
          *want = malloc((ny + 2 * off_y) * sizeof *want);
    float *got = malloc((ny + 2 * off_y) * sizeof *got),
          *bias = malloc((size_t)t->k * sizeof *bias);
    cr_assert(x && wt && y0 && want && got && bias);
    for (size_t i = 0; i < nx; i++)
        x[off_x + i] = quarter(&seed);
    for (size_t i = 0; i < nw; i++)
        wt[off_w + i] = quarter(&seed);
    for (size_t i = 0; i < ny + 2 * off_y; i++)
        y0[i] = quarter(&seed) - 7.0f;
    for (int64_t i = 0; i < t->k; i++)
        bias[i] = quarter(&seed) * 4.0f;
    memcpy(want, y0, (ny + 2 * off_y) * sizeof *want);
    reference(t, P, Q, x + off_x, wt + off_w, t->bias ? bias : NULL, y0 + off_y, want + off_y,
              every);
    size_t xb, wb;
    void *xs = stored(t->dtype, x, nx + off_x, &xb), *ws = stored(t->dtype, wt, nw + off_w, &wb);
    og_buffer *bx = make_buffer(ctx, xs, xb), *bw = make_buffer(ctx, ws, wb);
    og_buffer *by = make_buffer(ctx, y0, (ny + 2 * off_y) * sizeof *y0);
    og_buffer *bb = make_buffer(ctx, bias, (size_t)t->k * sizeof *bias);
    a.x = bx;
    a.wt = bw;
    a.y = by;
    a.bias = t->bias ? bb : NULL;
    a.x_offset = (int64_t)off_x;
    a.w_offset = (int64_t)off_w;
    a.y_offset = (int64_t)off_y;
    og_conv *cv;
    cr_assert_eq(og_conv_create(ctx, t->dtype, mode, &cv), OG_OK);
    char what[512], desc[512] = "";
    if (params)
        og_params_format(params, desc, sizeof desc);
    else
        cr_assert_eq(og_conv_describe(cv, &a, desc, sizeof desc), OG_OK, "%s",
                     og_context_last_error(ctx));
    snprintf(what, sizeof what,
             "%s %s %s n%" PRId64 " c%" PRId64 " %" PRId64 "x%" PRId64 " k%" PRId64 " %" PRId64
             "x%" PRId64 " g%" PRId64 " s%" PRId64 ",%" PRId64 " d%" PRId64 ",%" PRId64
             " pad %" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 " [%s]",
             t->layout ? "NCHW" : "NHWC", t->weights ? "KCRS" : "KRSC", og_dtype_name(t->dtype),
             t->n, t->c, t->h, t->w, t->k, t->r, t->s, one(t->groups), one(t->sh), one(t->sw),
             one(t->dh), one(t->dw), t->pt, t->pb, t->pl, t->pr, desc);
    if (params) {
        run_conv_params(ctx, cv, &a, params, what);
    } else {
        cr_assert_eq(og_conv_run(cv, &a), OG_OK, "%s: %s", what, og_context_last_error(ctx));
    }
    cr_assert_eq(og_buffer_read(by, 0, got, (ny + 2 * off_y) * sizeof *got), OG_OK);
    int exact = t->act == OG_ACTIVATION_NONE || t->act == OG_ACTIVATION_RELU;
    size_t differ = 0;
    for (size_t i = 0; i < ny + 2 * off_y; i++) {
        int guard = i < off_y || i >= off_y + ny;
        if (!guard && (int64_t)(i - off_y) % every != 0)
            continue;
        double tol = exact || guard ? 0.0 : 1e-5 * fmax(1.0, fabs(want[i]));
        if (fabs((double)got[i] - want[i]) <= tol && !isnan(got[i]))
            continue;
        if (differ++ == 0)
            snprintf(first, len, "%s: y[%lld] = %a, want %a%s", what,
                     (long long)i - (long long)off_y, (double)got[i], (double)want[i],
                     guard ? " (outside y)" : "");
    }
    og_conv_destroy(cv);
    og_buffer_destroy(bx);
    og_buffer_destroy(bw);
    og_buffer_destroy(by);
    og_buffer_destroy(bb);
    free(xs);
    free(ws);
    free(x);
    free(wt);
    free(y0);
    free(want);
    free(got);
    free(bias);
    return differ;
}

/* conv_mismatches_at with x, the weights and y at element offsets 3, 5
 * and 7 (so no call of it takes four-element loads). */
static inline size_t conv_mismatches(og_context *ctx, og_mode mode, const conv_case *t,
                                     const og_params *params, uint32_t seed, int64_t every,
                                     char *first, size_t len)
{
    static const size_t odd[3] = {3, 5, 7};
    return conv_mismatches_at(ctx, mode, t, params, seed, every, odd, first, len);
}

/* conv_mismatches of every element, none allowed. */
static inline void run_case(og_context *ctx, og_mode mode, const conv_case *t, uint32_t seed)
{
    char first[1024] = "";
    size_t differ = conv_mismatches(ctx, mode, t, NULL, seed, 1, first, sizeof first);
    cr_assert_eq(differ, 0, "%zu elements differ; %s", differ, first);
}

/* Float16 convolutions for the cooperative-matrix tile (test_conv's
 * emulated kernel on any device, test_conv_lane's real one): every layout
 * and weight order, the dilated output size, stride and asymmetric padding,
 * windows wholly in the padding, Whisper's 1-D layer (C*R*S = 240, not a
 * multiple of the k step), groups with a tile spanning several of them
 * (odd C/G and K/G), depthwise, and a grid of ragged tiles with beta and
 * bias + GELU. Fields as in conv_case. */
// clang-format off
static const conv_case og_conv_matrix_cases[] = {
    {OG_CONV_NHWC, OG_CONV_KRSC, OG_F16, 1, 3, 8, 8, 4, 3, 3, 1, 1, 1, 2, 2, 0, 0, 0, 0, 0, OG_ACTIVATION_NONE, 0.0f},
    {OG_CONV_NCHW, OG_CONV_KCRS, OG_F16, 2, 5, 9, 11, 6, 3, 2, 1, 2, 2, 1, 1, 2, 0, 1, 3, 1, OG_ACTIVATION_RELU, 0.0f},
    {OG_CONV_NHWC, OG_CONV_KCRS, OG_F16, 1, 2, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 4, 4, 4, 4, 1, OG_ACTIVATION_NONE, 1.0f},
    {OG_CONV_NCHW, OG_CONV_KRSC, OG_F16, 1, 80, 1, 300, 12, 1, 3, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, OG_ACTIVATION_GELU_ERF, 0.0f},
    {OG_CONV_NHWC, OG_CONV_KRSC, OG_F16, 2, 9, 6, 7, 15, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_NONE, 0.0f},
    {OG_CONV_NCHW, OG_CONV_KCRS, OG_F16, 2, 6, 10, 9, 12, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_GELU_TANH, 0.0f},
    {OG_CONV_NHWC, OG_CONV_KCRS, OG_F16, 1, 16, 33, 35, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, OG_ACTIVATION_GELU_ERF, 1.0f},
};
// clang-format on

#endif
