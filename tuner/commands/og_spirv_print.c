/* SPIR-V text for modules Debian 12's disassembler (SPIRV-Tools 2023.1)
 * cannot read: the KHR form of the matrix kernels (SPV_KHR_cooperative_matrix
 * postdates it). One instruction a line: its name where this table knows it
 * (the instructions the rewrite writes, from spirv.core.grammar.json), else
 * its opcode number; operands as %id or literal numbers, strings quoted. */
#include <stdio.h>
#include <string.h>

#include "og_commands.h"

/* Name, and whether word 1 is a result type and word 2 a result (2), word
 * 1 a result (1), or neither (0). */
typedef struct op_name {
    uint32_t op;
    const char *name;
    int result;
} op_name;

static const op_name ops[] = {
    {10, "OpExtension", 0},
    {11, "OpExtInstImport", 1},
    {14, "OpMemoryModel", 0},
    {15, "OpEntryPoint", 0},
    {16, "OpExecutionMode", 0},
    {17, "OpCapability", 0},
    {21, "OpTypeInt", 1},
    {22, "OpTypeFloat", 1},
    {32, "OpTypePointer", 1},
    {43, "OpConstant", 2},
    {59, "OpVariable", 2},
    {61, "OpLoad", 2},
    {62, "OpStore", 0},
    {245, "OpPhi", 2},
    {4456, "OpTypeCooperativeMatrixKHR", 1},
    {4457, "OpCooperativeMatrixLoadKHR", 2},
    {4458, "OpCooperativeMatrixStoreKHR", 0},
    {4459, "OpCooperativeMatrixMulAddKHR", 2},
    {4460, "OpCooperativeMatrixLengthKHR", 2},
    {5358, "OpTypeCooperativeMatrixNV", 1},
    {5359, "OpCooperativeMatrixLoadNV", 2},
    {5360, "OpCooperativeMatrixStoreNV", 0},
    {5361, "OpCooperativeMatrixMulAddNV", 2},
    {5362, "OpCooperativeMatrixLengthNV", 2},
};

static const char *capability(uint32_t c)
{
    switch (c) {
    case 1:
        return "Shader";
    case 9:
        return "Float16";
    case 4433:
        return "StorageBuffer16BitAccess";
    case 5345:
        return "VulkanMemoryModel";
    case 5357:
        return "CooperativeMatrixNV";
    case 6022:
        return "CooperativeMatrixKHR";
    default:
        return NULL;
    }
}

/* Prints the words of an instruction that has a string at word 1. */
static void print_string(FILE *f, const uint32_t *w, uint32_t len)
{
    const char *s = (const char *)(w + 1);
    size_t max = (size_t)(len - 1) * 4;
    fprintf(f, " \"%.*s\"", (int)strnlen(s, max), s);
}

void og_spirv_print(FILE *f, const uint32_t *words, size_t count)
{
    if (count < 5)
        return;
    fprintf(f, "; SPIR-V %u.%u, bound %u (opcodes this table does not name are Op<number>)\n",
            words[1] >> 16 & 0xffu, words[1] >> 8 & 0xffu, words[3]);
    for (size_t i = 5; i < count;) {
        const uint32_t *w = words + i;
        uint32_t op = w[0] & 0xffffu, len = w[0] >> 16;
        if (len == 0 || i + len > count)
            break;
        const op_name *n = NULL;
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
            if (ops[k].op == op)
                n = &ops[k];
        uint32_t first = 1;
        if (n && n->result == 1 && len > 1)
            fprintf(f, "%%%u = ", w[first++]);
        if (n && n->result == 2 && len > 2) {
            fprintf(f, "%%%u = ", w[2]);
        }
        if (n)
            fputs(n->name, f);
        else
            fprintf(f, "Op<%u>", op);
        if (n && n->result == 2 && len > 2) {
            fprintf(f, " %%%u", w[1]);
            first = 3;
        }
        if (op == 17 && len == 2 && capability(w[1])) {
            fprintf(f, " %s\n", capability(w[1]));
        } else if (op == 10 && len > 1) {
            print_string(f, w, len);
            fputc('\n', f);
        } else {
            for (uint32_t k = first; k < len; k++)
                fprintf(f, " %u", w[k]);
            fputc('\n', f);
        }
        i += len;
    }
}
