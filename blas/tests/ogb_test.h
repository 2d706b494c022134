/* Helpers of the drop-in's Criterion tests: its entry points, a reference
 * product in double and the check netlib's tests make. */
#ifndef OGB_TEST_H
#define OGB_TEST_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libonegpu_blas.so's entry points (netlib's interfaces). */
void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const float *alpha, const float *a, const int *lda, const float *b, const int *ldb,
            const float *beta, float *c, const int *ldc);
void cblas_sgemm(int layout, int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a,
                 int lda, const float *b, int ldb, float beta, float *c, int ldc);
enum { ROW_MAJOR = 101, COL_MAJOR = 102, NO_TRANS = 111, TRANS = 112 };

/* A column-major product, its operands and the C it started from. */
typedef struct product {
    char ta, tb;
    int m, n, k, lda, ldb, ldc;
    float alpha, beta;
    float *a, *b, *c, *c0;
} product;

/* Values in [-1, 1) from a small linear congruential generator. */
static inline float next_value(unsigned *seed)
{
    *seed = *seed * 1664525u + 1013904223u;
    return (float)(*seed >> 8) / 8388608.0f - 1.0f;
}

/* A product of the given shape with leading dimensions `pad` above the
 * minimum, random operands and C (NaN in C when beta = 0: it must never
 * be read). */
static inline product make_product(char ta, char tb, int m, int n, int k, int pad, float alpha, float beta,
                                   unsigned seed)
{
    product p = {ta, tb, m, n, k, 0, 0, 0, alpha, beta, NULL, NULL, NULL, NULL};
    int ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m, br = tb == 'N' ? k : n, bc = tb == 'N' ? n : k;
    p.lda = (ar > 1 ? ar : 1) + pad;
    p.ldb = (br > 1 ? br : 1) + pad;
    p.ldc = (m > 1 ? m : 1) + pad;
    size_t na = (size_t)p.lda * (size_t)(ac ? ac : 1), nb = (size_t)p.ldb * (size_t)(bc ? bc : 1);
    size_t nc = (size_t)p.ldc * (size_t)(n ? n : 1);
    p.a = malloc(na * sizeof(float));
    p.b = malloc(nb * sizeof(float));
    p.c = malloc(nc * sizeof(float));
    p.c0 = malloc(nc * sizeof(float));
    cr_assert(p.a && p.b && p.c && p.c0);
    for (size_t i = 0; i < na; i++)
        p.a[i] = next_value(&seed);
    for (size_t i = 0; i < nb; i++)
        p.b[i] = next_value(&seed);
    for (size_t i = 0; i < nc; i++)
        p.c[i] = beta == 0.0f ? NAN : next_value(&seed);
    memcpy(p.c0, p.c, nc * sizeof(float));
    return p;
}

static inline void free_product(product *p)
{
    free(p->a);
    free(p->b);
    free(p->c);
    free(p->c0);
}

/* Runs the product through sgemm_. */
static inline void run_fortran(product *p)
{
    sgemm_(&p->ta, &p->tb, &p->m, &p->n, &p->k, &p->alpha, p->a, &p->lda, p->b, &p->ldb, &p->beta, p->c, &p->ldc);
}

/* Whether C is right: each element of the M x N block within netlib's test
 * ratio (sblat3's SMMCH: error over eps times the sum of magnitudes, below
 * 16) of a product in double, and every element outside the block (the
 * rows between M and ldc) bit for bit as it was; of the block's rows, every
 * step-th and the last only (step 1: all). Returns 0 or the failing
 * element's index plus one, with a message in msg. */
static inline size_t check_rows(const product *p, int step, char *msg, size_t len)
{
    for (int j = 0; j < p->n; j++)
        for (int i = 0; i < p->ldc; i++) {
            size_t at = (size_t)i + (size_t)j * (size_t)p->ldc;
            if (i < p->m && i % step != 0 && i != p->m - 1)
                continue;
            if (i >= p->m) {
                if (memcmp(&p->c[at], &p->c0[at], sizeof(float))) {
                    snprintf(msg, len, "C(%d, %d) outside the block changed", i, j);
                    return at + 1;
                }
                continue;
            }
            double sum = 0, mag = 0;
            for (int l = 0; l < p->k; l++) {
                double x = p->ta == 'N' ? p->a[i + (size_t)l * p->lda] : p->a[l + (size_t)i * p->lda];
                double y = p->tb == 'N' ? p->b[l + (size_t)j * p->ldb] : p->b[j + (size_t)l * p->ldb];
                sum += x * y;
                mag += fabs(x * y);
            }
            double want = p->alpha * sum, c0 = p->beta == 0.0f ? 0 : p->c0[at];
            want += p->beta * c0;
            mag = fabs(p->alpha) * mag + fabs(p->beta * c0);
            double err = fabs(p->c[at] - want), eps = 1.1920929e-7;
            if (!(err <= 16 * eps * (mag > 0 ? mag : 1))) {
                snprintf(msg, len, "%c%c %dx%dx%d C(%d, %d) = %.9g, want %.9g", p->ta, p->tb, p->m, p->n, p->k, i,
                         j, p->c[at], want);
                return at + 1;
            }
        }
    return 0;
}

/* check_rows of every row. */
static inline size_t check_product(const product *p, char *msg, size_t len)
{
    return check_rows(p, 1, msg, len);
}

/* Lines of the trace file that contain `needle`. */
static inline int count_lines(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    int count = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        count += strstr(line, needle) != NULL;
    fclose(f);
    return count;
}

#endif /* OGB_TEST_H */
