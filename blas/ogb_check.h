/* netlib's argument checks of SGEMM, in its order. */
#ifndef OGB_CHECK_H
#define OGB_CHECK_H

#include "ogb_call.h"

/* Checks transa, transb, m, n, k, lda, ldb and ldc of `call` exactly as
 * netlib's sgemm.f (LAPACK 3.11) does, in its order, and returns the number
 * of the first bad parameter of the Fortran interface (1 transa, 2 transb,
 * 3 M, 4 N, 5 K, 8 lda, 10 ldb, 13 ldc), or 0 when all are valid. transa and
 * transb are read case-insensitively ('N', 'T', 'C'); when valid they are
 * rewritten to 'N' or 'T' ('C' is the transpose of real data). Reads
 * nothing but the scalars. */
int ogb_check(ogb_call *call);

#endif /* OGB_CHECK_H */
