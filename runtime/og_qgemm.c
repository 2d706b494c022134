/* Low-bit weight products (og_qgemm_*, onegpu.h): objects, kernel choice,
 * recording, runs and timing. Each call is checked, planned and recorded
 * (og_internal.h) in that order, so a bad call is refused before any
 * command. */
#include <stdio.h>
#include <string.h>

#include "og_internal.h"

/* The object's format as a kernel key's qformat, or 0 with the reason when
 * the format is not one og_qweights_layout_of takes (asked of one 32 x 128
 * matrix, which every group divides). */
static int qformat_key(const og_qweights_format *f, char *why, size_t len)
{
    og_qweights_layout lay;
    if (og_qweights_layout_of(f, 1, 128, &lay, why, len) != 0)
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
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "qgemm: mode %d is not Fast or Deterministic",
                       (int)mode);
    char why[OG_ERROR_MAX];
    int key = format ? qformat_key(format, why, sizeof why) : 0;
    if (!key)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "qgemm: %s",
                       format ? why : "the weight format is NULL");
    og_qgemm *q = og_mem_alloc(&ctx->allocator, sizeof *q);
    if (!q)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "qgemm: out of memory");
    *q = (og_qgemm){.ctx = ctx, .input = input, .mode = mode, .format = *format, .qformat = key};
    *out = q;
    return OG_OK;
}

void og_qgemm_destroy(og_qgemm *q)
{
    if (q)
        og_mem_free(&q->ctx->allocator, q);
}

og_params og_qgemm_choose(const og_qgemm *q, const og_qgemm_args *args)
{
    (void)q;
    return og_params_qdecode(args->m);
}

static og_status prepare(og_qgemm *q, const og_qgemm_args *args, const og_params *p, og_call *c)
{
    og_context *ctx = q->ctx;
    og_push push;
    og_gemm_args shape;
    og_status st =
        og_qgemm_check(&ctx->limits, ctx->error, q->input, &q->format, args, &shape, &push);
    if (st == OG_OK)
        st = og_qgemm_plan(&ctx->limits, ctx->error, q->input, q->qformat, &shape, p, &push,
                           &c->plan);
    c->ctx = ctx;
    og_buffer *ops[OG_OPERANDS] = {[OG_OPERAND_A] = args->a,
                                   [OG_OPERAND_B] = args->w,
                                   [OG_OPERAND_C] = args->c,
                                   [OG_OPERAND_BIAS] = args->bias};
    memcpy(c->operands, ops, sizeof ops);
    return st;
}

og_status og_qgemm_encode_params(og_qgemm *q, VkCommandBuffer cmd, const og_qgemm_args *args,
                                 const og_params *p)
{
    og_call c;
    og_status st = prepare(q, args, p, &c);
    return st != OG_OK ? st : og_call_record(&c, cmd);
}

og_status og_qgemm_encode(og_qgemm *q, VkCommandBuffer cmd, const og_qgemm_args *args)
{
    og_params p = og_qgemm_choose(q, args);
    return og_qgemm_encode_params(q, cmd, args, &p);
}

og_status og_qgemm_run(og_qgemm *q, const og_qgemm_args *args)
{
    og_params p = og_qgemm_choose(q, args);
    og_call c;
    og_status st = prepare(q, args, &p, &c);
    return st != OG_OK ? st : og_call_run(&c);
}

og_status og_qgemm_time(og_qgemm *q, const og_qgemm_args *args, const og_params *p,
                        const og_timing_plan *plan, og_timing *out)
{
    og_call c;
    *out = (og_timing){0};
    og_status st = prepare(q, args, p, &c);
    return st != OG_OK ? st : og_call_time(&c, plan, out);
}

og_status og_qgemm_describe(og_qgemm *q, const og_qgemm_args *args, char *buf, size_t len)
{
    og_params p = og_qgemm_choose(q, args);
    char params[OG_PARAMS_MAX];
    og_params_format(&p, params, sizeof params);
    static const char *const formats[] = {"mxfp4", "nvfp4", "int4", "q8_0"};
    snprintf(buf, len, "%s %s (default) for %s weights", og_params_template(&p), params,
             formats[q->format.format & 3]);
    return OG_OK;
}
