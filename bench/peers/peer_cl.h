/* The OpenCL side of the peers (bench/peers.sh): the PoCL CPU device, a
 * host clock and the median of timed calls; shared by peer_gemm.c and
 * peer_conv.c. */
#ifndef PEER_CL_H
#define PEER_CL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    cl_context ctx;
    cl_command_queue queue;
    cl_device_id dev;
    cl_uint platform;
} ocl;

static inline double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline void fill(float *x, size_t n, unsigned *seed)
{
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        x[i] = (float)((*seed >> 8) * (2.0 / 16777216.0) - 1.0); /* [-1, 1) */
    }
}

/* Times fn(arg) (one call, finished on return): two warm-up calls, then the median of 3 to 9
 * calls (as many as fit in about 2 s). Returns seconds, or -1 when a call failed. */
static inline double time_median(int (*fn)(void *), void *arg)
{
    double t[9];
    int n = 0;
    for (int w = 0; w < 2; w++)
        if (fn(arg) != 0)
            return -1;
    double t0 = now_s();
    if (fn(arg) != 0)
        return -1;
    t[n++] = now_s() - t0;
    int want = t[0] > 0 ? (int)(2.0 / t[0]) : 9;
    want = want < 3 ? 3 : want > 9 ? 9 : want;
    while (n < want) {
        t0 = now_s();
        if (fn(arg) != 0)
            return -1;
        t[n++] = now_s() - t0;
    }
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    return t[n / 2];
}

/* The PoCL platform's CPU device, else the first CPU device. Fills o->dev and o->platform. */
static inline int find_device(ocl *o)
{
    cl_platform_id plats[8];
    cl_uint np = 0;
    if (clGetPlatformIDs(8, plats, &np) != CL_SUCCESS || np == 0) {
        fprintf(stderr, "peer: no OpenCL platform (is pocl-opencl-icd installed?)\n");
        return 1;
    }
    int found = 0;
    for (cl_uint i = 0; i < np && !found; i++) {
        char vendor[256] = "";
        clGetPlatformInfo(plats[i], CL_PLATFORM_VENDOR, sizeof vendor, vendor, NULL);
        cl_uint nd = 0;
        if (strstr(vendor, "pocl") &&
            clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_CPU, 1, &o->dev, &nd) == CL_SUCCESS && nd) {
            found = 1;
            o->platform = i;
        }
    }
    for (cl_uint i = 0; i < np && !found; i++) { /* any CPU device */
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_CPU, 1, &o->dev, &nd) == CL_SUCCESS && nd) {
            found = 1;
            o->platform = i;
        }
    }
    if (!found)
        fprintf(stderr, "peer: no OpenCL CPU device\n");
    return !found;
}

static inline int open_device(ocl *o)
{
    if (find_device(o) != 0)
        return 1;
    cl_int err;
    o->ctx = clCreateContext(NULL, 1, &o->dev, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        return 1;
    o->queue = clCreateCommandQueue(o->ctx, o->dev, 0, &err);
    if (err != CL_SUCCESS)
        return 1;
    char name[256] = "", version[256] = "";
    cl_uint units = 0;
    clGetDeviceInfo(o->dev, CL_DEVICE_NAME, sizeof name, name, NULL);
    clGetDeviceInfo(o->dev, CL_DEVICE_VERSION, sizeof version, version, NULL);
    clGetDeviceInfo(o->dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
    printf("OpenCL device: %s (%s, %u compute units)\n", name, version, units);
    return 0;
}

/* Waits for the queue, then releases the call's event (NULL: none). */
static inline void finish(ocl *o, cl_event ev)
{
    clFinish(o->queue);
    if (ev)
        clReleaseEvent(ev);
}

#endif
