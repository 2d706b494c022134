/* GEMM objects: creation, the selection cache and kernel choice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_internal.h"

void og_gemm_init(og_context *ctx, og_gemm *g, og_dtype input, og_mode mode)
{
    g->ctx = ctx;
    g->dtype = input;
    g->b_type = input;
    g->mode = mode;
    g->scratch_bytes = OG_SCRATCH_BYTES;
}

void og_gemm_fini(og_gemm *g)
{
    og_buffer_destroy(g->scratch);
    og_buffer_destroy(g->exponents);
    og_mem_free(&g->ctx->allocator, g->choices);
}

og_gemm_config og_gemm_config_of(const og_gemm *g)
{
    return (og_gemm_config){.a_type = g->dtype,
                            .b_type = g->b_type,
                            .mode = g->mode,
                            .recover = g->recover,
                            .scaled = g->scaled,
                            .dialect = g->ctx->dialect,
                            .scratch_bytes = g->scratch_bytes};
}

/* The float GEMM's type pairs (og_gemm_desc): equal float types, or FP8
 * beside FP8 or float32. */
static int float_pair(og_dtype a, og_dtype b)
{
    int known_a = a == OG_F32 || a == OG_F16 || a == OG_BF16 || og_dtype_is_fp8(a);
    int known_b = b == OG_F32 || b == OG_F16 || b == OG_BF16 || og_dtype_is_fp8(b);
    if (!known_a || !known_b)
        return 0;
    if (og_dtype_is_fp8(a) || og_dtype_is_fp8(b))
        return (a == OG_F32 || og_dtype_is_fp8(a)) && (b == OG_F32 || og_dtype_is_fp8(b));
    return a == b;
}

og_status og_gemm_create_desc(og_context *ctx, const og_gemm_desc *desc, og_gemm **out)
{
    *out = NULL;
    og_gemm_desc d = desc ? *desc : (og_gemm_desc){0};
    if (!float_pair(d.a_type, d.b_type))
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "gemm: input types A %d and B %d are not a float pair (float32, float16 or "
                       "bfloat16 on both, or FP8 with FP8 or float32; 8-bit integers take "
                       "og_int8gemm_create)",
                       (int)d.a_type, (int)d.b_type);
    if (d.mode != OG_MODE_FAST && d.mode != OG_MODE_DETERMINISTIC)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "gemm: mode %d is not Fast or Deterministic",
                       (int)d.mode);
    if (d.precision != OG_PRECISION_NATIVE && d.precision != OG_PRECISION_RECOVERED)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "gemm: precision %d is not native or recovered", (int)d.precision);
    int recovered = d.precision == OG_PRECISION_RECOVERED;
    if (recovered && (d.a_type != OG_F32 || d.b_type != OG_F32))
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "gemm: recovered precision takes float32 A and B (A %s, B %s)",
                       og_dtype_name(d.a_type), og_dtype_name(d.b_type));
    int shift = d.residual_shift == 0 ? OG_RECOVER_SHIFT : d.residual_shift;
    if (recovered && (shift < 1 || shift > OG_RECOVER_SHIFT_MAX))
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT, "gemm: residual shift %d is outside 1..%d",
                       d.residual_shift, OG_RECOVER_SHIFT_MAX);
    og_gemm *g = og_mem_alloc(&ctx->allocator, sizeof *g);
    if (!g)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "gemm: out of memory");
    og_gemm_init(ctx, g, d.a_type, d.mode);
    g->b_type = d.b_type;
    g->recover = recovered ? shift : 0;
    if (recovered)
        g->recovered = og_params_recovered(&ctx->limits, ctx->dialect, d.mode);
    g->scaled = recovered && d.range_scaling;
    *out = g;
    return OG_OK;
}

og_status og_gemm_create(og_context *ctx, og_dtype input, og_mode mode, og_gemm **out)
{
    *out = NULL;
    if (input != OG_F32 && input != OG_F16 && input != OG_BF16)
        return og_fail(ctx, OG_ERROR_INVALID_ARGUMENT,
                       "gemm: input type %d is not float32, float16 or bfloat16 (FP8 inputs take "
                       "og_gemm_create_desc, 8-bit integers og_int8gemm_create)",
                       (int)input);
    og_gemm_desc d = {.a_type = input, .b_type = input, .mode = mode};
    return og_gemm_create_desc(ctx, &d, out);
}

void og_gemm_destroy(og_gemm *g)
{
    if (!g)
        return;
    og_context *ctx = g->ctx;
    og_gemm_fini(g);
    og_mem_free(&ctx->allocator, g);
}

int og_choice_cached(const og_gemm *g, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                     int64_t batch, og_params *p)
{
    for (size_t i = 0; i < g->n_choices; i++) {
        const og_shape_choice *c = &g->choices[i];
        if (c->trans_a == !!trans_a && c->trans_b == !!trans_b && c->m == m && c->n == n &&
            c->k == k && c->batch == batch) {
            *p = c->params;
            return 1;
        }
    }
    return 0;
}

og_status og_choice_cache(og_gemm *g, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                          int64_t batch, const og_params *p)
{
    if (g->n_choices == g->cap_choices) {
        size_t cap = g->cap_choices ? 2 * g->cap_choices : 8;
        og_shape_choice *grown =
            og_mem_realloc(&g->ctx->allocator, g->choices, cap * sizeof *grown);
        if (!grown)
            return og_fail(g->ctx, OG_ERROR_OUT_OF_MEMORY, "gemm: out of memory");
        g->choices = grown;
        g->cap_choices = cap;
    }
    g->choices[g->n_choices++] = (og_shape_choice){!!trans_a, !!trans_b, m, n, k, batch, *p};
    return OG_OK;
}

og_dtype og_gemm_select_type(const og_gemm *g)
{
    return og_dtype_is_fp8(g->dtype) || og_dtype_is_fp8(g->b_type) ? OG_F32 : g->dtype;
}

og_status og_gemm_select(og_gemm *g, const og_gemm_args *args, og_choice *c)
{
    int64_t batch = args->batch == 0 ? 1 : args->batch;
    if (g->recover && (g->scaled || g->recover != OG_RECOVER_SHIFT)) {
        memset(c, 0, sizeof *c);
        c->params = g->recovered;
        c->source = OG_SOURCE_DEFAULT;
        return OG_OK;
    }
    if (g->recover)
        return og_select_recovered(g->ctx, g->mode, !!args->trans_a, !!args->trans_b, args->m,
                                   args->n, args->k, batch, c);
    return og_select(g->ctx, og_gemm_select_type(g), g->mode, !!args->trans_a, !!args->trans_b,
                     args->m, args->n, args->k, batch, c);
}

int og_gemm_bindings_reach(og_gemm *g, const og_gemm_args *args, og_params *p)
{
    const og_family *f = og_family_of(p);
    og_gemm_config cfg = og_gemm_config_of(g);
    if (!f->takes || (f->can & OG_FAMILY_ADDRESS) || !args->a || !args->b ||
        !og_operand_past_binding(&g->ctx->limits, cfg.a_type, cfg.b_type, args))
        return 0;
    *p = og_params_default();
    return 1;
}

og_status og_gemm_choose(og_gemm *g, const og_gemm_args *args, og_params *p)
{
    int64_t batch = args->batch == 0 ? 1 : args->batch;
    if (og_choice_cached(g, args->trans_a, args->trans_b, args->m, args->n, args->k, batch, p)) {
        og_gemm_bindings_reach(g, args, p);
        return OG_OK;
    }
    og_choice choice;
    og_status st = og_gemm_select(g, args, &choice);
    if (st == OG_OK)
        st = og_choice_cache(g, args->trans_a, args->trans_b, args->m, args->n, args->k, batch,
                             &choice.params);
    if (st == OG_OK) {
        *p = choice.params;
        og_gemm_bindings_reach(g, args, p);
    }
    return st;
}
