/* libonegpu opened at the first GPU call (ogb_runtime.h). */
#define _GNU_SOURCE /* dladdr */
#include "ogb_runtime.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "ogb_env.h"

static ogb_runtime rt;
static int opened;

/* The runtime's soname in the directory of this library, or "". */
static void beside_us(char *out, size_t len)
{
    Dl_info info;
    out[0] = '\0';
    if (!dladdr((void *)&ogb_runtime_open, &info) || !info.dli_fname)
        return;
    const char *slash = strrchr(info.dli_fname, '/');
    if (slash)
        snprintf(out, len, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname, OGB_RUNTIME_SONAME);
}

/* Resolves `name` into *slot; non-zero on success. */
static int resolve(void *h, const char *name, void *slot, char *why, size_t len)
{
    void *fn = dlsym(h, name);
    if (!fn) {
        snprintf(why, len, "%s lacks %s", OGB_RUNTIME_SONAME, name);
        return 0;
    }
    memcpy(slot, &fn, sizeof fn);
    return 1;
}

const ogb_runtime *ogb_runtime_open(char *why, size_t len)
{
    if (opened)
        return &rt;
    const char *env = ogb_env_get()->runtime;
    char path[PATH_MAX];
    beside_us(path, sizeof path);
    void *h = dlopen(env ? env : path, RTLD_NOW | RTLD_LOCAL);
    if (!h && !env)
        h = dlopen(OGB_RUNTIME_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, len, "cannot open %s: %s", env ? env : OGB_RUNTIME_SONAME, dlerror());
        return NULL;
    }
    ogb_runtime t;
    if (!resolve(h, "og_context_create", &t.context_create, why, len) ||
        !resolve(h, "og_context_destroy", &t.context_destroy, why, len) ||
        !resolve(h, "og_context_last_error", &t.context_last_error, why, len) ||
        !resolve(h, "og_last_error", &t.last_error, why, len) ||
        !resolve(h, "og_context_device_name", &t.context_device_name, why, len) ||
        !resolve(h, "og_context_device_limits", &t.context_device_limits, why, len) ||
        !resolve(h, "og_context_validation_errors", &t.context_validation_errors, why, len) ||
        !resolve(h, "og_context_vk_device", &t.context_vk_device, why, len) ||
        !resolve(h, "og_context_vk_queue", &t.context_vk_queue, why, len) ||
        !resolve(h, "og_context_queue_family", &t.context_queue_family, why, len) ||
        !resolve(h, "og_context_memory_placement", &t.context_memory_placement, why, len) ||
        !resolve(h, "og_buffer_create", &t.buffer_create, why, len) ||
        !resolve(h, "og_buffer_create_host", &t.buffer_create_host, why, len) ||
        !resolve(h, "og_buffer_host_pointer", &t.buffer_host_pointer, why, len) ||
        !resolve(h, "og_buffer_vk_buffer", &t.buffer_vk_buffer, why, len) ||
        !resolve(h, "og_buffer_vk_offset", &t.buffer_vk_offset, why, len) ||
        !resolve(h, "og_buffer_destroy", &t.buffer_destroy, why, len) ||
        !resolve(h, "og_buffer_write", &t.buffer_write, why, len) ||
        !resolve(h, "og_buffer_read", &t.buffer_read, why, len) ||
        !resolve(h, "og_gemm_create", &t.gemm_create, why, len) ||
        !resolve(h, "og_gemm_destroy", &t.gemm_destroy, why, len) ||
        !resolve(h, "og_gemm_run", &t.gemm_run, why, len) ||
        !resolve(h, "og_gemm_encode", &t.gemm_encode, why, len)) {
        dlclose(h);
        return NULL;
    }
    rt = t;
    opened = 1;
    return &rt;
}
