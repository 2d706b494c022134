/* What the WGSL dialect covers, and WebGPU's default limits (docs/wgsl.md). */
#include <stdio.h>
#include <string.h>

#include "og_family.h"

static const char *const src_names[] = {"ssbo", "texel", "addr"};

/* The low-bit weight kernels (a weight format): the decode kernel's one pass
 * with word loads, and the prefill tile (the portable tile decoding each
 * weight as it loads it; og_kernel_check and the tile's own checks below
 * hold it to one pass, element loads from storage buffers). The decode
 * kernel's split-k pass and 16-byte loads are GLSL only. */
static int qweights_check(const og_kernel_key *key, char *why, size_t len)
{
    const og_params *p = &key->p;
    if (!og_family_can(p, OG_FAMILY_WEIGHTS))
        return 0; /* the prefill tile */
    if (key->kernel == OG_KERNEL_PLANES) {
        snprintf(why, len,
                 "wgsl: the decode kernel's split-k pass (--kernel planes) is GLSL only; the WGSL "
                 "decode kernel runs unsplit");
        return -1;
    }
    if (p->split > 1) {
        snprintf(why, len,
                 "wgsl: split=%d: the decode kernel's split-k ranges are GLSL only; the WGSL "
                 "decode kernel runs unsplit (split=1 or the rule)",
                 p->split);
        return -1;
    }
    if (p->vec != 1) {
        snprintf(why, len,
                 "wgsl: vec=%d: the WGSL decode kernel reads A and the weights as 32-bit words "
                 "(vec=1)",
                 p->vec);
        return -1;
    }
    return 0;
}

int og_wgsl_check(const og_kernel_key *key, char *why, size_t len)
{
    /* The split-k reduction and the elementwise kernels read only C and the bias. */
    if (key->kernel == OG_KERNEL_REDUCE || key->kernel == OG_KERNEL_BIAS ||
        key->kernel == OG_KERNEL_ACTIVATE || key->kernel == OG_KERNEL_SCALE)
        return 0;
    if (key->kernel != OG_KERNEL_GEMM && key->kernel != OG_KERNEL_PLANES) {
        snprintf(why, len,
                 "wgsl: the range-scaling exponents of recovered float32 are not written in "
                 "WGSL");
        return -1;
    }
    if (key->qformat && qweights_check(key, why, len) != 0)
        return -1;
    const og_params *p = &key->p;
    /* The split-k pass of a family that splits k (the decode kernel's was
     * refused above); the decode kernel with its weights only. */
    const og_family *f = og_family_of(p);
    int written = (f->can & OG_FAMILY_WGSL) &&
                  (key->kernel == OG_KERNEL_GEMM || (f->can & OG_FAMILY_SPLIT)) &&
                  (key->qformat || !(f->can & OG_FAMILY_WEIGHTS));
    if (!written) {
        snprintf(why, len,
                 "wgsl: the %s kernel is not written in WGSL; WebGPU runs the portable tile "
                 "(variant=tile), few rows (variant=fewrows) and the low-bit decode kernel "
                 "(variant=qdecode)",
                 og_params_template(p));
        return -1;
    }
    og_dtype a = key->dtype, b = og_kernel_b_type(key);
    if (a != b || (a != OG_F32 && a != OG_F16 && a != OG_BF16)) {
        snprintf(why, len,
                 "wgsl: the WGSL kernels take float32, float16 or bfloat16 inputs (halves as "
                 "pairs in u32 words), not A %s with B %s",
                 og_dtype_name(a), og_dtype_name(b));
        return -1;
    }
    if (key->recover || key->scaled) {
        snprintf(why, len, "wgsl: recovered float32 is not written in WGSL");
        return -1;
    }
    if (p->vec != 1) {
        snprintf(why, len, "wgsl: vec=%d: the WGSL kernels read one element at a time (vec=1)",
                 p->vec);
        return -1;
    }
    if (p->src != OG_SRC_STORAGE) {
        snprintf(why, len,
                 "wgsl: src=%s: the WGSL kernels read storage buffers (src=ssbo); WebGPU has no "
                 "texel buffers and no buffer device addresses (nor 64-bit integers)",
                 p->src >= OG_SRC_STORAGE && p->src <= OG_SRC_ADDR ? src_names[p->src] : "?");
        return -1;
    }
    return 0;
}

int og_wgsl_limits_check(const og_kernel_key *key, char *why, size_t len)
{
    uint32_t size[3];
    og_kernel_local_size(key, size);
    uint32_t threads = size[0] * size[1] * size[2];
    if (threads > OG_WGSL_MAX_INVOCATIONS) {
        snprintf(why, len,
                 "wgsl: %u invocations per workgroup exceed WebGPU's default "
                 "maxComputeInvocationsPerWorkgroup (%u)",
                 threads, OG_WGSL_MAX_INVOCATIONS);
        return -1;
    }
    if (size[0] > OG_WGSL_MAX_SIZE_XY || size[1] > OG_WGSL_MAX_SIZE_XY) {
        snprintf(why, len,
                 "wgsl: workgroup %ux%u exceeds WebGPU's default maxComputeWorkgroupSizeX/Y (%u)",
                 size[0], size[1], OG_WGSL_MAX_SIZE_XY);
        return -1;
    }
    uint32_t shared = og_kernel_shared_bytes(key);
    if (shared > OG_WGSL_MAX_SHARED_BYTES) {
        snprintf(why, len,
                 "wgsl: %u bytes of workgroup memory exceed WebGPU's default "
                 "maxComputeWorkgroupStorageSize (%u)",
                 shared, OG_WGSL_MAX_SHARED_BYTES);
        return -1;
    }
    return 0;
}

og_limits og_wgsl_limits(void)
{
    og_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.max_invocations = OG_WGSL_MAX_INVOCATIONS;
    lim.max_size[0] = lim.max_size[1] = OG_WGSL_MAX_SIZE_XY;
    lim.max_size[2] = 64;
    for (int i = 0; i < 3; i++)
        lim.max_count[i] = 65535;
    lim.max_shared_bytes = OG_WGSL_MAX_SHARED_BYTES;
    lim.max_storage_range = 128u << 20;
    lim.bind_align = 256;
    /* The push constants are a uniform buffer (at least 64 KiB in WebGPU). */
    lim.max_push_bytes = 256;
    lim.subgroup_size = 32;
    return lim;
}
