/* A call on the device as tiles, each tile's copies overlapped with the
 * previous tile's product. */
#ifndef OGB_TILED_H
#define OGB_TILED_H

#include <stddef.h>
#include <stdint.h>

#include "ogb_call.h"
#include "ogb_gpu.h"
#include "ogb_runtime.h"
#include "ogb_slots.h"
#include "ogb_stage.h"

/* The GPU path's objects (ogb_gpu.c makes and frees them). A tile's A and
 * B go to the buffers of its slot (tiles alternate between the two), a C
 * block to the buffer of its block's parity (a C block summed over K
 * blocks stays in one buffer while its tiles alternate). Where onegpu's
 * buffers are staged, each slot also has host buffers for its A, B and C
 * (og_buffer_create_host): the host fills them and the slot's command
 * buffer copies them. */
typedef struct ogb_gpu_objects {
    const ogb_runtime *rt;
    og_context *ctx;
    og_gemm *gemm;
    ogb_slots slots;
    ogb_stage a[OGB_SLOTS], b[OGB_SLOTS], c[OGB_SLOTS];
    ogb_stage ha[OGB_SLOTS], hb[OGB_SLOTS], hc[OGB_SLOTS]; /* staged: the host's side of each slot */
    int staged;     /* og_context_memory_placement is "device-local": the host cannot map a, b and c */
    ogb_host pack;  /* mapped: a C block packed for its upload, or read back before it goes to C */
    ogb_host image; /* beta != 0: C's M x N block, copied to the caller's C after the last tile */
    uint64_t most;  /* bytes one operand of a tile may take (a whole number of floats) */
} ogb_gpu_objects;

/* The row-major GEMM of a column-major call (ogb_gpu.h) whose A, B and C
 * lie at the start of buffers a, b and c, C as a dense M x N block. */
og_gemm_args ogb_row_major_args(const ogb_call *c, og_buffer *a, og_buffer *b, og_buffer *cbuf);

/* Runs a checked call (alpha != 0, M, N, K > 0) as the tiles of
 * ogb_tiles_plan for o->most bytes an operand. For each tile in turn: A's
 * and B's blocks written as far as they span, C's block (packed) at its
 * first K block when beta != 0; the tile recorded with og_gemm_encode into
 * its slot's command buffer and submitted without waiting; then the
 * previous tile waited for and, at its block's last K block, its C block
 * read back. Where the host maps onegpu's buffers (lavapipe, integrated
 * GPUs, resizable BAR) the writes and reads are the host's own, through
 * the mapping. Where they are staged (o->staged), the host writes the
 * slot's host buffers and the slot's command buffer copies them to the
 * device before the product, and the C block back after it: so the next
 * tile's writes run while a tile computes, and a C block's read while the
 * next tile computes, in both cases; the device's own copies run on the
 * queue between the products (one queue: a copy waits for the product
 * before it, whose barrier is global). C blocks go straight to the
 * caller's C when beta = 0 (a failure leaves C partly written; the
 * caller's repeat of the call never reads it), else to o->image, copied to
 * C after the last tile (C is as it was on failure). Fills times->tiles,
 * times->copy_s (the host's time in copies) and times->staged. Returns OG_OK, or the
 * failing status with a reason in why (OG_ERROR_DEVICE_LOST when the device
 * was lost); nothing is pending on the device when it returns. */
og_status ogb_tiled_sgemm(ogb_gpu_objects *o, const ogb_call *c, ogb_gpu_times *times, char *why, size_t len);

#endif /* OGB_TILED_H */
