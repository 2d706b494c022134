/* Measuring the cost model's inputs on this machine. */
#ifndef OGB_CALIBRATE_H
#define OGB_CALIBRATE_H

#include <stddef.h>

#include "ogb_model.h"

/* Fills m by measurement (ogb_model.h): starts the GPU path; fixed_s is the
 * best of 5 calls of 1 x 1 x 1 through it after one that builds the
 * pipeline; transfer_bytes_per_s is 2 x 16 MiB over the best of 3 round
 * trips through the device buffers; gpu_flops_per_s is 2 x 512^3 over the
 * best of 3 og_gemm_run at 512 cubed; cpu_flops_per_s the same over the
 * best of 2 calls of the CPU BLAS at 512 cubed. Takes about a second on
 * lavapipe (more when the kernels are compiled cold). Returns 0, or -1 with
 * a reason in why when the GPU path cannot run. */
int ogb_calibrate(ogb_model *m, char *why, size_t len);

#endif /* OGB_CALIBRATE_H */
