/* The kernels of a GEMM call: which template, workgroup size and memory, checks. */
#include <stdio.h>

#include "og_gen.h"

const char *og_dtype_name(og_dtype t)
{
    switch (t) {
    case OG_F16:
        return "f16";
    case OG_BF16:
        return "bf16";
    case OG_INT8:
        return "i8";
    case OG_UINT8:
        return "u8";
    default:
        return "f32";
    }
}

int og_dtype_is_int8(og_dtype t)
{
    return t == OG_INT8 || t == OG_UINT8;
}

const char *og_kernel_template(const og_kernel_key *key)
{
    switch (key->kernel) {
    case OG_KERNEL_GEMM:
        return og_params_template(&key->p);
    case OG_KERNEL_PLANES:
        return OG_TEMPLATE_TILE;
    case OG_KERNEL_REDUCE:
        return OG_TEMPLATE_REDUCE;
    default:
        return OG_TEMPLATE_ELEMENTWISE;
    }
}

static int has_params(const og_kernel_key *key)
{
    return key->kernel == OG_KERNEL_GEMM || key->kernel == OG_KERNEL_PLANES;
}

uint32_t og_kernel_shared_bytes(const og_kernel_key *key)
{
    return has_params(key) ? og_params_shared_bytes(&key->p) : 0;
}

void og_kernel_local_size(const og_kernel_key *key, uint32_t size[3])
{
    size[1] = size[2] = 1;
    if (!has_params(key)) {
        size[0] = OG_ELEMENTWISE_THREADS;
    } else if (key->p.variant == OG_VARIANT_FEWROWS || key->p.variant == OG_VARIANT_INT8_SKINNY) {
        size[0] = (uint32_t)(key->p.cols * key->p.slices);
    } else if (key->p.variant == OG_VARIANT_COOPMAT) {
        size[0] = (uint32_t)(OG_COOPMAT_SUBGROUP * key->p.sgx * key->p.sgy);
    } else {
        size[0] = (uint32_t)key->p.wgx;
        size[1] = (uint32_t)key->p.wgy;
    }
}

int og_kernel_check(const og_kernel_key *key, const og_limits *lim, char *why, size_t len)
{
    if (key->kernel < OG_KERNEL_GEMM || key->kernel > OG_KERNEL_ACTIVATE) {
        snprintf(why, len, "gen: unknown kernel %d", (int)key->kernel);
        return -1;
    }
    if (!has_params(key))
        return 0;
    if (key->kernel == OG_KERNEL_PLANES && key->p.variant != OG_VARIANT_TILE) {
        snprintf(why, len, "gen: split-k planes exist for the tile variant only");
        return -1;
    }
    int integer_inputs = og_dtype_is_int8(key->dtype) && og_dtype_is_int8(key->dtype_b);
    int integer_variant =
        key->p.variant == OG_VARIANT_INT8_TILE || key->p.variant == OG_VARIANT_INT8_SKINNY;
    if (integer_inputs != integer_variant || (!integer_variant && key->dtype_b != 0)) {
        snprintf(why, len, "gen: the Int8Gemm variants, and only they, take int8 or uint8 inputs");
        return -1;
    }
    /* The skinny kernel streams rows of B stored K x N (reference design). */
    if (key->p.variant == OG_VARIANT_INT8_SKINNY && key->trans_b) {
        snprintf(why, len, "gen: the skinny Int8Gemm kernel takes B not transposed");
        return -1;
    }
    /* Cooperative matrices: float16 inputs (no bfloat16 cooperative matrices
     * in this toolchain), GLSL (GL_NV_cooperative_matrix; glslang's HLSL has none). */
    if (key->p.variant == OG_VARIANT_COOPMAT && (key->dtype != OG_F16 || key->dialect != OG_GLSL)) {
        snprintf(why, len, "gen: the cooperative-matrix kernel takes float16 inputs, in GLSL");
        return -1;
    }
    if (integer_variant && key->p.dot && key->dialect != OG_GLSL) {
        snprintf(why, len, "gen: dot=1 is written in GLSL only (GL_EXT_spirv_intrinsics)");
        return -1;
    }
    /* The few-rows kernel reads float32 A not transposed (reference design). */
    if (key->p.variant == OG_VARIANT_FEWROWS && (key->dtype != OG_F32 || key->trans_a)) {
        snprintf(why, len, "gen: the few-rows kernel takes float32 inputs with A not transposed");
        return -1;
    }
    return og_params_check(&key->p, lim, why, len);
}
