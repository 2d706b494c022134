/* Recording a GEMM: its plan (variant, split-k ranges, grid pieces) and dispatches. */
#include <inttypes.h>
#include <stdio.h>

#include "og_internal.h"

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

static uint32_t min_u32(uint64_t a, uint32_t b)
{
    return a < b ? (uint32_t)a : b;
}

int og_fewrows_eligible(og_dtype dtype, const og_gemm_args *args)
{
    return (dtype == OG_F32 || og_dtype_is_fp8(dtype)) && args->m >= 1 && args->m <= 4 &&
           !args->trans_a;
}

void og_split_ranges(int split, int64_t m, int64_t n, int64_t k, int64_t batch,
                     uint64_t scratch_floats, uint32_t *ranges, uint32_t *range_len)
{
    *ranges = 1;
    *range_len = (uint32_t)k;
    if (split == 1 || k < 2 || m <= 0 || n <= 0 || batch <= 0)
        return;
    uint64_t len;
    if (split == OG_SPLIT_RULE) {
        uint64_t wgs = ceil_div((uint64_t)m, 64) * ceil_div((uint64_t)n, 64) * (uint64_t)batch;
        if (wgs >= 384 || k < 128)
            return;
        uint64_t want = ceil_div(384, wgs);
        len = ceil_div(ceil_div((uint64_t)k, want < 16 ? want : 16), 32) * 32;
        if (len < 64)
            len = 64;
    } else {
        len = ceil_div((uint64_t)k, (uint64_t)split);
    }
    uint64_t count = ceil_div((uint64_t)k, len);
    uint64_t plane;
    if (__builtin_mul_overflow((uint64_t)m, (uint64_t)n, &plane) ||
        __builtin_mul_overflow(plane, (uint64_t)batch, &plane) || plane > scratch_floats / 2)
        return; /* not even two planes fit */
    if (count * plane > scratch_floats) {
        /* Fewer, longer ranges: as many planes as the scratch holds. */
        len = ceil_div((uint64_t)k, scratch_floats / plane);
        if (split == OG_SPLIT_RULE)
            len = ceil_div(len, 32) * 32;
        count = ceil_div((uint64_t)k, len);
    }
    if (count < 2)
        return;
    *ranges = (uint32_t)count;
    *range_len = (uint32_t)len;
}

/* One past the last 32-bit word of an operand that a call reads. */
static uint64_t operand_words(og_dtype t, int64_t off, int64_t batch, int64_t stride, int64_t rows,
                              int64_t ld, int64_t cols)
{
    uint64_t end = (uint64_t)(off + (batch - 1) * stride + (rows - 1) * ld + cols);
    return t == OG_F32 ? end : og_dtype_is_fp8(t) ? (end + 3) / 4 : (end + 1) / 2;
}

og_params og_params_for_call(const og_gemm *gemm, const og_gemm_args *g, const og_params *p,
                             uint32_t range_len)
{
    const og_context *ctx = gemm->ctx;
    og_params q = *p;
    if (q.variant != OG_VARIANT_TILE)
        return q;
    /* A range starts range * range_len terms into k; FP8 bytes load one by one. */
    if (q.vec != 1 && (!og_params_vec_aligned(g) || range_len % 4 != 0 ||
                       og_dtype_is_fp8(gemm->dtype) || og_dtype_is_fp8(gemm->b_type)))
        q.vec = 1;
    if (q.src == OG_SRC_TEXEL && g->k > 0 && g->m > 0 && g->n > 0) {
        /* Only called on checked arguments, so the extents cannot overflow. */
        int64_t batch = g->batch ? g->batch : 1;
        uint64_t a = operand_words(gemm->dtype, g->a_offset, batch, g->stride_a,
                                   g->trans_a ? g->k : g->m, g->lda, g->trans_a ? g->m : g->k);
        uint64_t b = operand_words(gemm->b_type, g->b_offset, batch, g->stride_b,
                                   g->trans_b ? g->n : g->k, g->ldb, g->trans_b ? g->k : g->n);
        if (a > ctx->limits.max_texel_elements || b > ctx->limits.max_texel_elements)
            q.src = OG_SRC_STORAGE;
        /* A vector texel view needs at least one whole texel. */
        uint64_t texel = gemm->dtype == OG_F32 ? 16 : 8;
        if (g->a->allocated < texel || g->b->allocated < texel)
            q.vec = 1;
    }
    return q;
}

/* Whether a variant tiles C in bm x bn blocks (the portable and the
 * cooperative-matrix tile), rather than in columns only (few rows). */
static int tiled(const og_params *p)
{
    return p->variant == OG_VARIANT_TILE || p->variant == OG_VARIANT_COOPMAT;
}

/* What one call records. */
typedef struct plan {
    og_kernel_key key; /* the GEMM kernel (PLANES when split) */
    uint32_t ranges, range_len;
    uint32_t gx;                  /* workgroups along N */
    uint64_t rows_per, batch_per; /* rows and products of one piece */
    og_buffer *a, *b;
} plan;

/* The kernel of object g with parameters p for a call (before the checks). */
static og_kernel_key gemm_key(const og_gemm *g, const og_gemm_args *args, const og_params *p,
                              uint32_t ranges, uint32_t range_len)
{
    int fp8 = og_dtype_is_fp8(g->dtype) || og_dtype_is_fp8(g->b_type);
    return (og_kernel_key){.kernel = ranges > 1 ? OG_KERNEL_PLANES : OG_KERNEL_GEMM,
                           .p = og_params_for_call(g, args, p, ranges > 1 ? range_len : 0),
                           .dtype = g->dtype,
                           .dtype_b = fp8 ? g->b_type : 0,
                           .trans_a = !!args->trans_a,
                           .trans_b = !!args->trans_b,
                           .dialect = g->ctx->dialect,
                           .recover = g->recover,
                           .scaled = g->scaled};
}

static og_status make_plan(og_gemm *g, const og_gemm_args *args, const og_params *p, plan *out)
{
    og_context *ctx = g->ctx;
    const uint32_t *lim = ctx->limits.max_count;
    int64_t batch = args->batch == 0 ? 1 : args->batch;
    char why[256];
    if (p->variant == OG_VARIANT_COOPMAT && g->mode != OG_MODE_FAST)
        return og_fail(ctx, OG_ERROR_UNSUPPORTED,
                       "gemm: the cooperative-matrix kernel runs in Fast mode only");
    if (p->variant == OG_VARIANT_FEWROWS && !og_fewrows_eligible(g->dtype, args))
        return og_fail(ctx, OG_ERROR_UNSUPPORTED,
                       "gemm: the few-rows kernel takes float32 or FP8 inputs, 1 <= M <= 4 and A "
                       "not transposed (M = %" PRId64 ")",
                       args->m);
    out->ranges = 1;
    out->range_len = (uint32_t)args->k;
    if (p->variant == OG_VARIANT_TILE)
        og_split_ranges(p->split, args->m, args->n, args->k, batch, g->scratch_bytes / 4,
                        &out->ranges, &out->range_len);
    out->key = gemm_key(g, args, p, out->ranges, out->range_len);
    if (og_kernel_check(&out->key, &ctx->limits, why, sizeof why) != 0)
        return og_fail(ctx, OG_ERROR_UNSUPPORTED, "gemm: %s", why);
    og_status st = og_loops_check(ctx, "gemm", &out->key, args->k, out->range_len);
    if (st == OG_OK && g->scaled)
        st = og_loops_check(ctx, "gemm", &(og_kernel_key){.kernel = OG_KERNEL_EXPONENTS}, args->k,
                            (uint64_t)args->k);
    if (st != OG_OK)
        return st;
    /* The ranges are push constants: one pipeline serves every split count. */
    out->key.p.split = OG_SPLIT_RULE;
    int tile = tiled(p);
    uint64_t gx = ceil_div((uint64_t)args->n, (uint64_t)(tile ? p->bn : p->cols));
    uint64_t reduce_gx = ceil_div((uint64_t)args->n, OG_ELEMENTWISE_THREADS);
    if ((st = og_grid_x_check(ctx, "gemm", args->n,
                              out->ranges > 1 && reduce_gx > gx ? reduce_gx : gx)) != OG_OK)
        return st;
    if (lim[2] < out->ranges)
        return og_fail(ctx, OG_ERROR_UNSUPPORTED,
                       "gemm: %u split-k ranges exceed the device's maxComputeWorkGroupCount[2] "
                       "of %u",
                       out->ranges, lim[2]);
    out->gx = (uint32_t)gx;
    /* Pieces: whole tiles of rows and whole products, each with the ranges of
     * the whole product, so cutting never changes the bits. */
    out->rows_per = tile ? (uint64_t)lim[1] * (uint64_t)p->bm : (uint64_t)args->m;
    out->batch_per = lim[2] / out->ranges;
    if (g->scaled) {
        /* A piece's exponents, (rows + N) per product, fit the scratch. */
        uint64_t cap = OG_EXPONENT_BYTES / 4, n = (uint64_t)args->n;
        uint64_t rows = out->rows_per < (uint64_t)args->m ? out->rows_per : (uint64_t)args->m;
        if (rows + n > cap) {
            if (n + (uint64_t)p->bm > cap)
                return og_fail(ctx, OG_ERROR_UNSUPPORTED,
                               "gemm: N = %" PRId64 " leaves no room for a tile of rows in the %u "
                               "exponents of range scaling",
                               args->n, (unsigned)cap);
            rows = (cap - n) / (uint64_t)p->bm * (uint64_t)p->bm;
            out->rows_per = rows;
        }
        if (out->batch_per > cap / (rows + n))
            out->batch_per = cap / (rows + n);
    }
    /* With K = 0 the kernel never reads A or B, which may be absent. */
    out->a = args->k == 0 ? ctx->placeholder : args->a;
    out->b = args->k == 0 ? ctx->placeholder : args->b;
    if (out->ranges > 1 && !g->scratch) {
        st = og_buffer_create(ctx, g->scratch_bytes, &g->scratch);
        if (st != OG_OK)
            return st;
    }
    if (g->scaled && !g->exponents)
        return og_buffer_create(ctx, OG_EXPONENT_BYTES, &g->exponents);
    return OG_OK;
}

/* Range scaling: the exponent of every row of op(A) and column of op(B) of
 * the piece q, written to g->exponents as [product][row..., column...]. */
static og_status record_exponents(og_gemm *g, VkCommandBuffer cmd, const og_gemm_args *args,
                                  const plan *pl, const og_push *q)
{
    og_context *ctx = g->ctx;
    og_push e = *q;
    e.step_z = min_u32(q->batch, ctx->limits.max_count[2]);
    og_kernel_key key = {.kernel = OG_KERNEL_EXPONENTS,
                         .trans_a = !!args->trans_a,
                         .trans_b = !!args->trans_b,
                         .dialect = ctx->dialect};
    VkDescriptorSet set;
    og_status st =
        og_binding_set(g, OG_SRC_STORAGE, 1, pl->a, pl->b, args->c, NULL, g->exponents, &set);
    uint32_t grid[3] = {(uint32_t)ceil_div((uint64_t)q->m + q->n, OG_ELEMENTWISE_THREADS), 1,
                        e.step_z};
    return st != OG_OK ? st : og_record_dispatch(ctx, cmd, &key, set, &e, grid);
}

/* One piece: q holds its rows (m), products (batch) and offsets. */
static og_status record_piece(og_gemm *g, VkCommandBuffer cmd, const og_gemm_args *args,
                              const plan *pl, const og_push *q)
{
    og_context *ctx = g->ctx;
    const og_params *p = &pl->key.p;
    uint32_t gy = tiled(p) ? (uint32_t)ceil_div(q->m, (uint64_t)p->bm) : 1;
    VkDescriptorSet set;
    og_status st;
    if (pl->ranges == 1) {
        if (g->scaled && (st = record_exponents(g, cmd, args, pl, q)) != OG_OK)
            return st;
        st = og_binding_set(g, p->src, p->vec, pl->a, pl->b, args->c, args->bias, g->exponents,
                            &set);
        uint32_t grid[3] = {pl->gx, gy, q->batch};
        return st != OG_OK ? st : og_record_dispatch(ctx, cmd, &pl->key, set, q, grid);
    }
    /* Pass 1: raw range sums into planes [range][product][row][column]. */
    og_push planes = *q;
    planes.off_c = 0;
    planes.ldc = q->n;
    planes.stride_c = q->m * q->n;
    planes.plane_stride = q->batch * q->m * q->n;
    planes.range_len = pl->range_len;
    planes.ranges = pl->ranges;
    st = og_binding_set(g, p->src, p->vec, pl->a, pl->b, g->scratch, NULL, NULL, &set);
    uint32_t grid[3] = {pl->gx, gy, q->batch * pl->ranges};
    if (st == OG_OK)
        st = og_record_dispatch(ctx, cmd, &pl->key, set, &planes, grid);
    if (st != OG_OK)
        return st;
    /* Pass 2: add the planes in range order, then the epilogue. */
    const uint32_t *lim = ctx->limits.max_count;
    og_push reduce = *q;
    reduce.plane_stride = planes.plane_stride;
    reduce.ranges = pl->ranges;
    reduce.step_y = min_u32(q->m, lim[1]);
    reduce.step_z = min_u32(q->batch, lim[2]);
    og_kernel_key key = {.kernel = OG_KERNEL_REDUCE, .dtype = OG_F32, .dialect = ctx->dialect};
    st = og_binding_set(g, OG_SRC_STORAGE, 1, g->scratch, ctx->placeholder, args->c, args->bias,
                        NULL, &set);
    uint32_t rgrid[3] = {(uint32_t)ceil_div(q->n, OG_ELEMENTWISE_THREADS), reduce.step_y,
                         reduce.step_z};
    return st != OG_OK ? st : og_record_dispatch(ctx, cmd, &key, set, &reduce, rgrid);
}

og_status og_gemm_encode_params(og_gemm *g, VkCommandBuffer cmd, const og_gemm_args *args,
                                const og_params *p)
{
    og_push push;
    og_status st = og_gemm_check(g, args, &push);
    if (st != OG_OK)
        return st;
    /* Nothing to compute: M or N is 0, or K is 0 with beta = 1 and no
     * epilogue (C stays bit for bit). */
    if (args->m == 0 || args->n == 0 ||
        (args->k == 0 && args->beta == 1.0f && !args->bias && args->activation == 0))
        return OG_OK;
    plan pl;
    if ((st = make_plan(g, args, p, &pl)) != OG_OK)
        return st;
    uint64_t m = (uint64_t)args->m, batch = push.batch;
    uint64_t a_row = args->trans_a ? 1 : (uint64_t)args->lda;
    for (uint64_t b0 = 0; b0 < batch && st == OG_OK; b0 += pl.batch_per) {
        for (uint64_t r0 = 0; r0 < m && st == OG_OK; r0 += pl.rows_per) {
            og_push q = push;
            q.m = (uint32_t)(m - r0 < pl.rows_per ? m - r0 : pl.rows_per);
            q.batch = (uint32_t)(batch - b0 < pl.batch_per ? batch - b0 : pl.batch_per);
            /* Within the checked extents of A and C, so these fit 32 bits. */
            q.off_a += (uint32_t)(r0 * a_row + b0 * push.stride_a);
            q.off_b += (uint32_t)(b0 * push.stride_b);
            q.off_c += (uint32_t)(r0 * push.ldc + b0 * push.stride_c);
            st = record_piece(g, cmd, args, &pl, &q);
        }
    }
    return st;
}

og_status og_gemm_encode(og_gemm *g, VkCommandBuffer cmd, const og_gemm_args *args)
{
    og_params p;
    og_status st = og_gemm_choose(g, args, &p);
    return st != OG_OK ? st : og_gemm_encode_params(g, cmd, args, &p);
}

og_status og_run_recorded(og_context *ctx, og_encoder fn, void *user)
{
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkResult r = ctx->vk.vkBeginCommandBuffer(ctx->cmd, &begin);
    if (r != VK_SUCCESS)
        return og_vk_fail(ctx, r, "gemm: vkBeginCommandBuffer");
    og_status st = fn(user, ctx->cmd);
    r = ctx->vk.vkEndCommandBuffer(ctx->cmd);
    if (st != OG_OK)
        return st;
    if (r != VK_SUCCESS)
        return og_vk_fail(ctx, r, "gemm: vkEndCommandBuffer");
    return og_submit_wait(ctx, ctx->cmd);
}

typedef struct run_call {
    og_gemm *g;
    const og_gemm_args *args;
    og_params p;
    og_elementwise op;
} run_call;

static og_status record_gemm(void *user, VkCommandBuffer cmd)
{
    run_call *c = user;
    return og_gemm_encode_params(c->g, cmd, c->args, &c->p);
}

og_status og_gemm_run(og_gemm *g, const og_gemm_args *args)
{
    run_call c = {.g = g, .args = args};
    og_push push;
    /* Check first so a bad call submits nothing at all. */
    og_status st = og_gemm_choose(g, args, &c.p);
    if (st == OG_OK)
        st = og_gemm_check(g, args, &push);
    return st != OG_OK ? st : og_run_recorded(g->ctx, record_gemm, &c);
}

og_status og_gemm_encode_elementwise(og_gemm *g, VkCommandBuffer cmd, og_elementwise op,
                                     const og_gemm_args *args)
{
    og_context *ctx = g->ctx;
    og_push push;
    if (op != OG_ELEMENTWISE_BIAS && op != OG_ELEMENTWISE_ACTIVATION)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "elementwise: operation %d is not bias add or activation", (int)op);
    if (op == OG_ELEMENTWISE_BIAS && !args->bias)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "elementwise: bias add without a bias");
    og_status st = og_elementwise_check(ctx, args, &push);
    if (st != OG_OK || args->m == 0 || args->n == 0)
        return st;
    const uint32_t *lim = ctx->limits.max_count;
    uint64_t gx = ceil_div((uint64_t)args->n, OG_ELEMENTWISE_THREADS);
    if ((st = og_grid_x_check(ctx, "elementwise", args->n, gx)) != OG_OK)
        return st;
    /* Each kernel does its own part of the epilogue only. */
    push.epi = op == OG_ELEMENTWISE_BIAS ? OG_EPI_BIAS : (uint32_t)args->activation;
    push.step_y = min_u32(push.m, lim[1]);
    push.step_z = min_u32(push.batch, lim[2]);
    og_kernel_key key = {.kernel = op == OG_ELEMENTWISE_BIAS ? OG_KERNEL_BIAS : OG_KERNEL_ACTIVATE,
                         .dtype = OG_F32,
                         .dialect = ctx->dialect};
    VkDescriptorSet set;
    st = og_binding_set(g, OG_SRC_STORAGE, 1, ctx->placeholder, ctx->placeholder, args->c,
                        op == OG_ELEMENTWISE_BIAS ? args->bias : NULL, NULL, &set);
    uint32_t grid[3] = {(uint32_t)gx, push.step_y, push.step_z};
    return st != OG_OK ? st : og_record_dispatch(ctx, cmd, &key, set, &push, grid);
}

static og_status record_elementwise(void *user, VkCommandBuffer cmd)
{
    run_call *c = user;
    return og_gemm_encode_elementwise(c->g, cmd, c->op, c->args);
}

og_status og_gemm_run_elementwise(og_gemm *g, og_elementwise op, const og_gemm_args *args)
{
    run_call c = {.g = g, .args = args, .op = op};
    og_push push;
    og_status st = og_elementwise_check(g->ctx, args, &push);
    return st != OG_OK ? st : og_run_recorded(g->ctx, record_elementwise, &c);
}

og_status og_gemm_describe(og_gemm *g, const og_gemm_args *args, char *buf, size_t len)
{
    og_choice c = {.source = OG_SOURCE_DEFAULT};
    int64_t batch = args->batch == 0 ? 1 : args->batch;
    og_status st = OG_OK;
    if (g->recover)
        c.params = g->recovered;
    else
        st = og_select(g->ctx, og_gemm_select_type(g), g->mode, !!args->trans_a, !!args->trans_b,
                       args->m, args->n, args->k, batch, &c);
    if (st != OG_OK)
        return st;
    char params[OG_PARAMS_MAX], split[64] = "", inputs[96] = "";
    og_params_format(&c.params, params, sizeof params);
    uint32_t ranges = 1, range_len = 0;
    if (c.params.variant == OG_VARIANT_TILE)
        og_split_ranges(c.params.split, args->m, args->n, args->k, batch, g->scratch_bytes / 4,
                        &ranges, &range_len);
    if (ranges > 1)
        snprintf(split, sizeof split, "; %u k ranges of %u", ranges, range_len);
    if (g->recover)
        snprintf(inputs, sizeof inputs, "; float32 recovered from float16, s=%d%s", g->recover,
                 g->scaled ? ", rows and columns scaled" : "");
    else if (g->dtype != g->b_type || og_dtype_is_fp8(g->dtype))
        snprintf(inputs, sizeof inputs, "; A %s, B %s", og_dtype_name(g->dtype),
                 og_dtype_name(g->b_type));
    snprintf(buf, len, "%s %s (%s)%s%s", og_params_template(&c.params), params,
             c.source == OG_SOURCE_DEFAULT ? "default"
             : c.source == OG_SOURCE_DB    ? "db"
                                           : "db, nearest shape",
             split, inputs);
    return OG_OK;
}
