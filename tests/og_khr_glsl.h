/* The NV kernel's GLSL written with GL_KHR_cooperative_matrix instead, for
 * a current glslang (the second driver lane's): the cross-check that a
 * module compiled directly from KHR GLSL computes what the rewrite of the
 * compiled NV module (gen/og_spirv_khr.c) computes. A test's translation of
 * the template's own output, not a general one: the uses come from the
 * template's names (fa, fal: A; fb, fbl: B; the rest accumulators). */
#ifndef OG_KHR_GLSL_H
#define OG_KHR_GLSL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends n bytes of s to the buffer *out (length *len, capacity *cap). */
static inline void khr_put(char **out, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        *cap = (*len + n + 1) * 2;
        *out = realloc(*out, *cap);
        cr_assert_not_null(*out);
    }
    memcpy(*out + *len, s, n);
    *len += n;
    (*out)[*len] = '\0';
}

/* src (the template's NV GLSL) with KHR matrices: malloc'ed. */
static inline char *khr_glsl(const char *src)
{
    static const struct {
        const char *from, *to;
    } words[] = {
        {"GL_NV_cooperative_matrix", "GL_KHR_cooperative_matrix"},
        {"coopMatLoadNV(", "coopMatLoad("},
        {"coopMatStoreNV(", "coopMatStore("},
        {"coopMatMulAddNV(", "coopMatMulAdd("},
        /* The layout operand ends each load and store statement. */
        {", false);", ", gl_CooperativeMatrixLayoutRowMajor);"},
        {", true);", ", gl_CooperativeMatrixLayoutColumnMajor);"},
    };
    size_t len = 0, cap = strlen(src) * 2 + 1;
    char *out = malloc(cap);
    cr_assert_not_null(out);
    out[0] = '\0';
    int in_matrix_op = 0; /* between coopMatLoad/Store( and its ';' */
    for (const char *s = src; *s;) {
        unsigned bits, rows, cols;
        int used = 0;
        if (sscanf(s, "fcoopmatNV<%u, gl_ScopeSubgroup, %u, %u>%n", &bits, &rows, &cols, &used) ==
                3 &&
            used > 0) {
            const char *after = s + used;
            const char *use = strncmp(after, " fa", 3) == 0   ? "gl_MatrixUseA"
                              : strncmp(after, " fb", 3) == 0 ? "gl_MatrixUseB"
                                                              : "gl_MatrixUseAccumulator";
            char type[128];
            int n = snprintf(type, sizeof type, "coopmat<%s, gl_ScopeSubgroup, %u, %u, %s>",
                             bits == 32 ? "float" : "float16_t", rows, cols, use);
            khr_put(&out, &len, &cap, type, (size_t)n);
            s = after;
            continue;
        }
        size_t w = 0;
        for (; w < sizeof words / sizeof words[0]; w++) {
            size_t n = strlen(words[w].from);
            int layout = w >= 4;
            if (strncmp(s, words[w].from, n) == 0 && (!layout || in_matrix_op)) {
                khr_put(&out, &len, &cap, words[w].to, strlen(words[w].to));
                if (w == 1 || w == 2)
                    in_matrix_op = 1;
                if (layout)
                    in_matrix_op = 0;
                s += n;
                break;
            }
        }
        if (w < sizeof words / sizeof words[0])
            continue;
        if (*s == ';')
            in_matrix_op = 0;
        khr_put(&out, &len, &cap, s, 1);
        s++;
    }
    return out;
}

#endif /* OG_KHR_GLSL_H */
