/* The kernels of a GEMM call: which template, workgroup size and memory
 * (og_kernel_check.c checks them against a device). */
#include "og_family.h"

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
    case OG_FP8_E4M3:
        return "e4m3";
    case OG_FP8_E5M2:
        return "e5m2";
    default:
        return "f32";
    }
}

int og_dtype_is_int8(og_dtype t)
{
    return t == OG_INT8 || t == OG_UINT8;
}

int og_dtype_is_fp8(og_dtype t)
{
    return t == OG_FP8_E4M3 || t == OG_FP8_E5M2;
}

size_t og_dtype_bytes(og_dtype t)
{
    return t == OG_F32 ? 4 : t == OG_F16 || t == OG_BF16 ? 2 : 1;
}

og_dtype og_kernel_b_type(const og_kernel_key *key)
{
    if (key->dtype_b != 0 || og_dtype_is_fp8(key->dtype))
        return key->dtype_b;
    return key->dtype;
}

const char *og_kernel_template(const og_kernel_key *key)
{
    switch (key->kernel) {
    case OG_KERNEL_GEMM:
        return og_params_template(&key->p);
    case OG_KERNEL_PLANES: /* the split-k pass of a family that splits k */
        return og_family_can(&key->p, OG_FAMILY_SPLIT) ? og_params_template(&key->p)
                                                       : OG_TEMPLATE_TILE;
    case OG_KERNEL_REDUCE:
        return OG_TEMPLATE_REDUCE;
    case OG_KERNEL_EXPONENTS:
        return OG_TEMPLATE_EXPONENTS;
    case OG_KERNEL_IM2COL:
        return OG_TEMPLATE_IM2COL;
    default:
        return OG_TEMPLATE_ELEMENTWISE;
    }
}

int og_kernel_has_params(const og_kernel_key *key)
{
    return key->kernel == OG_KERNEL_GEMM || key->kernel == OG_KERNEL_PLANES;
}

uint32_t og_kernel_shared_bytes(const og_kernel_key *key)
{
    if (!og_kernel_has_params(key))
        return 0;
    const og_params *p = &key->p;
    uint32_t bytes = og_params_shared_bytes(p);
    if (!key->recover)
        return bytes;
    /* Recovered float32 stages a tile of residuals beside each tile of high
     * parts: float32 values in the portable tile, float16 in the matrix one,
     * whose small sums also leave through a float32 fragment per subgroup. */
    if (og_family_can(p, OG_FAMILY_MATRIX))
        return bytes +
               (uint32_t)(2 * p->buf * (p->bm * (p->bk + p->pad) + p->bk * (p->bn + p->pad)) +
                          4 * p->fm * p->fn * p->sgx * p->sgy);
    return 2 * bytes;
}

/* Counted from the GLSL loops of each template (Lua loops are unrolled;
 * each family's entry counts its own). Lavapipe runs an invocation's loops
 * as SIMD code under masks, so a loop costs its trips plus one, even where
 * no lane takes a trip. */
uint64_t og_kernel_loop_iterations(const og_kernel_key *key, uint64_t k_len)
{
    /* Range scaling's exponents: K terms per row or column inside the loop
     * over a grid layer's products (one trip: pieces fit the z count). */
    if (key->kernel == OG_KERNEL_EXPONENTS)
        return k_len + 1u + 1u + 1u;
    return og_family_of(&key->p)->loop_iterations(&key->p, k_len);
}

void og_kernel_local_size(const og_kernel_key *key, uint32_t size[3])
{
    size[1] = size[2] = 1;
    if (!og_kernel_has_params(key))
        size[0] = OG_ELEMENTWISE_THREADS;
    else
        og_family_of(&key->p)->local_size(&key->p, size);
}
