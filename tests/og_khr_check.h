/* A structural checker of SPV_KHR_cooperative_matrix modules, for the tests
 * of the KHR rewrite (Debian 12's spirv-val, SPIRV-Tools 2023.1, rejects the
 * KHR capability). What it holds a module to, from the extension's text in
 * the SPIR-V registry:
 *   - OpCapability CooperativeMatrixKHR (6022) and OpExtension
 *     "SPV_KHR_cooperative_matrix" are declared, nothing of the NV extension
 *     remains (capability 5357, its extension, opcodes 5358..5362);
 *   - the Vulkan memory model: capability VulkanMemoryModel (5345),
 *     OpMemoryModel Logical Vulkan, and (before SPIR-V 1.5) the extension
 *     "SPV_KHR_vulkan_memory_model";
 *   - every OpTypeCooperativeMatrixKHR (4456) has a Use that is an
 *     OpConstant of a 32-bit integer type with value 0..2, its Rows, Columns
 *     and Scope are constants, and no two types are the same;
 *   - OpCooperativeMatrixMulAddKHR (4459): A's type has use MatrixA (0),
 *     B's MatrixB (1), C's and the result's MatrixAccumulator (2);
 *   - loads (4457) and stores (4458): the MemoryLayout is an OpConstant of a
 *     32-bit integer, RowMajorKHR 0 or ColumnMajorKHR 1, and a Stride follows;
 *     a load's result type is a KHR type.
 * Only what the tests need: ids are checked against the bound, nothing of
 * the rest of the module is validated. */
#ifndef OG_KHR_CHECK_H
#define OG_KHR_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether the OpExtension at w (len words) names s. */
static inline int og_khr_names(const uint32_t *w, uint32_t len, const char *s)
{
    size_t n = strlen(s);
    return (len - 1) * 4 > n && memcmp(w + 1, s, n) == 0 && ((const char *)(w + 1))[n] == '\0';
}

/* Returns 0 when words pass, else -1 with the first failure in why. */
static inline int og_khr_check(const uint32_t *words, size_t count, char *why, size_t len)
{
    if (count < 5 || words[0] != 0x07230203u) {
        snprintf(why, len, "not a SPIR-V module");
        return -1;
    }
    uint32_t bound = words[3];
    /* Per id: 1 a 32-bit integer type; 2 an OpConstant of one (value in val);
     * 3 a KHR type (use in val); 4 another constant (true, false, ...). */
    uint8_t *kind = calloc(bound, 1);
    uint32_t *val = calloc(bound, sizeof *val), *type = calloc(bound, sizeof *type);
    int rc = -1, cap = 0, ext = 0, model_cap = 0, model = 0, model_ext = 0, types = 0;
    uint32_t version = words[1];
    if (!kind || !val || !type) {
        snprintf(why, len, "out of memory");
        goto done;
    }
    for (size_t i = 5; i < count;) {
        const uint32_t *w = words + i;
        uint32_t op = w[0] & 0xffffu, n = w[0] >> 16;
        if (n == 0 || i + n > count) {
            snprintf(why, len, "truncated instruction at word %zu", i);
            goto done;
        }
        for (uint32_t k = 1; k < n && k < 3; k++)
            if ((op == 4457 || op == 4459) && w[k] >= bound) {
                snprintf(why, len, "id out of bounds at word %zu", i);
                goto done;
            }
        if (op >= 5358 && op <= 5362) {
            snprintf(why, len, "NV cooperative-matrix instruction %u at word %zu", op, i);
            goto done;
        }
        switch (op) {
        case 17: /* OpCapability */
            cap |= w[1] == 6022;
            model_cap |= w[1] == 5345;
            if (w[1] == 5357) {
                snprintf(why, len, "CooperativeMatrixNV is still declared");
                goto done;
            }
            break;
        case 10: /* OpExtension */
            ext |= og_khr_names(w, n, "SPV_KHR_cooperative_matrix");
            model_ext |= og_khr_names(w, n, "SPV_KHR_vulkan_memory_model");
            if (og_khr_names(w, n, "SPV_NV_cooperative_matrix")) {
                snprintf(why, len, "SPV_NV_cooperative_matrix is still declared");
                goto done;
            }
            break;
        case 14: /* OpMemoryModel */
            model = n == 3 && w[1] == 0 && w[2] == 3;
            break;
        case 21: /* OpTypeInt */
            if (w[1] < bound && w[2] == 32)
                kind[w[1]] = 1;
            break;
        case 43: /* OpConstant */
            if (w[2] < bound) {
                kind[w[2]] = w[1] < bound && kind[w[1]] == 1 ? 2 : 4;
                val[w[2]] = w[3];
            }
            break;
        case 4456: { /* OpTypeCooperativeMatrixKHR */
            if (n != 7 || w[1] >= bound) {
                snprintf(why, len, "malformed OpTypeCooperativeMatrixKHR at word %zu", i);
                goto done;
            }
            for (uint32_t k = 3; k < 7; k++)
                if (w[k] >= bound || kind[w[k]] != 2) {
                    snprintf(why, len,
                             "type %%%u: operand %u is not a constant 32-bit integer declared "
                             "before it",
                             w[1], k);
                    goto done;
                }
            if (val[w[6]] > 2) {
                snprintf(why, len, "type %%%u: Use %u is not 0..2", w[1], val[w[6]]);
                goto done;
            }
            /* No duplicate: the same component type, scope, size and use. */
            for (size_t j = 5; j < i;) {
                const uint32_t *o = words + j;
                if ((o[0] & 0xffffu) == 4456 && o[2] == w[2] && val[o[3]] == val[w[3]] &&
                    val[o[4]] == val[w[4]] && val[o[5]] == val[w[5]] && val[o[6]] == val[w[6]]) {
                    snprintf(why, len, "types %%%u and %%%u are the same", o[1], w[1]);
                    goto done;
                }
                j += o[0] >> 16;
            }
            kind[w[1]] = 3;
            val[w[1]] = val[w[6]];
            types++;
            break;
        }
        case 4457:   /* OpCooperativeMatrixLoadKHR */
        case 4458: { /* OpCooperativeMatrixStoreKHR */
            uint32_t l = op == 4457 ? 4 : 3;
            if (n < l + 2 || w[l] >= bound || kind[w[l]] != 2 || val[w[l]] > 1) {
                snprintf(why, len,
                         "%s at word %zu: the MemoryLayout is not a constant RowMajor or "
                         "ColumnMajor, or no Stride follows",
                         op == 4457 ? "load" : "store", i);
                goto done;
            }
            if (op == 4457 && kind[w[1]] != 3) {
                snprintf(why, len, "load at word %zu: result type %%%u is not a KHR type", i, w[1]);
                goto done;
            }
            if (op == 4457)
                type[w[2]] = w[1];
            break;
        }
        case 4459: /* OpCooperativeMatrixMulAddKHR */
            if (n < 6 || w[3] >= bound || w[4] >= bound || w[5] >= bound) {
                snprintf(why, len, "malformed MulAdd at word %zu", i);
                goto done;
            }
            type[w[2]] = w[1];
            break;
        default:
            /* Results of other instructions: their types, for MulAdd's operands. */
            if (n >= 3 && w[1] < bound && kind[w[1]] == 3 && w[2] < bound)
                type[w[2]] = w[1];
            break;
        }
        i += n;
    }
    /* MulAdd's operands, once every value's type is known (phis may come
     * before their incoming values' definitions). */
    for (size_t i = 5; i < count; i += words[i] >> 16) {
        const uint32_t *w = words + i;
        if ((w[0] & 0xffffu) != 4459)
            continue;
        const uint32_t want[4] = {2, 0, 1, 2}, ids[4] = {w[1], type[w[3]], type[w[4]], type[w[5]]};
        static const char *const names[4] = {"result", "A", "B", "C"};
        for (int k = 0; k < 4; k++)
            if (ids[k] == 0 || kind[ids[k]] != 3 || val[ids[k]] != want[k]) {
                snprintf(why, len, "MulAdd at word %zu: %s's type %%%u has not the use %u", i,
                         names[k], ids[k], want[k]);
                goto done;
            }
    }
    int before15 = (version >> 16 & 0xff) == 1 && (version >> 8 & 0xff) < 5;
    if (!cap || !ext || types == 0) {
        snprintf(why, len, "capability CooperativeMatrixKHR %s, extension %s, %d KHR types",
                 cap ? "declared" : "missing", ext ? "declared" : "missing", types);
        goto done;
    }
    if (!model_cap || !model || (before15 && !model_ext)) {
        snprintf(why, len,
                 "the Vulkan memory model is not declared (capability, OpMemoryModel, "
                 "extension before SPIR-V 1.5)");
        goto done;
    }
    rc = 0;
done:
    free(kind);
    free(val);
    free(type);
    return rc;
}

#endif /* OG_KHR_CHECK_H */
