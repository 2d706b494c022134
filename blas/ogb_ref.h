/* netlib's SGEMM loops in C: the product when nothing else can compute it. */
#ifndef OGB_REF_H
#define OGB_REF_H

#include "ogb_call.h"

/* Computes the checked call (ogb_check returned 0, transposes 'N' or 'T')
 * with the loops of netlib's sgemm.f (LAPACK 3.11), after its quick return:
 * alpha = 0 scales C by beta (C = 0 when beta = 0) and reads neither A nor
 * B; otherwise each column of C is scaled first (beta = 0: set to 0, never
 * read) and the products added in netlib's order. Only the M x N block of C
 * is written. Used for alpha = 0 and K = 0, where no product is formed, and
 * when no CPU BLAS can be opened and the GPU cannot run the call. */
void ogb_ref_sgemm(const ogb_call *call);

#endif /* OGB_REF_H */
