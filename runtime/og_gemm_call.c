/* The float GEMM's calls: each is checked, its kernel chosen, planned and
 * recorded (og_internal.h), in that order, so a bad call is refused before
 * any selection, allocation or command. */
#include <stdio.h>
#include <string.h>

#include "og_internal.h"

/* The scratch buffers a plan needs, made on first use (their zero-fill is
 * submitted on the context's copy command buffer, so this may happen while
 * the caller records). */
static og_status ensure(og_context *ctx, og_buffer **buf, uint64_t bytes)
{
    return bytes == 0 || *buf ? OG_OK : og_buffer_create(ctx, bytes, buf);
}

/* Checks and plans a call with parameters p. */
static og_status prepare(og_gemm *g, const og_gemm_args *args, const og_params *p, og_call *c)
{
    og_context *ctx = g->ctx;
    og_gemm_config cfg = og_gemm_config_of(g);
    og_push push;
    og_status st = og_gemm_check(&cfg, &ctx->limits, ctx->error, args, &push);
    if (st == OG_OK)
        st = og_gemm_plan(&cfg, &ctx->limits, ctx->error, args, p, &push, &c->plan);
    if (st == OG_OK)
        st = ensure(ctx, &g->scratch, c->plan.scratch_bytes);
    if (st == OG_OK)
        st = ensure(ctx, &g->exponents, c->plan.exponent_bytes);
    c->ctx = ctx;
    og_buffer *ops[OG_OPERANDS] = {[OG_OPERAND_A] = args->a,
                                   [OG_OPERAND_B] = args->b,
                                   [OG_OPERAND_C] = args->c,
                                   [OG_OPERAND_BIAS] = args->bias,
                                   [OG_OPERAND_SCRATCH] = g->scratch,
                                   [OG_OPERAND_EXPONENTS] = g->exponents};
    memcpy(c->operands, ops, sizeof ops);
    return st;
}

og_status og_gemm_encode_params(og_gemm *g, VkCommandBuffer cmd, const og_gemm_args *args,
                                const og_params *p)
{
    og_call c;
    og_status st = prepare(g, args, p, &c);
    return st != OG_OK ? st : og_call_record(&c, cmd);
}

og_status og_gemm_run_with(og_gemm *g, const og_gemm_args *args, const og_params *p)
{
    og_call c;
    og_status st = prepare(g, args, p, &c);
    return st != OG_OK ? st : og_call_run(&c);
}

/* Check, then choose: a bad call names its dimension before any selection. */
static og_status check_and_choose(og_gemm *g, const og_gemm_args *args, og_params *p)
{
    og_gemm_config cfg = og_gemm_config_of(g);
    og_push push;
    og_status st = og_gemm_check(&cfg, &g->ctx->limits, g->ctx->error, args, &push);
    return st != OG_OK ? st : og_gemm_choose(g, args, p);
}

og_status og_gemm_encode(og_gemm *g, VkCommandBuffer cmd, const og_gemm_args *args)
{
    og_params p;
    og_status st = check_and_choose(g, args, &p);
    return st != OG_OK ? st : og_gemm_encode_params(g, cmd, args, &p);
}

og_status og_gemm_run(og_gemm *g, const og_gemm_args *args)
{
    og_params p;
    og_call c;
    og_status st = check_and_choose(g, args, &p);
    if (st == OG_OK)
        st = prepare(g, args, &p, &c);
    return st != OG_OK ? st : og_call_run(&c);
}

og_status og_gemm_time(og_gemm *g, const og_gemm_args *args, const og_params *p,
                       const og_timing_plan *plan, og_timing *out)
{
    og_call c;
    *out = (og_timing){0};
    og_status st = prepare(g, args, p, &c);
    return st != OG_OK ? st : og_call_time(&c, plan, out);
}

/* An elementwise call: checked and planned, bound to C and the bias. */
static og_status prepare_elementwise(og_gemm *g, og_elementwise op, const og_gemm_args *args,
                                     og_call *c)
{
    og_context *ctx = g->ctx;
    og_push push;
    og_status st = og_elementwise_check(&ctx->limits, ctx->error, args, &push);
    if (st == OG_OK)
        st = og_elementwise_plan(&ctx->limits, ctx->error, ctx->dialect, op, args, &push,
                                 &c->plan);
    c->ctx = ctx;
    og_buffer *ops[OG_OPERANDS] = {[OG_OPERAND_C] = args->c, [OG_OPERAND_BIAS] = args->bias};
    memcpy(c->operands, ops, sizeof ops);
    return st;
}

og_status og_gemm_encode_elementwise(og_gemm *g, VkCommandBuffer cmd, og_elementwise op,
                                     const og_gemm_args *args)
{
    og_call c;
    og_status st = prepare_elementwise(g, op, args, &c);
    return st != OG_OK ? st : og_call_record(&c, cmd);
}

og_status og_gemm_run_elementwise(og_gemm *g, og_elementwise op, const og_gemm_args *args)
{
    og_call c;
    og_status st = prepare_elementwise(g, op, args, &c);
    return st != OG_OK ? st : og_call_run(&c);
}

og_status og_gemm_describe(og_gemm *g, const og_gemm_args *args, char *buf, size_t len)
{
    og_choice c;
    int64_t batch = args->batch == 0 ? 1 : args->batch;
    if (!og_gemm_has_product(args)) {
        snprintf(buf, len, "elementwise scale: C = act(beta * C + bias), A and B not read (%s is 0)",
                 args->k == 0 ? "K" : "alpha");
        return OG_OK;
    }
    og_status st = og_gemm_select(g, args, &c);
    if (st != OG_OK)
        return st;
    char params[OG_PARAMS_MAX], split[64] = "", inputs[96] = "", reads[96] = "";
    og_params_format(&c.params, params, sizeof params);
    uint32_t ranges = 1, range_len = 0;
    if (og_family_can(&c.params, OG_FAMILY_SPLIT))
        og_split_ranges(c.params.split, args->m, args->n, args->k, batch, g->scratch_bytes / 4,
                        &ranges, &range_len);
    og_gemm_config cfg = og_gemm_config_of(g);
    const og_limits *lim = &g->ctx->limits;
    const char *past = args->a && args->b ? og_operand_past_binding(lim, cfg.a_type, cfg.b_type, args)
                                          : NULL;
    if (past && og_params_for_call(&cfg, lim, args, &c.params, range_len).src == OG_SRC_ADDR)
        snprintf(reads, sizeof reads, "; src=addr (%s past maxStorageBufferRange)", past);
    if (ranges > 1)
        snprintf(split, sizeof split, "; %u k ranges of %u", ranges, range_len);
    if (g->recover)
        snprintf(inputs, sizeof inputs, "; float32 recovered from float16, s=%d%s", g->recover,
                 g->scaled ? ", rows and columns scaled" : "");
    else if (g->dtype != g->b_type || og_dtype_is_fp8(g->dtype))
        snprintf(inputs, sizeof inputs, "; A %s, B %s", og_dtype_name(g->dtype),
                 og_dtype_name(g->b_type));
    snprintf(buf, len, "%s %s (%s)%s%s%s", og_params_template(&c.params), params,
             c.source == OG_SOURCE_DEFAULT ? "default"
             : c.source == OG_SOURCE_DB    ? "db"
                                           : "db, nearest shape",
             split, inputs, reads);
    return OG_OK;
}
