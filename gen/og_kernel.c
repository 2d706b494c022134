/* The kernels of a GEMM call: which template, workgroup size and memory, checks. */
#include <stdio.h>

#include "og_gen.h"

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
    } else if (key->p.variant == OG_VARIANT_FEWROWS) {
        size[0] = (uint32_t)(key->p.cols * key->p.slices);
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
    /* The few-rows kernel reads float32 A not transposed (reference design). */
    if (key->p.variant == OG_VARIANT_FEWROWS && (key->dtype != OG_F32 || key->trans_a)) {
        snprintf(why, len, "gen: the few-rows kernel takes float32 inputs with A not transposed");
        return -1;
    }
    return og_params_check(&key->p, lim, why, len);
}
