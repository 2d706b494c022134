/*
 * The CPU fallback when no Vulkan device exists: CTest runs this with
 * VK_DRIVER_FILES=/nonexistent (no driver for the loader). A call asked to
 * run on the GPU is computed by the CPU BLAS with its original arguments;
 * without ONEGPU_BLAS_FORCE there is no cost model and every call goes to
 * the CPU.
 */
#include <unistd.h>

#include "ogb_test.h"

/* Runs one checked product with the trace in a file of its own and
 * returns the number of trace lines containing `needle`. */
static int run_traced(const char *needle)
{
    char trace[64], msg[160];
    snprintf(trace, sizeof trace, "/tmp/ogb_fallback_%ld.txt", (long)getpid());
    unlink(trace);
    setenv("ONEGPU_BLAS_TRACE", trace, 1);
    product p = make_product('T', 'N', 33, 17, 65, 2, 0.7f, 1.3f, 5);
    run_fortran(&p);
    cr_assert_eq(check_product(&p, msg, sizeof msg), 0, "%s", msg);
    free_product(&p);
    int count = count_lines(trace, needle);
    unlink(trace);
    return count;
}

Test(fallback, forced_gpu_without_a_device_runs_on_the_cpu)
{
    setenv("ONEGPU_BLAS_FORCE", "gpu", 1);
    cr_assert_eq(run_traced("-> cpu: gpu failed: no usable Vulkan device"), 1);
}

Test(fallback, no_device_no_model_every_call_on_the_cpu)
{
    unsetenv("ONEGPU_BLAS_FORCE");
    char model[64];
    snprintf(model, sizeof model, "/tmp/ogb_fallback_model_%ld.txt", (long)getpid());
    setenv("ONEGPU_BLAS_MODEL", model, 1);
    cr_assert_eq(run_traced("-> cpu: no cost model: no usable Vulkan device"), 1);
    cr_assert_eq(access(model, F_OK), -1, "no model is written without a device");
}
