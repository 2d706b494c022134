/* Low-bit weight products (og_qgemm_*, onegpu.h): objects, kernel choice
 * and the op table of their calls. Each call is checked once, its kernel
 * chosen, planned and recorded (og_op.c) in that order, so a bad call is
 * refused before any selection or command. */
#include <stdio.h>
#include <string.h>

#include "og_internal.h"

/* The object's format as a kernel key's qformat, or 0 with the reason when
 * the format is not one og_qweights_layout_of takes (asked of one 32 x 256
 * matrix, which every group divides). */
static int qformat_key(const og_qweights_format *f, char *why, size_t len)
{
    og_qweights_layout lay;
    if (og_qweights_layout_of(f, 1, OG_QK_K, &lay, why, len) != 0)
        return 0;
    return OG_QFORMAT_KEY((int)f->format, (int)f->scale, (int)f->zero);
}

og_status og_qgemm_create(og_context *ctx, og_dtype input, const og_qweights_format *format,
                          og_mode mode, og_qgemm **out)
{
    *out = NULL;
    if (input != OG_F32 && input != OG_F16 && input != OG_BF16)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "qgemm: input type %d is not float32, float16 or bfloat16", (int)input);
    if (mode != OG_MODE_FAST && mode != OG_MODE_DETERMINISTIC)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "qgemm: mode %d is not Fast or Deterministic", (int)mode);
    char why[OG_ERROR_MAX];
    int key = format ? qformat_key(format, why, sizeof why) : 0;
    if (!key)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "qgemm: %s",
                       format ? why : "the weight format is NULL");
    og_qgemm *q = og_mem_alloc(&ctx->allocator, sizeof *q);
    if (!q)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "qgemm: out of memory");
    memset(q, 0, sizeof *q);
    og_gemm_init(ctx, &q->gemm, input, mode);
    q->format = *format;
    q->qformat = key;
    *out = q;
    return OG_OK;
}

void og_qgemm_destroy(og_qgemm *q)
{
    if (!q)
        return;
    og_context *ctx = q->gemm.ctx;
    og_gemm_fini(&q->gemm);
    og_mem_free(&ctx->allocator, q);
}

og_status og_qgemm_choose(og_qgemm *q, const og_qgemm_args *args, og_params *p)
{
    const int64_t batch = args->batch == 0 ? 1 : args->batch;
    og_gemm *g = &q->gemm;
    if (og_choice_cached(g, 0, 1, args->m, args->n, args->k, batch, p))
        return OG_OK;
    og_choice choice;
    og_status st = og_select_qgemm(g->ctx, g->dtype, &q->format, g->mode, args->m, args->n, args->k,
                                   batch, &choice);
    if (st == OG_OK)
        st = og_choice_cache(g, 0, 1, args->m, args->n, args->k, batch, &choice.params);
    if (st == OG_OK)
        *p = choice.params;
    return st;
}

static og_context *context(const void *obj)
{
    return ((const og_qgemm *)obj)->gemm.ctx;
}

static og_status check(void *obj, const void *args, og_checked *c)
{
    og_qgemm *q = obj;
    og_context *ctx = q->gemm.ctx;
    return og_qgemm_check(&ctx->limits, ctx->error, q->gemm.dtype, &q->format, args, &c->shape,
                          &c->push);
}

static og_status choose(void *obj, const void *args, const og_checked *c, og_params *p)
{
    (void)c;
    return og_qgemm_choose(obj, args, p);
}

static og_status plan(void *obj, const void *args_, const og_checked *chk, const og_params *p,
                      og_call *c)
{
    og_qgemm *q = obj;
    const og_qgemm_args *args = args_;
    og_gemm *g = &q->gemm;
    og_context *ctx = g->ctx;
    og_status st = og_qgemm_plan(&ctx->limits, ctx->error, g->dtype, q->qformat, g->mode,
                                 &chk->shape, p, &chk->push, g->scratch_bytes, q->part,
                                 &c->plan);
    /* Split-k's planes and range scaling's exponents, made on first use
     * (zero-filled on the context's copy command buffer, so this may happen
     * while the caller records). */
    if (st == OG_OK && c->plan.scratch_bytes && !g->scratch)
        st = og_buffer_create(ctx, c->plan.scratch_bytes, &g->scratch);
    if (st == OG_OK && c->plan.exponent_bytes && !g->exponents)
        st = og_buffer_create(ctx, c->plan.exponent_bytes, &g->exponents);
    c->ctx = ctx;
    og_buffer *ops[OG_OPERANDS] = {[OG_OPERAND_A] = args->a,
                                   [OG_OPERAND_B] = args->w,
                                   [OG_OPERAND_C] = args->c,
                                   [OG_OPERAND_BIAS] = args->bias,
                                   [OG_OPERAND_SCRATCH] = g->scratch,
                                   [OG_OPERAND_EXPONENTS] = g->exponents};
    memcpy(c->operands, ops, sizeof ops);
    return st;
}

static og_status describe(void *obj, const void *args, const og_checked *c, char *buf, size_t len);

/* Described after its check: the run parameters need the push constants. */
const og_op og_op_qgemm = {"qgemm", context, check, choose, plan, describe, 1};

og_status og_qgemm_encode_params(og_qgemm *q, VkCommandBuffer cmd, const og_qgemm_args *args,
                                 const og_params *p)
{
    return og_op_encode(&og_op_qgemm, q, cmd, args, p);
}

og_status og_qgemm_run_with(og_qgemm *q, const og_qgemm_args *args, const og_params *p)
{
    return og_op_run(&og_op_qgemm, q, args, p);
}

og_status og_qgemm_encode(og_qgemm *q, VkCommandBuffer cmd, const og_qgemm_args *args)
{
    return og_op_encode(&og_op_qgemm, q, cmd, args, NULL);
}

og_status og_qgemm_run(og_qgemm *q, const og_qgemm_args *args)
{
    return og_op_run(&og_op_qgemm, q, args, NULL);
}

og_status og_qgemm_time(og_qgemm *q, const og_qgemm_args *args, const og_params *p,
                        const og_timing_plan *plan, og_timing *out)
{
    return og_op_time(&og_op_qgemm, q, args, p, plan, out);
}

og_status og_qgemm_time_part(og_qgemm *q, const og_qgemm_args *args, const og_params *p, int part,
                             const og_timing_plan *plan, og_timing *out)
{
    q->part = part;
    og_status st = og_op_time(&og_op_qgemm, q, args, p, plan, out);
    q->part = OG_PART_FULL;
    return st;
}

og_status og_qgemm_describe(og_qgemm *q, const og_qgemm_args *args, char *buf, size_t len)
{
    return og_op_describe(&og_op_qgemm, q, args, buf, len);
}

static og_status describe(void *obj, const void *args_, const og_checked *chk, char *buf,
                          size_t len)
{
    const og_qgemm *q = obj;
    const og_qgemm_args *args = args_;
    const og_gemm *g = &q->gemm;
    og_context *ctx = g->ctx;
    og_status st;
    og_choice c;
    const int64_t batch = args->batch == 0 ? 1 : args->batch;
    if ((st = og_select_qgemm(ctx, g->dtype, &q->format, g->mode, args->m, args->n, args->k, batch,
                              &c)) != OG_OK)
        return st;
    og_params run = og_qgemm_run_params(g->dtype, &chk->push, &c.params);
    char params[OG_PARAMS_MAX], op[32], source[160];
    og_params_format(&run, params, sizeof params);
    og_qgemm_op(&q->format, op, sizeof op);
    if (c.source == OG_SOURCE_DEFAULT)
        snprintf(source, sizeof source, "default%s",
                 g->mode == OG_MODE_DETERMINISTIC ? ", Deterministic mode" : "");
    else
        snprintf(source, sizeof source, "db%s %lldx%lldx%lld x %lld",
                 c.source == OG_SOURCE_DB ? ", record of" : ", nearest tuned shape", (long long)c.m,
                 (long long)c.n, (long long)c.k, (long long)c.batch);
    snprintf(buf, len, "%s %s %s (%s)%s", op, og_params_template(&run), params, source,
             run.vec != c.params.vec ? "; word loads: A or W is not on 16 bytes" : "");
    return OG_OK;
}
