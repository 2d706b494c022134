/* Low-bit weight products (og_qgemm_*): the checks of a call and its plan,
 * the decode kernel over tiles of columns, rows and products. The weights'
 * layout is onegpu_formats.h's (og_qweights_layout_of); the push constants
 * are the GEMM's fields as templates/qgemm_decode.tmpl reads them. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "og_plan.h"

static og_status bad(char *err, const char *fmt, int64_t v)
{
    return og_failf(err, OG_ERROR_INVALID_ARGUMENT, fmt, v);
}

og_status og_qgemm_check(const og_limits *lim, char *err, og_dtype a_type,
                         const og_qweights_format *f, const og_qgemm_args *q, og_gemm_args *shape,
                         og_push *push)
{
    memset(push, 0, sizeof *push);
    const int64_t batch = q->batch == 0 ? 1 : q->batch;
    /* The weights' own fields first: the layout needs N and K of at least 1. */
    const og_field fields[] = {{"M", q->m},
                               {"N", q->n},
                               {"K", q->k},
                               {"batch", q->batch},
                               {"w_offset", q->w_offset},
                               {"stride_w", q->stride_w}};
    og_status st = og_check_fields(err, "qgemm", fields, sizeof fields / sizeof fields[0]);
    if (st != OG_OK)
        return st;
    og_qweights_layout lay;
    char why[OG_ERROR_MAX];
    /* Refused for any N (an empty call too), so N = 0 asks about one row. */
    if (og_qweights_layout_of(f, q->n > 0 ? q->n : 1, q->k, &lay, why, sizeof why) != 0)
        return og_failf(err, OG_ERROR_INVALID_ARGUMENT, "qgemm: %s", why);
    if (q->w_offset % 16 != 0)
        return bad(err, "qgemm: w_offset (%" PRId64 " bytes) is not a multiple of 16", q->w_offset);
    if (q->stride_w % 16 != 0)
        return bad(err, "qgemm: stride_w (%" PRId64 " bytes) is not a multiple of 16", q->stride_w);
    if (batch > 1 && q->stride_w != 0 && (uint64_t)q->stride_w < lay.bytes)
        return og_failf(err, OG_ERROR_INVALID_ARGUMENT,
                        "qgemm: stride_w (%" PRId64
                        " bytes) is less than one weight matrix (%" PRIu64
                        " bytes): stacked matrices would overlap",
                        q->stride_w, lay.bytes);
    if (!(q->tensor_scale == q->tensor_scale) || q->tensor_scale < 0 ||
        q->tensor_scale > 3.4028234663852886e38f)
        return og_failf(err, OG_ERROR_INVALID_ARGUMENT,
                        "qgemm: tensor_scale (%g) is not a finite non-negative number",
                        (double)q->tensor_scale);
    *shape = (og_gemm_args){.trans_b = 1,
                            .m = q->m,
                            .n = q->n,
                            .k = q->k,
                            .batch = q->batch,
                            .alpha = 1.0f,
                            .beta = q->beta,
                            .a = q->a,
                            .b = q->w,
                            .c = q->c,
                            .lda = q->lda,
                            .ldb = q->k,
                            .ldc = q->ldc,
                            .a_offset = q->a_offset,
                            .b_offset = q->w_offset / 4,
                            .c_offset = q->c_offset,
                            .stride_a = q->stride_a,
                            .stride_b = q->stride_w / 4,
                            .stride_c = q->stride_c,
                            .bias = q->bias,
                            .bias_offset = q->bias_offset,
                            .activation = q->activation};
    st = og_check_product(lim, err, "qgemm", og_dtype_bytes(a_type), 0, shape, push);
    if (st != OG_OK || q->m == 0 || q->n == 0)
        return st;
    /* W: the whole image of each matrix, as 32-bit words. */
    uint64_t words = lay.bytes / 4;
    st = og_check_operand(lim, err, "qgemm", "W", q->w, 4, q->w_offset / 4, batch, q->stride_w / 4,
                          1, (int64_t)words, (int64_t)words);
    if (st != OG_OK)
        return st;
    push->off_b = og_binding_offset(lim, q->w, q->w_offset / 4, 4);
    push->stride_b = (uint32_t)(q->stride_w / 4);
    push->ldb = (uint32_t)(lay.code_row_bytes / 4);
    push->scale_off = (uint32_t)(lay.scales_at / 4);
    /* The GEMM's words for device addresses (never used here) carry the
     * planes' geometry, so that ranges, range_len and plane_stride stay
     * split-k's; alpha is 1 and the tensor scale goes with the weights. */
    push->addr_a[0] = (uint32_t)lay.scale_row_bytes;
    push->addr_a[1] = (uint32_t)(lay.zeros_at / 4);
    push->zero_a = (int32_t)lay.zero_row_bytes;
    push->zero_b = (int32_t)lay.block;
    float scale = q->tensor_scale == 0.0f ? 1.0f : q->tensor_scale;
    memcpy(&push->addr_b[0], &scale, sizeof scale);
    push->alpha = 1.0f;
    return OG_OK;
}

void og_qgemm_op(const og_qweights_format *f, char *buf, size_t len)
{
    char name[32] = "?";
    og_qweights_format_name(f, name, sizeof name);
    snprintf(buf, len, "%s%s", OG_OP_QGEMM_PREFIX, name);
}

og_params og_qgemm_default(int64_t m)
{
    return m > 16 ? og_params_qprefill() : og_params_qdecode(m);
}

og_params og_qgemm_run_params(og_dtype a_type, const og_push *push, const og_params *p)
{
    og_params run = *p;
    uint32_t per = a_type == OG_F32 ? 4u : 8u;
    if (run.vec == 4 &&
        (push->off_a % per || push->lda % per || push->stride_a % per || push->off_b % 4u))
        run.vec = 1;
    return run;
}

og_status og_qgemm_plan(const og_limits *lim, char *err, og_dtype a_type, int qformat, og_mode mode,
                        const og_gemm_args *shape, const og_params *p, const og_push *push,
                        uint64_t scratch_bytes, int part, og_plan *out)
{
    og_plan_start(out, OG_PLAN_QGEMM, lim, OG_GLSL, push);
    og_binding_starts(lim, shape, og_dtype_bytes(a_type), 4, NULL, 0, out->start);
    if (shape->m == 0 || shape->n == 0)
        return OG_OK;
    /* The prefill on matrices: the staged cooperative-matrix tile as
     * recovered float32 with range scaling (every decoded weight brought into
     * float16's range by its column's power of two), after the exponents. */
    int tile = og_family_can(p, OG_FAMILY_PREFILL);
    int matrix = tile && og_params_matrix(p);
    if (!tile && !og_family_can(p, OG_FAMILY_WEIGHTS))
        return og_failf(err, OG_ERROR_INVALID_ARGUMENT,
                        "qgemm: parameters of variant %d are neither the decode kernel's, the "
                        "portable tile's nor the cooperative-matrix tile's",
                        (int)p->variant);
    if (matrix && (p->load != OG_LOAD_STAGED || mode != OG_MODE_FAST))
        return og_failf(err, OG_ERROR_UNSUPPORTED,
                        "qgemm: the cooperative-matrix prefill stages the decoded weights "
                        "(load=staged) and runs in Fast mode only");
    if (!tile && p->dot != 0 && mode != OG_MODE_FAST)
        return og_failf(err, OG_ERROR_UNSUPPORTED,
                        "qgemm: dot=%d (the integer path, int8 activations) runs in Fast mode "
                        "only; Deterministic mode keeps the float path and its documented order",
                        p->dot);
    if (tile && !matrix && (p->split != 1 || p->vec != 1 || p->src != OG_SRC_STORAGE))
        return og_failf(err, OG_ERROR_INVALID_ARGUMENT,
                        "qgemm: the prefill tile decodes each weight as it loads it: element "
                        "loads from storage buffers, unsplit (vec=1, src=ssbo, split=1)");
    uint64_t gx = og_ceil_div((uint64_t)shape->n, (uint64_t)(tile ? p->bn : p->cols));
    og_status st = og_grid_x_check(lim, err, "qgemm", shape->n, gx);
    if (st != OG_OK)
        return st;
    /* 16-byte loads need every row of A (and every piece's and product's
     * first) and W's image on 16-byte boundaries of their bindings. */
    og_params run = tile ? *p : og_qgemm_run_params(a_type, push, p);
    /* Texel views start at the buffers' bases (og_record.c): they must hold
     * the whole buffers, and 16-byte loads need the bindings' starts on 16
     * bytes; otherwise storage buffers, or word loads. */
    if (run.src == OG_SRC_TEXEL) {
        uint64_t max = lim->max_texel_elements;
        if (!og_buffer_texel_ok(shape->a) || !og_buffer_texel_ok(shape->b) ||
            shape->a->allocated / 4 > max || shape->b->allocated / 4 > max)
            run.src = OG_SRC_STORAGE;
        else if (run.vec == 4 && (out->start[OG_OPERAND_A] % 16 || out->start[OG_OPERAND_B] % 16))
            run.vec = 1;
    }
    /* Split-k (the decode kernel's split > 1): ranges of whole units of 32
     * weights, as many as asked, as K has units and as the scratch holds
     * planes of the whole call; one range runs the one-pass kernel. */
    uint64_t units = (uint64_t)shape->k / 32,
             cells = (uint64_t)shape->m * (uint64_t)shape->n * (uint64_t)push->batch;
    uint64_t ranges = !tile && p->split > 1 ? (uint64_t)p->split : 1;
    if (ranges > units)
        ranges = units;
    if (ranges > 1 && ranges * cells > scratch_bytes / 4)
        ranges = scratch_bytes / 4 / cells;
    if (ranges > 1 && ranges * push->batch > lim->max_count[2])
        ranges = lim->max_count[2] / (uint64_t)push->batch;
    if (ranges < 1)
        ranges = 1;
    uint64_t range_units = ranges > 1 ? og_ceil_div(units, ranges) : units;
    if (ranges > 1) {
        ranges = og_ceil_div(units, range_units);
        out->ranges = (uint32_t)ranges;
        out->range_len = (uint32_t)(range_units * 32);
        out->scratch_bytes = scratch_bytes;
    }
    /* The ranges are push constants: one pipeline serves every count. */
    run.split = OG_SPLIT_RULE;
    out->key = (og_kernel_key){.kernel = ranges > 1 ? OG_KERNEL_PLANES : OG_KERNEL_GEMM,
                               .p = run,
                               .dtype = a_type,
                               .dialect = OG_GLSL,
                               .trans_b = tile,
                               .qformat = qformat,
                               .recover = matrix ? OG_RECOVER_SHIFT : 0,
                               .scaled = matrix,
                               .part = part};
    char why[256];
    if ((tile || part != OG_PART_FULL) && og_kernel_check(&out->key, lim, why, sizeof why) != 0)
        return og_failf(err, OG_ERROR_UNSUPPORTED, "qgemm: %s", why);
    if ((st = og_loops_check(lim, err, "qgemm", &out->key, shape->k,
                             ranges > 1 ? range_units * 32 : (uint64_t)shape->k)) != OG_OK ||
        (matrix && (st = og_loops_check(lim, err, "qgemm", &(og_kernel_key){.kernel = OG_KERNEL_EXPONENTS},
                                        shape->k, (uint64_t)shape->k)) != OG_OK))
        return st;
    out->gx = (uint32_t)gx;
    out->tile_rows = (uint32_t)(tile ? p->bm : p->rows);
    out->rows_per = (uint64_t)lim->max_count[1] * (uint64_t)out->tile_rows;
    out->batch_per = lim->max_count[2] / (uint32_t)ranges;
    out->a_row = (uint64_t)shape->lda;
    if (run.src == OG_SRC_TEXEL && run.vec == 4)
        out->vec_words = 4;
    if (matrix && (st = og_plan_exponents(out, err, "qgemm", shape->m, shape->n, p->bm)) != OG_OK)
        return st;
    og_plan_count_pieces(out);
    return OG_OK;
}
