/* Convolution objects and their calls (onegpu.h, "Convolution"): each call
 * is checked, its tile chosen as the GEMM chooses it for the implicit
 * GEMM's shape, planned and recorded; a 1x1, stride 1, unpadded, ungrouped
 * NHWC convolution is handed to the GEMM itself. */
#include <stdio.h>
#include <string.h>

#include "og_internal.h"

struct og_conv {
    og_gemm gemm; /* input type, mode, selection cache and split-k scratch */
};

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
    og_mem_free(&ctx->allocator, cv);
}

/* The implicit GEMM's shape as the GEMM's selection sees it: op(A) the
 * gathered pixels by reduction index, B the weights stored N x K. */
static og_gemm_args selection_view(const og_conv_shape *s)
{
    return (og_gemm_args){
        .trans_b = 1, .m = s->m, .n = s->n, .k = s->k, .batch = s->batch, .alpha = 1.0f};
}

/* A checked call: its shape and push constants; the tile it runs. */
typedef struct conv_call {
    og_conv_shape shape;
    og_push push;
    og_params params;
} conv_call;

static og_status check_and_choose(og_conv *cv, const og_conv_args *args, conv_call *c)
{
    og_context *ctx = cv->gemm.ctx;
    og_status st = og_conv_check(&ctx->limits, ctx->error, og_dtype_bytes(cv->gemm.dtype), args,
                                 &c->shape, &c->push);
    if (st != OG_OK || c->shape.empty || c->shape.gemm)
        return st;
    og_gemm_args view = selection_view(&c->shape);
    og_params p;
    if ((st = og_gemm_choose(&cv->gemm, &view, &p)) != OG_OK)
        return st;
    c->params = og_conv_params(&p);
    return OG_OK;
}

/* Plans a checked call that runs the convolution kernel. */
static og_status prepare(og_conv *cv, const og_conv_args *args, const conv_call *cc, og_call *c)
{
    og_gemm *g = &cv->gemm;
    og_context *ctx = g->ctx;
    og_status st = og_conv_plan(&ctx->limits, ctx->error, g->dtype, args, &cc->shape, &cc->params,
                                &cc->push, g->scratch_bytes, &c->plan);
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

og_status og_conv_encode(og_conv *cv, VkCommandBuffer cmd, const og_conv_args *args)
{
    conv_call cc;
    og_call c;
    og_status st = check_and_choose(cv, args, &cc);
    if (st != OG_OK || cc.shape.empty)
        return st;
    if (cc.shape.gemm) {
        og_gemm_args g = og_conv_as_gemm(args);
        return og_gemm_encode(&cv->gemm, cmd, &g);
    }
    st = prepare(cv, args, &cc, &c);
    return st != OG_OK ? st : og_call_record(&c, cmd);
}

og_status og_conv_run(og_conv *cv, const og_conv_args *args)
{
    conv_call cc;
    og_call c;
    og_status st = check_and_choose(cv, args, &cc);
    if (st != OG_OK || cc.shape.empty)
        return st;
    if (cc.shape.gemm) {
        og_gemm_args g = og_conv_as_gemm(args);
        return og_gemm_run(&cv->gemm, &g);
    }
    st = prepare(cv, args, &cc, &c);
    return st != OG_OK ? st : og_call_run(&c);
}

og_status og_conv_describe(og_conv *cv, const og_conv_args *args, char *buf, size_t len)
{
    conv_call cc;
    og_status st = check_and_choose(cv, args, &cc);
    if (st != OG_OK)
        return st;
    if (cc.shape.empty) {
        snprintf(buf, len, "nothing to compute (no image or no output channel)");
        return OG_OK;
    }
    if (cc.shape.gemm) {
        og_gemm_args g = og_conv_as_gemm(args);
        char gemm[512];
        if ((st = og_gemm_describe(&cv->gemm, &g, gemm, sizeof gemm)) != OG_OK)
            return st;
        snprintf(buf, len, "1x1 convolution as a GEMM %lldx%lldx%lld: %s", (long long)g.m,
                 (long long)g.n, (long long)g.k, gemm);
        return OG_OK;
    }
    og_choice choice;
    og_gemm_args view = selection_view(&cc.shape);
    if ((st = og_gemm_select(&cv->gemm, &view, &choice)) != OG_OK)
        return st;
    uint32_t ranges = 1, range_len = 0;
    og_split_ranges(cc.params.split, cc.shape.m, cc.shape.n, cc.shape.k, cc.shape.batch,
                    cv->gemm.scratch_bytes / 4, &ranges, &range_len);
    char params[OG_PARAMS_MAX], split[64] = "";
    og_params_format(&cc.params, params, sizeof params);
    if (ranges > 1)
        snprintf(split, sizeof split, "; %u k ranges of %u", ranges, range_len);
    snprintf(buf, len,
             "conv %s %s, implicit GEMM %lldx%lldx%lld x %lld products: gemm_tile %s (%s)%s",
             args->layout == OG_CONV_NCHW ? "NCHW" : "NHWC",
             args->weights == OG_CONV_KCRS ? "KCRS" : "KRSC", (long long)cc.shape.m,
             (long long)cc.shape.n, (long long)cc.shape.k, (long long)cc.shape.batch, params,
             choice.params.variant != OG_VARIANT_TILE ? "default: the GEMM's choice is not the tile"
             : choice.source == OG_SOURCE_DEFAULT     ? "default"
             : choice.source == OG_SOURCE_DB          ? "the GEMM's record"
                                                      : "the GEMM's record, nearest shape",
             split);
    return OG_OK;
}
