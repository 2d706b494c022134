/* SPIR-V reflection and MSL export through SPIRV-Cross; modules with
 * cooperative matrices, which Debian 12's SPIRV-Cross (2021.01.15) cannot
 * parse, are reflected from the words themselves. */
#include <spirv_cross/spirv_cross_c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_gen.h"

enum {
    SPV_OP_CAPABILITY = 17,
    SPV_OP_TYPE_VOID = 19,
    SPV_OP_TYPE_LAST = 39, /* OpTypeVoid .. OpTypeForwardPointer */
    SPV_OP_EXECUTION_MODE = 16,
    SPV_OP_TYPE_INT = 21,
    SPV_OP_TYPE_FLOAT = 22,
    SPV_OP_TYPE_VECTOR = 23,
    SPV_OP_TYPE_ARRAY = 28,
    SPV_OP_TYPE_RUNTIME_ARRAY = 29,
    SPV_OP_TYPE_STRUCT = 30,
    SPV_OP_TYPE_POINTER = 32,
    SPV_OP_CONSTANT = 43,
    SPV_OP_VARIABLE = 59,
    SPV_OP_DECORATE = 71,
    SPV_OP_MEMBER_DECORATE = 72,
    SPV_STORAGE_WORKGROUP = 4,
    SPV_STORAGE_PUSH_CONSTANT = 9,
    SPV_STORAGE_STORAGE_BUFFER = 12,
    SPV_STORAGE_UNIFORM_CONSTANT = 0,
    SPV_STORAGE_UNIFORM = 2,
    SPV_EXECUTION_MODE_LOCAL_SIZE = 17,
    SPV_DECORATION_BINDING = 33,
    SPV_DECORATION_OFFSET = 35,
    SPV_CAPABILITY_COOPERATIVE_MATRIX_NV = 5357,
    SPV_CAPABILITY_COOPERATIVE_MATRIX_KHR = 6022
};

/* The instruction defining id: a type (OpType*, result id in word 1) or,
 * with constant non-zero, an OpConstant (result id in word 2); else NULL. */
static const uint32_t *find_def(const uint32_t *words, size_t count, uint32_t id, int constant)
{
    for (size_t i = 5; i < count;) {
        uint32_t op = words[i] & 0xffffu, len = words[i] >> 16;
        if (len == 0 || i + len > count)
            return NULL;
        int type = op >= SPV_OP_TYPE_VOID && op <= SPV_OP_TYPE_LAST;
        if (constant ? op == SPV_OP_CONSTANT && len > 2 && words[i + 2] == id
                     : type && len > 1 && words[i + 1] == id)
            return &words[i];
        i += len;
    }
    return NULL;
}

/* Bytes of a type (scalars, vectors, arrays of a constant length, structs by
 * their members' offsets); runtime arrays count 0. */
static uint64_t word_type_bytes(const uint32_t *words, size_t count, uint32_t id, int depth)
{
    const uint32_t *t = find_def(words, count, id, 0);
    if (!t || depth > 8)
        return 0;
    uint32_t op = t[0] & 0xffffu, len = t[0] >> 16;
    switch (op) {
    case SPV_OP_TYPE_INT:
    case SPV_OP_TYPE_FLOAT:
        return t[2] / 8;
    case SPV_OP_TYPE_VECTOR:
        return t[3] * word_type_bytes(words, count, t[2], depth + 1);
    case SPV_OP_TYPE_ARRAY: {
        const uint32_t *n = find_def(words, count, t[3], 1);
        uint64_t elems = n && (n[0] & 0xffffu) == SPV_OP_CONSTANT ? n[3] : 0;
        return elems * word_type_bytes(words, count, t[2], depth + 1);
    }
    case SPV_OP_TYPE_STRUCT: {
        uint64_t end = 0;
        for (uint32_t m = 0; m + 2 < len; m++) {
            uint64_t offset = 0;
            for (size_t i = 5; i < count;) { /* OpMemberDecorate id m Offset x */
                uint32_t l = words[i] >> 16;
                if (l == 0 || i + l > count)
                    break;
                if ((words[i] & 0xffffu) == SPV_OP_MEMBER_DECORATE && l >= 5 &&
                    words[i + 1] == id && words[i + 2] == m &&
                    words[i + 3] == SPV_DECORATION_OFFSET)
                    offset = words[i + 4];
                i += l;
            }
            uint64_t e = offset + word_type_bytes(words, count, t[2 + m], depth + 1);
            end = e > end ? e : end;
        }
        return end;
    }
    default:
        return 0;
    }
}

void og_reflect_raw(const uint32_t *words, size_t count, og_reflection *out)
{
    uint32_t seen = 0;
    memset(out, 0, sizeof *out);
    out->needs = og_spirv_needs(words, count);
    for (size_t i = 5; i < count;) {
        uint32_t op = words[i] & 0xffffu, len = words[i] >> 16;
        if (len == 0 || i + len > count)
            break;
        if (op == SPV_OP_EXECUTION_MODE && len >= 6 &&
            words[i + 2] == SPV_EXECUTION_MODE_LOCAL_SIZE)
            for (int d = 0; d < 3; d++)
                out->local_size[d] = words[i + 3 + d];
        if (op == SPV_OP_VARIABLE && len >= 4) {
            const uint32_t *ptr = find_def(words, count, words[i + 1], 0);
            uint32_t storage = words[i + 3];
            uint64_t bytes = ptr ? word_type_bytes(words, count, ptr[3], 0) : 0;
            if (storage == SPV_STORAGE_WORKGROUP)
                out->shared_bytes += (uint32_t)bytes;
            else if (storage == SPV_STORAGE_PUSH_CONSTANT)
                out->push_bytes = (uint32_t)bytes;
            else if (storage == SPV_STORAGE_STORAGE_BUFFER || storage == SPV_STORAGE_UNIFORM ||
                     storage == SPV_STORAGE_UNIFORM_CONSTANT) {
                for (size_t j = 5; j < count;) { /* its Binding decoration */
                    uint32_t l = words[j] >> 16;
                    if (l == 0 || j + l > count)
                        break;
                    if ((words[j] & 0xffffu) == SPV_OP_DECORATE && l >= 4 &&
                        words[j + 1] == words[i + 2] && words[j + 2] == SPV_DECORATION_BINDING &&
                        words[j + 3] < 32 && !(seen & (1u << words[j + 3]))) {
                        seen |= 1u << words[j + 3];
                        out->bindings++;
                    }
                    j += l;
                }
            }
        }
        i += len;
    }
}

uint32_t og_spirv_needs(const uint32_t *words, size_t count)
{
    uint32_t needs = 0;
    for (size_t i = 5; i < count;) {
        uint32_t op = words[i] & 0xffffu, len = words[i] >> 16;
        if (len == 0 || i + len > count)
            break;
        if (op == SPV_OP_CAPABILITY && len >= 2) {
            uint32_t cap = words[i + 1];
            needs |= cap == 9                                      ? OG_NEEDS_FLOAT16
                     : cap == 4433                                 ? OG_NEEDS_STORAGE16
                     : cap == 5345                                 ? OG_NEEDS_MEMORY_MODEL
                     : cap == SPV_CAPABILITY_COOPERATIVE_MATRIX_NV ? OG_NEEDS_COOPMAT
                     : cap == SPV_CAPABILITY_COOPERATIVE_MATRIX_KHR ? OG_NEEDS_COOPMAT_KHR
                     : cap == 6018 || cap == 6019                  ? OG_NEEDS_INTEGER_DOT
                     : cap == 5347                                 ? OG_NEEDS_ADDRESS
                     : cap == 39                                   ? OG_NEEDS_INT8
                                                                   : 0u;
        }
        i += len;
    }
    return needs;
}

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
    if (count < 5 || words[0] != 0x07230203u) {
        snprintf(err, errlen, "reflect: not a SPIR-V module");
        return OG_ERROR_COMPILE;
    }
    uint32_t needs = og_spirv_needs(words, count);
    if (needs & (OG_NEEDS_COOPMAT | OG_NEEDS_COOPMAT_KHR)) {
        og_reflect_raw(words, count, out);
        out->needs = needs;
        return OG_OK;
    }
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
    out->needs = needs;
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
