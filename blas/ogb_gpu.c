/* The GPU path (ogb_gpu.h): one context, one GEMM object and three
 * persistent device buffers per process, behind one lock. They live until
 * the process ends (or the device is lost): the drop-in has no destructor,
 * as it has no constructor. */
#include "ogb_gpu.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ogb_env.h"
#include "ogb_runtime.h"

/* A device buffer reused by every call, grown when a call needs more. */
typedef struct ogb_stage {
    og_buffer *buf;
    uint64_t bytes;
} ogb_stage;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The process that started the GPU path (0 before): read without the lock,
 * so that a fork() child, whose copy of the lock may be held forever, never
 * takes it. */
static atomic_long owner_pid;
static struct {
    const ogb_runtime *rt;
    og_context *ctx;
    og_gemm *gemm;
    ogb_stage a, b, c; /* A's and B's spans, C's M x N block */
    float *host;       /* C packed or read back when it cannot go straight to the caller */
    size_t host_elems;
    int dead; /* the GPU path cannot run in this process: dead_why says why */
    char dead_why[256];
} g;

/* Frees every GPU object (the runtime stays open). */
static void teardown(void)
{
    ogb_stage *stages[] = {&g.a, &g.b, &g.c};
    for (int i = 0; i < 3; i++) {
        g.rt->buffer_destroy(stages[i]->buf);
        *stages[i] = (ogb_stage){0};
    }
    g.rt->gemm_destroy(g.gemm);
    g.rt->context_destroy(g.ctx);
    g.gemm = NULL;
    g.ctx = NULL;
    free(g.host);
    g.host = NULL;
    g.host_elems = 0;
}

/* Opens the runtime and makes the context and the GEMM object; 0 on
 * success, else the reason in g.dead_why. */
static int start_once(void)
{
    og_status st;
    atomic_store(&owner_pid, (long)getpid());
    g.rt = ogb_runtime_open(g.dead_why, sizeof g.dead_why);
    if (!g.rt)
        return -1;
    if ((st = g.rt->context_create(NULL, &g.ctx)) != OG_OK) {
        snprintf(g.dead_why, sizeof g.dead_why, "no usable Vulkan device (%d): %s", st, g.rt->last_error());
        return -1;
    }
    og_mode mode = ogb_env_get()->deterministic ? OG_MODE_DETERMINISTIC : OG_MODE_FAST;
    if ((st = g.rt->gemm_create(g.ctx, OG_F32, mode, &g.gemm)) != OG_OK) {
        snprintf(g.dead_why, sizeof g.dead_why, "og_gemm_create (%d): %s", st, g.rt->context_last_error(g.ctx));
        g.rt->context_destroy(g.ctx);
        g.ctx = NULL;
        return -1;
    }
    return 0;
}

/* Starts the GPU path on first use; 0 when it runs. A failure is
 * remembered: the process does not try again. */
static int start(char *why, size_t len)
{
    if (g.gemm)
        return 0;
    if (!g.dead && start_once() == 0)
        return 0;
    g.dead = 1;
    snprintf(why, len, "%s", g.dead_why);
    return -1;
}

/* Explains a failed onegpu call; a lost device stops the GPU path. */
static int failed(const char *what, og_status st, char *why, size_t len)
{
    snprintf(why, len, "%s (%d): %s", what, st, g.rt->context_last_error(g.ctx));
    if (st == OG_ERROR_DEVICE_LOST) {
        teardown();
        g.dead = 1;
        snprintf(g.dead_why, sizeof g.dead_why, "the device was lost");
    }
    return -1;
}

/* Makes the stage hold at least `bytes` (growing by half at least, so a
 * rising sequence of sizes reallocates a few times only). */
static int grow(ogb_stage *s, uint64_t bytes, char *why, size_t len)
{
    if (bytes <= s->bytes && s->buf)
        return 0;
    uint64_t want = bytes > s->bytes + s->bytes / 2 ? bytes : s->bytes + s->bytes / 2;
    og_buffer *buf = NULL;
    og_status st = g.rt->buffer_create(g.ctx, want, &buf);
    if (st != OG_OK)
        return failed("og_buffer_create", st, why, len);
    g.rt->buffer_destroy(s->buf);
    s->buf = buf;
    s->bytes = want;
    return 0;
}

/* Makes the host scratch hold at least `elems` floats. */
static int grow_host(size_t elems, char *why, size_t len)
{
    if (elems <= g.host_elems)
        return 0;
    float *p = realloc(g.host, elems * sizeof *p);
    if (!p) {
        snprintf(why, len, "out of host memory for %zu floats", elems);
        return -1;
    }
    g.host = p;
    g.host_elems = elems;
    return 0;
}

/* Uploads A's and B's spans and, when beta != 0, C's M x N block. */
static int upload(const ogb_call *c, char *why, size_t len)
{
    uint64_t sa = (uint64_t)ogb_span(ogb_a_rows(c), ogb_a_cols(c), c->lda);
    uint64_t sb = (uint64_t)ogb_span(ogb_b_rows(c), ogb_b_cols(c), c->ldb);
    size_t m = (size_t)c->m, mn = m * (size_t)c->n;
    og_status st;
    if (grow(&g.a, sa * 4, why, len) || grow(&g.b, sb * 4, why, len) || grow(&g.c, mn * 4, why, len))
        return -1;
    if ((st = g.rt->buffer_write(g.a.buf, 0, c->a, sa * 4)) != OG_OK ||
        (st = g.rt->buffer_write(g.b.buf, 0, c->b, sb * 4)) != OG_OK)
        return failed("og_buffer_write", st, why, len);
    if (c->beta == 0.0f)
        return 0;
    const float *src = c->c;
    if (c->ldc != c->m) {
        if (grow_host(mn, why, len))
            return -1;
        for (size_t j = 0; j < (size_t)c->n; j++)
            memcpy(g.host + j * m, c->c + j * (size_t)c->ldc, m * sizeof(float));
        src = g.host;
    }
    if ((st = g.rt->buffer_write(g.c.buf, 0, src, mn * 4)) != OG_OK)
        return failed("og_buffer_write", st, why, len);
    return 0;
}

/* Reads the M x N block back into the caller's C. Straight into C only
 * when it is dense and beta = 0 (a failed read then leaves nothing a
 * repeat of the call reads); otherwise through the host scratch, so C is
 * written only once the read has succeeded. */
static int download(const ogb_call *c, char *why, size_t len)
{
    size_t m = (size_t)c->m, mn = m * (size_t)c->n;
    int direct = c->ldc == c->m && c->beta == 0.0f;
    if (!direct && grow_host(mn, why, len))
        return -1;
    og_status st = g.rt->buffer_read(g.c.buf, 0, direct ? c->c : g.host, mn * 4);
    if (st != OG_OK)
        return failed("og_buffer_read", st, why, len);
    if (!direct)
        for (size_t j = 0; j < (size_t)c->n; j++)
            memcpy(c->c + j * (size_t)c->ldc, g.host + j * m, m * sizeof(float));
    return 0;
}

/* The row-major GEMM of the column-major call (ogb_gpu.h). */
static og_gemm_args row_major_args(const ogb_call *c)
{
    return (og_gemm_args){
        .trans_a = c->transb == 'T', .trans_b = c->transa == 'T',
        .m = c->n, .n = c->m, .k = c->k, .batch = 1,
        .alpha = c->alpha, .beta = c->beta,
        .a = g.b.buf, .b = g.a.buf, .c = g.c.buf,
        .lda = c->ldb, .ldb = c->lda, .ldc = c->m,
    };
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
    if (ogb_gpu_forked(why, len))
        return -1;
    pthread_mutex_lock(&lock);
    double t0 = now();
    int rc = start(why, len);
    double t1 = now();
    if (!rc)
        rc = upload(call, why, len);
    double t2 = now();
    if (!rc) {
        og_gemm_args args = row_major_args(call);
        og_status st = g.rt->gemm_run(g.gemm, &args);
        rc = st != OG_OK ? failed("og_gemm_run", st, why, len) : 0;
    }
    double t3 = now();
    if (!rc)
        rc = download(call, why, len);
    pthread_mutex_unlock(&lock);
    *times = (ogb_gpu_times){.total_s = now() - t0, .copy_s = (t2 - t1) + (now() - t3)};
    return rc;
}

int ogb_gpu_device(char *name, size_t len)
{
    if (ogb_gpu_forked(name, len))
        return -1;
    pthread_mutex_lock(&lock);
    int rc = start(name, len);
    if (!rc)
        snprintf(name, len, "%s", g.rt->context_device_name(g.ctx));
    pthread_mutex_unlock(&lock);
    return rc;
}

double ogb_gpu_time_transfer(uint64_t bytes)
{
    char why[256];
    double best = 0;
    if (ogb_gpu_forked(why, sizeof why))
        return 0;
    pthread_mutex_lock(&lock);
    if (!start(why, sizeof why) && !grow(&g.a, bytes, why, sizeof why) &&
        !grow_host((size_t)(bytes / 4 + 1), why, sizeof why)) {
        memset(g.host, 0, bytes);
        for (int i = 0; i < 3; i++) {
            double t0 = now();
            if (g.rt->buffer_write(g.a.buf, 0, g.host, bytes) != OG_OK ||
                g.rt->buffer_read(g.a.buf, 0, g.host, bytes) != OG_OK) {
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
    if (!start(why, sizeof why) && !grow(&g.a, bytes, why, sizeof why) && !grow(&g.b, bytes, why, sizeof why) &&
        !grow(&g.c, bytes, why, sizeof why)) {
        ogb_call c = {.transa = 'N', .transb = 'N', .m = n, .n = n, .k = n, .alpha = 1, .lda = n, .ldb = n, .ldc = n};
        og_gemm_args args = row_major_args(&c);
        for (int i = 0; i < 4; i++) {
            double t0 = now();
            if (g.rt->gemm_run(g.gemm, &args) != OG_OK) {
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
