/* xerbla_ and cblas_xerbla, found at run time (ogb_xerbla.h). */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "ogb_xerbla.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#include "ogb_cpu.h"

typedef void xerbla_fn(const char *srname, const int *info, size_t srname_len);
typedef void cblas_xerbla_fn(int info, const char *rout, const char *form, ...);

/* `name` in the global scope, else in the CPU BLAS; *scope gets the handle
 * searched (RTLD_DEFAULT, or NULL for the CPU BLAS). */
static void *find(const char *name, void **scope)
{
    void *fn = dlsym(RTLD_DEFAULT, name);
    *scope = RTLD_DEFAULT;
    if (!fn) {
        fn = ogb_cpu_symbol(name);
        *scope = NULL;
    }
    return fn;
}

int ogb_xerbla(int info)
{
    void *scope, *p = find("xerbla_", &scope);
    if (!p)
        return 0;
    xerbla_fn *fn;
    memcpy(&fn, &p, sizeof p);
    fn("SGEMM ", &info, 6);
    return 1;
}

int ogb_cblas_position(int pos, int row_major)
{
    if (!row_major)
        return pos;
    switch (pos) {
    case 4: return 5;
    case 5: return 4;
    case 9: return 11;
    case 11: return 9;
    default: return pos;
    }
}

int ogb_cblas_xerbla(int fortran_pos, int row_major, const char *form, int value)
{
    void *scope, *p = find("cblas_xerbla", &scope);
    if (!p)
        return 0;
    cblas_xerbla_fn *fn;
    memcpy(&fn, &p, sizeof p);
    int *strg = scope ? dlsym(scope, "RowMajorStrg") : ogb_cpu_symbol("RowMajorStrg");
    if (strg)
        *strg = row_major;
    fn(strg ? fortran_pos : ogb_cblas_position(fortran_pos, row_major), "cblas_sgemm", form, value);
    if (strg)
        *strg = 0;
    return 1;
}
