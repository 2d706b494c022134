/* A synthetic GPU for the cooperative-matrix tests (test_matrix,
 * test_matrix_khr): subgroups of 32 to 64 it can pin, full subgroups,
 * float16, 16-bit storage, the memory model, 1024 invocations, 160 KiB of
 * workgroup memory (an H200 allows 227 KiB); the tests add the matrix
 * shapes each extension lists. */
#ifndef OG_MATRIX_DEVICE_H
#define OG_MATRIX_DEVICE_H

#include <stdlib.h>
#include <string.h>

#include "og_gen.h"

static inline og_limits matrix_device(void)
{
    og_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.max_invocations = 1024;
    lim.max_size[0] = lim.max_size[1] = lim.max_size[2] = 1024;
    for (int i = 0; i < 3; i++)
        lim.max_count[i] = 65535;
    lim.max_shared_bytes = 160 * 1024;
    lim.max_storage_range = 1u << 30;
    lim.max_push_bytes = 256;
    lim.subgroup_size = 32;
    og_matrix_caps *m = &lim.matrix;
    m->subgroup_min = 32;
    m->subgroup_max = 64;
    m->size_control = m->full_subgroups = m->float16 = m->storage16 = m->memory_model = 1;
    return lim;
}

/* A listed shape of float16 A and B with float32 accumulators at subgroup scope. */
static inline og_matrix_shape f16_shape(uint32_t m, uint32_t n, uint32_t k)
{
    return (og_matrix_shape){m,  n, k, OG_COMPONENT_F16, OG_COMPONENT_F16, OG_COMPONENT_F32,
                             OG_COMPONENT_F32, 1};
}

/* Every how many matrix kernels of the standard space the module and
 * rewrite tests build: og_test_stride's OG_TEST_STRIDE (scripts/test.sh's
 * sanitizer pass, where shaderc runs several times slower, takes every
 * 8th), else all. */
static inline size_t matrix_space_stride(void)
{
    const char *env = getenv("OG_TEST_STRIDE");
    long stride = env ? strtol(env, NULL, 10) : 1;
    return stride > 1 ? (size_t)stride : 1;
}

#endif /* OG_MATRIX_DEVICE_H */
