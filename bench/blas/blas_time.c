/*
 * Times one library's Fortran sgemm_ (netlib's interface) for bench/blas.sh:
 *   blas_time LIBRARY M N K REPS
 * opens LIBRARY (dlopen, RTLD_LOCAL), makes column-major A (M x K), B
 * (K x N) and C (M x N) with values in [-1, 1), runs C = A B (C = A B +
 * beta C with BLAS_TIME_BETA=beta, C starting at zero) once untimed
 * (the library's start, a GPU kernel's build) and prints the best of REPS
 * timed calls in seconds (host clock). Exits 1 with a message when the
 * library or its sgemm_ cannot be found.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void sgemm_fn(const char *, const char *, const int *, const int *, const int *, const float *,
                      const float *, const int *, const float *, const int *, const float *, float *,
                      const int *, size_t, size_t);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: blas_time LIBRARY M N K REPS\n");
        return 2;
    }
    int m = atoi(argv[2]), n = atoi(argv[3]), k = atoi(argv[4]), reps = atoi(argv[5]);
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    void *sym = lib ? dlsym(lib, "sgemm_") : NULL;
    if (!sym) {
        fprintf(stderr, "blas_time: no sgemm_ in %s: %s\n", argv[1], dlerror());
        return 1;
    }
    sgemm_fn *sgemm;
    memcpy(&sgemm, &sym, sizeof sym);
    size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    float *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b), *c = calloc(nc, sizeof *c);
    if (!a || !b || !c) {
        fprintf(stderr, "blas_time: out of memory\n");
        return 1;
    }
    unsigned seed = 1;
    for (size_t i = 0; i < na + nb; i++) {
        seed = seed * 1664525u + 1013904223u;
        *(i < na ? &a[i] : &b[i - na]) = (float)(seed >> 8) / 8388608.0f - 1.0f;
    }
    const char *beta_env = getenv("BLAS_TIME_BETA");
    float alpha = 1, beta = beta_env ? (float)atof(beta_env) : 0.0f;
    double best = 0;
    for (int r = 0; r <= reps; r++) {
        double t0 = now();
        sgemm("N", "N", &m, &n, &k, &alpha, a, &m, b, &k, &beta, c, &m, 1, 1);
        double t = now() - t0;
        if (r == 1 || (r > 1 && t < best))
            best = t;
    }
    printf("%.6f\n", best);
    free(a);
    free(b);
    free(c);
    dlclose(lib);
    return 0;
}
