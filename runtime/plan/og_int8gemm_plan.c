/* The plan of an Int8Gemm call: the skinny kernel, the tile or the matrix tile, its grid and
 * pieces (reference design, "8-bit products"). The sums are integers, so
 * pieces give the bits of one dispatch. */
#include <inttypes.h>

#include "og_plan.h"

og_status og_int8gemm_plan(const og_limits *lim, char *err, og_dialect dialect,
                           const og_int8gemm_args *args, const og_params *p, const og_push *push,
                           og_plan *out)
{
    og_plan_start(out, OG_PLAN_INT8GEMM, lim, dialect, push);
    og_gemm_args shape = og_int8gemm_layout(args);
    shape.bias = args->bias;
    shape.bias_offset = args->bias_offset;
    og_binding_starts(lim, &shape, 1, 1, args->col_scales, args->col_scale_offset, out->start);
    if (args->m == 0 || args->n == 0)
        return OG_OK;
    int skinny = !og_family_can(p, OG_FAMILY_TILED);
    if (!og_family_can(p, OG_FAMILY_INT8))
        return og_failf(err, OG_ERROR_INVALID_ARGUMENT,
                        "int8gemm: parameters of variant %d are not an Int8Gemm kernel's",
                        (int)p->variant);
    uint64_t rows = (uint64_t)(skinny ? p->rows : p->bm),
             cols = (uint64_t)(skinny ? p->cols : p->bn);
    uint64_t gx = og_ceil_div((uint64_t)args->n, cols);
    og_status st = og_grid_x_check(lim, err, "int8gemm", args->n, gx);
    if (st != OG_OK)
        return st;
    out->key = (og_kernel_key){.kernel = OG_KERNEL_GEMM,
                               .p = og_int8_params_for_call(lim, args, p),
                               .dtype = args->type_a,
                               .dtype_b = args->type_b,
                               .trans_a = !!args->trans_a,
                               .trans_b = !!args->trans_b,
                               .dialect = dialect};
    const char *past = og_operand_past_binding(lim, OG_INT8, OG_INT8, &shape);
    if (past && out->key.p.src == OG_SRC_STORAGE && og_params_matrix(&out->key.p))
        return og_failf(err, OG_ERROR_UNSUPPORTED,
                        "int8gemm: %s ends past the device's maxStorageBufferRange of %" PRIu64
                        " bytes, and the cooperative-matrix kernel reads it through a binding "
                        "only (device addresses serve the portable tile and the skinny kernel)",
                        past, lim->max_storage_range);
    if ((st = og_loops_check(lim, err, "int8gemm", &out->key, args->k, (uint64_t)args->k)) != OG_OK)
        return st;
    out->gx = (uint32_t)gx;
    out->tile_rows = (uint32_t)rows;
    out->rows_per = (uint64_t)lim->max_count[1] * rows;
    out->batch_per = lim->max_count[2];
    out->k_zero = args->k == 0;
    out->a_row = args->trans_a ? 1 : (uint64_t)args->lda;
    og_plan_count_pieces(out);
    return OG_OK;
}
