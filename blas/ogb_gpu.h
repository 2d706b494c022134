/* The GPU path: one onegpu context per process, persistent staging buffers. */
#ifndef OGB_GPU_H
#define OGB_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "ogb_call.h"

/* Where a GPU call's time went (the trace prints it). */
typedef struct ogb_gpu_times {
    double total_s; /* the whole call, waiting for the lock excluded */
    double copy_s;  /* uploads and the read back, host packing included */
    long tiles;     /* tiles the call ran as (ogb_tiled.h) */
    int staged;     /* the copies went through the drop-in's host buffers (ogb_tiled.h) */
    /* Errors the validation layer reported during the call (OG_VALIDATION:
     * onegpu.h's og_context_desc.validation); 0 when it is off. */
    unsigned validation_errors;
} ogb_gpu_times;

/* Runs a checked call with alpha != 0, M, N, K > 0 on the GPU: the
 * column-major call is the row-major GEMM of onegpu.h on the same memory
 * (a column-major C is the row-major C^T, and C^T = op(B)^T op(A)^T), so
 * A' = B's storage with op(A') transposed when op(B) is, B' = A's storage,
 * M' = N, N' = M, lda' = ldb, ldb' = lda. Copies: exactly the elements A
 * and B span (ld * (cols - 1) + rows) into persistent device buffers
 * (created on first use, grown when a call needs more, never shrunk); C
 * kept on the device as a dense M x N block (ldc' = M), uploaded (packed
 * when ldc > M) only when beta != 0, and read back into the M x N block of
 * the caller's C only, column by column. A call whose operands would take
 * more than one binding (maxStorageBufferRange) or one allocation
 * (maxMemoryAllocationSize) of the device, or than ONEGPU_BLAS_TILE_BYTES,
 * runs as tiles, each tile's copies overlapped with the previous tile's
 * product where the device allows (ogb_tiled.h); every call, one tile or
 * more, runs through the drop-in's own command buffers (og_gemm_encode).
 * Float32 inputs, native precision, Fast mode
 * (ONEGPU_BLAS_MODE=deterministic: Deterministic).
 * Starts the GPU on first use (libonegpu opened, a context on the default
 * device: OG_DEVICE, OG_TUNING_DB, OG_VALIDATION as onegpu.h says). Calls
 * from threads are serialised by one lock (a context is one thread's at a
 * time). Fills *times. Returns 0 on success. Otherwise a reason in why
 * (len bytes), and C is as it was, except with beta = 0, where it may be
 * partly written (never read by a repeat of the call): the GPU could not
 * start (remembered: later calls fail at once), this process is a fork()
 * child of one whose GPU path had started (the child must not touch the
 * parent's device), the device was lost (the GPU path stops), or onegpu
 * refused or failed the call. */
int ogb_gpu_sgemm(const ogb_call *call, ogb_gpu_times *times, char *why, size_t len);

/* Whether this process is a fork() child of one whose GPU path had
 * started (why says so); such a child must use the CPU. Takes no lock: the
 * child's copies of the locks may be held forever. */
int ogb_gpu_forked(char *why, size_t len);

/* Starts the GPU path as ogb_gpu_sgemm would and copies the device's name
 * into name (len bytes); 0 on success, else a reason in name. */
int ogb_gpu_device(char *name, size_t len);

/* Seconds to write `bytes` to a device buffer and read them back (the
 * staging path of og_buffer_write and og_buffer_read), best of 3; 0 when
 * the GPU path cannot run. */
double ogb_gpu_time_transfer(uint64_t bytes);

/* Seconds of og_gemm_run alone for an n x n x n product already on the
 * device (the kernel onegpu selects for it: the tuned one where the
 * database has it), after one untimed run that builds its pipeline; best
 * of 3; 0 when the GPU path cannot run. */
double ogb_gpu_time_product(int n);

#endif /* OGB_GPU_H */
