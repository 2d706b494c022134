/* Int8Gemm on the host: the exact reference, a shape's data, and verification
 * of a kernel against it (bit for bit: the result is an integer, or one
 * documented sequence of float32 roundings of it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_tuner.h"

void og_int8_extents(const og_int8gemm_args *args, size_t *a, size_t *b, size_t *c)
{
    og_gemm_args g = og_int8gemm_layout(args);
    og_gemm_extents(&g, a, b, c);
}

static int64_t byte_value(og_dtype t, uint8_t v)
{
    return t == OG_INT8 ? (int64_t)(int8_t)v : (int64_t)v;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

void og_reference_int8(const og_int8gemm_args *g, const uint8_t *a, const uint8_t *b,
                       const uint32_t *c_in, const float *col_scales, const float *bias,
                       uint32_t *out)
{
    size_t na, nb, nc;
    og_int8_extents(g, &na, &nb, &nc);
    memcpy(out, c_in, nc * sizeof *out);
    int64_t batch = g->batch ? g->batch : 1;
    for (int64_t p = 0; p < batch; p++)
        for (int64_t i = 0; i < g->m; i++)
            for (int64_t j = 0; j < g->n; j++) {
                int64_t sum = 0; /* |terms| <= 255^2, so 2^32 terms cannot overflow */
                for (int64_t k = 0; k < g->k; k++) {
                    size_t ia = (size_t)(g->a_offset + p * g->stride_a +
                                         (g->trans_a ? k * g->lda + i : i * g->lda + k));
                    size_t ib = (size_t)(g->b_offset + p * g->stride_b +
                                         (g->trans_b ? j * g->ldb + k : k * g->ldb + j));
                    sum += (byte_value(g->type_a, a[ia]) - g->zero_a) *
                           (byte_value(g->type_b, b[ib]) - g->zero_b);
                }
                uint32_t wrapped = (uint32_t)(uint64_t)sum; /* modulo 2^32 */
                size_t ic = (size_t)(g->c_offset + p * g->stride_c + i * g->ldc + j);
                if (g->output == OG_INT8_OUTPUT_INT32) {
                    out[ic] = wrapped;
                } else if (g->output == OG_INT8_OUTPUT_INT32_ADD) {
                    out[ic] = c_in[ic] + wrapped;
                } else {
                    float sb = col_scales ? col_scales[g->col_scale_offset + j] : g->scale_b;
                    float s = g->scale_a * sb;
                    float r = (float)(int32_t)wrapped * s;
                    if (bias)
                        r = r + bias[g->bias_offset + j];
                    out[ic] = float_bits(og_reference_activation(g->activation, r));
                }
            }
}

size_t og_int8_mismatches(const og_int8gemm_args *g, const uint32_t *want, const uint32_t *got,
                          size_t n, char *why, size_t len)
{
    size_t bad = 0;
    for (size_t e = 0; e < n; e++) {
        if (want[e] == got[e])
            continue;
        if (bad++ == 0) {
            if (g->output == OG_INT8_OUTPUT_FLOAT32)
                snprintf(why, len, "C element %zu is %a, the reference %a", e,
                         (double)bits_float(got[e]), (double)bits_float(want[e]));
            else
                snprintf(why, len, "C element %zu is %d, the reference %d", e, (int32_t)got[e],
                         (int32_t)want[e]);
        }
    }
    if (bad > 1) {
        size_t used = strlen(why);
        snprintf(why + used, len - used, " (%zu elements differ)", bad);
    }
    return bad;
}

/* A leading dimension: x rounded up to a multiple of 4, at least 4. */
static int64_t round4(int64_t x)
{
    return x < 1 ? 4 : (x + 3) / 4 * 4;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static og_status problem_create(og_context *ctx, og_dtype type_a, og_dtype type_b, int trans_a,
                                int trans_b, int64_t m, int64_t n, int64_t k, int64_t batch,
                                int words, uint64_t seed, og_int8_problem **out)
{
    *out = NULL;
    og_int8_problem *pr = calloc(1, sizeof *pr);
    if (!pr)
        return og_fail(ctx, OG_ERROR_OUT_OF_MEMORY, "int8gemm: out of memory");
    og_int8gemm_args *g = &pr->args;
    g->trans_a = trans_a;
    g->trans_b = trans_b;
    g->m = m;
    g->n = n;
    g->k = k;
    g->batch = batch;
    g->type_a = type_a;
    g->type_b = type_b;
    /* Zero points away from 0, so a kernel that ignores them fails. */
    g->zero_a = type_a == OG_INT8 ? -3 : 128;
    g->zero_b = type_b == OG_INT8 ? 5 : 121;
    /* Odd leading dimensions: the bytes of a row start anywhere in a word;
     * or whole words, a word beyond the row (not a power of two). */
    pr->words = words;
    g->lda = words ? round4((trans_a ? m : k) + 1) : (trans_a ? m : k) + 3;
    g->ldb = words ? round4((trans_b ? k : n) + 1) : (trans_b ? k : n) + 1;
    g->ldc = round4(n);
    g->stride_a = (trans_a ? k : m) * g->lda + (words ? 4 : 1);
    g->stride_b = (trans_b ? n : k) * g->ldb + (words ? 8 : 2);
    g->stride_c = m * g->ldc;
    og_int8_extents(g, &pr->na, &pr->nb, &pr->nc);
    pr->a = malloc(pr->na + 4);
    pr->b = malloc(pr->nb + 4);
    pr->c0 = malloc(pr->nc * 4 + 4);
    pr->c = malloc(pr->nc * 4 + 4);
    pr->ref = malloc(pr->nc * 4 + 4);
    og_status st = OG_OK;
    if (!pr->a || !pr->b || !pr->c0 || !pr->c || !pr->ref)
        st = og_fail(ctx, OG_ERROR_OUT_OF_MEMORY,
                     "int8gemm: out of memory for a %lldx%lldx%lld problem", (long long)m,
                     (long long)n, (long long)k);
    if (st == OG_OK) {
        for (size_t i = 0; i < pr->na; i++)
            pr->a[i] = (uint8_t)splitmix64(&seed);
        for (size_t i = 0; i < pr->nb; i++)
            pr->b[i] = (uint8_t)splitmix64(&seed);
        for (size_t i = 0; i < pr->nc; i++)
            pr->c0[i] = (uint32_t)splitmix64(&seed);
        og_reference_int8(g, pr->a, pr->b, pr->c0, NULL, NULL, pr->ref);
        st = og_buffer_create(ctx, pr->na, &g->a);
    }
    if (st == OG_OK)
        st = og_buffer_create(ctx, pr->nb, &g->b);
    if (st == OG_OK)
        st = og_buffer_create(ctx, pr->nc * 4, &g->c);
    if (st == OG_OK)
        st = og_buffer_write(g->a, 0, pr->a, pr->na);
    if (st == OG_OK)
        st = og_buffer_write(g->b, 0, pr->b, pr->nb);
    if (st != OG_OK) {
        og_int8_problem_destroy(pr);
        return st;
    }
    *out = pr;
    return OG_OK;
}

og_status og_int8_problem_create(og_context *ctx, og_dtype type_a, og_dtype type_b, int trans_a,
                                 int trans_b, int64_t m, int64_t n, int64_t k, int64_t batch,
                                 uint64_t seed, og_int8_problem **out)
{
    return problem_create(ctx, type_a, type_b, trans_a, trans_b, m, n, k, batch, 0, seed, out);
}

og_status og_int8_problem_create_words(og_context *ctx, og_dtype type_a, og_dtype type_b,
                                       int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                                       int64_t batch, uint64_t seed, og_int8_problem **out)
{
    return problem_create(ctx, type_a, type_b, trans_a, trans_b, m, n, k, batch, 1, seed, out);
}

void og_int8_problem_destroy(og_int8_problem *pr)
{
    if (!pr)
        return;
    og_buffer_destroy(pr->args.a);
    og_buffer_destroy(pr->args.b);
    og_buffer_destroy(pr->args.c);
    free(pr->a);
    free(pr->b);
    free(pr->c0);
    free(pr->c);
    free(pr->ref);
    free(pr);
}

og_status og_int8_problem_verify(og_int8gemm *g, og_int8_problem *pr, const og_params *p,
                                 int *accepted, char *why, size_t len)
{
    og_context *ctx = og_int8gemm_context(g);
    *accepted = 0;
    og_status st = og_buffer_write(pr->args.c, 0, pr->c0, pr->nc * 4);
    if (st != OG_OK)
        return st;
    st = p ? og_int8gemm_run_with(g, &pr->args, p) : og_int8gemm_run(g, &pr->args);
    if (st != OG_OK) {
        snprintf(why, len, "%s", og_context_last_error(ctx));
        return st;
    }
    if ((st = og_buffer_read(pr->args.c, 0, pr->c, pr->nc * 4)) != OG_OK)
        return st;
    *accepted = og_int8_mismatches(&pr->args, pr->ref, pr->c, pr->nc, why, len) == 0;
    return OG_OK;
}

og_status og_int8_candidate_verify(og_int8gemm *g, og_int8_problem *pr, const og_params *p,
                                   int *accepted, char *why, size_t len)
{
    og_status st = og_int8_problem_verify(g, pr, p, accepted, why, len);
    /* Ragged shapes around the tile boundaries, batched (docs/reference-design.md,
     * invariant 3);
     * the skinny kernel keeps M <= 16 and cuts columns and slices raggedly.
     * The first in the problem's layout, the second with odd leading
     * dimensions (word loads fall back to bytes). */
    int64_t ragged[2][4] = {{p->bm + 1, p->bn - 1, p->bk + 3, 2},
                            {2 * p->bm - 1, 2 * p->bn + 1, 2 * p->bk + 17, 1}};
    if (!og_family_can(p, OG_FAMILY_TILED)) {
        int64_t rows[2][4] = {{p->rows + 1, p->cols + 1, 3 * p->slices + 5, 2},
                              {16, 2 * p->cols - 1, p->slices - 1, 1}};
        memcpy(ragged, rows, sizeof ragged);
    }
    for (int i = 0; i < 2 && st == OG_OK && *accepted; i++) {
        og_int8_problem *small;
        st = problem_create(og_int8gemm_context(g), pr->args.type_a, pr->args.type_b,
                            pr->args.trans_a, pr->args.trans_b, ragged[i][0], ragged[i][1],
                            ragged[i][2], ragged[i][3], i == 0 && pr->words, 77 + (uint64_t)i,
                            &small);
        if (st != OG_OK)
            break;
        st = og_int8_problem_verify(g, small, p, accepted, why, len);
        if (st == OG_OK && !*accepted) {
            size_t used = strlen(why);
            snprintf(why + used, len - used, " at %lldx%lldx%lld", (long long)ragged[i][0],
                     (long long)ragged[i][1], (long long)ragged[i][2]);
        }
        og_int8_problem_destroy(small);
    }
    return st;
}
