/* Plans of a float GEMM call and of the elementwise kernels: kernel,
 * split-k ranges, grid and pieces, from the checked arguments, the
 * parameters and the device's limits (no Vulkan). */
#include <inttypes.h>

#include "og_plan.h"

/* Whether a variant tiles C in bm x bn blocks (the portable and the
 * cooperative-matrix tile), rather than in columns only (few rows). */
static int tiled(const og_params *p)
{
    return og_family_can(p, OG_FAMILY_TILED);
}

/* The product's kernel with parameters p as this call can use them. */
static og_kernel_key gemm_key(const og_gemm_config *cfg, const og_limits *lim,
                              const og_gemm_args *args, const og_params *p, uint32_t ranges,
                              uint32_t range_len)
{
    int fp8 = og_dtype_is_fp8(cfg->a_type) || og_dtype_is_fp8(cfg->b_type);
    return (og_kernel_key){
        .kernel = ranges > 1 ? OG_KERNEL_PLANES : OG_KERNEL_GEMM,
        .p = og_params_for_call(cfg, lim, args, p, ranges > 1 ? range_len : 0),
        .dtype = cfg->a_type,
        .dtype_b = fp8 ? cfg->b_type : 0,
        .trans_a = !!args->trans_a,
        .trans_b = !!args->trans_b,
        .dialect = cfg->dialect,
        .recover = cfg->recover,
        .scaled = cfg->scaled};
}

/* One elementwise kernel over C (kernel and the push's epilogue bits set by
 * the caller): a workgroup of OG_ELEMENTWISE_THREADS columns, stepping over
 * rows and products beyond the grid's y and z itself. */
static og_status elementwise_grid(const og_limits *lim, char *err, const char *op,
                                  og_kernel kernel, og_dialect dialect, og_plan *out)
{
    const og_push *push = &out->push;
    uint64_t gx = og_ceil_div((uint64_t)push->n, OG_ELEMENTWISE_THREADS);
    og_status st = og_grid_x_check(lim, err, op, push->n, gx);
    if (st != OG_OK)
        return st;
    out->kind = OG_PLAN_ELEMENTWISE;
    out->push.step_y = push->m < lim->max_count[1] ? push->m : lim->max_count[1];
    out->push.step_z = push->batch < lim->max_count[2] ? push->batch : lim->max_count[2];
    out->key = (og_kernel_key){.kernel = kernel, .dtype = OG_F32, .dialect = dialect};
    out->gx = (uint32_t)gx;
    out->rows_per = push->m;
    out->batch_per = push->batch;
    og_plan_count_pieces(out);
    return OG_OK;
}

og_status og_gemm_plan(const og_gemm_config *cfg, const og_limits *lim, char *err,
                       const og_gemm_args *args, const og_params *p, const og_push *push,
                       og_plan *out)
{
    og_plan_start(out, OG_PLAN_GEMM, lim, cfg->dialect, push);
    og_binding_starts(lim, args, og_dtype_bytes(cfg->a_type), og_dtype_bytes(cfg->b_type), NULL, 0,
                      out->start);
    /* Nothing to compute: M or N is 0, or alpha or K is 0 with beta = 1 and
     * no epilogue (C stays bit for bit, as BLAS returns at once). */
    int product = og_gemm_has_product(args);
    if (args->m == 0 || args->n == 0 ||
        (!product && args->beta == 1.0f && !args->bias && args->activation == 0))
        return OG_OK;
    /* BLAS's rule: with alpha = 0 (or K = 0) A and B are not read, so NaN or
     * Inf there cannot reach C: C = act(beta * C + bias). */
    if (!product)
        return elementwise_grid(lim, err, "gemm", OG_KERNEL_SCALE, cfg->dialect, out);
    const uint32_t *count = lim->max_count;
    int64_t batch = push->batch;
    char why[256];
    if (og_params_matrix(p) && cfg->mode != OG_MODE_FAST)
        return og_failf(err, OG_ERROR_UNSUPPORTED,
                        "gemm: the cooperative-matrix kernel runs in Fast mode only");
    const og_family *f = og_family_of(p);
    if (f->takes && !f->takes(cfg->a_type, args->m, args->trans_a))
        return og_failf(err, OG_ERROR_UNSUPPORTED, "gemm: %s (M = %" PRId64 ")", f->takes_text,
                        args->m);
    out->range_len = (uint32_t)args->k;
    if (og_family_can(p, OG_FAMILY_SPLIT))
        og_split_ranges(p->split, args->m, args->n, args->k, batch, cfg->scratch_bytes / 4,
                        &out->ranges, &out->range_len);
    out->key = gemm_key(cfg, lim, args, p, out->ranges, out->range_len);
    const char *past = og_operand_past_binding(lim, cfg->a_type, cfg->b_type, args);
    if (past && out->key.p.src == OG_SRC_STORAGE)
        return og_failf(err, OG_ERROR_UNSUPPORTED,
                        "gemm: %s ends past the device's maxStorageBufferRange of %" PRIu64
                        " bytes, and the %s reads it through a binding only (device addresses "
                        "serve the portable tile, split-k and few rows)",
                        past, lim->max_storage_range,
                        cfg->recover || cfg->scaled ? "recovered float32 kernel"
                        : og_params_matrix(p)       ? "cooperative-matrix kernel"
                                                    : "decode kernel");
    if (og_kernel_check(&out->key, lim, why, sizeof why) != 0)
        return og_failf(err, OG_ERROR_UNSUPPORTED, "gemm: %s", why);
    og_status st = og_loops_check(lim, err, "gemm", &out->key, args->k, out->range_len);
    if (st == OG_OK && cfg->scaled)
        st = og_loops_check(lim, err, "gemm", &(og_kernel_key){.kernel = OG_KERNEL_EXPONENTS},
                            args->k, (uint64_t)args->k);
    if (st != OG_OK)
        return st;
    /* The ranges are push constants: one pipeline serves every split count. */
    out->key.p.split = OG_SPLIT_RULE;
    int tile = tiled(p);
    uint64_t gx = og_ceil_div((uint64_t)args->n, (uint64_t)(tile ? p->bn : p->cols));
    uint64_t reduce_gx = og_ceil_div((uint64_t)args->n, OG_ELEMENTWISE_THREADS);
    if ((st = og_grid_x_check(lim, err, "gemm", args->n,
                              out->ranges > 1 && reduce_gx > gx ? reduce_gx : gx)) != OG_OK)
        return st;
    if (count[2] < out->ranges)
        return og_failf(err, OG_ERROR_UNSUPPORTED,
                        "gemm: %u split-k ranges exceed the device's maxComputeWorkGroupCount[2] "
                        "of %u",
                        out->ranges, count[2]);
    out->gx = (uint32_t)gx;
    /* Rows of C a workgroup covers: the tile's, the decode kernel's tile of
     * rows, or every row (few rows). */
    uint32_t rows = (uint32_t)(tile ? p->bm : p->rows);
    out->tile_rows = rows;
    out->rows_per = rows ? (uint64_t)count[1] * rows : (uint64_t)args->m;
    out->batch_per = count[2] / out->ranges;
    if (cfg->scaled && (st = og_plan_exponents(out, err, "gemm", args->m, args->n, p->bm)) != OG_OK)
        return st;
    if (out->ranges > 1)
        out->scratch_bytes = cfg->scratch_bytes;
    out->a_row = args->trans_a ? 1 : (uint64_t)args->lda;
    /* Vector texels: four elements (float32 words, pairs of 16-bit values),
     * or eight 16-bit values for the families that load 16 bytes. */
    if (out->key.p.src == OG_SRC_TEXEL && out->key.p.vec != 1)
        out->vec_words = cfg->a_type == OG_F32 || og_family_can(p, OG_FAMILY_VEC16) ? 4 : 2;
    og_plan_count_pieces(out);
    return OG_OK;
}

og_status og_plan_exponents(og_plan *out, char *err, const char *op, int64_t m, int64_t n, int bm)
{
    uint64_t cap = OG_EXPONENT_BYTES / 4, cols = (uint64_t)n;
    uint64_t rows = out->rows_per < (uint64_t)m ? out->rows_per : (uint64_t)m;
    if (rows + cols > cap) {
        if (cols + (uint64_t)bm > cap)
            return og_failf(err, OG_ERROR_UNSUPPORTED,
                            "%s: N = %" PRId64 " leaves no room for a tile of rows in the %u exponents of "
                            "range scaling",
                            op, n, (unsigned)cap);
        rows = (cap - cols) / (uint64_t)bm * (uint64_t)bm;
        out->rows_per = rows;
    }
    if (out->batch_per > cap / (rows + cols))
        out->batch_per = cap / (rows + cols);
    out->scaled = 1;
    out->exponent_bytes = OG_EXPONENT_BYTES;
    return OG_OK;
}

og_status og_elementwise_plan(const og_limits *lim, char *err, og_dialect dialect,
                              og_elementwise op, const og_gemm_args *args, const og_push *push,
                              og_plan *out)
{
    og_plan_start(out, OG_PLAN_ELEMENTWISE, lim, dialect, push);
    og_binding_starts(lim, args, 4, 4, NULL, 0, out->start);
    if (op != OG_ELEMENTWISE_BIAS && op != OG_ELEMENTWISE_ACTIVATION)
        return og_failf(err, OG_ERROR_INVALID_ARGUMENT,
                        "elementwise: operation %d is not bias add or activation", (int)op);
    if (op == OG_ELEMENTWISE_BIAS && !args->bias)
        return og_failf(err, OG_ERROR_INVALID_ARGUMENT, "elementwise: bias add without a bias");
    if (args->m == 0 || args->n == 0)
        return OG_OK;
    /* Each kernel does its own part of the epilogue only. */
    out->push.epi = op == OG_ELEMENTWISE_BIAS ? OG_EPI_BIAS : (uint32_t)args->activation;
    return elementwise_grid(lim, err, "elementwise",
                            op == OG_ELEMENTWISE_BIAS ? OG_KERNEL_BIAS : OG_KERNEL_ACTIVATE,
                            dialect, out);
}
