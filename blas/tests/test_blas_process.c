/*
 * The drop-in as a citizen of other programs: 8 threads of 200 mixed calls
 * at once, each checked; fork() after the GPU path has started, the child's
 * call on the CPU; 10 000 small calls without memory growth. CTest runs it
 * with ONEGPU_BLAS_FORCE=gpu.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ogb_test.h"

/* A trace file of this test's own, set before the drop-in's first call. */
static void trace_to(char *path, size_t len)
{
    snprintf(path, len, "/tmp/ogb_trace_%ld.txt", (long)getpid());
    unlink(path);
    setenv("ONEGPU_BLAS_TRACE", path, 1);
}

static atomic_int failures;
static char first_failure[160];

/* 200 products of mixed shapes, transposes and scalars, each checked. */
static void *worker(void *arg)
{
    unsigned seed = (unsigned)(size_t)arg * 7919u + 1;
    char msg[160];
    for (int i = 0; i < 200; i++) {
        int m = 1 + (int)((next_value(&seed) + 1) * 24), n = 1 + (int)((next_value(&seed) + 1) * 24);
        int k = 1 + (int)((next_value(&seed) + 1) * 24);
        char ta = "NT"[i & 1], tb = "NT"[(i >> 1) & 1];
        product p = make_product(ta, tb, m, n, k, i % 3, 0.5f + (float)(i % 4), (i % 5) ? 0.25f : 0.0f, seed);
        run_fortran(&p);
        if (check_product(&p, msg, sizeof msg) && atomic_fetch_add(&failures, 1) == 0)
            snprintf(first_failure, sizeof first_failure, "thread %zu call %d: %s", (size_t)arg, i, msg);
        free_product(&p);
    }
    return NULL;
}

Test(process, eight_threads_of_200_mixed_calls, .timeout = 300)
{
    char trace[64];
    trace_to(trace, sizeof trace);
    pthread_t t[8];
    for (size_t i = 0; i < 8; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, worker, (void *)i), 0);
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    cr_assert_eq(atomic_load(&failures), 0, "%d wrong: first %s", atomic_load(&failures), first_failure);
    cr_assert_eq(count_lines(trace, "-> gpu:"), 1600, "every call on the GPU");
    unlink(trace);
}

Test(process, fork_child_uses_the_cpu)
{
    char trace[64], msg[160];
    trace_to(trace, sizeof trace);
    product p = make_product('N', 'T', 20, 30, 40, 1, 1.0f, 0.5f, 3);
    run_fortran(&p);
    cr_assert_eq(check_product(&p, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(count_lines(trace, "-> gpu:"), 1);
    pid_t child = fork();
    cr_assert_neq(child, -1);
    if (child == 0) {
        product q = make_product('T', 'N', 20, 30, 40, 1, 1.0f, 0.5f, 4);
        run_fortran(&q);
        _exit(check_product(&q, msg, sizeof msg) ? 1 : 0);
    }
    int status = 0;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's product is wrong");
    cr_assert_eq(count_lines(trace, "gpu failed: fork() child"), 1, "the child's call went to the CPU");
    run_fortran(&p); /* the parent keeps its GPU path */
    cr_assert_eq(count_lines(trace, "-> gpu:"), 2);
    free_product(&p);
    unlink(trace);
}

/* Resident memory in bytes (/proc/self/statm). */
static long resident_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    cr_assert(f);
    cr_assert_eq(fscanf(f, "%ld %ld", &pages, &resident), 2);
    fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

/* Runs `calls` small products of sizes 1..16 on the same arrays. */
static void small_calls(int calls, float *a, float *b, float *c)
{
    for (int i = 0; i < calls; i++) {
        int m = 1 + i % 16, n = 1 + (i / 16) % 16, k = 1 + (i / 7) % 16, ld = 16;
        float alpha = 1.0f, beta = (i & 1) ? 1.0f : 0.0f;
        sgemm_(i & 2 ? "T" : "N", "N", &m, &n, &k, &alpha, a, &ld, b, &ld, &beta, c, &ld);
    }
}

Test(process, ten_thousand_small_calls_keep_memory_flat, .timeout = 300)
{
    float a[256], b[256], c[256];
    for (int i = 0; i < 256; i++) {
        a[i] = (float)(i % 7) - 3;
        b[i] = (float)(i % 5) - 2;
        c[i] = 0;
    }
    small_calls(1000, a, b, c); /* the device, its buffers and every kernel made */
    long before = resident_bytes();
    small_calls(10000, a, b, c);
    long growth = resident_bytes() - before;
#ifdef __SANITIZE_ADDRESS__
    /* AddressSanitizer keeps freed memory in quarantine, so resident memory
     * grows without a leak; its leak checker judges this build instead. */
    cr_log_info("resident memory grew by %ld bytes (AddressSanitizer's quarantine)", growth);
#else
    cr_assert_lt(growth, 2L << 20, "resident memory grew by %ld bytes over 10 000 calls", growth);
#endif
}
