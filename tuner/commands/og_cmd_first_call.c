/* ogtune bench --first-call: how long a process waits for its first GEMM,
 * with empty on-disk caches (cold: the kernel is generated, compiled and its
 * pipeline created) and with the caches the cold run left (warm: SPIR-V and
 * the driver's pipeline cache read from disk). */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "og_commands.h"

/* The product measured: float32, this size cubed, the default kernel. */
#define FIRST_CALL_SIZE 256

typedef struct first_call {
    double context_ms;             /* og_context_create */
    double run_ms;                 /* the first og_gemm_run, until it returned with C done */
    uint64_t pipeline_cache_bytes; /* of the cache file the context handed the driver */
    uint32_t compiled;             /* kernels the call compiled (SPIR-V cache misses) */
    int caches_on;                 /* the context had a cache directory */
    char device[256];
    char error[512]; /* "" when the call ran and its result was right */
} first_call;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* A new context reading no tuning database (so the default kernel runs),
 * its first og_gemm_run timed, and C checked against the float64 reference. */
static void measure(first_call *r)
{
    og_context *ctx = NULL;
    og_gemm *g = NULL;
    og_problem *pr = NULL;
    double t0 = now_ms();
    og_status st = og_context_create(&(og_context_desc){.tuning_db = ""}, &ctx);
    r->context_ms = now_ms() - t0;
    if (st != OG_OK) {
        snprintf(r->error, sizeof r->error, "%s", og_last_error());
        return;
    }
    snprintf(r->device, sizeof r->device, "%s", og_context_device_name(ctx));
    og_context_facts facts;
    og_context_facts_of(ctx, &facts);
    r->pipeline_cache_bytes = facts.pipeline_cache_loaded;
    r->caches_on = facts.caches_on;
    st = og_gemm_create(ctx, OG_F32, OG_MODE_FAST, &g);
    if (st == OG_OK)
        st = og_problem_create(ctx, OG_F32, 0, 0, FIRST_CALL_SIZE, FIRST_CALL_SIZE, FIRST_CALL_SIZE,
                               1, 99, &pr);
    if (st == OG_OK)
        st = og_buffer_write(pr->args.c, 0, pr->c0, pr->nc * sizeof(float));
    if (st == OG_OK) {
        t0 = now_ms();
        st = og_gemm_run(g, &pr->args);
        r->run_ms = now_ms() - t0;
        og_context_facts_of(ctx, &facts);
        r->compiled = facts.kernels_compiled;
    }
    if (st == OG_OK)
        st = og_buffer_read(pr->args.c, 0, pr->c, pr->nc * sizeof(float));
    if (st != OG_OK) {
        snprintf(r->error, sizeof r->error, "%s", og_context_last_error(ctx));
    } else {
        double metric, max_rel;
        size_t bad = og_compare(&pr->args, pr->ref, pr->c, pr->c0, &metric, &max_rel);
        if (bad || !(metric <= og_dtype_bound(OG_F32)))
            snprintf(r->error, sizeof r->error,
                     "the first call's result is wrong (error %.3g, %zu elements outside C "
                     "or not finite)",
                     metric, bad);
    }
    og_problem_destroy(pr);
    og_gemm_destroy(g);
    og_context_destroy(ctx);
}

/* Runs measure in a new process with XDG_CACHE_HOME and HOME = cache, and
 * fills *r (error set when it failed). A new process, as a user's first call
 * has: one that started here would find the Vulkan loader, the driver
 * (lavapipe's LLVM) and the shader compiler already initialised by the
 * earlier run. HOME too, so the driver's own disk caches in their default
 * places (Mesa's under XDG_CACHE_HOME, NVIDIA's under ~/.nv) start empty as
 * well: cold is a machine's first run. */
static void measure_in_child(const char *cache, first_call *r)
{
    int fds[2];
    memset(r, 0, sizeof *r);
    if (pipe(fds) != 0) {
        snprintf(r->error, sizeof r->error, "pipe: %s", strerror(errno));
        return;
    }
    fflush(NULL); /* the child must not write this process's buffered output */
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(r->error, sizeof r->error, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        if (setenv("XDG_CACHE_HOME", cache, 1) == 0 && setenv("HOME", cache, 1) == 0)
            measure(r);
        else
            snprintf(r->error, sizeof r->error, "setenv: %s", strerror(errno));
        /* Under PIPE_BUF: one write, whole or not at all. */
        _exit(write(fds[1], r, sizeof *r) == (ssize_t)sizeof *r ? 0 : 1);
    }
    close(fds[1]);
    size_t got = 0;
    while (got < sizeof *r) {
        ssize_t n = read(fds[0], (char *)r + got, sizeof *r - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fds[0]);
    int status = 0;
    pid_t waited;
    while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    if (got == sizeof *r && waited == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return;
    memset(r, 0, sizeof *r);
    if (waited == pid && WIFSIGNALED(status))
        snprintf(r->error, sizeof r->error, "the measuring process died of signal %d",
                 WTERMSIG(status));
    else
        snprintf(r->error, sizeof r->error, "the measuring process reported nothing");
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void print_result(const og_cli *o, const first_call *cold, const first_call *warm)
{
    double ratio = cold->run_ms / warm->run_ms;
    if (o->json) {
        printf("{\"device\":");
        og_json_string(stdout, cold->device);
        printf(",\"dtype\":\"f32\",\"shape\":[%d,%d,%d],\"cold_ms\":%.3f,\"warm_ms\":%.3f,"
               "\"ratio\":%.3f,\"cold_context_ms\":%.3f,\"warm_context_ms\":%.3f,"
               "\"warm_pipeline_cache_bytes\":%llu,\"cold_compiled\":%u,\"warm_compiled\":%u}\n",
               FIRST_CALL_SIZE, FIRST_CALL_SIZE, FIRST_CALL_SIZE, cold->run_ms, warm->run_ms, ratio,
               cold->context_ms, warm->context_ms, (unsigned long long)warm->pipeline_cache_bytes,
               cold->compiled, warm->compiled);
        return;
    }
    printf("device: %s\n", cold->device);
    printf("first og_gemm_run of a %dx%dx%d float32 GEMM (default kernel), each in a new "
           "process and context:\n",
           FIRST_CALL_SIZE, FIRST_CALL_SIZE, FIRST_CALL_SIZE);
    printf("  %-36s %9.2f ms  (og_context_create %.2f ms, %u kernels compiled)\n",
           "cold (empty cache directory)", cold->run_ms, cold->context_ms, cold->compiled);
    printf("  %-36s %9.2f ms  (og_context_create %.2f ms, %llu bytes of pipeline cache, %u "
           "kernels compiled)\n",
           "warm (the caches the cold run left)", warm->run_ms, warm->context_ms,
           (unsigned long long)warm->pipeline_cache_bytes, warm->compiled);
    printf("  cold / warm: %.2fx\n", ratio);
}

int og_cmd_bench_first_call(const og_cli *o)
{
    if (o->shapes || o->params || o->dtypes || o->op || o->trans_a || o->trans_b) {
        og_cli_fail("ogtune bench: --first-call measures a %d-cubed float32 GEMM with the "
                    "default kernel; it takes --json only\n",
                    FIRST_CALL_SIZE);
        return 2;
    }
    const char *base = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/ogtune-first-call-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        og_cli_fail("ogtune bench: cannot make a directory %s: %s\n", dir, strerror(errno));
        return 1;
    }
    first_call cold, warm = {0};
    measure_in_child(dir, &cold);
    if (!cold.error[0] && !cold.caches_on)
        snprintf(cold.error, sizeof cold.error,
                 "the on-disk caches are off (OG_SPIRV_CACHE=0): there is no warm call");
    if (!cold.error[0])
        measure_in_child(dir, &warm);
    int rc = 0;
    if (cold.error[0] || warm.error[0]) {
        og_cli_fail("ogtune bench: %s first call: %s\n", cold.error[0] ? "cold" : "warm",
                    cold.error[0] ? cold.error : warm.error);
        rc = 1;
    } else {
        print_result(o, &cold, &warm);
    }
    if (nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS) != 0) {
        og_cli_fail("ogtune bench: cannot remove %s: %s\n", dir, strerror(errno));
        rc = 1;
    }
    return rc;
}
