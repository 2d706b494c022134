/* The CPU BLAS: another library's sgemm_, opened by path. */
#ifndef OGB_CPU_H
#define OGB_CPU_H

#include "ogb_call.h"

/* Runs the checked call on the CPU BLAS's Fortran sgemm_ with the caller's
 * arguments (netlib's interface: pointers to the scalars, the two hidden
 * lengths of the transpose letters passed as 1). The library is opened on
 * first use (thread-safe) from, in order: ONEGPU_BLAS_CPU_LIB;
 * "libblas.so.3" through the dynamic linker's search (on Debian the
 * libblas.so.3 alternative: the reference BLAS, OpenBLAS, BLIS...); the
 * targets of /etc/alternatives/libblas.so.3-*. Each is opened RTLD_LOCAL
 * (its symbols do not join the process's), and refused when the sgemm_ it
 * resolves to lies in this library (dladdr): a preloaded or installed
 * drop-in must never call itself. With none, the call runs netlib's loops
 * inside this library (ogb_ref.h) and *where is set to "host"; otherwise
 * "cpu". Never fails. */
void ogb_cpu_sgemm(const ogb_call *call, const char **where);

/* The path of the CPU BLAS opened (for the trace and the cost model's key),
 * or "none". Opens it when not yet open. */
const char *ogb_cpu_path(void);

/* dlsym on the CPU BLAS, or NULL (none opened, or no such symbol). */
void *ogb_cpu_symbol(const char *name);

#endif /* OGB_CPU_H */
