/*
 * The cost model on this machine: the drop-in measures it on its first call
 * without ONEGPU_BLAS_FORCE and writes it to ONEGPU_BLAS_MODEL; on lavapipe,
 * which runs on the CPU's own cores, it must send every shape to the CPU
 * BLAS (the "do no harm"). On another device the prediction is the
 * measurement's to make, and the test checks only that the file is whole.
 */
#include <unistd.h>

#include "ogb_model.h"
#include "ogb_test.h"

Test(model, lavapipe_predicts_the_cpu_for_every_shape, .timeout = 300)
{
    char path[64], trace[64], msg[160];
    snprintf(path, sizeof path, "/tmp/ogb_model_%ld.txt", (long)getpid());
    snprintf(trace, sizeof trace, "/tmp/ogb_model_trace_%ld.txt", (long)getpid());
    unlink(path);
    unlink(trace);
    unsetenv("ONEGPU_BLAS_FORCE");
    setenv("ONEGPU_BLAS_MODEL", path, 1);
    setenv("ONEGPU_BLAS_TRACE", trace, 1);
    product p = make_product('N', 'N', 64, 64, 64, 0, 1.0f, 0.0f, 11);
    run_fortran(&p);
    cr_assert_eq(check_product(&p, msg, sizeof msg), 0, "%s", msg);
    free_product(&p);

    ogb_model m;
    cr_assert_eq(ogb_model_read(path, &m), 0, "the model was not written to %s", path);
    cr_log_info("model: %s, cpu %s: fixed %g s, %g B/s, gpu %g flop/s, cpu %g flop/s", m.device, m.cpu_blas,
                m.fixed_s, m.transfer_bytes_per_s, m.gpu_flops_per_s, m.cpu_flops_per_s);
    if (!strstr(m.device, "llvmpipe")) {
        unlink(path);
        unlink(trace);
        cr_skip_test("not lavapipe: %s", m.device);
    }
    cr_assert_eq(count_lines(trace, "-> cpu: model"), 1);
    static const int sizes[] = {1, 16, 64, 256, 1024, 4096, 16384};
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 7; j++)
            for (int l = 0; l < 7; l++)
                for (int v = 0; v < 4; v++) {
                    ogb_call c = {.transa = "NT"[v & 1], .transb = 'N', .m = sizes[i], .n = sizes[j],
                                  .k = sizes[l], .alpha = 1, .beta = v & 2 ? 1.0f : 0.0f};
                    c.lda = (int)ogb_a_rows(&c);
                    c.ldb = (int)ogb_b_rows(&c);
                    c.ldc = c.m;
                    double t_gpu, t_cpu;
                    ogb_model_predict(&m, &c, &t_gpu, &t_cpu);
                    cr_assert_lt(t_cpu, t_gpu, "%dx%dx%d: cpu %g s, gpu %g s", c.m, c.n, c.k, t_cpu, t_gpu);
                }
    unlink(path);
    unlink(trace);
}
