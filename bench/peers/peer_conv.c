/* peer_conv: forward convolution (cross-correlation) with CLBlast's
 * CLBlastSconvgemm on an OpenCL CPU device (PoCL), the peer of ogtune bench
 * --op conv in bench/peers.sh. CLBlast takes NCHW input, KCRS weights, one
 * padding per axis, no groups, and writes NKPQ output.
 *
 *   peer_conv --conv NxCxHxWxKxRxSxSHxSWxPHxPW NAME [--conv ... NAME ...]
 *
 * Each call is timed with the host clock around the call and clFinish, after
 * two warm-up calls, the median of 3 to 9 calls (peer_cl.h), with CLBlast's
 * built-in parameters (its xconvgemm tuner is not run). Every 97th output
 * element is checked against a float64 direct convolution on the host.
 * Prints one line per convolution: "result NAME GF/s max-relative-error"
 * (NAME: the caller's, e.g. ogtune's shape string),
 * GF/s counting 2*N*K*P*Q*C*R*S operations. Exit status 1 when a check
 * fails or a call returns an error. */
#define CL_TARGET_OPENCL_VERSION 120
#define _POSIX_C_SOURCE 200809L
#include <clblast_c.h>
#include <math.h>

#include "peer_cl.h"

typedef struct {
    size_t n, c, h, w, k, r, s, sh, sw, ph, pw, p, q;
    cl_mem x, wt, y;
    ocl *cl;
    CLBlastStatusCode last;
} conv;

static int run_conv(void *arg)
{
    conv *v = arg;
    cl_event ev = NULL;
    v->last = CLBlastSconvgemm(CLBlastKernelModeCrossCorrelation, v->c, v->h, v->w, v->r, v->s,
                               v->ph, v->pw, v->sh, v->sw, 1, 1, v->k, v->n, v->x, 0, v->wt, 0,
                               v->y, 0, &v->cl->queue, &ev);
    if (v->last != CLBlastSuccess)
        return 1;
    finish(v->cl, ev);
    return 0;
}

/* max |y - ref| / max |ref| over every 97th output element, from the
 * definition (NCHW, KCRS). */
static double check(const conv *v, const float *x, const float *wt, const float *y)
{
    double d = 0, r = 0;
    size_t total = v->n * v->k * v->p * v->q;
    for (size_t at = 0; at < total; at += 97) {
        size_t q = at % v->q, p = at / v->q % v->p, kk = at / (v->p * v->q) % v->k;
        size_t img = at / (v->k * v->p * v->q);
        double sum = 0;
        for (size_t c = 0; c < v->c; c++)
            for (size_t rr = 0; rr < v->r; rr++)
                for (size_t ss = 0; ss < v->s; ss++) {
                    long h = (long)(p * v->sh + rr) - (long)v->ph;
                    long w = (long)(q * v->sw + ss) - (long)v->pw;
                    if (h < 0 || w < 0 || h >= (long)v->h || w >= (long)v->w)
                        continue;
                    sum += (double)x[((img * v->c + c) * v->h + (size_t)h) * v->w + (size_t)w] *
                           (double)wt[((kk * v->c + c) * v->r + rr) * v->s + ss];
                }
        double e = fabs((double)y[at] - sum);
        d = e > d || isnan(e) ? e : d;
        r = fabs(sum) > r ? fabs(sum) : r;
    }
    return r > 0 ? d / r : d;
}

static cl_mem device_copy(ocl *o, const float *host, size_t n)
{
    cl_int err;
    cl_mem m = clCreateBuffer(o->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              n * sizeof *host, (void *)host, &err);
    return err == CL_SUCCESS ? m : NULL;
}

/* Runs, checks and times one convolution; 0 when it ran and passed. */
static int one_conv(ocl *o, conv *v, const char *name)
{
    v->p = (v->h + 2 * v->ph - v->r) / v->sh + 1;
    v->q = (v->w + 2 * v->pw - v->s) / v->sw + 1;
    size_t nx = v->n * v->c * v->h * v->w, nw = v->k * v->c * v->r * v->s;
    size_t ny = v->n * v->k * v->p * v->q;
    float *x = malloc(nx * sizeof *x), *wt = malloc(nw * sizeof *wt), *y = calloc(ny, sizeof *y);
    if (!x || !wt || !y)
        return 1;
    unsigned seed = 99;
    fill(x, nx, &seed);
    fill(wt, nw, &seed);
    v->cl = o;
    v->x = device_copy(o, x, nx);
    v->wt = device_copy(o, wt, nw);
    v->y = device_copy(o, y, ny);
    int failed = !v->x || !v->wt || !v->y;
    double t = failed ? -1 : time_median(run_conv, v);
    double err = -1;
    if (t > 0 && clEnqueueReadBuffer(o->queue, v->y, CL_TRUE, 0, ny * sizeof *y, y, 0, NULL,
                                     NULL) == CL_SUCCESS)
        err = check(v, x, wt, y);
    if (t <= 0)
        fprintf(stderr, "peer_conv: %s: CLBlastSconvgemm returned %d\n", name, v->last);
    failed = failed || t <= 0 || err < 0 || err > 1e-4;
    double ops = 2.0 * (double)(v->n * v->k * v->p * v->q) * (double)(v->c * v->r * v->s);
    printf("result %s %.2f %.2e%s\n", name, t > 0 ? ops / t * 1e-9 : -1.0, err,
           failed ? " FAILED" : "");
    if (v->x)
        clReleaseMemObject(v->x);
    if (v->wt)
        clReleaseMemObject(v->wt);
    if (v->y)
        clReleaseMemObject(v->y);
    free(x);
    free(wt);
    free(y);
    return failed;
}

int main(int argc, char **argv)
{
    if (argc < 4 || (argc - 1) % 3 != 0) {
        fprintf(stderr, "usage: peer_conv --conv NxCxHxWxKxRxSxSHxSWxPHxPW NAME [--conv ...]\n");
        return 2;
    }
    ocl o;
    if (open_device(&o) != 0)
        return 1;
    int failed = 0;
    for (int i = 1; i + 2 < argc; i += 3) {
        conv v = {0};
        if (strcmp(argv[i], "--conv") != 0 ||
            sscanf(argv[i + 1], "%zux%zux%zux%zux%zux%zux%zux%zux%zux%zux%zu", &v.n, &v.c, &v.h,
                   &v.w, &v.k, &v.r, &v.s, &v.sh, &v.sw, &v.ph, &v.pw) != 11 ||
            !v.sh || !v.sw) {
            fprintf(stderr, "peer_conv: bad argument %s\n", argv[i]);
            return 2;
        }
        failed |= one_conv(&o, &v, argv[i + 2]);
    }
    return failed;
}
