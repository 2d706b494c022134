/* ONEGPU_BLAS_TRACE lines (ogb_trace.h). */
#include "ogb_trace.h"

#include <stdio.h>
#include <unistd.h>

#include "ogb_env.h"

/* A transpose letter as printed: '?' for a byte that is not one. */
static char shown(char c)
{
    return c >= 'A' && c <= 'z' ? c : '?';
}

int ogb_trace_on(void)
{
    return ogb_env_get()->trace_fd >= 0;
}

void ogb_trace(const char *api, const ogb_call *call, const char *where, const char *why)
{
    int fd = ogb_env_get()->trace_fd;
    if (fd < 0)
        return;
    char line[512];
    int len = snprintf(line, sizeof line,
                       "onegpu_blas pid=%ld %s %c %c m=%d n=%d k=%d lda=%d ldb=%d ldc=%d alpha=%g beta=%g -> %s: %s\n",
                       (long)getpid(), api, shown(call->transa), shown(call->transb), call->m, call->n, call->k,
                       call->lda, call->ldb, call->ldc, (double)call->alpha, (double)call->beta, where, why);
    if (len >= (int)sizeof line) {
        len = (int)sizeof line;
        line[len - 1] = '\n';
    }
    if (len > 0 && write(fd, line, (size_t)len) < 0)
        return; /* tracing never fails a call */
}
