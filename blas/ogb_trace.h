/* ONEGPU_BLAS_TRACE: one line a call. */
#ifndef OGB_TRACE_H
#define OGB_TRACE_H

#include "ogb_call.h"

/* Writes one line for a call to the trace (nothing when tracing is off):
 *   onegpu_blas pid=P cblas_sgemm N T m=M n=N k=K lda=.. ldb=.. ldc=.. alpha=.. beta=.. -> WHERE: WHY
 * `api` names the entry point, `where` is gpu, cpu, host (the reference
 * loops inside this library), none (quick return) or error (a bad
 * argument, reported through xerbla_ / cblas_xerbla). The line is one
 * write(2) to a file opened with O_APPEND, so lines of threads and
 * processes sharing the file do not interleave. */
void ogb_trace(const char *api, const ogb_call *call, const char *where, const char *why);

/* Whether tracing is on (ONEGPU_BLAS_TRACE): callers format a reason only then. */
int ogb_trace_on(void);

#endif /* OGB_TRACE_H */
