/* Device buffers and host scratch the GPU path keeps from call to call. */
#ifndef OGB_STAGE_H
#define OGB_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "ogb_runtime.h"

/* A buffer reused by every call, grown when a call needs more. */
typedef struct ogb_stage {
    og_buffer *buf;
    uint64_t bytes;
} ogb_stage;

/* Which buffers a stage holds: og_buffer_create's (device-local, bound by
 * the kernels) or og_buffer_create_host's (the staging copies' host side). */
typedef enum ogb_stage_kind { OGB_STAGE_DEVICE, OGB_STAGE_HOST } ogb_stage_kind;

/* Makes the stage hold at least `bytes` (growing by half at least, so a
 * rising sequence of sizes reallocates a few times only, but never past
 * `most`, the largest buffer the device allocates: bytes <= most), a buffer
 * of that kind. The old buffer is destroyed: no command using it may be
 * pending. */
og_status ogb_stage_grow(const ogb_runtime *rt, og_context *ctx, ogb_stage *s, uint64_t bytes, uint64_t most,
                         ogb_stage_kind kind);

/* Destroys the buffer; the stage is empty again. */
void ogb_stage_free(const ogb_runtime *rt, ogb_stage *s);

/* Host floats reused by every call, grown when a call needs more. */
typedef struct ogb_host {
    float *p;
    size_t elems;
} ogb_host;

/* Makes h hold at least `elems` floats; 0 on success, -1 without memory
 * (h as it was). */
int ogb_host_grow(ogb_host *h, size_t elems);

/* Frees the floats; h is empty again. */
void ogb_host_free(ogb_host *h);

#endif /* OGB_STAGE_H */
