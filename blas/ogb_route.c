/* Where a checked call runs (ogb_route.h). */
#include "ogb_route.h"

#include <fenv.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ogb_calibrate.h"
#include "ogb_cpu.h"
#include "ogb_env.h"
#include "ogb_gpu.h"
#include "ogb_model.h"
#include "ogb_ref.h"
#include "ogb_trace.h"

/* The model of this process: state 0 before the first call that needs it,
 * 1 read or measured, -1 none (why says why). device_checked: the GPU path
 * has started and its device is the model's. */
static pthread_mutex_t model_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int state, device_checked;
    ogb_model m;
    char why[256];
} model;

/* Measures the model and writes its file; under model_lock. The
 * measurement runs the GPU path: the caller's floating-point environment
 * is held around it (ogb_route.h). */
static void measure(const char *path)
{
    fenv_t fe;
    feholdexcept(&fe);
    model.state = -1;
    if (!ogb_calibrate(&model.m, model.why, sizeof model.why)) {
        model.state = 1;
        model.device_checked = 1;
        ogb_model_write(path, &model.m); /* kept in memory when the file cannot be written */
    }
    fesetenv(&fe);
}

/* The model, read or measured on first use; NULL with a reason in why. A
 * file written for another CPU BLAS is measured again; one written for
 * another device is measured again once the GPU path has started (ogb_decide). */
static const ogb_model *get_model(char *why, size_t len)
{
    if (model.state == 0) {
        char path[1024];
        ogb_model_path(path, sizeof path);
        if (ogb_model_read(path, &model.m) == 0 && !strcmp(model.m.cpu_blas, ogb_cpu_path()))
            model.state = 1;
        else
            measure(path);
    }
    if (model.state < 0)
        snprintf(why, len, "no cost model: %s", model.why);
    return model.state > 0 ? &model.m : NULL;
}

/* Whether the model sends the call to the GPU (why says why, where
 * tracing is on: formatting it costs as much as a small product); under
 * model_lock. The first time it does, the GPU path starts (the caller's
 * floating-point environment held) and a model of another device is
 * measured again. */
static int model_says_gpu(const ogb_call *call, char *why, size_t len)
{
    const ogb_model *m = get_model(why, len);
    if (!m)
        return 0;
    double t_gpu, t_cpu;
    ogb_model_predict(m, call, &t_gpu, &t_cpu);
    if (t_gpu < t_cpu && !model.device_checked) {
        char device[256];
        fenv_t fe;
        feholdexcept(&fe);
        int failed = ogb_gpu_device(device, sizeof device);
        fesetenv(&fe);
        if (failed) {
            snprintf(why, len, "model: gpu, but %s", device);
            return 0;
        }
        model.device_checked = 1;
        if (strcmp(device, m->device)) {
            char path[1024];
            ogb_model_path(path, sizeof path);
            measure(path);
            return model_says_gpu(call, why, len);
        }
    }
    if (ogb_trace_on())
        snprintf(why, len, "model: cpu %.3g s, gpu %.3g s", t_cpu, t_gpu);
    return t_gpu < t_cpu;
}

/* Whether to try the GPU, and why. */
static int wants_gpu(const ogb_call *call, char *why, size_t len)
{
    switch (ogb_env_get()->force) {
    case OGB_FORCE_CPU:
        snprintf(why, len, "ONEGPU_BLAS_FORCE=cpu");
        return 0;
    case OGB_FORCE_GPU:
        snprintf(why, len, "ONEGPU_BLAS_FORCE=gpu");
        return 1;
    default:
        break;
    }
    if (ogb_gpu_forked(why, len)) /* before model_lock, which the parent may have held */
        return 0;
    pthread_mutex_lock(&model_lock);
    int gpu = model_says_gpu(call, why, len);
    pthread_mutex_unlock(&model_lock);
    return gpu;
}

void ogb_route(const char *api, const ogb_call *call)
{
    if (call->m == 0 || call->n == 0 || ((call->alpha == 0.0f || call->k == 0) && call->beta == 1.0f)) {
        ogb_trace(api, call, "none", "quick return");
        return;
    }
    if (call->alpha == 0.0f || call->k == 0) {
        ogb_ref_sgemm(call);
        ogb_trace(api, call, "host", call->alpha == 0.0f ? "alpha = 0: C = beta * C" : "K = 0: C = beta * C");
        return;
    }
    /* The caller's floating-point environment is kept across the GPU path
     * (the Vulkan driver and its compiler may raise flags, or trap where the
     * caller enabled traps): numpy, for one, reads the flags after a call.
     * Held only there (a call the model keeps on the CPU pays nothing for
     * it: 0.13 us a call, a sixth of an 8 x 8 x 8 product's time). */
    char why[512] = "", failure[300];
    ogb_gpu_times t;
    int gpu = wants_gpu(call, why, sizeof why);
    if (gpu) {
        fenv_t fe;
        feholdexcept(&fe);
        if (ogb_gpu_sgemm(call, &t, failure, sizeof failure) != 0) {
            snprintf(why, sizeof why, "gpu failed: %s", failure);
            gpu = 0;
        }
        fesetenv(&fe);
    }
    if (gpu) {
        size_t used = strlen(why);
        used += (size_t)snprintf(why + used, sizeof why - used, "%s; %.3g s, copies %.3g s, %ld tile%s",
                                 t.staged ? "; staged" : "", t.total_s, t.copy_s, t.tiles, t.tiles == 1 ? "" : "s");
        if (t.validation_errors && used < sizeof why)
            snprintf(why + used, sizeof why - used, "; %u validation errors", t.validation_errors);
        ogb_trace(api, call, "gpu", why);
        return;
    }
    const char *where;
    ogb_cpu_sgemm(call, &where);
    ogb_trace(api, call, where, why);
}
