/* The GPU path (ogb_gpu.h): one context, one GEMM object, two command
 * buffers and persistent device buffers per process (ogb_tiled.h), behind
 * one lock. They live until the process ends (or the device is lost): the
 * drop-in has no destructor, as it has no constructor. */
#include "ogb_gpu.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ogb_env.h"
#include "ogb_tiled.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The process that started the GPU path (0 before): read without the lock,
 * so that a fork() child, whose copy of the lock may be held forever, never
 * takes it. */
static atomic_long owner_pid;
static struct {
    ogb_gpu_objects o;
    int dead; /* the GPU path cannot run in this process: dead_why says why */
    char dead_why[256];
} g;

/* Frees every GPU object (the runtime stays open). */
static void teardown(void)
{
    ogb_gpu_objects *o = &g.o;
    ogb_slots_destroy(&o->slots);
    for (int i = 0; i < OGB_SLOTS; i++) {
        ogb_stage_free(o->rt, &o->a[i]);
        ogb_stage_free(o->rt, &o->b[i]);
        ogb_stage_free(o->rt, &o->c[i]);
        ogb_stage_free(o->rt, &o->ha[i]);
        ogb_stage_free(o->rt, &o->hb[i]);
        ogb_stage_free(o->rt, &o->hc[i]);
    }
    o->rt->gemm_destroy(o->gemm);
    o->rt->context_destroy(o->ctx);
    o->gemm = NULL;
    o->ctx = NULL;
    ogb_host_free(&o->pack);
    ogb_host_free(&o->image);
}

/* Bytes one operand of a tile may take: the device's binding range and
 * allocation size, ONEGPU_BLAS_TILE_BYTES where smaller, in whole floats. */
static uint64_t operand_most(void)
{
    og_device_limits lim;
    g.o.rt->context_device_limits(g.o.ctx, &lim);
    uint64_t most = lim.max_binding_bytes, tile = ogb_env_get()->tile_bytes;
    most = lim.max_buffer_bytes && lim.max_buffer_bytes < most ? lim.max_buffer_bytes : most;
    most = tile && tile < most ? tile : most;
    return most < 4 ? 4 : most & ~(uint64_t)3;
}

/* Opens the runtime and makes the context, the GEMM object and the
 * command buffers; 0 on success, else the reason in g.dead_why. */
static int start_once(void)
{
    og_status st;
    ogb_gpu_objects *o = &g.o;
    atomic_store(&owner_pid, (long)getpid());
    o->rt = ogb_runtime_open(g.dead_why, sizeof g.dead_why);
    if (!o->rt)
        return -1;
    if ((st = o->rt->context_create(NULL, &o->ctx)) != OG_OK) {
        snprintf(g.dead_why, sizeof g.dead_why, "no usable Vulkan device (%d): %s", st, o->rt->last_error());
        return -1;
    }
    og_mode mode = ogb_env_get()->deterministic ? OG_MODE_DETERMINISTIC : OG_MODE_FAST;
    if ((st = o->rt->gemm_create(o->ctx, OG_F32, mode, &o->gemm)) != OG_OK)
        snprintf(g.dead_why, sizeof g.dead_why, "og_gemm_create (%d): %s", st, o->rt->context_last_error(o->ctx));
    else if (ogb_slots_create(&o->slots, o->rt, o->ctx, g.dead_why, sizeof g.dead_why) == 0) {
        o->most = operand_most();
        o->staged = strcmp(o->rt->context_memory_placement(o->ctx), "device-local") == 0;
        return 0;
    }
    teardown();
    return -1;
}

/* Starts the GPU path on first use; 0 when it runs. A failure is
 * remembered: the process does not try again. */
static int start(char *why, size_t len)
{
    if (g.o.gemm)
        return 0;
    if (!g.dead && start_once() == 0)
        return 0;
    g.dead = 1;
    snprintf(why, len, "%s", g.dead_why);
    return -1;
}

/* After a failed call: a lost device stops the GPU path. */
static void after_failure(og_status st)
{
    if (st != OG_ERROR_DEVICE_LOST)
        return;
    teardown();
    g.dead = 1;
    snprintf(g.dead_why, sizeof g.dead_why, "the device was lost");
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int ogb_gpu_forked(char *why, size_t len)
{
    long pid = atomic_load(&owner_pid);
    if (pid == 0 || pid == (long)getpid())
        return 0;
    snprintf(why, len, "fork() child of process %ld, whose device this process must not use", pid);
    return 1;
}

int ogb_gpu_sgemm(const ogb_call *call, ogb_gpu_times *times, char *why, size_t len)
{
    *times = (ogb_gpu_times){0};
    if (ogb_gpu_forked(why, len))
        return -1;
    pthread_mutex_lock(&lock);
    double t0 = now();
    int rc = start(why, len);
    if (!rc) {
        unsigned before = g.o.rt->context_validation_errors(g.o.ctx);
        og_status st = ogb_tiled_sgemm(&g.o, call, times, why, len);
        if (g.o.ctx)
            times->validation_errors = g.o.rt->context_validation_errors(g.o.ctx) - before;
        after_failure(st);
        rc = st != OG_OK ? -1 : 0;
    }
    pthread_mutex_unlock(&lock);
    times->total_s = now() - t0;
    return rc;
}

int ogb_gpu_device(char *name, size_t len)
{
    if (ogb_gpu_forked(name, len))
        return -1;
    pthread_mutex_lock(&lock);
    int rc = start(name, len);
    if (!rc)
        snprintf(name, len, "%s", g.o.rt->context_device_name(g.o.ctx));
    pthread_mutex_unlock(&lock);
    return rc;
}

/* Makes stage s hold `bytes` for a measurement; 0 on success. */
static int measure_grow(ogb_stage *s, uint64_t bytes)
{
    og_status st = ogb_stage_grow(g.o.rt, g.o.ctx, s, bytes, UINT64_MAX, OGB_STAGE_DEVICE);
    after_failure(st);
    return st != OG_OK;
}

double ogb_gpu_time_transfer(uint64_t bytes)
{
    char why[256];
    double best = 0;
    if (ogb_gpu_forked(why, sizeof why))
        return 0;
    pthread_mutex_lock(&lock);
    ogb_gpu_objects *o = &g.o;
    if (!start(why, sizeof why) && !measure_grow(&o->a[0], bytes) &&
        !ogb_host_grow(&o->pack, (size_t)(bytes / 4 + 1))) {
        memset(o->pack.p, 0, bytes);
        for (int i = 0; i < 3; i++) {
            double t0 = now();
            if (o->rt->buffer_write(o->a[0].buf, 0, o->pack.p, bytes) != OG_OK ||
                o->rt->buffer_read(o->a[0].buf, 0, o->pack.p, bytes) != OG_OK) {
                best = 0;
                break;
            }
            double t = now() - t0;
            best = i == 0 || t < best ? t : best;
        }
    }
    pthread_mutex_unlock(&lock);
    return best;
}

double ogb_gpu_time_product(int n)
{
    char why[256];
    double best = 0;
    uint64_t bytes = (uint64_t)n * (uint64_t)n * 4;
    if (ogb_gpu_forked(why, sizeof why))
        return 0;
    pthread_mutex_lock(&lock);
    ogb_gpu_objects *o = &g.o;
    if (!start(why, sizeof why) && !measure_grow(&o->a[0], bytes) && !measure_grow(&o->b[0], bytes) &&
        !measure_grow(&o->c[0], bytes)) {
        ogb_call c = {.transa = 'N', .transb = 'N', .m = n, .n = n, .k = n, .alpha = 1, .lda = n, .ldb = n, .ldc = n};
        og_gemm_args args = ogb_row_major_args(&c, o->a[0].buf, o->b[0].buf, o->c[0].buf);
        for (int i = 0; i < 4; i++) {
            double t0 = now();
            if (o->rt->gemm_run(o->gemm, &args) != OG_OK) {
                best = 0;
                break;
            }
            double t = now() - t0;
            best = i == 1 || (i > 1 && t < best) ? t : best; /* run 0 builds the pipeline */
        }
    }
    pthread_mutex_unlock(&lock);
    return best;
}
