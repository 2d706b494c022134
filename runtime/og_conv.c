/* Convolution objects and their calls (onegpu.h, "Convolution"): each call
 * is checked, its tile chosen (og_select_conv: the convolution's records,
 * else the GEMM's choice for the implicit GEMM), planned and recorded; a
 * 1x1, stride 1, unpadded, ungrouped NHWC convolution is handed to the
 * GEMM itself. */
#include <stdio.h>
#include <string.h>

#include "og_internal.h"

og_status og_conv_create(og_context *ctx, og_dtype input, og_mode mode, og_conv **out)
{
    *out = NULL;
    if (input != OG_F32 && input != OG_F16 && input != OG_BF16)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "conv: input type %d is not float32, float16 or bfloat16", (int)input);
    if (mode != OG_MODE_FAST && mode != OG_MODE_DETERMINISTIC)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "conv: mode %d is not Fast or Deterministic",
                       (int)mode);
    og_conv *cv = og_mem_alloc(&ctx->allocator, sizeof *cv);
    if (!cv)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "conv: out of memory");
    memset(cv, 0, sizeof *cv);
    og_gemm_init(ctx, &cv->gemm, input, mode);
    *out = cv;
    return OG_OK;
}

void og_conv_destroy(og_conv *cv)
{
    if (!cv)
        return;
    og_context *ctx = cv->gemm.ctx;
    og_gemm_fini(&cv->gemm);
    og_mem_free(&ctx->allocator, cv->choices);
    og_mem_free(&ctx->allocator, cv);
}

/* The cache entry of a call's geometry (its record key and shape). */
static og_conv_choice choice_key(const og_conv_args *args, const og_conv_shape *s)
{
    og_conv_choice c;
    memset(&c, 0, sizeof c);
    og_conv_op(args, c.op, sizeof c.op);
    c.layout = args->layout;
    c.weights = args->weights;
    c.m = s->m;
    c.n = s->n;
    c.k = s->k;
    c.batch = s->batch;
    return c;
}

og_status og_conv_choose(og_conv *cv, const og_conv_args *args, const og_conv_shape *s,
                         og_params *p)
{
    og_conv_choice key = choice_key(args, s);
    for (size_t i = 0; i < cv->n_choices; i++) {
        og_conv_choice c = cv->choices[i];
        memset(&c.params, 0, sizeof c.params);
        if (memcmp(&c, &key, sizeof c) == 0) {
            *p = cv->choices[i].params;
            return OG_OK;
        }
    }
    og_context *ctx = cv->gemm.ctx;
    og_choice choice;
    og_status st = og_select_conv(ctx, cv->gemm.dtype, cv->gemm.mode, args, s, &choice);
    if (st != OG_OK)
        return st;
    if (cv->n_choices == cv->cap_choices) {
        size_t cap = cv->cap_choices ? 2 * cv->cap_choices : 8;
        og_conv_choice *grown = og_mem_realloc(&ctx->allocator, cv->choices, cap * sizeof *grown);
        if (!grown)
            return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "conv: out of memory");
        cv->choices = grown;
        cv->cap_choices = cap;
    }
    key.params = og_conv_params(&choice.params);
    cv->choices[cv->n_choices++] = key;
    *p = key.params;
    return OG_OK;
}

static og_context *context(const void *obj)
{
    return ((const og_conv *)obj)->gemm.ctx;
}

static og_status check(void *obj, const void *args, og_checked *c)
{
    og_conv *cv = obj;
    og_context *ctx = cv->gemm.ctx;
    og_status st = og_conv_check(&ctx->limits, ctx->error, og_dtype_bytes(cv->gemm.dtype), args,
                                 &c->conv, &c->push);
    c->empty = st == OG_OK && c->conv.empty;
    return st;
}

static og_status choose(void *obj, const void *args, const og_checked *c, og_params *p)
{
    return og_conv_choose(obj, args, &c->conv, p);
}

/* Plans a checked call that runs the convolution kernel with tile p. */
static og_status plan(void *obj, const void *args_, const og_checked *chk, const og_params *p,
                      og_call *c)
{
    og_conv *cv = obj;
    const og_conv_args *args = args_;
    og_gemm *g = &cv->gemm;
    og_context *ctx = g->ctx;
    og_status st = og_conv_plan(&ctx->limits, ctx->error, g->dtype, g->mode, args, &chk->conv, p,
                                &chk->push, g->scratch_bytes, &c->plan);
    if (st == OG_OK && c->plan.scratch_bytes && !g->scratch)
        st = og_buffer_create(ctx, c->plan.scratch_bytes, &g->scratch);
    c->ctx = ctx;
    og_buffer *ops[OG_OPERANDS] = {[OG_OPERAND_A] = args->x,
                                   [OG_OPERAND_B] = args->wt,
                                   [OG_OPERAND_C] = args->y,
                                   [OG_OPERAND_BIAS] = args->bias,
                                   [OG_OPERAND_SCRATCH] = g->scratch};
    memcpy(c->operands, ops, sizeof ops);
    return st;
}

static og_status describe(void *obj, const void *args, const og_checked *c, char *buf, size_t len);

/* The convolution kernel's table; a 1x1 call that is a GEMM goes to
 * og_op_gemm instead (call below). */
const og_op og_op_conv = {"conv", context, check, choose, plan, describe, 1};

og_status og_conv_encode_params(og_conv *cv, VkCommandBuffer cmd, const og_conv_args *args,
                                const og_params *p)
{
    og_params q = og_conv_params(p);
    return og_op_encode(&og_op_conv, cv, cmd, args, &q);
}

og_status og_conv_run_with(og_conv *cv, const og_conv_args *args, const og_params *p)
{
    og_params q = og_conv_params(p);
    return og_op_run(&og_op_conv, cv, args, &q);
}

og_status og_conv_time(og_conv *cv, const og_conv_args *args, const og_params *p,
                       const og_timing_plan *plan, og_timing *out)
{
    og_params q = og_conv_params(p);
    return og_op_time(&og_op_conv, cv, args, &q, plan, out);
}

/* Plans the explicit im2col matrix of a checked call into out. */
static og_status im2col_prepare(og_conv *cv, const og_conv_args *args, og_buffer *out, og_call *c)
{
    og_checked cc;
    og_context *ctx = cv->gemm.ctx;
    og_status st = og_op_check(&og_op_conv, cv, args, &cc);
    if (st != OG_OK)
        return st;
    if (cc.empty)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "conv im2col: nothing to gather");
    uint64_t bytes = og_conv_im2col_bytes(&cc.conv);
    if (!out || og_buffer_size(out) < bytes)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "conv im2col: the matrix takes %llu bytes, the buffer holds %llu",
                       (unsigned long long)bytes,
                       (unsigned long long)(out ? og_buffer_size(out) : 0));
    st = og_conv_im2col_plan(&ctx->limits, ctx->error, cv->gemm.dtype, args, &cc.conv, &cc.push,
                             out, &c->plan);
    c->ctx = ctx;
    og_buffer *ops[OG_OPERANDS] = {[OG_OPERAND_A] = args->x, [OG_OPERAND_C] = out};
    memcpy(c->operands, ops, sizeof ops);
    return st;
}

og_status og_conv_im2col_run(og_conv *cv, const og_conv_args *args, og_buffer *out)
{
    og_call c;
    og_status st = im2col_prepare(cv, args, out, &c);
    return st != OG_OK ? st : og_call_run(&c);
}

og_status og_conv_im2col_time(og_conv *cv, const og_conv_args *args, og_buffer *out,
                              const og_timing_plan *plan, og_timing *t)
{
    og_call c;
    *t = (og_timing){0};
    og_status st = im2col_prepare(cv, args, out, &c);
    return st != OG_OK ? st : og_call_time(&c, plan, t);
}

/* Checks a call once, then records or runs it: the convolution kernel, or
 * for a 1x1 call that is a GEMM the GEMM itself, planned on what
 * og_conv_check covered (its push constants computed, not checked again). */
static og_status call(og_conv *cv, og_op_way way, VkCommandBuffer cmd, const og_conv_args *args)
{
    og_checked c;
    og_status st = og_op_check(&og_op_conv, cv, args, &c);
    if (st != OG_OK || c.empty)
        return st;
    if (!c.conv.gemm)
        return og_op_call(&og_op_conv, cv, way, cmd, args, &c, NULL);
    og_gemm_args g = og_conv_as_gemm(args);
    og_checked gc;
    memset(&gc, 0, sizeof gc);
    uint64_t bytes = og_dtype_bytes(cv->gemm.dtype);
    og_product_push(&cv->gemm.ctx->limits, bytes, bytes, &g, &gc.push);
    return og_op_call(&og_op_gemm, &cv->gemm, way, cmd, &g, &gc, NULL);
}

og_status og_conv_encode(og_conv *cv, VkCommandBuffer cmd, const og_conv_args *args)
{
    if (!cmd)
        return og_fail(cv->gemm.ctx, OG_ERROR_INVALID_ARGUMENT, "conv: the command buffer is NULL");
    return call(cv, OG_OP_ENCODE, cmd, args);
}

og_status og_conv_run(og_conv *cv, const og_conv_args *args)
{
    return call(cv, OG_OP_RUN, VK_NULL_HANDLE, args);
}

og_status og_conv_describe(og_conv *cv, const og_conv_args *args, char *buf, size_t len)
{
    return og_op_describe(&og_op_conv, cv, args, buf, len);
}

static og_status describe(void *obj, const void *args_, const og_checked *cc, char *buf, size_t len)
{
    og_conv *cv = obj;
    const og_conv_args *args = args_;
    og_status st;
    if (cc->empty) {
        snprintf(buf, len, "nothing to compute (no image or no output channel)");
        return OG_OK;
    }
    if (cc->conv.gemm) {
        og_gemm_args g = og_conv_as_gemm(args);
        char gemm[512];
        if ((st = og_gemm_describe(&cv->gemm, &g, gemm, sizeof gemm)) != OG_OK)
            return st;
        snprintf(buf, len, "1x1 convolution as a GEMM %lldx%lldx%lld: %s", (long long)g.m,
                 (long long)g.n, (long long)g.k, gemm);
        return OG_OK;
    }
    og_choice choice;
    const og_conv_shape *s = &cc->conv;
    if ((st = og_select_conv(cv->gemm.ctx, cv->gemm.dtype, cv->gemm.mode, args, s, &choice)) !=
        OG_OK)
        return st;
    /* The tile as this call runs it: its loads and split-k ranges. */
    og_context *ctx = cv->gemm.ctx;
    og_plan plan;
    if ((st = og_conv_plan(&ctx->limits, ctx->error, cv->gemm.dtype, cv->gemm.mode, args, s,
                           &choice.params, &cc->push, cv->gemm.scratch_bytes, &plan)) != OG_OK)
        return st;
    og_params p = plan.key.p;
    p.split = og_conv_params(&choice.params).split;
    char params[OG_PARAMS_MAX], split[64] = "", op[32];
    og_params_format(&p, params, sizeof params);
    og_conv_op(args, op, sizeof op);
    if (plan.ranges > 1)
        snprintf(split, sizeof split, "; %u k ranges of %u", plan.ranges, plan.range_len);
    /* A record of the convolution's op, or the GEMM's for the implicit GEMM. */
    char source[96];
    if (choice.source == OG_SOURCE_DEFAULT)
        snprintf(source, sizeof source, "default");
    else
        snprintf(source, sizeof source, "db%s, %s record",
                 choice.source == OG_SOURCE_DB ? "" : ", nearest shape",
                 strncmp(choice.op, OG_OP_CONV_PREFIX, strlen(OG_OP_CONV_PREFIX)) == 0
                     ? "convolution"
                     : "the GEMM's");
    snprintf(buf, len, "conv %s %s %s, implicit GEMM %lldx%lldx%lld x %lld: %s %s (%s)%s",
             args->layout == OG_CONV_NCHW ? "NCHW" : "NHWC",
             args->weights == OG_CONV_KCRS ? "KCRS" : "KRSC", op, (long long)s->m, (long long)s->n,
             (long long)s->k, (long long)s->batch, og_params_template(&p), params, source, split);
    return OG_OK;
}
