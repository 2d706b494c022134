/*
 * Fuzz target: the float GEMM's argument checks and plan (og_gemm_check,
 * og_gemm_plan; og_elementwise_check and og_elementwise_plan for the bias
 * and activation kernels) on random shapes, leading dimensions, offsets,
 * strides, buffer sizes, types, modes, devices and kernel parameters, with
 * no device: the plan layer is plain data. Properties (og_fuzz_plan.h): a
 * refused call names why (nothing is recorded); an accepted one stays
 * inside every buffer and device limit.
 */
#include <string.h>

#include "og_fuzz_plan.h"

/* The type pairs og_gemm_create_desc takes, and one it refuses (F16 x F32). */
static const og_dtype pairs[][2] = {
    {OG_F32, OG_F32},           {OG_F16, OG_F16},      {OG_BF16, OG_BF16},
    {OG_FP8_E4M3, OG_F32},      {OG_F32, OG_FP8_E5M2}, {OG_FP8_E4M3, OG_FP8_E5M2},
    {OG_FP8_E5M2, OG_FP8_E5M2}, {OG_F16, OG_F32},
};

static uint64_t element_bytes(og_dtype t)
{
    return t == OG_F32 ? 4 : t == OG_F16 || t == OG_BF16 ? 2 : 1;
}

/* The kernel parameters: a default the runtime picks, or a parameter string
 * from the rest of the input that og_params_check takes (what a tuning
 * record may hold). Returns 0 when there are none to plan with. */
static int read_params(og_fuzz_input *in, const og_gemm_config *cfg, const og_limits *lim,
                       const og_gemm_args *g, og_params *p)
{
    switch (og_fuzz_bits(in, 1) % 6) {
    case 0:
        *p = og_params_default();
        return 1;
    case 1:
        *p = og_params_fewrows(g->trans_b, g->n);
        return 1;
    case 2:
    case 3:
        *p = og_params_coopmat(og_fuzz_bits(in, 1) & 1 ? 8 : 4);
        return 1;
    case 4:
        *p = og_params_recovered(lim, cfg->dialect, cfg->mode);
        return 1;
    default: {
        char text[161], why[256];
        size_t n = in->n < sizeof text - 1 ? in->n : sizeof text - 1;
        memcpy(text, in->p, n);
        text[n] = '\0';
        if (og_params_parse(text, p, why, sizeof why) != 0 ||
            og_params_check(p, lim, why, sizeof why) != 0)
            return 0;
        /* The float GEMM's families. */
        return !og_family_can(p, OG_FAMILY_INT8) && !og_family_can(p, OG_FAMILY_WEIGHTS);
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    og_fuzz_input in = {data, size};
    og_limits lim = og_fuzz_limits((unsigned)og_fuzz_bits(&in, 1));
    unsigned conf = (unsigned)og_fuzz_bits(&in, 1);
    const og_dtype *pair = pairs[conf % 8];
    og_gemm_config cfg = {.a_type = pair[0],
                          .b_type = pair[1],
                          .mode = (conf >> 3) & 1 ? OG_MODE_DETERMINISTIC : OG_MODE_FAST,
                          .dialect = (conf >> 4) & 1 ? OG_HLSL : OG_GLSL,
                          /* Tests lower the scratch; so does the fuzzer. */
                          .scratch_bytes = (conf >> 5) & 1 ? 4096 : OG_SCRATCH_BYTES};
    if (pair[0] == OG_F32 && pair[1] == OG_F32 && (conf >> 6) & 1) {
        cfg.recover = OG_RECOVER_SHIFT; /* recovered float32 */
        cfg.scaled = conf >> 7;
    }
    unsigned op = (unsigned)og_fuzz_bits(&in, 1) % 4; /* 0, 1: GEMM; 2: bias; 3: activation */

    og_fuzz_call call = {.a_bytes = element_bytes(cfg.a_type),
                         .b_bytes = element_bytes(cfg.b_type)};
    og_fuzz_read_call(&in, &call);
    og_gemm_args *g = &call.g;
    g->alpha = og_fuzz_float(&in);
    g->beta = og_fuzz_float(&in);
    g->scale_a = og_fuzz_float(&in);
    g->scale_b = og_fuzz_float(&in);
    g->activation = (og_activation)((int)(og_fuzz_bits(&in, 1) % 6) - 1);

    char err[OG_ERROR_MAX] = "";
    og_push push;
    og_plan plan;
    og_status st;
    if (op >= 2) {
        st = og_elementwise_check(&lim, err, g, &push);
        if (st == OG_OK)
            st = og_elementwise_plan(&lim, err, cfg.dialect,
                                     op == 2 ? OG_ELEMENTWISE_BIAS : OG_ELEMENTWISE_ACTIVATION, g,
                                     &push, &plan);
    } else {
        og_params p;
        if (!read_params(&in, &cfg, &lim, g, &p))
            return 0;
        st = og_gemm_check(&cfg, &lim, err, g, &push);
        if (st == OG_OK)
            st = og_gemm_plan(&cfg, &lim, err, g, &p, &push, &plan);
    }
    if (st != OG_OK) {
        og_fuzz_check_refusal(st, err);
        return 0;
    }
    if (op >= 2) {
        /* The elementwise kernels read neither A nor B. */
        g->a = g->b = NULL;
    }
    og_fuzz_check_plan(&call, &lim, &plan);
    return 0;
}
