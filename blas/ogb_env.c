/* The drop-in's settings from the environment (docs/blas.md). */
#include "ogb_env.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static ogb_env env;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* NULL for an unset or empty variable. */
static const char *var(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static int open_trace(const char *v)
{
    if (!v || !strcmp(v, "0"))
        return -1;
    if (!strcmp(v, "1") || !strcmp(v, "stderr"))
        return 2;
    return open(v, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

static void read_env(void)
{
    const char *force = var("ONEGPU_BLAS_FORCE"), *mode = var("ONEGPU_BLAS_MODE");
    env.force = force && !strcmp(force, "cpu")   ? OGB_FORCE_CPU
                : force && !strcmp(force, "gpu") ? OGB_FORCE_GPU
                                                 : OGB_FORCE_NONE;
    env.trace_fd = open_trace(var("ONEGPU_BLAS_TRACE"));
    env.cpu_lib = var("ONEGPU_BLAS_CPU_LIB");
    env.model = var("ONEGPU_BLAS_MODEL");
    env.runtime = var("ONEGPU_BLAS_RUNTIME");
    env.deterministic = mode && !strcmp(mode, "deterministic");
    const char *tile = var("ONEGPU_BLAS_TILE_BYTES");
    env.tile_bytes = tile ? strtoull(tile, NULL, 10) : 0;
}

const ogb_env *ogb_env_get(void)
{
    pthread_once(&once, read_env);
    return &env;
}
