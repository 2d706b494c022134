/*
 * One SGEMM call as netlib's Fortran reference BLAS defines it (sgemm.f,
 * LAPACK 3.11): column-major,
 *
 *     C := alpha * op(A) * op(B) + beta * C,
 *
 * op(A) M x K, op(B) K x N, C M x N; element (i, j) of a matrix X with
 * leading dimension ldx lies at X[i + j * ldx]. transa and transb are 'N'
 * (op(X) = X) or 'T' (op(X) = X^T) once checked ('C' is read as 'T': real
 * data). cblas_sgemm's row-major calls are turned into this form by
 * swapping A and B, as netlib's CBLAS does (ogb_api.c).
 */
#ifndef OGB_CALL_H
#define OGB_CALL_H

typedef struct ogb_call {
    char transa, transb; /* 'N' or 'T' after ogb_check */
    int m, n, k;
    float alpha, beta;
    const float *a;
    int lda;
    const float *b;
    int ldb;
    float *c;
    int ldc;
} ogb_call;

/* Elements a column-major operand of rows x cols with leading dimension ld
 * spans from its first element: ld * (cols - 1) + rows, 0 when either is 0. */
static inline long long ogb_span(long long rows, long long cols, long long ld)
{
    return rows == 0 || cols == 0 ? 0 : ld * (cols - 1) + rows;
}

/* Rows and columns of A and B as stored (netlib's NROWA, NROWB and the
 * columns that go with them). */
static inline long long ogb_a_rows(const ogb_call *c) { return c->transa == 'N' ? c->m : c->k; }
static inline long long ogb_a_cols(const ogb_call *c) { return c->transa == 'N' ? c->k : c->m; }
static inline long long ogb_b_rows(const ogb_call *c) { return c->transb == 'N' ? c->k : c->n; }
static inline long long ogb_b_cols(const ogb_call *c) { return c->transb == 'N' ? c->n : c->k; }

#endif /* OGB_CALL_H */
