/* Int8Gemm objects: kernel choice (skinny, tile or matrix tile), recording, runs, timing
 * (reference design, "8-bit products"). */
#include <stdio.h>
#include <string.h>

#include "og_internal.h"

og_status og_int8gemm_create(og_context *ctx, og_int8gemm **out)
{
    *out = NULL;
    og_int8gemm *g = og_mem_alloc(&ctx->allocator, sizeof *g);
    if (!g)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "int8gemm: out of memory");
    og_gemm_init(ctx, &g->gemm, OG_INT8, OG_MODE_FAST);
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

/* The matrix tile reads A and B through bindings only: an operand past
 * maxStorageBufferRange (read by device address) takes the portable tile. */
static void bindings_reach(const og_limits *lim, const og_int8gemm_args *args, og_params *p)
{
    og_gemm_args shape = og_int8gemm_layout(args);
    if (og_params_matrix(p) && args->a && args->b &&
        og_operand_past_binding(lim, OG_INT8, OG_INT8, &shape))
        *p = og_params_int8_tile();
}

og_status og_int8gemm_choose(og_int8gemm *g, const og_int8gemm_args *args, og_params *p)
{
    og_gemm *core = &g->gemm;
    int64_t batch = args->batch == 0 ? 1 : args->batch;
    if (og_choice_cached(core, args->trans_a, args->trans_b, args->m, args->n, args->k, batch, p)) {
        bindings_reach(&core->ctx->limits, args, p);
        return OG_OK;
    }
    og_choice choice;
    og_status st = og_select_int8(core->ctx, !!args->trans_a, !!args->trans_b, args->m, args->n,
                                  args->k, batch, &choice);
    if (st == OG_OK)
        st = og_choice_cache(core, args->trans_a, args->trans_b, args->m, args->n, args->k, batch,
                             &choice.params);
    if (st == OG_OK) {
        *p = choice.params;
        bindings_reach(&core->ctx->limits, args, p);
    }
    return st;
}

static og_status prepare(og_int8gemm *g, const og_int8gemm_args *args, const og_params *p,
                         og_call *c)
{
    og_context *ctx = g->gemm.ctx;
    og_push push;
    og_status st = og_int8gemm_check(&ctx->limits, ctx->error, args, &push);
    if (st == OG_OK)
        st = og_int8gemm_plan(&ctx->limits, ctx->error, ctx->dialect, args, p, &push, &c->plan);
    c->ctx = ctx;
    og_buffer *ops[OG_OPERANDS] = {[OG_OPERAND_A] = args->a,
                                   [OG_OPERAND_B] = args->b,
                                   [OG_OPERAND_C] = args->c,
                                   [OG_OPERAND_BIAS] = args->bias,
                                   [OG_OPERAND_SCALES] = args->col_scales};
    memcpy(c->operands, ops, sizeof ops);
    return st;
}

og_status og_int8gemm_encode_params(og_int8gemm *g, VkCommandBuffer cmd,
                                    const og_int8gemm_args *args, const og_params *p)
{
    og_call c;
    og_status st = prepare(g, args, p, &c);
    return st != OG_OK ? st : og_call_record(&c, cmd);
}

og_status og_int8gemm_run_with(og_int8gemm *g, const og_int8gemm_args *args, const og_params *p)
{
    og_call c;
    og_status st = prepare(g, args, p, &c);
    return st != OG_OK ? st : og_call_run(&c);
}

/* Check, then choose: a bad call names its dimension before any selection. */
static og_status check_and_choose(og_int8gemm *g, const og_int8gemm_args *args, og_params *p)
{
    og_context *ctx = g->gemm.ctx;
    og_push push;
    og_status st = og_int8gemm_check(&ctx->limits, ctx->error, args, &push);
    return st != OG_OK ? st : og_int8gemm_choose(g, args, p);
}

og_status og_int8gemm_encode(og_int8gemm *g, VkCommandBuffer cmd, const og_int8gemm_args *args)
{
    og_params p;
    og_status st = check_and_choose(g, args, &p);
    return st != OG_OK ? st : og_int8gemm_encode_params(g, cmd, args, &p);
}

og_status og_int8gemm_run(og_int8gemm *g, const og_int8gemm_args *args)
{
    og_params p;
    og_call c;
    og_status st = check_and_choose(g, args, &p);
    if (st == OG_OK)
        st = prepare(g, args, &p, &c);
    return st != OG_OK ? st : og_call_run(&c);
}

og_status og_int8gemm_time(og_int8gemm *g, const og_int8gemm_args *args, const og_params *p,
                           const og_timing_plan *plan, og_timing *out)
{
    og_call c;
    *out = (og_timing){0};
    og_status st = prepare(g, args, p, &c);
    return st != OG_OK ? st : og_call_time(&c, plan, out);
}

og_status og_int8gemm_describe(og_int8gemm *g, const og_int8gemm_args *args, char *buf, size_t len)
{
    og_choice c;
    int64_t batch = args->batch == 0 ? 1 : args->batch;
    og_status st = og_select_int8(g->gemm.ctx, !!args->trans_a, !!args->trans_b, args->m, args->n,
                                  args->k, batch, &c);
    if (st != OG_OK)
        return st;
    char params[OG_PARAMS_MAX], reads[96] = "";
    og_params_format(&c.params, params, sizeof params);
    const og_limits *lim = &g->gemm.ctx->limits;
    og_gemm_args shape = og_int8gemm_layout(args);
    const char *past =
        args->a && args->b ? og_operand_past_binding(lim, OG_INT8, OG_INT8, &shape) : NULL;
    if (past && og_int8_params_for_call(lim, args, &c.params).src == OG_SRC_ADDR)
        snprintf(reads, sizeof reads, "; src=addr (%s past maxStorageBufferRange)", past);
    snprintf(buf, len, "%s %s (%s)%s", og_params_template(&c.params), params,
             c.source == OG_SOURCE_DEFAULT ? "default"
             : c.source == OG_SOURCE_DB    ? "db"
                                           : "db, nearest shape",
             reads);
    return OG_OK;
}
