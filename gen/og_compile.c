/* GLSL and HLSL to SPIR-V through shaderc. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <shaderc/shaderc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "og_gen.h"

uint64_t og_compiler_hash(void)
{
    unsigned version = 0, revision = 0;
    shaderc_get_spv_version(&version, &revision);
    uint64_t h = og_fnv1a(OG_FNV_OFFSET, &version, sizeof version);
    h = og_fnv1a(h, &revision, sizeof revision);
    Dl_info info;
    struct stat st;
    if (dladdr((void *)shaderc_compile_into_spv, &info) && info.dli_fname &&
        stat(info.dli_fname, &st) == 0) {
        int64_t stamp[2] = {(int64_t)st.st_size, (int64_t)st.st_mtime};
        h = og_fnv1a(h, info.dli_fname, strlen(info.dli_fname));
        h = og_fnv1a(h, stamp, sizeof stamp);
    }
    return h;
}

og_status og_compile(const char *src, og_dialect dialect, int assembly, uint32_t **words,
                     size_t *count, char *err, size_t errlen)
{
    *words = NULL;
    *count = 0;
    if (dialect == OG_WGSL) {
        snprintf(err, errlen, "compile: WGSL is WebGPU's text; shaderc compiles GLSL and HLSL");
        return OG_ERROR_INVALID_ARGUMENT;
    }
    shaderc_compiler_t compiler = shaderc_compiler_initialize();
    shaderc_compile_options_t opts = shaderc_compile_options_initialize();
    if (!compiler || !opts) {
        shaderc_compile_options_release(opts);
        shaderc_compiler_release(compiler);
        snprintf(err, errlen, "compile: cannot initialise shaderc");
        return OG_ERROR_OUT_OF_MEMORY;
    }
    shaderc_compile_options_set_source_language(
        opts, dialect == OG_HLSL ? shaderc_source_language_hlsl : shaderc_source_language_glsl);
    /* Vulkan 1.1 / SPIR-V 1.3: glslang's HLSL front end needs it for structured buffers. */
    shaderc_compile_options_set_target_env(opts, shaderc_target_env_vulkan,
                                           shaderc_env_version_vulkan_1_1);
    shaderc_compile_options_set_optimization_level(opts, shaderc_optimization_level_performance);

    const char *name = dialect == OG_HLSL ? "kernel.hlsl" : "kernel.comp";
    size_t len = strlen(src);
    shaderc_compilation_result_t res =
        assembly ? shaderc_compile_into_spv_assembly(compiler, src, len, shaderc_compute_shader,
                                                     name, "main", opts)
                 : shaderc_compile_into_spv(compiler, src, len, shaderc_compute_shader, name,
                                            "main", opts);
    og_status st = OG_OK;
    if (!res || shaderc_result_get_compilation_status(res) != shaderc_compilation_status_success) {
        snprintf(err, errlen, "compile: %s: %s", name,
                 res ? shaderc_result_get_error_message(res) : "no result");
        st = OG_ERROR_COMPILE;
    } else {
        size_t bytes = shaderc_result_get_length(res);
        /* Assembly is text: keep a terminating NUL after it. */
        *words = malloc(bytes + 4);
        if (!*words) {
            snprintf(err, errlen, "compile: out of memory");
            st = OG_ERROR_OUT_OF_MEMORY;
        } else {
            memcpy(*words, shaderc_result_get_bytes(res), bytes);
            ((char *)*words)[bytes] = '\0';
            *count = assembly ? bytes : bytes / 4;
        }
    }
    shaderc_result_release(res);
    shaderc_compile_options_release(opts);
    shaderc_compiler_release(compiler);
    return st;
}
