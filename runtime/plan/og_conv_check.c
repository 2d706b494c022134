/* Validation of a convolution call, in 64-bit arithmetic, before anything
 * is recorded (onegpu.h, og_conv_encode). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "og_plan.h"

/* The kernels carry strides, dilations, paddings and filter sizes as 16-bit
 * halves of push-constant words (conv_gather.tmpl). */
#define OG_CONV_SMALL_MAX 65535

static int64_t or_one(int64_t v)
{
    return v == 0 ? 1 : v;
}

/* a * b * c * d of non-negative values, or -1 past INT64_MAX. */
static int64_t product(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r) || __builtin_mul_overflow(r, c, &r) ||
        __builtin_mul_overflow(r, d, &r))
        return -1;
    return r;
}

void og_conv_output_size(const og_conv_args *a, int64_t *p, int64_t *q)
{
    /* Saturating: a refused call may carry any values. */
    int64_t dims[2][5] = {{a->h, a->pad_top, a->pad_bottom, a->r, or_one(a->dilation_h)},
                          {a->w, a->pad_left, a->pad_right, a->s, or_one(a->dilation_w)}};
    int64_t strides[2] = {or_one(a->stride_h), or_one(a->stride_w)}, out[2];
    for (int i = 0; i < 2; i++) {
        int64_t *d = dims[i], padded, window, span;
        if (__builtin_add_overflow(d[0], d[1], &padded) ||
            __builtin_add_overflow(padded, d[2], &padded) ||
            __builtin_mul_overflow(d[3] - 1, d[4], &window) ||
            __builtin_add_overflow(window, 1, &window) ||
            __builtin_sub_overflow(padded, window, &span) || strides[i] <= 0) {
            out[i] = 0;
            continue;
        }
        /* floor division: a window larger than the padded input gives P < 1. */
        out[i] = (span >= 0 ? span / strides[i] : -((-span + strides[i] - 1) / strides[i])) + 1;
    }
    *p = out[0];
    *q = out[1];
}

/* Bytes [first, end) of a tensor in its VkBuffer. */
typedef struct span {
    VkBuffer buffer;
    uint64_t first, end;
} span;

static span span_of(const og_buffer *b, int64_t offset, uint64_t elem, uint64_t count)
{
    uint64_t first = b->base + b->skew + (uint64_t)offset * elem;
    return (span){b->buffer, first, first + count * elem};
}

static int overlap(span a, span b)
{
    return a.buffer == b.buffer && a.first < b.end && b.first < a.end;
}

void og_conv_op(const og_conv_args *a, char *buf, size_t len)
{
    snprintf(buf, len, OG_OP_CONV_PREFIX "%lldx%lld:s%lldx%lld:d%lldx%lld", (long long)a->r,
             (long long)a->s, (long long)or_one(a->stride_h), (long long)or_one(a->stride_w),
             (long long)or_one(a->dilation_h), (long long)or_one(a->dilation_w));
}

og_gemm_args og_conv_as_gemm(const og_conv_args *a)
{
    /* One product per image: the implicit GEMM's own shape, so the split
     * rule and the tile see what the convolution kernel would. */
    int64_t pixels = a->h * a->w;
    return (og_gemm_args){.trans_b = 1,
                          .m = pixels,
                          .n = a->k,
                          .k = a->c,
                          .batch = a->n,
                          .stride_a = pixels * a->c,
                          .stride_c = pixels * a->k,
                          .alpha = 1.0f,
                          .beta = a->beta,
                          .a = a->x,
                          .b = a->wt,
                          .c = a->y,
                          .lda = a->c,
                          .ldb = a->c,
                          .ldc = a->k,
                          .a_offset = a->x_offset,
                          .b_offset = a->w_offset,
                          .c_offset = a->y_offset,
                          .bias = a->bias,
                          .bias_offset = a->bias_offset,
                          .activation = a->activation};
}

og_status og_conv_geometry_check(char *err, const og_conv_args *a, og_conv_shape *s)
{
    memset(s, 0, sizeof *s);
    if ((unsigned)a->layout > OG_CONV_NCHW)
        return og_failf(err, OG_ERROR_INVALID_ARGUMENT, "conv: layout %d is not NHWC or NCHW",
                        (int)a->layout);
    if ((unsigned)a->weights > OG_CONV_KCRS)
        return og_failf(err, OG_ERROR_INVALID_ARGUMENT,
                        "conv: weight layout %d is not KRSC or KCRS", (int)a->weights);
    const og_field fields[] = {{"N", a->n},
                               {"C", a->c},
                               {"H", a->h},
                               {"W", a->w},
                               {"K", a->k},
                               {"R", a->r},
                               {"S", a->s},
                               {"groups", a->groups},
                               {"stride_h", a->stride_h},
                               {"stride_w", a->stride_w},
                               {"dilation_h", a->dilation_h},
                               {"dilation_w", a->dilation_w},
                               {"pad_top", a->pad_top},
                               {"pad_bottom", a->pad_bottom},
                               {"pad_left", a->pad_left},
                               {"pad_right", a->pad_right},
                               {"x_offset", a->x_offset},
                               {"w_offset", a->w_offset},
                               {"y_offset", a->y_offset}};
    og_status st = og_check_fields(err, "conv", fields, sizeof fields / sizeof fields[0]);
    if (st != OG_OK)
        return st;
    const og_field positive[] = {{"C", a->c}, {"H", a->h}, {"W", a->w}, {"R", a->r}, {"S", a->s}};
    for (size_t i = 0; i < sizeof positive / sizeof positive[0]; i++)
        if (positive[i].v < 1)
            return og_failf(err, OG_ERROR_INVALID_ARGUMENT, "conv: %s (0) must be at least 1",
                            positive[i].name);
    const og_field small[] = {{"R", a->r},
                              {"S", a->s},
                              {"stride_h", or_one(a->stride_h)},
                              {"stride_w", or_one(a->stride_w)},
                              {"dilation_h", or_one(a->dilation_h)},
                              {"dilation_w", or_one(a->dilation_w)},
                              {"pad_top", a->pad_top},
                              {"pad_left", a->pad_left}};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
        if (small[i].v > OG_CONV_SMALL_MAX)
            return og_failf(err, OG_ERROR_UNSUPPORTED,
                            "conv: %s (%" PRId64 ") is beyond the kernel's %d", small[i].name,
                            small[i].v, OG_CONV_SMALL_MAX);
    /* Rows and columns of the padded input stay far inside 32 bits in the
     * kernel's unsigned arithmetic (p * stride + r * dilation). */
    if (a->h + a->pad_top + a->pad_bottom + or_one(a->stride_h) > INT32_MAX ||
        a->w + a->pad_left + a->pad_right + or_one(a->stride_w) > INT32_MAX)
        return og_failf(err, OG_ERROR_UNSUPPORTED,
                        "conv: the padded input (H %" PRId64 ", W %" PRId64
                        " with padding) is beyond 2^31 rows or columns",
                        a->h, a->w);
    og_conv_output_size(a, &s->p, &s->q);
    if (s->p < 1 || s->q < 1) {
        int rows = s->p < 1;
        return og_failf(err, OG_ERROR_INVALID_ARGUMENT,
                        "conv: output %s %s (%" PRId64 ") is below 1: the dilated filter (%" PRId64
                        " x dilation %" PRId64 ") is larger than the padded input (%" PRId64
                        " + padding %" PRId64 ")",
                        rows ? "height" : "width", rows ? "P" : "Q", rows ? s->p : s->q,
                        rows ? a->r : a->s, or_one(rows ? a->dilation_h : a->dilation_w),
                        rows ? a->h : a->w,
                        rows ? a->pad_top + a->pad_bottom : a->pad_left + a->pad_right);
    }
    s->groups = or_one(a->groups);
    if (s->groups > INT32_MAX)
        return og_failf(err, OG_ERROR_UNSUPPORTED, "conv: groups (%" PRId64 ") is beyond 2^31 - 1",
                        s->groups);
    if (a->c % s->groups != 0 || a->k % s->groups != 0)
        return og_failf(err, OG_ERROR_INVALID_ARGUMENT,
                        "conv: groups (%" PRId64 ") must divide C (%" PRId64 ") and K (%" PRId64
                        ")",
                        s->groups, a->c, a->k);
    s->cg = a->c / s->groups;
    s->kg = a->k / s->groups;
    s->m = product(s->p, s->q, 1, 1);
    s->n = s->kg;
    s->k = product(s->cg, a->r, a->s, 1);
    s->batch = product(a->n, s->groups, 1, 1);
    s->empty = a->n == 0 || a->k == 0;
    const og_field gemm[] = {{"P * Q", s->m}, {"Cg * R * S", s->k}, {"N * groups", s->batch}};
    for (size_t i = 0; i < sizeof gemm / sizeof gemm[0]; i++)
        if (gemm[i].v < 0)
            return og_failf(err, OG_ERROR_INVALID_ARGUMENT, "conv: %s overflows 64 bits",
                            gemm[i].name);
    st = og_check_fields(err, "conv", gemm, sizeof gemm / sizeof gemm[0]);
    if (st != OG_OK)
        return st;
    if ((unsigned)a->activation > OG_ACTIVATION_GELU_TANH)
        return og_failf(err, OG_ERROR_INVALID_ARGUMENT,
                        "conv: activation %d is not none, ReLU, GELU (erf) or GELU (tanh)",
                        (int)a->activation);
    /* More than 4 pixels: the GEMM's few-rows kernel (another order) never
     * takes it, so both routes sum alike (docs/accumulation-order.md). */
    s->gemm = a->layout == OG_CONV_NHWC && a->r == 1 && a->s == 1 && or_one(a->stride_h) == 1 &&
              or_one(a->stride_w) == 1 && a->pad_top == 0 && a->pad_bottom == 0 &&
              a->pad_left == 0 && a->pad_right == 0 && s->groups == 1 && s->m > 4;
    return OG_OK;
}

/* The three tensors and the bias: in their buffers, within a binding, and
 * the output apart from every input. */
static og_status check_tensors(const og_limits *lim, char *err, uint64_t in_bytes,
                               const og_conv_args *a, const og_conv_shape *s)
{
    int64_t x_count = product(a->n, a->c, a->h, a->w), w_count = product(a->k, s->k, 1, 1),
            y_count = product(a->n, a->k, s->m, 1);
    struct {
        const char *name;
        const og_buffer *buf;
        int64_t offset, count;
        uint64_t bytes;
    } t[] = {{"x", a->x, a->x_offset, x_count, in_bytes},
             {"wt", a->wt, a->w_offset, w_count, in_bytes},
             {"y", a->y, a->y_offset, y_count, 4}};
    for (size_t i = 0; i < 3; i++) {
        if (t[i].count < 0)
            return og_failf(err, OG_ERROR_INVALID_ARGUMENT,
                            "conv: %s spans more than 2^63 elements", t[i].name);
        og_status st = og_check_operand(lim, err, "conv", t[i].name, t[i].buf, t[i].bytes,
                                        t[i].offset, 1, 0, 1, 1, t[i].count);
        if (st != OG_OK)
            return st;
    }
    if (a->bias) {
        og_status st = og_check_columns(lim, err, "conv", "bias", a->bias, a->bias_offset, a->k);
        if (st != OG_OK)
            return st;
    }
    span y = span_of(a->y, a->y_offset, 4, (uint64_t)y_count);
    const struct {
        const char *name;
        span sp;
    } in[] = {{"x", span_of(a->x, a->x_offset, in_bytes, (uint64_t)x_count)},
              {"wt", span_of(a->wt, a->w_offset, in_bytes, (uint64_t)w_count)},
              {"bias", a->bias ? span_of(a->bias, a->bias_offset, 4, (uint64_t)a->k) : (span){0}}};
    for (size_t i = 0; i < 3; i++)
        if (in[i].sp.buffer && overlap(y, in[i].sp))
            return og_failf(err, OG_ERROR_INVALID_ARGUMENT,
                            "conv: y overlaps %s (bytes %" PRIu64 "..%" PRIu64 " and %" PRIu64
                            "..%" PRIu64 " of one VkBuffer)",
                            in[i].name, y.first, y.end, in[i].sp.first, in[i].sp.end);
    return OG_OK;
}

og_status og_conv_check(const og_limits *lim, char *err, uint64_t in_bytes, const og_conv_args *a,
                        og_conv_shape *s, og_push *push)
{
    memset(push, 0, sizeof *push);
    og_status st = og_conv_geometry_check(err, a, s);
    if (st != OG_OK || s->empty)
        return st;
    if ((st = check_tensors(lim, err, in_bytes, a, s)) != OG_OK)
        return st;
    int nchw = a->layout == OG_CONV_NCHW;
    /* conv_gather.tmpl reads the geometry from the words the GEMM spends on
     * what a convolution has not. */
    *push = (og_push){.m = (uint32_t)s->m,
                      .n = (uint32_t)s->n,
                      .k = (uint32_t)s->k,
                      .lda = (uint32_t)a->w,
                      .ldb = (uint32_t)s->k,
                      .ldc = (uint32_t)(nchw ? s->m : a->k),
                      .off_a = og_binding_offset(lim, a->x, a->x_offset, in_bytes),
                      .off_b = og_binding_offset(lim, a->wt, a->w_offset, in_bytes),
                      .off_c = og_binding_offset(lim, a->y, a->y_offset, 4),
                      .stride_a = (uint32_t)(a->c * a->h * a->w),
                      .stride_b = (uint32_t)a->h,
                      .stride_c = (uint32_t)(a->k * s->m),
                      .alpha = 1.0f,
                      .beta = a->beta,
                      .batch = (uint32_t)s->batch,
                      .ranges = 1,
                      .epi = (uint32_t)a->activation | (a->bias ? OG_EPI_BIAS : 0u),
                      .zero_a = (int32_t)s->groups,
                      .zero_b = 0,
                      .scale_off = (uint32_t)s->q,
                      .addr_a = {(uint32_t)(a->r | a->s << 16),
                                 (uint32_t)(or_one(a->stride_h) | or_one(a->stride_w) << 16)},
                      .addr_b = {(uint32_t)(or_one(a->dilation_h) | or_one(a->dilation_w) << 16),
                                 (uint32_t)(a->pad_top | a->pad_left << 16)}};
    if (a->bias)
        push->bias_off = og_binding_offset(lim, a->bias, a->bias_offset, 4);
    return OG_OK;
}
