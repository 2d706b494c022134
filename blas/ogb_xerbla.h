/* Reporting a bad argument the way netlib does: xerbla_ and cblas_xerbla. */
#ifndef OGB_XERBLA_H
#define OGB_XERBLA_H

/* Calls xerbla_("SGEMM ", &info) (netlib's sgemm.f) for the Fortran
 * entry points. The handler is looked up at each error: first in the
 * process's global scope (dlsym(RTLD_DEFAULT): a program's own XERBLA, as
 * netlib's test programs have, or the BLAS it links), then in the CPU BLAS
 * (ogb_cpu.h). Netlib's handler prints and stops the program; when none is
 * found nothing happens (the trace says so). Returns non-zero when a handler
 * was called. */
int ogb_xerbla(int info);

/* cblas_xerbla(position, "cblas_sgemm", form, value) for cblas_sgemm, as
 * netlib's CBLAS (cblas_sgemm.c, LAPACK 3.11) reports errors. `fortran_pos`
 * is the position in the Fortran call cblas_sgemm turned into, plus one
 * (the layout argument): for a row-major call that call has A and B, M and
 * N swapped, and netlib's cblas_xerbla swaps them back (4 and 5, 9 and 11)
 * while CBLAS's global RowMajorStrg is 1. So, as netlib does, RowMajorStrg
 * is set to 1 around the call when the handler's scope has one (netlib's
 * test programs and libblas.so.3 do; reset to 0 after, as netlib does),
 * and the position is passed unswapped; where there is none, the swapped
 * (true) position is passed. `form` and `value` are netlib's message
 * ("Illegal TransA setting, %d\n") or "" and 0. Looked up as ogb_xerbla
 * does; returns non-zero when a handler was called. */
int ogb_cblas_xerbla(int fortran_pos, int row_major, const char *form, int value);

/* The position in cblas_sgemm's own argument list of `fortran_pos` (as
 * ogb_cblas_xerbla takes it): netlib's cblas_xerbla swap for the gemm
 * routines under RowMajorStrg (4 and 5, 9 and 11) when row_major. */
int ogb_cblas_position(int fortran_pos, int row_major);

#endif /* OGB_XERBLA_H */
