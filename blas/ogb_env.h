/* The drop-in's settings, read from the environment on first use. */
#ifndef OGB_ENV_H
#define OGB_ENV_H

typedef enum ogb_force { OGB_FORCE_NONE = 0, OGB_FORCE_CPU, OGB_FORCE_GPU } ogb_force;

typedef struct ogb_env {
    ogb_force force;     /* ONEGPU_BLAS_FORCE=cpu|gpu; anything else: the model decides */
    int trace_fd;        /* ONEGPU_BLAS_TRACE: -1 off, 2 for "1"/"stderr", else a file appended to */
    const char *cpu_lib; /* ONEGPU_BLAS_CPU_LIB: the CPU BLAS to open, or NULL */
    const char *model;   /* ONEGPU_BLAS_MODEL: the cost model's file, or NULL (ogb_model.h) */
    const char *runtime; /* ONEGPU_BLAS_RUNTIME: libonegpu to open, or NULL (ogb_runtime.h) */
    int deterministic;   /* ONEGPU_BLAS_MODE=deterministic: Deterministic mode, else Fast */
    /* ONEGPU_BLAS_TILE_BYTES, for tests: the most bytes one operand of a
     * tile may take when below the device's limits (ogb_tiled.h); 0: unset. */
    unsigned long long tile_bytes;
} ogb_env;

/* The settings, read once (thread-safe, on the first call of any entry
 * point, never at load time). Unknown values are ignored, never reported:
 * the library prints nothing unless asked to trace. A trace file that cannot
 * be opened turns tracing off. */
const ogb_env *ogb_env_get(void);

#endif /* OGB_ENV_H */
