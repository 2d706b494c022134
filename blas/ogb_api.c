/*
 * The entry points of libonegpu_blas.so, the only symbols it exports:
 * netlib's Fortran SGEMM (sgemm_, and sgemm for callers without the
 * trailing underscore) and CBLAS's cblas_sgemm, with netlib's semantics
 * (sgemm.f and cblas_sgemm.c of LAPACK 3.11): argument checks in netlib's
 * order reported through xerbla_ / cblas_xerbla with nothing touched, the
 * quick return, alpha = 0 reading neither A nor B, beta = 0 never reading C,
 * and only the M x N block of C written. Nothing runs at load time.
 */
#include "ogb_call.h"
#include "ogb_check.h"
#include "ogb_route.h"
#include "ogb_trace.h"
#include "ogb_xerbla.h"

#include <stdio.h>

#define OGB_EXPORT __attribute__((visibility("default")))

/* CBLAS's enumerations (cblas.h). */
enum { OGB_ROW_MAJOR = 101, OGB_COL_MAJOR = 102 };
enum { OGB_NO_TRANS = 111, OGB_TRANS = 112, OGB_CONJ_TRANS = 113 };

/* Fortran's interface: every argument by reference. gfortran callers add
 * the lengths of the two CHARACTER arguments, which are not read. */
OGB_EXPORT void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                       const float *alpha, const float *a, const int *lda, const float *b, const int *ldb,
                       const float *beta, float *c, const int *ldc);
OGB_EXPORT void sgemm(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                      const float *alpha, const float *a, const int *lda, const float *b, const int *ldb,
                      const float *beta, float *c, const int *ldc);
/* CBLAS's interface; layout, trans_a and trans_b are CBLAS_LAYOUT and
 * CBLAS_TRANSPOSE values (int-sized enumerations). */
OGB_EXPORT void cblas_sgemm(int layout, int trans_a, int trans_b, int m, int n, int k, float alpha,
                            const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);

/* Traces a call refused for argument `pos` of the interface `api`. */
static void trace_error(const char *api, const ogb_call *call, int pos, int reported)
{
    char why[96];
    snprintf(why, sizeof why, "parameter %d is invalid (%s)", pos,
             reported ? "reported to the error handler" : "no error handler found");
    ogb_trace(api, call, "error", why);
}

void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const float *alpha, const float *a, const int *lda, const float *b, const int *ldb,
            const float *beta, float *c, const int *ldc)
{
    ogb_call call = {*transa, *transb, *m, *n, *k, *alpha, *beta, a, *lda, b, *ldb, c, *ldc};
    int info = ogb_check(&call);
    if (info) {
        trace_error("sgemm_", &call, info, ogb_xerbla(info));
        return;
    }
    ogb_route("sgemm_", &call);
}

void sgemm(const char *transa, const char *transb, const int *m, const int *n, const int *k,
           const float *alpha, const float *a, const int *lda, const float *b, const int *ldb,
           const float *beta, float *c, const int *ldc)
{
    sgemm_(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* netlib's letter for a CBLAS_TRANSPOSE, 0 for none. */
static char letter(int trans)
{
    return trans == OGB_NO_TRANS ? 'N' : trans == OGB_TRANS ? 'T' : trans == OGB_CONJ_TRANS ? 'C' : 0;
}

void cblas_sgemm(int layout, int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a,
                 int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
    char ta = letter(trans_a), tb = letter(trans_b);
    int row = layout == OGB_ROW_MAJOR;
    /* A row-major call is the column-major call of the transposed product
     * (netlib's cblas_sgemm.c): A and B, M and N swapped. */
    ogb_call call = row ? (ogb_call){tb, ta, n, m, k, alpha, beta, b, ldb, a, lda, c, ldc}
                        : (ogb_call){ta, tb, m, n, k, alpha, beta, a, lda, b, ldb, c, ldc};
    if (!row && layout != OGB_COL_MAJOR) {
        trace_error("cblas_sgemm", &call, 1, ogb_cblas_xerbla(1, 0, "Illegal layout setting, %d\n", layout));
        return;
    }
    if (!ta) {
        trace_error("cblas_sgemm", &call, 2, ogb_cblas_xerbla(2, row, "Illegal TransA setting, %d\n", trans_a));
        return;
    }
    if (!tb) {
        trace_error("cblas_sgemm", &call, 3, ogb_cblas_xerbla(3, row, "Illegal TransB setting, %d\n", trans_b));
        return;
    }
    int info = ogb_check(&call);
    if (info) {
        int reported = ogb_cblas_xerbla(info + 1, row, "", 0);
        trace_error("cblas_sgemm", &call, ogb_cblas_position(info + 1, row), reported);
        return;
    }
    ogb_route("cblas_sgemm", &call);
}
