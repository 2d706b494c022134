/* The float GEMM's calls: each is checked once, its kernel chosen,
 * planned and recorded, in that order (og_op.c's path, through og_op_gemm
 * and og_op_elementwise), so a bad call is refused before any selection,
 * allocation or command. */
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

static og_context *context(const void *obj)
{
    return ((const og_gemm *)obj)->ctx;
}

static og_status check(void *obj, const void *args, og_checked *c)
{
    og_gemm *g = obj;
    og_gemm_config cfg = og_gemm_config_of(g);
    return og_gemm_check(&cfg, &g->ctx->limits, g->ctx->error, args, &c->push);
}

static og_status choose(void *obj, const void *args, const og_checked *c, og_params *p)
{
    (void)c;
    return og_gemm_choose(obj, args, p);
}

/* Plans a checked call with parameters p. */
static og_status plan(void *obj, const void *args_, const og_checked *chk, const og_params *p,
                      og_call *c)
{
    og_gemm *g = obj;
    const og_gemm_args *args = args_;
    og_context *ctx = g->ctx;
    og_gemm_config cfg = og_gemm_config_of(g);
    og_status st = og_gemm_plan(&cfg, &ctx->limits, ctx->error, args, p, &chk->push, &c->plan);
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

static og_status describe(void *obj, const void *args, const og_checked *c, char *buf, size_t len);

/* Described unchecked: og_gemm_describe names the kernel of any shape. */
const og_op og_op_gemm = {"gemm", context, check, choose, plan, describe, 0};

og_status og_gemm_encode_params(og_gemm *g, VkCommandBuffer cmd, const og_gemm_args *args,
                                const og_params *p)
{
    return og_op_encode(&og_op_gemm, g, cmd, args, p);
}

og_status og_gemm_run_with(og_gemm *g, const og_gemm_args *args, const og_params *p)
{
    return og_op_run(&og_op_gemm, g, args, p);
}

og_status og_gemm_encode(og_gemm *g, VkCommandBuffer cmd, const og_gemm_args *args)
{
    return og_op_encode(&og_op_gemm, g, cmd, args, NULL);
}

og_status og_gemm_run(og_gemm *g, const og_gemm_args *args)
{
    return og_op_run(&og_op_gemm, g, args, NULL);
}

og_status og_gemm_time(og_gemm *g, const og_gemm_args *args, const og_params *p,
                       const og_timing_plan *plan, og_timing *out)
{
    return og_op_time(&og_op_gemm, g, args, p, plan, out);
}

/* An elementwise call (og_elementwise_call): checked, planned, bound to C
 * and the bias. */
static og_context *elementwise_context(const void *obj)
{
    return ((const og_elementwise_call *)obj)->g->ctx;
}

static og_status elementwise_check(void *obj, const void *args, og_checked *c)
{
    og_context *ctx = elementwise_context(obj);
    return og_elementwise_check(&ctx->limits, ctx->error, args, &c->push);
}

static og_status elementwise_plan(void *obj, const void *args_, const og_checked *chk,
                                  const og_params *p, og_call *c)
{
    const og_elementwise_call *e = obj;
    const og_gemm_args *args = args_;
    og_context *ctx = e->g->ctx;
    (void)p;
    og_status st = og_elementwise_plan(&ctx->limits, ctx->error, ctx->dialect, e->op, args,
                                       &chk->push, &c->plan);
    c->ctx = ctx;
    og_buffer *ops[OG_OPERANDS] = {[OG_OPERAND_C] = args->c, [OG_OPERAND_BIAS] = args->bias};
    memcpy(c->operands, ops, sizeof ops);
    return st;
}

const og_op og_op_elementwise = {
    "gemm", elementwise_context, elementwise_check, NULL, elementwise_plan, NULL, 0};

og_status og_gemm_encode_elementwise(og_gemm *g, VkCommandBuffer cmd, og_elementwise op,
                                     const og_gemm_args *args)
{
    og_elementwise_call e = {g, op};
    return og_op_encode(&og_op_elementwise, &e, cmd, args, NULL);
}

og_status og_gemm_run_elementwise(og_gemm *g, og_elementwise op, const og_gemm_args *args)
{
    og_elementwise_call e = {g, op};
    return og_op_run(&og_op_elementwise, &e, args, NULL);
}

og_status og_gemm_describe(og_gemm *g, const og_gemm_args *args, char *buf, size_t len)
{
    return og_op_describe(&og_op_gemm, g, args, buf, len);
}

static og_status describe(void *obj, const void *args_, const og_checked *chk, char *buf,
                          size_t len)
{
    og_gemm *g = obj;
    const og_gemm_args *args = args_;
    og_choice c;
    (void)chk;
    int64_t batch = args->batch == 0 ? 1 : args->batch;
    if (!og_gemm_has_product(args)) {
        snprintf(buf, len, "elementwise scale: C = act(beta * C + bias), A and B not read (%s is 0)",
                 args->k == 0 ? "K" : "alpha");
        return OG_OK;
    }
    og_status st = og_gemm_select(g, args, &c);
    if (st != OG_OK)
        return st;
    /* What the call runs: the decode kernel gives way where it cannot reach. */
    const char *given_way = "";
    if (og_gemm_bindings_reach(g, args, &c.params)) {
        c.source = OG_SOURCE_DEFAULT;
        given_way = "; the decode kernel cannot reach an operand past maxStorageBufferRange";
    }
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
    snprintf(buf, len, "%s %s (%s)%s%s%s%s", og_params_template(&c.params), params,
             c.source == OG_SOURCE_DEFAULT ? "default"
             : c.source == OG_SOURCE_DB    ? "db"
                                           : "db, nearest shape",
             split, inputs, reads, given_way);
    return OG_OK;
}
