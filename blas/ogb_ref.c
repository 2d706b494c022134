/* netlib's SGEMM loops (sgemm.f, LAPACK 3.11) in C, column-major. */
#include "ogb_ref.h"

#include <stddef.h>

#define AT(x, ld, i, j) (x)[(size_t)(i) + (size_t)(j) * (size_t)(ld)]

/* Column j of C scaled by beta before products are added (netlib's loops
 * for op(A) = A): zeroed when beta = 0, left when beta = 1. */
static void scale_column(const ogb_call *c, int j)
{
    if (c->beta == 0.0f)
        for (int i = 0; i < c->m; i++)
            AT(c->c, c->ldc, i, j) = 0.0f;
    else if (c->beta != 1.0f)
        for (int i = 0; i < c->m; i++)
            AT(c->c, c->ldc, i, j) *= c->beta;
}

/* op(A) = A: C(:, j) += (alpha * op(B)(l, j)) * A(:, l) for l in order. */
static void columns_of_a(const ogb_call *c)
{
    for (int j = 0; j < c->n; j++) {
        scale_column(c, j);
        for (int l = 0; l < c->k; l++) {
            float temp = c->alpha * (c->transb == 'N' ? AT(c->b, c->ldb, l, j) : AT(c->b, c->ldb, j, l));
            for (int i = 0; i < c->m; i++)
                AT(c->c, c->ldc, i, j) += temp * AT(c->a, c->lda, i, l);
        }
    }
}

/* op(A) = A^T: C(i, j) = alpha * dot(A(:, i), op(B)(:, j)) + beta * C(i, j). */
static void dots(const ogb_call *c)
{
    for (int j = 0; j < c->n; j++)
        for (int i = 0; i < c->m; i++) {
            float temp = 0.0f;
            for (int l = 0; l < c->k; l++)
                temp += AT(c->a, c->lda, l, i) * (c->transb == 'N' ? AT(c->b, c->ldb, l, j) : AT(c->b, c->ldb, j, l));
            float *cij = &AT(c->c, c->ldc, i, j);
            *cij = c->beta == 0.0f ? c->alpha * temp : c->alpha * temp + c->beta * *cij;
        }
}

void ogb_ref_sgemm(const ogb_call *call)
{
    if (call->alpha == 0.0f) {
        for (int j = 0; j < call->n; j++)
            scale_column(call, j);
        return;
    }
    if (call->transa == 'N')
        columns_of_a(call);
    else
        dots(call);
}
