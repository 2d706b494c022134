/* peer_gemm: float32 row-major C = A * B (alpha 1, beta 0) with the peers of bench/peers.sh:
 * OpenBLAS (cblas_sgemm) on the host and CLBlast (CLBlastSgemm) on an OpenCL CPU device
 * (PoCL), CLBlast once with its own defaults and once with tuned parameters per shape.
 *
 *   peer_gemm --shapes MxNxK,... [--tuned FILE]
 *   peer_gemm --platform-index       the OpenCL platform it uses (for CLBlast's tuners)
 *
 * FILE has lines "MxNxK KERNEL NAME=VALUE NAME=VALUE ..." (KERNEL: Xgemm or XgemmDirect), the
 * best parameters of CLBlast's tuners for that shape; they are applied with
 * CLBlastOverrideParameters before the shape is timed, and the product is timed through the
 * indirect kernel (Xgemm) and the direct one (XgemmDirect) by overriding the routine's
 * switch-over size (GemmRoutine XGEMM_MIN_INDIRECT_SIZE) as CLBlast's routine tuner would.
 *
 * Every call is timed with the host clock around the call and clFinish (CLBlast: including
 * its copy/transpose kernels and temporary buffers); after two warm-up calls, the median of
 * 3 to 9 calls. Results are checked: on one small ragged shape against a float64 host
 * reference, and every CLBlast result on every timed shape against OpenBLAS's.
 * Prints one line per shape: "result SHAPE openblas G clblast_default G clblast_indirect G
 * clblast_direct G" (GFLOP/s, 2MNK/t; "-" where not measured), and the checks. Exit status 1
 * when a check fails or a call returns an error. */
#define CL_TARGET_OPENCL_VERSION 120
#define _POSIX_C_SOURCE 200809L
#include <CL/cl.h>
#include <cblas.h>
#include <clblast_c.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "peer_cl.h"

typedef struct {
    size_t m, n, k;
} shape;

enum { max_params = 32, max_shapes = 32 };

typedef struct {
    shape s;
    char kernel[32];
    size_t count;
    char names[max_params][32];
    size_t values[max_params];
} tuned_set;

/* max |x - ref| / max |ref| */
static double rel_err(const float *x, const float *ref, size_t n)
{
    double d = 0, r = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)x[i] - (double)ref[i]);
        if (e > d || isnan(e))
            d = isnan(e) ? INFINITY : e;
        if (fabs((double)ref[i]) > r)
            r = fabs((double)ref[i]);
    }
    return r > 0 ? d / r : d;
}

typedef struct {
    shape s;
    const float *a, *b;
    float *c;
    cl_mem da, db, dc;
    ocl *cl;
    CLBlastStatusCode last;
} call;

static int run_openblas(void *p)
{
    call *c = p;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)c->s.m, (int)c->s.n, (int)c->s.k,
                1.0f, c->a, (int)c->s.k, c->b, (int)c->s.n, 0.0f, c->c, (int)c->s.n);
    return 0;
}

static int run_clblast(void *p)
{
    call *c = p;
    cl_event ev = NULL;
    c->last = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, c->s.m,
                           c->s.n, c->s.k, 1.0f, c->da, 0, c->s.k, c->db, 0, c->s.n, 0.0f, c->dc, 0,
                           c->s.n, &c->cl->queue, &ev);
    if (c->last != CLBlastSuccess)
        return 1;
    finish(c->cl, ev);
    return 0;
}

static int parse_shape(const char *s, shape *out)
{
    unsigned long long m, n, k;
    int used = 0;
    if (sscanf(s, "%llux%llux%llu%n", &m, &n, &k, &used) != 3 || m == 0 || n == 0 || k == 0)
        return 1;
    *out = (shape){m, n, k};
    return 0;
}

static int same_shape(shape a, shape b)
{
    return a.m == b.m && a.n == b.n && a.k == b.k;
}

static int read_tuned(const char *path, tuned_set *sets, size_t *count)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "peer_gemm: cannot open %s\n", path);
        return 1;
    }
    char line[4096];
    *count = 0;
    while (fgets(line, sizeof line, f)) {
        char *save = NULL, *tok = strtok_r(line, " \t\n", &save);
        if (!tok || tok[0] == '#')
            continue;
        if (*count == 2 * max_shapes) {
            fclose(f);
            return 1;
        }
        tuned_set *t = &sets[*count];
        memset(t, 0, sizeof *t);
        if (parse_shape(tok, &t->s) != 0 || !(tok = strtok_r(NULL, " \t\n", &save))) {
            fclose(f);
            return 1;
        }
        snprintf(t->kernel, sizeof t->kernel, "%s", tok);
        while ((tok = strtok_r(NULL, " \t\n", &save)) && t->count < max_params) {
            char *eq = strchr(tok, '=');
            if (!eq)
                continue;
            *eq = 0;
            if (strcmp(tok, "PRECISION") == 0) /* the tuner's, not a kernel parameter */
                continue;
            snprintf(t->names[t->count], sizeof t->names[0], "%s", tok);
            t->values[t->count++] = strtoull(eq + 1, NULL, 10);
        }
        (*count)++;
    }
    fclose(f);
    return 0;
}

static int override(ocl *o, const char *kernel, size_t count, char (*names)[32],
                    const size_t *values)
{
    const char *ptrs[max_params];
    for (size_t i = 0; i < count; i++)
        ptrs[i] = names[i];
    CLBlastStatusCode st =
        CLBlastOverrideParameters(o->dev, kernel, CLBlastPrecisionSingle, count, ptrs, values);
    if (st != CLBlastSuccess) {
        fprintf(stderr, "peer_gemm: CLBlastOverrideParameters(%s) returned %d\n", kernel, st);
        return 1;
    }
    return 0;
}

/* The routine takes the direct kernel when m*n*k < XGEMM_MIN_INDIRECT_SIZE^3. */
static int force_path(ocl *o, int direct)
{
    char names[1][32] = {"XGEMM_MIN_INDIRECT_SIZE"};
    size_t v = direct ? 1 << 16 : 0;
    return override(o, "GemmRoutine", 1, names, &v);
}

typedef struct {
    double openblas, def, indirect, direct;
    double err_def, err_indirect, err_direct;
} result;

/* Copies C of the device call back and compares it with OpenBLAS's. */
static double check_against(call *c, const float *ref, float *host)
{
    size_t n = c->s.m * c->s.n;
    if (clEnqueueReadBuffer(c->cl->queue, c->dc, CL_TRUE, 0, n * sizeof(float), host, 0, NULL,
                            NULL) != CL_SUCCESS)
        return INFINITY;
    return rel_err(host, ref, n);
}

static int setup_call(call *c, ocl *o, shape s, unsigned seed, float **a, float **b, float **ref)
{
    size_t na = s.m * s.k, nb = s.k * s.n, nc = s.m * s.n;
    *a = malloc(na * sizeof(float));
    *b = malloc(nb * sizeof(float));
    *ref = malloc(nc * sizeof(float));
    if (!*a || !*b || !*ref)
        return 1;
    fill(*a, na, &seed);
    fill(*b, nb, &seed);
    cl_int e1, e2, e3;
    *c = (call){.s = s, .a = *a, .b = *b, .c = *ref, .cl = o};
    c->da = clCreateBuffer(o->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, na * sizeof(float), *a,
                           &e1);
    c->db = clCreateBuffer(o->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, nb * sizeof(float), *b,
                           &e2);
    c->dc = clCreateBuffer(o->ctx, CL_MEM_READ_WRITE, nc * sizeof(float), NULL, &e3);
    return e1 != CL_SUCCESS || e2 != CL_SUCCESS || e3 != CL_SUCCESS;
}

static void free_call(call *c, float *a, float *b, float *ref)
{
    clReleaseMemObject(c->da);
    clReleaseMemObject(c->db);
    clReleaseMemObject(c->dc);
    free(a);
    free(b);
    free(ref);
}

/* OpenBLAS and CLBlast's defaults on one small ragged shape against a float64 reference. */
static int small_check(ocl *o)
{
    shape s = {97, 61, 83};
    call c;
    float *a, *b, *ref;
    if (setup_call(&c, o, s, 7, &a, &b, &ref) != 0)
        return 1;
    float *x = malloc(s.m * s.n * sizeof(float));
    for (size_t i = 0; i < s.m; i++)
        for (size_t j = 0; j < s.n; j++) {
            double acc = 0;
            for (size_t p = 0; p < s.k; p++)
                acc += (double)a[i * s.k + p] * (double)b[p * s.n + j];
            ref[i * s.n + j] = (float)acc;
        }
    c.c = x;
    run_openblas(&c);
    double e_blas = rel_err(x, ref, s.m * s.n);
    double e_cl = run_clblast(&c) == 0 ? check_against(&c, ref, x) : INFINITY;
    int ok = e_blas < 1e-5 && e_cl < 1e-5;
    printf("check %zux%zux%zu against a float64 host reference (max error / max |C|): "
           "OpenBLAS %.1e, CLBlast default %.1e: %s\n",
           s.m, s.n, s.k, e_blas, e_cl, ok ? "ok" : "FAILED");
    free(x);
    free_call(&c, a, b, ref);
    return !ok;
}

static double gflops(shape s, double t)
{
    return t > 0 ? 2.0 * (double)s.m * (double)s.n * (double)s.k / t * 1e-9 : -1;
}

static void print_g(double g)
{
    if (g > 0)
        printf(" %.2f", g);
    else
        printf(" -");
}

int main(int argc, char **argv)
{
    const char *shapes_arg = NULL, *tuned_path = NULL;
    if (argc == 2 && strcmp(argv[1], "--platform-index") == 0) {
        ocl o;
        if (find_device(&o) != 0)
            return 1;
        printf("%u\n", o.platform);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--shapes") == 0 && i + 1 < argc)
            shapes_arg = argv[++i];
        else if (strcmp(argv[i], "--tuned") == 0 && i + 1 < argc)
            tuned_path = argv[++i];
        else {
            fprintf(stderr, "usage: peer_gemm --shapes MxNxK,... [--tuned FILE]\n");
            return 2;
        }
    }
    if (!shapes_arg) {
        fprintf(stderr, "usage: peer_gemm --shapes MxNxK,... [--tuned FILE]\n");
        return 2;
    }
    shape shapes[max_shapes];
    size_t ns = 0;
    char *list = strdup(shapes_arg), *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (ns == max_shapes || parse_shape(tok, &shapes[ns]) != 0) {
            fprintf(stderr, "peer_gemm: bad shape %s\n", tok);
            return 2;
        }
        ns++;
    }
    free(list);
    tuned_set sets[2 * max_shapes];
    size_t nsets = 0;
    if (tuned_path && read_tuned(tuned_path, sets, &nsets) != 0) {
        fprintf(stderr, "peer_gemm: cannot read %s\n", tuned_path);
        return 2;
    }

    ocl o;
    if (open_device(&o) != 0)
        return 1;
    printf("OpenBLAS: %s, %d threads\n", openblas_get_config(), openblas_get_num_threads());
    int failed = small_check(&o);

    result res[max_shapes];
    call calls[max_shapes];
    float *as[max_shapes], *bs[max_shapes], *refs[max_shapes], *scratch[max_shapes];
    /* Pass 1: OpenBLAS and CLBlast's defaults (nothing overridden yet). */
    for (size_t i = 0; i < ns; i++) {
        call *c = &calls[i];
        res[i] = (result){-1, -1, -1, -1, -1, -1, -1};
        if (setup_call(c, &o, shapes[i], 1234u + (unsigned)i, &as[i], &bs[i], &refs[i]) != 0) {
            fprintf(stderr, "peer_gemm: out of memory\n");
            return 1;
        }
        scratch[i] = malloc(shapes[i].m * shapes[i].n * sizeof(float));
        res[i].openblas = gflops(shapes[i], time_median(run_openblas, c));
        res[i].def = gflops(shapes[i], time_median(run_clblast, c));
        if (res[i].def < 0) {
            fprintf(stderr, "peer_gemm: CLBlastSgemm returned %d\n", c->last);
            failed = 1;
        } else
            res[i].err_def = check_against(c, refs[i], scratch[i]);
    }
    /* Pass 2: each shape's tuned parameters, through either kernel. */
    for (size_t i = 0; i < ns && nsets; i++) {
        call *c = &calls[i];
        int have_ind = 0, have_dir = 0;
        for (size_t t = 0; t < nsets; t++) {
            if (!same_shape(sets[t].s, shapes[i]))
                continue;
            if (override(&o, sets[t].kernel, sets[t].count, sets[t].names, sets[t].values) != 0)
                failed = 1;
            else if (strcmp(sets[t].kernel, "Xgemm") == 0)
                have_ind = 1;
            else if (strcmp(sets[t].kernel, "XgemmDirect") == 0)
                have_dir = 1;
        }
        for (int direct = 0; direct < 2; direct++) {
            if (!(direct ? have_dir : have_ind))
                continue;
            if (force_path(&o, direct) != 0) {
                failed = 1;
                continue;
            }
            double g = gflops(shapes[i], time_median(run_clblast, c));
            double e = g > 0 ? check_against(c, refs[i], scratch[i]) : -1;
            if (g < 0) {
                fprintf(stderr, "peer_gemm: CLBlastSgemm returned %d\n", c->last);
                failed = 1;
            }
            *(direct ? &res[i].direct : &res[i].indirect) = g;
            *(direct ? &res[i].err_direct : &res[i].err_indirect) = e;
        }
    }
    for (size_t i = 0; i < ns; i++) {
        printf("result %zux%zux%zu openblas", shapes[i].m, shapes[i].n, shapes[i].k);
        print_g(res[i].openblas);
        printf(" clblast_default");
        print_g(res[i].def);
        printf(" clblast_indirect");
        print_g(res[i].indirect);
        printf(" clblast_direct");
        print_g(res[i].direct);
        printf("\n");
    }
    for (size_t i = 0; i < ns; i++) {
        double errs[3] = {res[i].err_def, res[i].err_indirect, res[i].err_direct};
        const char *what[3] = {"default", "tuned indirect", "tuned direct"};
        printf("check %zux%zux%zu CLBlast against OpenBLAS (max error / max |C|):", shapes[i].m,
               shapes[i].n, shapes[i].k);
        for (int w = 0; w < 3; w++) {
            if (errs[w] < 0)
                continue;
            int ok = errs[w] < 1e-5;
            failed |= !ok;
            printf(" %s %.1e%s", what[w], errs[w], ok ? "" : " FAILED");
        }
        printf("\n");
        free(scratch[i]);
        free_call(&calls[i], as[i], bs[i], refs[i]);
    }
    clReleaseCommandQueue(o.queue);
    clReleaseContext(o.ctx);
    return failed;
}
