/* Plans of a convolution call: the implicit GEMM's tile and split-k ranges,
 * kernel, grid and pieces (no Vulkan). */
#include <inttypes.h>

#include "og_plan.h"

og_params og_conv_params(const og_params *p)
{
    if (og_params_matrix(p)) {
        /* The gather stages A through workgroup memory; one pass. */
        og_params q = *p;
        q.load = OG_LOAD_STAGED;
        return q;
    }
    int gathers = og_family_can(p, OG_FAMILY_CONV);
    og_params q = gathers ? *p : og_params_default();
    /* A and B come through bindings (storage or texel buffers); whether a
     * call can keep vec = 4 and texels is og_conv_loads_for_call's. */
    if (q.src == OG_SRC_ADDR)
        q.src = OG_SRC_STORAGE;
    q.split = gathers ? p->split : OG_SPLIT_RULE;
    return q;
}

og_status og_conv_plan(const og_limits *lim, char *err, og_dtype input, og_mode mode,
                       const og_conv_args *args, const og_conv_shape *s, const og_params *p,
                       const og_push *push, uint64_t scratch_bytes, og_plan *out)
{
    og_plan_start(out, OG_PLAN_CONV, lim, OG_GLSL, push);
    og_gemm_args view = {.a = args->x,
                         .b = args->wt,
                         .c = args->y,
                         .a_offset = args->x_offset,
                         .b_offset = args->w_offset,
                         .c_offset = args->y_offset,
                         .bias = args->bias,
                         .bias_offset = args->bias_offset};
    og_binding_starts(lim, &view, og_dtype_bytes(input), og_dtype_bytes(input), NULL, 0,
                      out->start);
    if (s->empty)
        return OG_OK;
    if (og_params_matrix(p) && mode != OG_MODE_FAST)
        return og_failf(err, OG_ERROR_UNSUPPORTED,
                        "conv: the cooperative-matrix kernel runs in Fast mode only");
    out->range_len = (uint32_t)s->k;
    if (og_family_can(p, OG_FAMILY_SPLIT))
        og_split_ranges(p->split, s->m, s->n, s->k, s->batch, scratch_bytes / 4, &out->ranges,
                        &out->range_len);
    og_params tile = og_conv_params(p);
    out->key = (og_kernel_key){.kernel = out->ranges > 1 ? OG_KERNEL_PLANES : OG_KERNEL_GEMM,
                               .p = og_conv_loads_for_call(lim, input, args, s, &tile,
                                                           out->range_len),
                               .dtype = input,
                               .trans_b = 1,
                               .dialect = OG_GLSL,
                               .conv = OG_CONV_KEY(args->layout, args->weights)};
    char why[256];
    if (og_kernel_check(&out->key, lim, why, sizeof why) != 0)
        return og_failf(err, OG_ERROR_UNSUPPORTED, "conv: %s", why);
    og_status st = og_loops_check(lim, err, "conv", &out->key, s->k, out->range_len);
    if (st != OG_OK)
        return st;
    out->key.p.split = OG_SPLIT_RULE;
    const uint32_t *count = lim->max_count;
    /* A workgroup's output channels and pixels: the tile's bn x bm; the
     * depthwise kernel's tn channels of rows * tm pixels. */
    int depthwise = og_family_can(&out->key.p, OG_FAMILY_DEPTHWISE);
    uint64_t cols = (uint64_t)(depthwise ? out->key.p.tn : out->key.p.bn);
    uint64_t gx = og_ceil_div((uint64_t)s->n, cols);
    uint64_t reduce_gx = og_ceil_div((uint64_t)s->n, OG_ELEMENTWISE_THREADS);
    if ((st = og_grid_x_check(lim, err, "conv", s->n,
                              out->ranges > 1 && reduce_gx > gx ? reduce_gx : gx)) != OG_OK)
        return st;
    /* A piece holds whole images: every group of an image (z = image *
     * groups + group) in each of its split-k ranges. */
    uint64_t per_z = count[2] / out->ranges;
    if (per_z < (uint64_t)s->groups)
        return og_failf(err, OG_ERROR_UNSUPPORTED,
                        "conv: %" PRId64 " groups in %u split-k ranges exceed the device's "
                        "maxComputeWorkGroupCount[2] of %u",
                        s->groups, out->ranges, count[2]);
    out->gx = (uint32_t)gx;
    out->tile_rows = (uint32_t)(depthwise ? out->key.p.rows * out->key.p.tm : out->key.p.bm);
    out->rows_per = (uint64_t)count[1] * out->tile_rows;
    out->batch_per = per_z / (uint64_t)s->groups * (uint64_t)s->groups;
    if (out->ranges > 1)
        out->scratch_bytes = scratch_bytes;
    if (out->key.p.src == OG_SRC_TEXEL && out->key.p.vec != 1)
        out->vec_words = input == OG_F32 ? 4 : 2;
    og_plan_count_pieces(out);
    return OG_OK;
}

uint64_t og_conv_im2col_bytes(const og_conv_shape *s)
{
    if (s->empty)
        return 0;
    return (uint64_t)s->batch * (uint64_t)s->m * (uint64_t)s->k * 4u;
}

og_status og_conv_im2col_plan(const og_limits *lim, char *err, og_dtype input,
                              const og_conv_args *args, const og_conv_shape *s, const og_push *push,
                              og_buffer *out, og_plan *plan)
{
    og_plan_start(plan, OG_PLAN_CONV, lim, OG_GLSL, push);
    if (s->empty)
        return OG_OK;
    /* One row per output pixel holding every group's K columns; an image's
     * rows after the previous image's, from the start of out. */
    uint64_t row = (uint64_t)s->groups * (uint64_t)s->k, image = (uint64_t)s->m * row;
    uint64_t bytes = og_conv_im2col_bytes(s);
    if (bytes > lim->max_storage_range || bytes / 4u > UINT32_MAX)
        return og_failf(err, OG_ERROR_UNSUPPORTED,
                        "conv im2col: the im2col matrix (%" PRId64 " pixels x %" PRIu64
                        " columns x %" PRId64 " images, %" PRIu64
                        " bytes) exceeds one binding of the device (maxStorageBufferRange %" PRIu64
                        " bytes)",
                        s->m, row, s->batch / s->groups, bytes, lim->max_storage_range);
    plan->push.off_c = 0;
    plan->push.ldc = (uint32_t)row;
    plan->push.stride_c = (uint32_t)image;
    plan->push.epi = 0;
    og_gemm_args view = {.a = args->x, .c = out, .a_offset = args->x_offset};
    og_binding_starts(lim, &view, og_dtype_bytes(input), og_dtype_bytes(input), NULL, 0,
                      plan->start);
    plan->key = (og_kernel_key){.kernel = OG_KERNEL_IM2COL,
                                .dtype = input,
                                .dialect = OG_GLSL,
                                .conv = OG_CONV_KEY(args->layout, args->weights)};
    char why[256];
    if (og_kernel_check(&plan->key, lim, why, sizeof why) != 0)
        return og_failf(err, OG_ERROR_UNSUPPORTED, "conv im2col: %s", why);
    uint64_t gx = og_ceil_div((uint64_t)s->k, OG_ELEMENTWISE_THREADS);
    og_status st = og_grid_x_check(lim, err, "conv im2col", s->k, gx);
    if (st != OG_OK)
        return st;
    if ((uint64_t)lim->max_count[2] < (uint64_t)s->groups)
        return og_failf(err, OG_ERROR_UNSUPPORTED,
                        "conv im2col: %" PRId64
                        " groups exceed the device's maxComputeWorkGroupCount[2] of %u",
                        s->groups, lim->max_count[2]);
    plan->gx = (uint32_t)gx;
    plan->tile_rows = 1;
    plan->rows_per = lim->max_count[1];
    plan->batch_per = lim->max_count[2] / (uint64_t)s->groups * (uint64_t)s->groups;
    og_plan_count_pieces(plan);
    return OG_OK;
}

og_gemm_args og_conv_im2col_gemm(const og_conv_args *a, const og_conv_shape *s, og_buffer *cols,
                                 int64_t image, int64_t group)
{
    int64_t row = s->groups * s->k;
    int64_t cols_at = image * s->m * row + group * s->k;
    int64_t y_image = a->y_offset + image * s->m * s->groups * s->n;
    int64_t w_at = a->w_offset + group * s->n * s->k;
    og_gemm_args g = {
        .trans_b = 1, .k = s->k, .batch = 1, .alpha = 1.0f, .beta = a->beta, .c = a->y};
    if (a->layout == OG_CONV_NHWC) {
        /* y(pixel, g * N + j) = cols_g(pixel, :) . W_g(j, :) */
        g.m = s->m;
        g.n = s->n;
        g.a = cols;
        g.lda = row;
        g.a_offset = cols_at;
        g.b = a->wt;
        g.ldb = s->k;
        g.b_offset = w_at;
        g.ldc = s->groups * s->n;
        g.c_offset = y_image + group * s->n;
    } else {
        /* y(g * N + j, pixel) = W_g(j, :) . cols_g(pixel, :) */
        g.m = s->n;
        g.n = s->m;
        g.a = a->wt;
        g.lda = s->k;
        g.a_offset = w_at;
        g.b = cols;
        g.ldb = row;
        g.b_offset = cols_at;
        g.ldc = s->m;
        g.c_offset = y_image + group * s->n * s->m;
    }
    return g;
}
