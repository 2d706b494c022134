/* The cost model that sends each call to the CPU or the GPU, and its file. */
#ifndef OGB_MODEL_H
#define OGB_MODEL_H

#include <stddef.h>

#include "ogb_call.h"

/* Measured once (ogb_calibrate.h) and kept in a text file beside the tuning
 * database (ogb_model_path):
 *   t_gpu = fixed_s + bytes / transfer_bytes_per_s + flops / gpu_flops_per_s
 *   t_cpu = flops / cpu_flops_per_s
 * with flops = 2 M N K and bytes what ogb_gpu_sgemm moves: A's and B's
 * spans, C's M x N block down, and up again when beta != 0 (4 bytes each).
 * The model is valid for the device and the CPU BLAS it names. */
typedef struct ogb_model {
    char device[256];   /* og_context_device_name */
    char cpu_blas[512]; /* ogb_cpu_path */
    double fixed_s;     /* a 1 x 1 x 1 call through the GPU path, copies included */
    double transfer_bytes_per_s;
    double gpu_flops_per_s; /* og_gemm_run at 512 cubed: the kernel onegpu selects (tuned where it is) */
    double cpu_flops_per_s; /* the CPU BLAS at 512 cubed */
} ogb_model;

/* Predicted seconds of the call on the GPU path and on the CPU BLAS. */
void ogb_model_predict(const ogb_model *m, const ogb_call *call, double *t_gpu, double *t_cpu);

/* The model's file: ONEGPU_BLAS_MODEL; else blas-model.txt in the
 * directory of the first database of OG_TUNING_DB (when set and not empty);
 * else beside the user's tuning database: $XDG_CACHE_HOME/onegpu/ or
 * ~/.cache/onegpu/. "" when none of these can be formed. */
void ogb_model_path(char *out, size_t len);

/* Reads the file (lines "key value", '#' comments); 0 when every field
 * was read. */
int ogb_model_read(const char *path, ogb_model *m);

/* Writes the file (creating its directory, to a temporary file renamed
 * into place, so a reader sees the old file or the new one); 0 on success. */
int ogb_model_write(const char *path, const ogb_model *m);

#endif /* OGB_MODEL_H */
