/* Host side of verification: element access, random data, the float64 reference
 * and the design's error metric (reference design, "Accuracy"; docs/reference-design.md). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "og_tuner.h"

/* Threads of the float64 reference at most. */
#define OG_REFERENCE_THREADS 32

double og_dtype_bound(og_dtype t)
{
    return t == OG_F16 ? 2e-3 : t == OG_BF16 ? 8e-3 : 1e-5;
}

int og_dtype_parse(const char *s, og_dtype *out)
{
    static const char *names[] = {"f32", "f16", "bf16"};
    for (int i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (og_dtype)i;
            return 0;
        }
    return -1;
}

double og_elem(og_dtype t, const void *data, size_t idx)
{
    if (t == OG_F32)
        return ((const float *)data)[idx];
    uint16_t h = ((const uint16_t *)data)[idx];
    return t == OG_F16 ? og_f16_to_f32(h) : og_bf16_to_f32(h);
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void og_fill_random(og_dtype t, void *dst, size_t n, uint64_t *seed)
{
    for (size_t i = 0; i < n; i++) {
        float v = (float)(splitmix64(seed) >> 40) * (2.0f / 16777216.0f) - 1.0f;
        if (t == OG_F32)
            ((float *)dst)[i] = v;
        else
            ((uint16_t *)dst)[i] = t == OG_F16 ? og_f32_to_f16(v, OG_ROUND_NEAREST_EVEN)
                                               : og_f32_to_bf16(v, OG_ROUND_NEAREST_EVEN);
    }
}

static size_t operand_end(int64_t off, int64_t batch, int64_t stride, int64_t rows, int64_t ld,
                          int64_t cols)
{
    if (rows == 0 || cols == 0)
        return 0;
    return (size_t)(off + (batch - 1) * stride + (rows - 1) * ld + cols);
}

void og_gemm_extents(const og_gemm_args *g, size_t *a, size_t *b, size_t *c)
{
    int64_t batch = g->batch ? g->batch : 1;
    *a = g->k == 0 ? 0
                   : operand_end(g->a_offset, batch, g->stride_a, g->trans_a ? g->k : g->m, g->lda,
                                 g->trans_a ? g->m : g->k);
    *b = g->k == 0 ? 0
                   : operand_end(g->b_offset, batch, g->stride_b, g->trans_b ? g->n : g->k, g->ldb,
                                 g->trans_b ? g->k : g->n);
    *c = operand_end(g->c_offset, batch, g->stride_c, g->m, g->ldc, g->n);
}

/* Rows [i0, i1) of one product: the i-k-j loop over op(A) and op(B) held
 * as dense doubles, then alpha and beta. */
typedef struct ref_rows {
    const og_gemm_args *g;
    const double *opa, *opb;
    const float *c_in;
    double *ref;
    int64_t p, i0, i1;
} ref_rows;

static void *reference_rows(void *user)
{
    const ref_rows *w = user;
    const og_gemm_args *g = w->g;
    int64_t N = g->n, K = g->k;
    double *row = malloc(sizeof(double) * (size_t)(N + 1));
    if (!row)
        abort(); /* the test oracle cannot go on without memory */
    for (int64_t i = w->i0; i < w->i1; i++) {
        memset(row, 0, sizeof(double) * (size_t)N);
        for (int64_t k = 0; k < K; k++) {
            double av = w->opa[i * K + k];
            for (int64_t j = 0; j < N; j++)
                row[j] += av * w->opb[k * N + j];
        }
        for (int64_t j = 0; j < N; j++) {
            size_t ci = (size_t)(g->c_offset + w->p * g->stride_c + i * g->ldc + j);
            /* alpha = 0 or K = 0: beta * C alone (BLAS's rule, onegpu.h). */
            int product = g->alpha != 0.0f && K > 0;
            double r = product ? (double)g->alpha * row[j] : 0.0;
            if (g->beta != 0.0f)
                r = product ? r + (double)g->beta * w->c_in[ci] : (double)g->beta * w->c_in[ci];
            w->ref[ci] = r;
        }
    }
    free(row);
    return NULL;
}

void og_reference_gemm(og_dtype t, const og_gemm_args *g, const void *a, const void *b,
                       const float *c_in, double *ref)
{
    size_t na, nb, nc;
    og_gemm_extents(g, &na, &nb, &nc);
    for (size_t i = 0; i < nc; i++)
        ref[i] = c_in[i];
    int64_t batch = g->batch ? g->batch : 1, M = g->m, N = g->n, K = g->k;
    /* op(A) and op(B) as dense doubles, so the i-k-j loop streams rows. */
    double *opa = malloc(sizeof(double) * (size_t)(M * K + 1));
    double *opb = malloc(sizeof(double) * (size_t)(K * N + 1));
    if (!opa || !opb)
        abort(); /* the test oracle cannot go on without memory */
    /* Large products (the device check's 4096 cubed) split their rows over
     * the host's cores; every element is summed by one thread, in one order. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = (double)M * (double)N * (double)K < 1e8 || cores < 2 ? 1
                  : cores > OG_REFERENCE_THREADS                       ? OG_REFERENCE_THREADS
                                                                       : (int)cores;
    for (int64_t p = 0; p < batch; p++) {
        for (int64_t i = 0; i < M; i++)
            for (int64_t k = 0; k < K; k++)
                opa[i * K + k] = og_elem(t, a,
                                         (size_t)(g->a_offset + p * g->stride_a +
                                                  (g->trans_a ? k * g->lda + i : i * g->lda + k)));
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < N; j++)
                opb[k * N + j] = og_elem(t, b,
                                         (size_t)(g->b_offset + p * g->stride_b +
                                                  (g->trans_b ? j * g->ldb + k : k * g->ldb + j)));
        ref_rows work[OG_REFERENCE_THREADS];
        pthread_t ids[OG_REFERENCE_THREADS];
        uint32_t started = 0;
        for (int w = 0; w < threads; w++) {
            work[w] = (ref_rows){g, opa, opb, c_in, ref, p, M * w / threads, M * (w + 1) / threads};
            if (w > 0 && pthread_create(&ids[w], NULL, reference_rows, &work[w]) == 0)
                started |= 1u << w;
            else if (w > 0)
                reference_rows(&work[w]); /* no thread: the same rows here */
        }
        reference_rows(&work[0]);
        for (int w = 1; w < threads; w++)
            if (started & (1u << w))
                pthread_join(ids[w], NULL);
    }
    free(opa);
    free(opb);
}

/* One product term, rounded as the device's shader fma rounds: once
 * (fused) or product and sum apart. */
static float fma_step(float av, float bv, float acc, int fused)
{
    if (fused)
        return fmaf(av, bv, acc);
    volatile float prod = av * bv; /* rounded on its own */
    return acc + prod;
}

/* op(A)(i, k) * op(B)(k, j) of product p, both as float. */
static void term(og_dtype t, const og_gemm_args *g, const void *a, const void *b, int64_t p,
                 int64_t i, int64_t j, int64_t k, float *av, float *bv)
{
    *av = (float)og_elem(
        t, a,
        (size_t)(g->a_offset + p * g->stride_a + (g->trans_a ? k * g->lda + i : i * g->lda + k)));
    *bv = (float)og_elem(
        t, b,
        (size_t)(g->b_offset + p * g->stride_b + (g->trans_b ? j * g->ldb + k : k * g->ldb + j)));
}

/* Terms k0 .. k1-1 in the tile's order: blocked (chains of 16 fma, blocks of
 * two chains, groups of four blocks, groups added in increasing k, all
 * counted from k0) or one chain. */
static float range_dot(og_dtype t, const og_gemm_args *g, const void *a, const void *b, int fused,
                       og_acc acc, int64_t p, int64_t i, int64_t j, int64_t k0, int64_t k1)
{
    float tot = 0.0f, grp = 0.0f, blk = 0.0f, av, bv;
    if (acc == OG_ACC_CHAIN) {
        for (int64_t k = k0; k < k1; k++) {
            term(t, g, a, b, p, i, j, k, &av, &bv);
            tot = fma_step(av, bv, tot, fused);
        }
        return tot;
    }
    int64_t chunks = (k1 - k0 + 15) / 16;
    for (int64_t s = 0; s < chunks; s++) {
        float ch = 0.0f;
        for (int64_t k = k0 + 16 * s; k < k1 && k < k0 + 16 * s + 16; k++) {
            term(t, g, a, b, p, i, j, k, &av, &bv);
            ch = fma_step(av, bv, ch, fused);
        }
        int last = s == chunks - 1;
        blk = s % 2 == 0 ? ch : blk + ch;
        if (s % 2 == 1 || last)
            grp = (s / 2) % 4 == 0 ? blk : grp + blk;
        if (((s / 2) % 4 == 3 && s % 2 == 1) || last)
            tot = tot + grp;
    }
    return tot;
}

/* One element's sum in the order o. */
static float ordered_dot(og_dtype t, const og_gemm_args *g, const void *a, const void *b, int fused,
                         const og_order *o, int64_t p, int64_t i, int64_t j)
{
    float av, bv;
    if (o->slices > 0) {
        /* Slice s chains the units s, s + S, ... of `unit` consecutive k in
         * increasing k; the slice sums are added in order, or in the decode
         * kernel's tree (s takes s + S/2, then s + S/4, ..., 1). */
        float parts[OG_ORDER_SLICES_MAX];
        int64_t unit = o->unit > 1 ? o->unit : 1;
        float tot = 0.0f;
        for (int64_t s = 0; s < o->slices; s++) {
            float part = 0.0f;
            for (int64_t k0 = s * unit; k0 < g->k; k0 += o->slices * unit)
                for (int64_t k = k0; k < k0 + unit && k < g->k; k++) {
                    term(t, g, a, b, p, i, j, k, &av, &bv);
                    part = fma_step(av, bv, part, fused);
                }
            if (o->tree)
                parts[s] = part;
            else
                tot = s == 0 ? part : tot + part;
        }
        for (int64_t h = o->slices / 2; o->tree && h > 0; h /= 2)
            for (int64_t s = 0; s < h; s++)
                parts[s] = parts[s] + parts[s + h];
        return o->tree ? parts[0] : tot;
    }
    /* Split-k: range sums added in range order (one range: the whole k). */
    float tot = 0.0f;
    for (uint32_t r = 0; r < o->ranges; r++) {
        int64_t k0 = (int64_t)r * o->range_len;
        int64_t k1 = o->ranges == 1 || k0 + o->range_len > g->k ? g->k : k0 + o->range_len;
        float part = range_dot(t, g, a, b, fused, o->acc, p, i, j, k0, k1);
        tot = r == 0 ? part : tot + part;
    }
    return tot;
}

float og_reference_activation(og_activation act, float x)
{
    if (act == OG_ACTIVATION_RELU)
        return x < 0.0f ? 0.0f : x;
    if (act != OG_ACTIVATION_GELU_ERF && act != OG_ACTIVATION_GELU_TANH)
        return x;
    if (isinf(x))
        return x > 0 ? x : -0.0f;
    double d = x;
    if (act == OG_ACTIVATION_GELU_ERF)
        return (float)(0.5 * d * erfc(-d / sqrt(2.0)));
    /* sqrt(2 / pi) */
    return (float)(0.5 * d * (1.0 + tanh(0.7978845608028654 * (d + 0.044715 * d * d * d))));
}

void og_reference_ordered(og_dtype t, const og_gemm_args *g, const void *a, const void *b,
                          const float *c_in, const float *bias, int fused, const og_order *o,
                          float *out)
{
    size_t na, nb, nc;
    og_gemm_extents(g, &na, &nb, &nc);
    memcpy(out, c_in, nc * sizeof *out);
    int64_t batch = g->batch ? g->batch : 1;
    for (int64_t p = 0; p < batch; p++)
        for (int64_t i = 0; i < g->m; i++)
            for (int64_t j = 0; j < g->n; j++) {
                size_t ci = (size_t)(g->c_offset + p * g->stride_c + i * g->ldc + j);
                /* Each operation rounds on its own, none contracted:
                 * alpha * sum, + beta * C, + bias, then the activation;
                 * with alpha = 0 or K = 0, beta * C alone (onegpu.h). */
                int product = g->alpha != 0.0f && g->k > 0;
                volatile float r = product ? g->alpha * ordered_dot(t, g, a, b, fused, o, p, i, j)
                                           : 0.0f;
                if (g->beta != 0.0f) {
                    volatile float old = g->beta * c_in[ci];
                    r = product ? r + old : old;
                }
                if (bias)
                    r = r + bias[g->bias_offset + j];
                out[ci] = og_reference_activation(g->activation, r);
            }
}

/* Marks the written region of C (nc elements): 1 inside, 0 outside. */
static unsigned char *written_mask(const og_gemm_args *g, size_t nc)
{
    unsigned char *mask = calloc(nc ? nc : 1, 1);
    int64_t batch = g->batch ? g->batch : 1;
    if (!mask)
        abort();
    for (int64_t p = 0; p < batch; p++)
        for (int64_t i = 0; i < g->m; i++)
            memset(mask + g->c_offset + p * g->stride_c + i * g->ldc, 1, (size_t)g->n);
    return mask;
}

size_t og_compare(const og_gemm_args *g, const double *ref, const float *got, const float *c_in,
                  double *metric, double *max_rel)
{
    size_t na, nb, nc, bad = 0;
    og_gemm_extents(g, &na, &nb, &nc);
    unsigned char *mask = written_mask(g, nc);
    double max_ref = 0, max_diff = 0;
    for (size_t i = 0; i < nc; i++)
        if (mask[i] && fabs(ref[i]) > max_ref)
            max_ref = fabs(ref[i]);
    *max_rel = 0;
    for (size_t i = 0; i < nc; i++) {
        if (!mask[i]) {
            bad += memcmp(&got[i], &c_in[i], sizeof(float)) != 0;
            continue;
        }
        if (!isfinite(got[i]) && isfinite(ref[i])) {
            bad++;
            continue;
        }
        double d = fabs((double)got[i] - ref[i]);
        if (d > max_diff)
            max_diff = d;
        if (fabs(ref[i]) > 1e-3 * max_ref && d / fabs(ref[i]) > *max_rel)
            *max_rel = d / fabs(ref[i]);
    }
    *metric = max_ref > 0 ? max_diff / max_ref : max_diff;
    free(mask);
    return bad;
}
