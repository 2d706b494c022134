/* Pieces of a plan: the dispatches of whole tiles of rows and whole
 * products that fit the device's grid counts, each step with its push
 * constants, grid and bindings. */
#include <string.h>

#include "og_plan.h"

static uint32_t min_u32(uint64_t a, uint32_t b)
{
    return a < b ? (uint32_t)a : b;
}

void og_plan_start(og_plan *out, og_plan_kind kind, const og_limits *lim, og_dialect dialect,
                   const og_push *push)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    out->push = *push;
    out->dialect = dialect;
    out->ranges = 1;
    out->vec_words = 1;
    memcpy(out->max_count, lim->max_count, sizeof out->max_count);
}

void og_plan_count_pieces(og_plan *out)
{
    out->row_pieces = og_ceil_div(out->push.m, out->rows_per);
    out->pieces = out->row_pieces * og_ceil_div(out->push.batch, out->batch_per);
}

static og_step *add_step(og_piece *out, const og_kernel_key *key, const og_push *push, og_src src,
                         uint32_t gx, uint32_t gy, uint32_t gz)
{
    og_step *s = &out->step[out->n_steps++];
    /* Kernels reading A and B by address keep the storage layout (C, the
     * bias and the scales are bound as ever). */
    og_src layout = src == OG_SRC_TEXEL ? OG_SRC_TEXEL : OG_SRC_STORAGE;
    *s = (og_step){.key = *key, .push = *push, .src = layout, .vec_words = 1, .grid = {gx, gy, gz}};
    return s;
}

static void bind(og_step *s, og_operand b0, og_operand b1, og_operand b2, og_operand b3,
                 og_operand b5)
{
    s->bind[0] = b0;
    s->bind[1] = b1;
    s->bind[2] = b2;
    s->bind[3] = b3;
    s->bind[4] = b5;
}

/* The float GEMM's piece q: the exponents of range scaling, then the
 * product; or split-k's planes of raw range sums, then their reduction in
 * range order with the epilogue. */
static void gemm_piece(const og_plan *pl, const og_push *q, og_piece *out)
{
    const og_params *p = &pl->key.p;
    const uint32_t *count = pl->max_count;
    og_operand a = OG_OPERAND_A, b = OG_OPERAND_B;
    og_operand bias = q->epi & OG_EPI_BIAS ? OG_OPERAND_BIAS : OG_OPERAND_NONE;
    uint32_t gy = pl->tile_rows ? (uint32_t)og_ceil_div(q->m, pl->tile_rows) : 1;
    if (pl->ranges == 1) {
        if (pl->scaled) {
            og_kernel_key key = {.kernel = OG_KERNEL_EXPONENTS,
                                 .dtype = pl->key.dtype,
                                 .qformat = pl->key.qformat,
                                 .trans_a = pl->key.trans_a,
                                 .trans_b = pl->key.trans_b,
                                 .dialect = pl->dialect};
            og_push e = *q;
            e.step_z = min_u32(q->batch, count[2]);
            og_step *s = add_step(
                out, &key, &e, OG_SRC_STORAGE,
                (uint32_t)og_ceil_div((uint64_t)q->m + q->n, OG_ELEMENTWISE_THREADS), 1, e.step_z);
            bind(s, a, b, OG_OPERAND_C, OG_OPERAND_EXPONENTS, OG_OPERAND_NONE);
        }
        og_step *s = add_step(out, &pl->key, q, p->src, pl->gx, gy, q->batch);
        s->vec_words = pl->vec_words;
        /* Texel layouts hold A's vector view at binding 3. */
        og_operand scales =
            pl->scaled && p->src != OG_SRC_TEXEL ? OG_OPERAND_EXPONENTS : OG_OPERAND_NONE;
        bind(s, a, b, OG_OPERAND_C, scales, bias);
        return;
    }
    og_push planes = *q;
    planes.off_c = 0;
    planes.ldc = q->n;
    planes.stride_c = q->m * q->n;
    planes.plane_stride = q->batch * q->m * q->n;
    planes.range_len = pl->range_len;
    planes.ranges = pl->ranges;
    og_step *s = add_step(out, &pl->key, &planes, p->src, pl->gx, gy, q->batch * pl->ranges);
    s->vec_words = pl->vec_words;
    bind(s, a, b, OG_OPERAND_SCRATCH, OG_OPERAND_NONE, OG_OPERAND_NONE);
    og_push reduce = *q;
    reduce.plane_stride = planes.plane_stride;
    reduce.ranges = pl->ranges;
    reduce.step_y = min_u32(q->m, count[1]);
    reduce.step_z = min_u32(q->batch, count[2]);
    og_kernel_key key = {
        .kernel = OG_KERNEL_REDUCE, .dtype = OG_F32, .dialect = pl->dialect, .conv = pl->key.conv};
    s = add_step(out, &key, &reduce, OG_SRC_STORAGE,
                 (uint32_t)og_ceil_div(q->n, OG_ELEMENTWISE_THREADS), reduce.step_y, reduce.step_z);
    bind(s, OG_OPERAND_SCRATCH, OG_OPERAND_NONE, OG_OPERAND_C, OG_OPERAND_NONE, bias);
}

void og_plan_piece(const og_plan *pl, uint64_t i, og_piece *out)
{
    memset(out, 0, sizeof *out);
    uint64_t r0 = i % pl->row_pieces * pl->rows_per, b0 = i / pl->row_pieces * pl->batch_per;
    const og_push *push = &pl->push;
    og_push q = *push;
    q.m = (uint32_t)(push->m - r0 < pl->rows_per ? push->m - r0 : pl->rows_per);
    q.batch = (uint32_t)(push->batch - b0 < pl->batch_per ? push->batch - b0 : pl->batch_per);
    if (pl->kind == OG_PLAN_CONV) {
        /* Whole images (b0 is a multiple of the groups); the kernel finds
         * its pixels from the piece's first (conv_gather.tmpl, og_conv_pix0). */
        uint64_t image = b0 / (uint64_t)push->zero_a;
        q.off_a += (uint32_t)(image * push->stride_a);
        q.off_c += (uint32_t)(image * push->stride_c);
        q.zero_b = (int32_t)(uint32_t)r0;
        gemm_piece(pl, &q, out);
        return;
    }
    /* Within the checked extents of A and C, so these fit 32 bits. */
    q.off_a += (uint32_t)(r0 * pl->a_row + b0 * push->stride_a);
    q.off_b += (uint32_t)(b0 * push->stride_b);
    q.off_c += (uint32_t)(r0 * push->ldc + b0 * push->stride_c);
    /* The low-bit decode kernel's split-k runs as the float GEMM's. */
    if (pl->kind == OG_PLAN_GEMM || pl->kind == OG_PLAN_QGEMM) {
        gemm_piece(pl, &q, out);
        return;
    }
    og_step *s;
    if (pl->kind == OG_PLAN_INT8GEMM) {
        s = add_step(out, &pl->key, &q, pl->key.p.src, pl->gx,
                     (uint32_t)og_ceil_div(q.m, pl->tile_rows), q.batch);
        bind(s, pl->k_zero ? OG_OPERAND_NONE : OG_OPERAND_A,
             pl->k_zero ? OG_OPERAND_NONE : OG_OPERAND_B, OG_OPERAND_C,
             q.epi & OG_EPI_COLUMN_SCALES ? OG_OPERAND_SCALES : OG_OPERAND_NONE,
             q.epi & OG_EPI_BIAS ? OG_OPERAND_BIAS : OG_OPERAND_NONE);
        return;
    }
    s = add_step(out, &pl->key, &q, OG_SRC_STORAGE, pl->gx, q.step_y, q.step_z);
    bind(s, OG_OPERAND_NONE, OG_OPERAND_NONE, OG_OPERAND_C, OG_OPERAND_NONE,
         q.epi & OG_EPI_BIAS ? OG_OPERAND_BIAS : OG_OPERAND_NONE);
}
