/* Int8Gemm objects: kernel choice (skinny or tile), recording, runs, timing
 * (reference design, "8-bit products"). */
#include <inttypes.h>
#include <stdio.h>

#include "og_internal.h"

int og_int8_skinny_eligible(const og_int8gemm_args *args)
{
    return args->m >= 1 && args->m <= 16 && !args->trans_b;
}

og_status og_int8gemm_create(og_context *ctx, og_int8gemm **out)
{
    *out = NULL;
    og_int8gemm *g = og_mem_alloc(&ctx->allocator, sizeof *g);
    if (!g)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "int8gemm: out of memory");
    og_status st = og_gemm_init(ctx, &g->gemm, OG_INT8, OG_MODE_FAST);
    if (st != OG_OK) {
        og_mem_free(&ctx->allocator, g);
        return st;
    }
    *out = g;
    return OG_OK;
}

void og_int8gemm_destroy(og_int8gemm *g)
{
    if (!g)
        return;
    og_context *ctx = g->gemm.ctx;
    og_gemm_fini(&g->gemm);
    og_mem_free(&ctx->allocator, g);
}

og_status og_int8gemm_choose(og_int8gemm *g, const og_int8gemm_args *args, og_params *p)
{
    og_gemm *core = &g->gemm;
    int64_t batch = args->batch == 0 ? 1 : args->batch;
    if (og_choice_cached(core, args->trans_a, args->trans_b, args->m, args->n, args->k, batch, p))
        return OG_OK;
    og_choice choice;
    og_status st = og_select_int8(core->ctx, !!args->trans_a, !!args->trans_b, args->m, args->n,
                                  args->k, batch, &choice);
    if (st == OG_OK)
        st = og_choice_cache(core, args->trans_a, args->trans_b, args->m, args->n, args->k, batch,
                             &choice.params);
    if (st == OG_OK)
        *p = choice.params;
    return st;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

og_status og_int8gemm_encode_params(og_int8gemm *g, VkCommandBuffer cmd,
                                    const og_int8gemm_args *args, const og_params *p)
{
    og_context *ctx = g->gemm.ctx;
    og_push push;
    og_status st = og_int8gemm_check(ctx, args, &push);
    if (st != OG_OK || args->m == 0 || args->n == 0)
        return st;
    int skinny = p->variant == OG_VARIANT_INT8_SKINNY;
    if (!skinny && p->variant != OG_VARIANT_INT8_TILE)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "int8gemm: parameters of variant %d are not an Int8Gemm kernel's",
                       (int)p->variant);
    uint64_t rows = (uint64_t)(skinny ? p->rows : p->bm),
             cols = (uint64_t)(skinny ? p->cols : p->bn);
    const uint32_t *lim = ctx->limits.max_count;
    uint64_t gx = ceil_div((uint64_t)args->n, cols);
    if ((st = og_grid_x_check(ctx, "int8gemm", args->n, gx)) != OG_OK)
        return st;
    og_kernel_key key = {.kernel = OG_KERNEL_GEMM,
                         .p = *p,
                         .dtype = args->type_a,
                         .dtype_b = args->type_b,
                         .trans_a = !!args->trans_a,
                         .trans_b = !!args->trans_b,
                         .dialect = ctx->dialect};
    if ((st = og_loops_check(ctx, "int8gemm", &key, args->k, (uint64_t)args->k)) != OG_OK)
        return st;
    og_buffer *a = args->k > 0 ? args->a : ctx->placeholder;
    og_buffer *b = args->k > 0 ? args->b : ctx->placeholder;
    VkDescriptorSet set;
    st = og_binding_set(&g->gemm, OG_SRC_STORAGE, 1, a, b, args->c, args->bias, args->col_scales,
                        &set);
    /* Grids beyond the device's y and z counts run as pieces of whole
     * workgroup rows and whole products; the sums are integers, so the
     * pieces give the bits of one dispatch. */
    uint64_t m = (uint64_t)args->m, batch = push.batch;
    uint64_t rows_per = (uint64_t)lim[1] * rows, batch_per = lim[2];
    uint64_t a_row = args->trans_a ? 1 : (uint64_t)args->lda;
    for (uint64_t b0 = 0; b0 < batch && st == OG_OK; b0 += batch_per) {
        for (uint64_t r0 = 0; r0 < m && st == OG_OK; r0 += rows_per) {
            og_push q = push;
            q.m = (uint32_t)(m - r0 < rows_per ? m - r0 : rows_per);
            q.batch = (uint32_t)(batch - b0 < batch_per ? batch - b0 : batch_per);
            /* Within the checked extents of A and C, so these fit 32 bits. */
            q.off_a += (uint32_t)(r0 * a_row + b0 * push.stride_a);
            q.off_b += (uint32_t)(b0 * push.stride_b);
            q.off_c += (uint32_t)(r0 * push.ldc + b0 * push.stride_c);
            uint32_t grid[3] = {(uint32_t)gx, (uint32_t)ceil_div(q.m, rows), q.batch};
            st = og_record_dispatch(ctx, cmd, &key, set, &q, grid);
        }
    }
    return st;
}

og_status og_int8gemm_encode(og_int8gemm *g, VkCommandBuffer cmd, const og_int8gemm_args *args)
{
    og_params p;
    og_push push;
    /* Check first, so a bad call names its dimension before any selection. */
    og_status st = og_int8gemm_check(g->gemm.ctx, args, &push);
    if (st == OG_OK)
        st = og_int8gemm_choose(g, args, &p);
    return st != OG_OK ? st : og_int8gemm_encode_params(g, cmd, args, &p);
}

typedef struct int8_call {
    og_int8gemm *g;
    const og_int8gemm_args *args;
    og_params p;
} int8_call;

static og_status record_int8(void *user, VkCommandBuffer cmd)
{
    int8_call *c = user;
    return og_int8gemm_encode_params(c->g, cmd, c->args, &c->p);
}

og_status og_int8gemm_run(og_int8gemm *g, const og_int8gemm_args *args)
{
    int8_call c = {.g = g, .args = args};
    og_push push;
    og_status st = og_int8gemm_check(g->gemm.ctx, args, &push);
    if (st == OG_OK)
        st = og_int8gemm_choose(g, args, &c.p);
    return st != OG_OK ? st : og_run_recorded(g->gemm.ctx, record_int8, &c);
}

og_status og_int8gemm_time(og_int8gemm *g, const og_int8gemm_args *args, const og_params *p,
                           int warmup, int reps, double *median_us)
{
    og_push push;
    *median_us = 0;
    og_status st = og_int8gemm_check(g->gemm.ctx, args, &push);
    if (st != OG_OK)
        return st;
    int8_call c = {.g = g, .args = args, .p = *p};
    return og_time_encoder(g->gemm.ctx, record_int8, &c, warmup, reps, median_us);
}

og_status og_int8gemm_describe(og_int8gemm *g, const og_int8gemm_args *args, char *buf, size_t len)
{
    og_choice c;
    int64_t batch = args->batch == 0 ? 1 : args->batch;
    og_status st = og_select_int8(g->gemm.ctx, !!args->trans_a, !!args->trans_b, args->m, args->n,
                                  args->k, batch, &c);
    if (st != OG_OK)
        return st;
    char params[OG_PARAMS_MAX];
    og_params_format(&c.params, params, sizeof params);
    snprintf(buf, len, "%s %s (%s)", og_params_template(&c.params), params,
             c.source == OG_SOURCE_DEFAULT ? "default"
             : c.source == OG_SOURCE_DB    ? "db"
                                           : "db, nearest shape");
    return OG_OK;
}
