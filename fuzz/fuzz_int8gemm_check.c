/*
 * Fuzz target: Int8Gemm's argument checks and plan (og_int8gemm_check,
 * og_int8gemm_plan) on random shapes, leading dimensions, offsets, strides,
 * buffer sizes, types, zero points, outputs, devices and kernel parameters,
 * with no device. Properties (og_fuzz_plan.h): a refused call names why
 * (nothing is recorded); an accepted one stays inside every buffer and
 * device limit.
 */
#include <string.h>

#include "og_fuzz_plan.h"

/* The kernel parameters: the tile's or the skinny kernel's defaults, or a
 * parameter string from the rest of the input that og_params_check takes.
 * Returns 0 when there are none to plan with. */
static int read_params(og_fuzz_input *in, const og_limits *lim, og_params *p)
{
    switch (og_fuzz_bits(in, 1) % 3) {
    case 0:
        *p = og_params_int8_tile();
        return 1;
    case 1:
        *p = og_params_int8_skinny();
        return 1;
    default: {
        char text[161], why[256];
        size_t n = in->n < sizeof text - 1 ? in->n : sizeof text - 1;
        memcpy(text, in->p, n);
        text[n] = '\0';
        return og_params_parse(text, p, why, sizeof why) == 0 &&
               og_params_check(p, lim, why, sizeof why) == 0;
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    og_fuzz_input in = {data, size};
    og_limits lim = og_fuzz_limits((unsigned)og_fuzz_bits(&in, 1));
    unsigned conf = (unsigned)og_fuzz_bits(&in, 1);
    og_fuzz_call call = {.a_bytes = 1, .b_bytes = 1};
    og_fuzz_read_call(&in, &call);
    const og_gemm_args *g = &call.g;
    og_int8gemm_args args = {
        .trans_a = g->trans_a,
        .trans_b = g->trans_b,
        .m = g->m,
        .n = g->n,
        .k = g->k,
        .batch = g->batch,
        /* int8 and uint8 mostly; now and then neither */
        .type_a = (og_dtype)(conf % 8 < 6 ? OG_INT8 + conf % 2 : conf % 8),
        .type_b = (og_dtype)((conf >> 3) % 8 < 6 ? OG_INT8 + (conf >> 3) % 2 : (conf >> 3) % 8),
        .zero_a = (int32_t)og_fuzz_value(&in),
        .zero_b = (int32_t)og_fuzz_value(&in),
        .a = g->a,
        .b = g->b,
        .c = g->c,
        .lda = g->lda,
        .ldb = g->ldb,
        .ldc = g->ldc,
        .a_offset = g->a_offset,
        .b_offset = g->b_offset,
        .c_offset = g->c_offset,
        .stride_a = g->stride_a,
        .stride_b = g->stride_b,
        .stride_c = g->stride_c,
        .output = (og_int8_output)((int)(og_fuzz_bits(&in, 1) % 5) - 1),
        .scale_a = og_fuzz_float(&in),
        .scale_b = og_fuzz_float(&in),
        .col_scales = call.col_scales,
        .col_scale_offset = call.col_scale_offset,
        .bias = g->bias,
        .bias_offset = g->bias_offset,
        .activation = (og_activation)((int)(og_fuzz_bits(&in, 1) % 6) - 1)};
    og_dialect dialect = conf >> 6 & 1 ? OG_HLSL : OG_GLSL;
    og_params p;
    if (!read_params(&in, &lim, &p))
        return 0;

    char err[OG_ERROR_MAX] = "";
    og_push push;
    og_plan plan;
    og_status st = og_int8gemm_check(&lim, err, &args, &push);
    if (st == OG_OK)
        st = og_int8gemm_plan(&lim, err, dialect, &args, &p, &push, &plan);
    if (st != OG_OK) {
        og_fuzz_check_refusal(st, err);
        return 0;
    }
    og_fuzz_check_plan(&call, &lim, &plan);
    return 0;
}
