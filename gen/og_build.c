/* One kernel from its key: check, expand, compile, reflect, check again. */
#include <stdio.h>
#include <stdlib.h>

#include "og_gen.h"

og_status og_build_kernel(const og_kernel_key *key, const og_limits *lim, uint32_t **words,
                          size_t *count, og_reflection *refl, char *err, size_t errlen)
{
    char *src = NULL;
    *words = NULL;
    *count = 0;
    /* Over the device's limits: rejected before anything is compiled. */
    if (og_kernel_check(key, lim, err, errlen) != 0)
        return OG_ERROR_UNSUPPORTED;
    og_status st = og_gen_source(key, &src, err, errlen);
    if (st == OG_OK)
        st = og_compile(src, key->dialect, 0, words, count, err, errlen);
    free(src);
    /* KHR matrices: the compiled NV module rewritten (Debian 12's glslang
     * knows only GL_NV_cooperative_matrix). */
    if (st == OG_OK && og_params_matrix(&key->p) && key->p.mat == OG_MATRIX_KHR) {
        uint32_t *khr = NULL;
        size_t khr_count = 0;
        st = og_spirv_khr(*words, *count, &khr, &khr_count, err, errlen);
        free(*words);
        *words = khr;
        *count = khr_count;
    }
    if (st == OG_OK)
        st = og_reflect(*words, *count, refl, err, errlen);
    /* The features and memory its SPIR-V declares it needs, from the module
     * itself: a template that outgrows the device is refused here whatever
     * its formulas say. */
    if (st == OG_OK && lim && og_limits_lack(lim, refl->needs, err, errlen) != 0)
        st = OG_ERROR_UNSUPPORTED;
    if (st == OG_OK && lim &&
        (refl->shared_bytes > lim->max_shared_bytes || refl->push_bytes > lim->max_push_bytes)) {
        snprintf(err, errlen,
                 "limits: kernel needs %u bytes of shared memory (device: %u) and %u of push "
                 "constants (device: %u)",
                 refl->shared_bytes, lim->max_shared_bytes, refl->push_bytes, lim->max_push_bytes);
        st = OG_ERROR_UNSUPPORTED;
    }
    /* The reflected module must agree with what the parameters promise. */
    uint32_t size[3];
    og_kernel_local_size(key, size);
    uint32_t shared = og_kernel_shared_bytes(key);
    if (st == OG_OK && (refl->local_size[0] != size[0] || refl->local_size[1] != size[1] ||
                        refl->local_size[2] != size[2] || refl->shared_bytes != shared)) {
        snprintf(err, errlen,
                 "gen: reflection gives workgroup %ux%ux%u and %u shared bytes, the formulas "
                 "%ux%ux%u and %u",
                 refl->local_size[0], refl->local_size[1], refl->local_size[2], refl->shared_bytes,
                 size[0], size[1], size[2], shared);
        st = OG_ERROR_COMPILE;
    }
    if (st != OG_OK) {
        free(*words);
        *words = NULL;
        *count = 0;
    }
    return st;
}
