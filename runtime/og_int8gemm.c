/* Int8Gemm objects: kernel choice (skinny, tile or matrix tile) and the op
 * table of their calls (og_op.c: recording, runs, timing; reference
 * design, "8-bit products"). */
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

static og_context *context(const void *obj)
{
    return ((const og_int8gemm *)obj)->gemm.ctx;
}

static og_status check(void *obj, const void *args, og_checked *c)
{
    og_context *ctx = context(obj);
    return og_int8gemm_check(&ctx->limits, ctx->error, args, &c->push);
}

static og_status choose(void *obj, const void *args, const og_checked *c, og_params *p)
{
    (void)c;
    return og_int8gemm_choose(obj, args, p);
}

static og_status plan(void *obj, const void *args_, const og_checked *chk, const og_params *p,
                      og_call *c)
{
    const og_int8gemm_args *args = args_;
    og_context *ctx = context(obj);
    og_status st =
        og_int8gemm_plan(&ctx->limits, ctx->error, ctx->dialect, args, p, &chk->push, &c->plan);
    c->ctx = ctx;
    og_buffer *ops[OG_OPERANDS] = {[OG_OPERAND_A] = args->a,
                                   [OG_OPERAND_B] = args->b,
                                   [OG_OPERAND_C] = args->c,
                                   [OG_OPERAND_BIAS] = args->bias,
                                   [OG_OPERAND_SCALES] = args->col_scales};
    memcpy(c->operands, ops, sizeof ops);
    return st;
}

static og_status describe(void *obj, const void *args, const og_checked *c, char *buf, size_t len);

/* Described unchecked, as the GEMM. */
const og_op og_op_int8gemm = {"int8gemm", context, check, choose, plan, describe, 0};

og_status og_int8gemm_encode_params(og_int8gemm *g, VkCommandBuffer cmd,
                                    const og_int8gemm_args *args, const og_params *p)
{
    return og_op_encode(&og_op_int8gemm, g, cmd, args, p);
}

og_status og_int8gemm_run_with(og_int8gemm *g, const og_int8gemm_args *args, const og_params *p)
{
    return og_op_run(&og_op_int8gemm, g, args, p);
}

og_status og_int8gemm_encode(og_int8gemm *g, VkCommandBuffer cmd, const og_int8gemm_args *args)
{
    return og_op_encode(&og_op_int8gemm, g, cmd, args, NULL);
}

og_status og_int8gemm_run(og_int8gemm *g, const og_int8gemm_args *args)
{
    return og_op_run(&og_op_int8gemm, g, args, NULL);
}

og_status og_int8gemm_time(og_int8gemm *g, const og_int8gemm_args *args, const og_params *p,
                           const og_timing_plan *plan, og_timing *out)
{
    return og_op_time(&og_op_int8gemm, g, args, p, plan, out);
}

og_status og_int8gemm_describe(og_int8gemm *g, const og_int8gemm_args *args, char *buf, size_t len)
{
    return og_op_describe(&og_op_int8gemm, g, args, buf, len);
}

static og_status describe(void *obj, const void *args_, const og_checked *chk, char *buf,
                          size_t len)
{
    og_int8gemm *g = obj;
    const og_int8gemm_args *args = args_;
    og_choice c;
    (void)chk;
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
