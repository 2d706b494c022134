/* The CPU BLAS, opened by path (ogb_cpu.h). */
#define _GNU_SOURCE /* dladdr */
#include "ogb_cpu.h"

#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ogb_env.h"
#include "ogb_ref.h"

/* netlib's Fortran interface, gfortran's calling convention (hidden
 * lengths of the CHARACTER arguments last). */
typedef void ogb_sgemm_fn(const char *transa, const char *transb, const int *m, const int *n,
                          const int *k, const float *alpha, const float *a, const int *lda,
                          const float *b, const int *ldb, const float *beta, float *c,
                          const int *ldc, size_t transa_len, size_t transb_len);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void *handle;
static ogb_sgemm_fn *cpu_sgemm;
static char path[PATH_MAX] = "none";

/* Whether `fn` lies in the same shared object as this function. */
static int is_ours(void *fn)
{
    Dl_info mine, theirs;
    return dladdr((void *)&ogb_cpu_sgemm, &mine) && dladdr(fn, &theirs) &&
           mine.dli_fbase == theirs.dli_fbase;
}

/* Opens `name` and keeps it when its sgemm_ is another library's;
 * returns non-zero then. */
static int try_open(const char *name)
{
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 0;
    void *fn = dlsym(h, "sgemm_");
    if (!fn || is_ours(fn)) {
        dlclose(h);
        return 0;
    }
    handle = h;
    memcpy(&cpu_sgemm, &fn, sizeof fn); /* POSIX: a data pointer to a function pointer */
    Dl_info info;
    const char *where = dladdr(fn, &info) && info.dli_fname ? info.dli_fname : name;
    if (!realpath(where, path))
        strncpy(path, where, sizeof path - 1);
    return 1;
}

static void open_cpu_blas(void)
{
    const char *lib = ogb_env_get()->cpu_lib;
    if ((lib && try_open(lib)) || try_open("libblas.so.3"))
        return;
    glob_t g;
    if (glob("/etc/alternatives/libblas.so.3-*", 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc && !handle; i++)
            try_open(g.gl_pathv[i]);
    }
    globfree(&g);
}

void ogb_cpu_sgemm(const ogb_call *call, const char **where)
{
    pthread_once(&once, open_cpu_blas);
    if (!cpu_sgemm) {
        ogb_ref_sgemm(call);
        *where = "host";
        return;
    }
    cpu_sgemm(&call->transa, &call->transb, &call->m, &call->n, &call->k, &call->alpha, call->a,
              &call->lda, call->b, &call->ldb, &call->beta, call->c, &call->ldc, 1, 1);
    *where = "cpu";
}

const char *ogb_cpu_path(void)
{
    pthread_once(&once, open_cpu_blas);
    return path;
}

void *ogb_cpu_symbol(const char *name)
{
    pthread_once(&once, open_cpu_blas);
    return handle ? dlsym(handle, name) : NULL;
}
