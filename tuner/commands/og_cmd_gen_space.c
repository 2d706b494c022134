/* ogtune gen --emit wgsl --preset quick|standard: every WGSL kernel of a
 * tuning space for WebGPU's default limits (og_wgsl_limits), one JSON object
 * a line, for web/ to validate with Dawn and for tools that ship kernels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_commands.h"

/* The shapes listed when --shapes is not given: a tile shape (with split-k
 * candidates) and a few-rows one. */
#define OG_SPACE_SHAPES "256x256x256,1x768x768"

/* One kernel of the space: its WGSL, or why WGSL refuses it. */
static og_status emit_kernel(const og_kernel_key *key, const og_limits *lim)
{
    char params[512], why[1024];
    og_params_format(&key->p, params, sizeof params);
    printf("{\"params\":\"%s\",\"kernel\":\"%s\",\"dtype\":\"%s\",\"trans_a\":%d,\"trans_b\":%d,",
           params, key->kernel == OG_KERNEL_PLANES ? "planes" : "gemm", og_dtype_name(key->dtype),
           key->trans_a, key->trans_b);
    if (og_kernel_check(key, lim, why, sizeof why) != 0) {
        printf("\"refused\":");
        og_json_string(stdout, why);
        printf("}\n");
        return OG_OK;
    }
    char *src = NULL;
    og_status st = og_gen_source(key, &src, why, sizeof why);
    if (st != OG_OK) {
        printf("\"error\":");
        og_json_string(stdout, why);
        printf("}\n");
        og_cli_fail("ogtune gen: %s: %s\n", params, why);
        return st;
    }
    printf("\"text\":");
    og_json_string(stdout, src);
    printf("}\n");
    free(src);
    return OG_OK;
}

int og_cmd_gen_space(const og_cli *o)
{
    if (!o->emit || strcmp(o->emit, "wgsl") != 0 || !o->json) {
        og_cli_fail("ogtune gen: --preset lists a space's kernels for WebGPU: give --emit wgsl "
                    "and --json\n");
        return 2;
    }
    if (strcmp(o->preset, "quick") != 0 && strcmp(o->preset, "standard") != 0) {
        og_cli_fail("ogtune gen: --preset takes quick or standard\n");
        return 2;
    }
    og_preset preset = strcmp(o->preset, "standard") == 0 ? OG_PRESET_STANDARD : OG_PRESET_QUICK;
    og_dtype dtypes[3];
    size_t nd, ns;
    og_shape *shapes = NULL;
    if (og_cli_dtypes(o, dtypes, &nd) != 0)
        return 2;
    if (og_parse_shapes(o->shapes ? o->shapes : OG_SPACE_SHAPES, &shapes, &ns) != 0) {
        og_cli_fail("ogtune gen: --shapes takes MxNxK[xBATCH],...\n");
        return 2;
    }
    og_limits lim = og_wgsl_limits();
    og_status st = OG_OK;
    for (size_t d = 0; d < nd && st == OG_OK; d++) {
        for (size_t s = 0; s < ns && st == OG_OK; s++) {
            og_params *space = NULL;
            size_t n = 0;
            st = og_space_in(&lim, OG_WGSL, preset, dtypes[d], o->trans_a, o->trans_b, &shapes[s],
                             &space, &n);
            if (st != OG_OK)
                og_cli_fail("ogtune gen: the %s space of %s is not available\n", o->preset,
                            og_dtype_name(dtypes[d]));
            for (size_t i = 0; i < n && st == OG_OK; i++) {
                og_kernel_key key = {.kernel = OG_KERNEL_GEMM, .dtype = dtypes[d],
                                     .trans_a = o->trans_a, .trans_b = o->trans_b,
                                     .dialect = OG_WGSL, .p = space[i]};
                st = emit_kernel(&key, &lim);
                /* A family that splits k also runs as split-k's planes pass. */
                if (st == OG_OK && og_family_can(&space[i], OG_FAMILY_SPLIT)) {
                    key.kernel = OG_KERNEL_PLANES;
                    st = emit_kernel(&key, &lim);
                }
            }
            free(space);
        }
    }
    free(shapes);
    return st == OG_OK ? 0 : 1;
}
