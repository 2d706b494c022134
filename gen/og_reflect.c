/* SPIR-V reflection and MSL export through SPIRV-Cross. */
#include <spirv_cross/spirv_cross_c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_gen.h"

enum { SPV_OP_TYPE_POINTER = 32, SPV_OP_VARIABLE = 59, SPV_STORAGE_WORKGROUP = 4 };

static og_status open_compiler(const uint32_t *words, size_t count, spvc_backend backend,
                               spvc_context *ctx, spvc_compiler *compiler, char *err, size_t errlen)
{
    spvc_parsed_ir ir;
    if (spvc_context_create(ctx) != SPVC_SUCCESS) {
        snprintf(err, errlen, "reflect: cannot create a SPIRV-Cross context");
        return OG_ERROR_OUT_OF_MEMORY;
    }
    if (spvc_context_parse_spirv(*ctx, words, count, &ir) != SPVC_SUCCESS ||
        spvc_context_create_compiler(*ctx, backend, ir, SPVC_CAPTURE_MODE_TAKE_OWNERSHIP,
                                     compiler) != SPVC_SUCCESS) {
        snprintf(err, errlen, "reflect: %s", spvc_context_get_last_error_string(*ctx));
        spvc_context_destroy(*ctx);
        return OG_ERROR_COMPILE;
    }
    return OG_OK;
}

/* Bytes of a workgroup variable's type: scalars, vectors, matrices and arrays of them, or structs.
 */
static uint64_t type_bytes(spvc_compiler compiler, spvc_type_id id)
{
    spvc_type t = spvc_compiler_get_type_handle(compiler, id);
    uint64_t n = 1;
    for (unsigned d = 0; d < spvc_type_get_num_array_dimensions(t); d++)
        n *= spvc_type_get_array_dimension(t, d);
    if (spvc_type_get_basetype(t) == SPVC_BASETYPE_STRUCT) {
        size_t size = 0;
        spvc_compiler_get_declared_struct_size(compiler, t, &size);
        return n * size;
    }
    return n * spvc_type_get_bit_width(t) / 8 * spvc_type_get_vector_size(t) *
           spvc_type_get_columns(t);
}

/* SPIRV-Cross's C API lists no workgroup variables, so walk the module for
 * OpVariable in Workgroup storage and size their pointee types with it. */
static uint32_t shared_bytes(spvc_compiler compiler, const uint32_t *words, size_t count)
{
    uint64_t total = 0;
    for (size_t i = 5; i < count;) {
        uint32_t op = words[i] & 0xffffu, len = words[i] >> 16;
        if (len == 0 || i + len > count)
            break;
        if (op == SPV_OP_VARIABLE && len >= 4 && words[i + 3] == SPV_STORAGE_WORKGROUP) {
            uint32_t ptr = words[i + 1];
            for (size_t j = 5; j < count;) { /* find the OpTypePointer of this variable */
                uint32_t op2 = words[j] & 0xffffu, len2 = words[j] >> 16;
                if (len2 == 0)
                    break;
                if (op2 == SPV_OP_TYPE_POINTER && words[j + 1] == ptr) {
                    total += type_bytes(compiler, words[j + 3]);
                    break;
                }
                j += len2;
            }
        }
        i += len;
    }
    return (uint32_t)total;
}

og_status og_reflect(const uint32_t *words, size_t count, og_reflection *out, char *err,
                     size_t errlen)
{
    spvc_context ctx;
    spvc_compiler compiler;
    og_status st = open_compiler(words, count, SPVC_BACKEND_NONE, &ctx, &compiler, err, errlen);
    if (st != OG_OK)
        return st;
    memset(out, 0, sizeof *out);
    for (unsigned d = 0; d < 3; d++)
        out->local_size[d] = spvc_compiler_get_execution_mode_argument_by_index(
            compiler, SpvExecutionModeLocalSize, d);
    out->shared_bytes = shared_bytes(compiler, words, count);

    spvc_resources res;
    const spvc_reflected_resource *list;
    size_t n;
    if (spvc_compiler_create_shader_resources(compiler, &res) != SPVC_SUCCESS) {
        snprintf(err, errlen, "reflect: %s", spvc_context_get_last_error_string(ctx));
        spvc_context_destroy(ctx);
        return OG_ERROR_COMPILE;
    }
    /* Distinct bindings of storage and texel buffers: a kernel may alias one
     * buffer with several element types. */
    static const spvc_resource_type kinds[] = {SPVC_RESOURCE_TYPE_STORAGE_BUFFER,
                                               SPVC_RESOURCE_TYPE_SAMPLED_IMAGE,
                                               SPVC_RESOURCE_TYPE_SEPARATE_IMAGE};
    uint32_t seen = 0;
    for (size_t kind = 0; kind < sizeof kinds / sizeof kinds[0]; kind++) {
        spvc_resources_get_resource_list_for_type(res, kinds[kind], &list, &n);
        for (size_t i = 0; i < n; i++) {
            unsigned b = spvc_compiler_get_decoration(compiler, list[i].id, SpvDecorationBinding);
            if (b < 32 && !(seen & (1u << b))) {
                seen |= 1u << b;
                out->bindings++;
            }
        }
    }
    spvc_resources_get_resource_list_for_type(res, SPVC_RESOURCE_TYPE_PUSH_CONSTANT, &list, &n);
    if (n > 0) {
        size_t size = 0;
        spvc_compiler_get_declared_struct_size(
            compiler, spvc_compiler_get_type_handle(compiler, list[0].base_type_id), &size);
        out->push_bytes = (uint32_t)size;
    }
    spvc_context_destroy(ctx);
    return OG_OK;
}

og_status og_export_msl(const uint32_t *words, size_t count, char **msl, char *err, size_t errlen)
{
    spvc_context ctx;
    spvc_compiler compiler;
    const char *text;
    *msl = NULL;
    og_status st = open_compiler(words, count, SPVC_BACKEND_MSL, &ctx, &compiler, err, errlen);
    if (st != OG_OK)
        return st;
    if (spvc_compiler_compile(compiler, &text) != SPVC_SUCCESS) {
        snprintf(err, errlen, "msl: %s", spvc_context_get_last_error_string(ctx));
        st = OG_ERROR_COMPILE;
    } else if (!(*msl = strdup(text))) {
        snprintf(err, errlen, "msl: out of memory");
        st = OG_ERROR_OUT_OF_MEMORY;
    }
    spvc_context_destroy(ctx);
    return st;
}
