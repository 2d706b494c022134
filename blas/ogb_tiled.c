/* A call as tiles on the device (ogb_tiled.h). */
#include "ogb_tiled.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ogb_tiles.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A failed onegpu call: its reason in why; returns st. */
static og_status fail_og(const ogb_gpu_objects *o, const char *what, og_status st, char *why, size_t len)
{
    snprintf(why, len, "%s (%d): %s", what, st, o->rt->context_last_error(o->ctx));
    return st;
}

/* A failed Vulkan call: its reason in why; returns the status it means. */
static og_status fail_vk(const char *what, VkResult r, char *why, size_t len)
{
    snprintf(why, len, "%s: VkResult %d", what, (int)r);
    return r == VK_ERROR_DEVICE_LOST ? OG_ERROR_DEVICE_LOST
           : r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? OG_ERROR_OUT_OF_MEMORY
                                                                                      : OG_ERROR_VULKAN;
}

static og_status no_host_memory(size_t elems, char *why, size_t len)
{
    snprintf(why, len, "out of host memory for %zu floats", elems);
    return OG_ERROR_OUT_OF_MEMORY;
}

og_gemm_args ogb_row_major_args(const ogb_call *c, og_buffer *a, og_buffer *b, og_buffer *cbuf)
{
    return (og_gemm_args){
        .trans_a = c->transb == 'T', .trans_b = c->transa == 'T',
        .m = c->n, .n = c->m, .k = c->k, .batch = 1,
        .alpha = c->alpha, .beta = c->beta,
        .a = b, .b = a, .c = cbuf,
        .lda = c->ldb, .ldb = c->lda, .ldc = c->m,
    };
}

/* Bytes of A's and B's spans of a call. */
static uint64_t a_bytes(const ogb_call *c)
{
    return 4 * (uint64_t)ogb_span(ogb_a_rows(c), ogb_a_cols(c), c->lda);
}

static uint64_t b_bytes(const ogb_call *c)
{
    return 4 * (uint64_t)ogb_span(ogb_b_rows(c), ogb_b_cols(c), c->ldb);
}

/* Sizes the buffers for the call's largest tile (its first: blocks are
 * equal but the last), those of both slots when it has several tiles (and
 * their host buffers when staged), and o->image when beta != 0. */
static og_status prepare(ogb_gpu_objects *o, const ogb_call *c, const ogb_tiles *t, char *why, size_t len)
{
    ogb_tile_pos pos;
    ogb_call f = ogb_tile_call(c, t, 0, &pos);
    int sets = ogb_tiles_count(t) > 1 ? OGB_SLOTS : 1, c_sets = (long)t->tm * t->tn > 1 ? OGB_SLOTS : 1;
    uint64_t ab = a_bytes(&f), bb = b_bytes(&f), cb = 4 * (uint64_t)f.m * (uint64_t)f.n;
    og_status st = OG_OK;
    for (int s = 0; s < sets && st == OG_OK; s++)
        if ((st = ogb_stage_grow(o->rt, o->ctx, &o->a[s], ab, o->most, OGB_STAGE_DEVICE)) != OG_OK ||
            (st = ogb_stage_grow(o->rt, o->ctx, &o->b[s], bb, o->most, OGB_STAGE_DEVICE)) != OG_OK ||
            (s < c_sets && (st = ogb_stage_grow(o->rt, o->ctx, &o->c[s], cb, o->most, OGB_STAGE_DEVICE)) != OG_OK) ||
            (o->staged && ((st = ogb_stage_grow(o->rt, o->ctx, &o->ha[s], ab, o->most, OGB_STAGE_HOST)) != OG_OK ||
                           (st = ogb_stage_grow(o->rt, o->ctx, &o->hb[s], bb, o->most, OGB_STAGE_HOST)) != OG_OK ||
                           (st = ogb_stage_grow(o->rt, o->ctx, &o->hc[s], cb, o->most, OGB_STAGE_HOST)) != OG_OK)))
            return fail_og(o, "og_buffer_create", st, why, len);
    size_t mn = (size_t)c->m * (size_t)c->n;
    if (c->beta != 0.0f && ogb_host_grow(&o->image, mn))
        return no_host_memory(mn, why, len);
    return OG_OK;
}

/* The host's address of a host buffer's floats. */
static float *host_floats(const ogb_gpu_objects *o, const ogb_stage *s)
{
    return o->rt->buffer_host_pointer(s->buf);
}

/* Copies the M x N block of a column-major matrix with leading dimension
 * ld_src to one with ld_dst (one memcpy when both are dense). */
static void copy_block(float *dst, size_t ld_dst, const float *src, size_t ld_src, size_t m, size_t n)
{
    if (ld_dst == m && ld_src == m) {
        memcpy(dst, src, m * n * sizeof(float));
        return;
    }
    for (size_t j = 0; j < n; j++)
        memcpy(dst + j * ld_dst, src + j * ld_src, m * sizeof(float));
}

/* Whether tile tc uploads its C block: at its block's first K block, when
 * beta != 0. */
static int uploads_c(const ogb_call *tc, const ogb_tile_pos *pos)
{
    return pos->first_k && tc->beta != 0.0f;
}

/* Writes a tile's A and B for slot s and, where it uploads C, its C block
 * (packed) for C buffer cs: into the slot's host buffers when staged, else
 * through the mapping of the device buffers. */
static og_status upload(ogb_gpu_objects *o, const ogb_call *tc, const ogb_tile_pos *pos, int s, int cs, char *why,
                        size_t len)
{
    size_t m = (size_t)tc->m, n = (size_t)tc->n, mn = m * n;
    if (o->staged) {
        memcpy(host_floats(o, &o->ha[s]), tc->a, a_bytes(tc));
        memcpy(host_floats(o, &o->hb[s]), tc->b, b_bytes(tc));
        if (uploads_c(tc, pos))
            copy_block(host_floats(o, &o->hc[s]), m, tc->c, (size_t)tc->ldc, m, n);
        return OG_OK;
    }
    og_status st;
    if ((st = o->rt->buffer_write(o->a[s].buf, 0, tc->a, a_bytes(tc))) != OG_OK ||
        (st = o->rt->buffer_write(o->b[s].buf, 0, tc->b, b_bytes(tc))) != OG_OK)
        return fail_og(o, "og_buffer_write", st, why, len);
    if (!uploads_c(tc, pos))
        return OG_OK;
    const float *src = tc->c;
    if (tc->ldc != tc->m) {
        if (ogb_host_grow(&o->pack, mn))
            return no_host_memory(mn, why, len);
        copy_block(o->pack.p, m, tc->c, (size_t)tc->ldc, m, n);
        src = o->pack.p;
    }
    if ((st = o->rt->buffer_write(o->c[cs].buf, 0, src, mn * 4)) != OG_OK)
        return fail_og(o, "og_buffer_write", st, why, len);
    return OG_OK;
}

/* Staged: records the copies of slot s's host buffers to the device ahead
 * of the product; og_gemm_encode's first barrier makes their writes
 * visible to the kernels. Nothing the copies write is in use: the buffers
 * of slot s and C buffer cs were last used by tiles already waited for
 * (ogb_tiled_sgemm waits for tile i - 2 before it records tile i, and a
 * C buffer's previous block ended no later than that), and their writes
 * were followed by og_gemm_encode's barriers. */
static void record_uploads(ogb_gpu_objects *o, const ogb_call *tc, const ogb_tile_pos *pos, int s, int cs)
{
    ogb_slots_copy(&o->slots, s, o->rt, o->ha[s].buf, o->a[s].buf, a_bytes(tc));
    ogb_slots_copy(&o->slots, s, o->rt, o->hb[s].buf, o->b[s].buf, b_bytes(tc));
    if (uploads_c(tc, pos))
        ogb_slots_copy(&o->slots, s, o->rt, o->hc[s].buf, o->c[cs].buf, 4 * (uint64_t)tc->m * (uint64_t)tc->n);
}

/* Staged, at a block's last K block: records the copy of C buffer cs into
 * slot s's host buffer after the product (og_gemm_encode's last barrier
 * makes the kernels' writes visible to it) and a barrier that makes the
 * copy's writes visible to the host once the fence has signalled. */
static void record_read_back(ogb_gpu_objects *o, const ogb_call *tc, int s, int cs)
{
    ogb_slots_copy(&o->slots, s, o->rt, o->c[cs].buf, o->hc[s].buf, 4 * (uint64_t)tc->m * (uint64_t)tc->n);
    ogb_slots_barrier(&o->slots, s, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
}

/* Records a tile into slot s's command buffer (with its copies when
 * staged) and submits it. */
static og_status launch(ogb_gpu_objects *o, const ogb_call *tc, const ogb_tile_pos *pos, int s, int cs, char *why,
                        size_t len)
{
    VkResult r = ogb_slots_begin(&o->slots, s);
    if (r != VK_SUCCESS)
        return fail_vk("vkBeginCommandBuffer", r, why, len);
    if (o->staged)
        record_uploads(o, tc, pos, s, cs);
    og_gemm_args args = ogb_row_major_args(tc, o->a[s].buf, o->b[s].buf, o->c[cs].buf);
    og_status st = o->rt->gemm_encode(o->gemm, o->slots.cmd[s], &args);
    if (st != OG_OK)
        return fail_og(o, "og_gemm_encode", st, why, len);
    if (o->staged && pos->last_k)
        record_read_back(o, tc, s, cs);
    r = ogb_slots_submit(&o->slots, s);
    return r != VK_SUCCESS ? fail_vk("vkQueueSubmit", r, why, len) : OG_OK;
}

/* Reads the complete C block of tile tc, run in slot s with C buffer cs,
 * into the caller's C (beta = 0) or o->image: from the slot's host buffer
 * when staged; else through the mapping, straight there when the
 * destination's columns are the block's, otherwise through o->pack. */
static og_status download(ogb_gpu_objects *o, const ogb_call *c, const ogb_call *tc, const ogb_tile_pos *pos, int s,
                          int cs, char *why, size_t len)
{
    size_t m = (size_t)tc->m, n = (size_t)tc->n, mn = m * n;
    size_t ld = c->beta == 0.0f ? (size_t)c->ldc : (size_t)c->m;
    float *dst = c->beta == 0.0f ? tc->c : o->image.p + pos->row0 + (size_t)pos->col0 * ld;
    if (o->staged) {
        copy_block(dst, ld, host_floats(o, &o->hc[s]), m, m, n);
        return OG_OK;
    }
    int direct = ld == m;
    if (!direct && ogb_host_grow(&o->pack, mn))
        return no_host_memory(mn, why, len);
    og_status st = o->rt->buffer_read(o->c[cs].buf, 0, direct ? dst : o->pack.p, mn * 4);
    if (st != OG_OK)
        return fail_og(o, "og_buffer_read", st, why, len);
    if (!direct)
        copy_block(dst, ld, o->pack.p, m, m, n);
    return OG_OK;
}

/* Waits for the tile in slot s and reads its C block back when the block
 * is complete (the time of the read added to *copy_s). */
static og_status finish(ogb_gpu_objects *o, const ogb_call *c, const ogb_call *tc, const ogb_tile_pos *pos, int s,
                        double *copy_s, char *why, size_t len)
{
    VkResult r = ogb_slots_wait(&o->slots, s);
    if (r != VK_SUCCESS)
        return fail_vk("vkWaitForFences", r, why, len);
    if (!pos->last_k)
        return OG_OK;
    double t0 = now();
    og_status st = download(o, c, tc, pos, s, (int)(pos->block % OGB_SLOTS), why, len);
    *copy_s += now() - t0;
    return st;
}

og_status ogb_tiled_sgemm(ogb_gpu_objects *o, const ogb_call *c, ogb_gpu_times *times, char *why, size_t len)
{
    ogb_tiles t;
    ogb_tiles_plan(c, o->most / 4, &t);
    long count = ogb_tiles_count(&t);
    double copy_s = 0;
    og_status st = prepare(o, c, &t, why, len);
    ogb_call prev = *c;
    ogb_tile_pos prev_pos = {0};
    for (long i = 0; i < count && st == OG_OK; i++) {
        ogb_tile_pos pos;
        ogb_call tc = ogb_tile_call(c, &t, i, &pos);
        int s = (int)(i % OGB_SLOTS), cs = (int)(pos.block % OGB_SLOTS);
        double t0 = now();
        st = upload(o, &tc, &pos, s, cs, why, len);
        copy_s += now() - t0;
        if (st == OG_OK)
            st = launch(o, &tc, &pos, s, cs, why, len);
        if (st == OG_OK && i > 0)
            st = finish(o, c, &prev, &prev_pos, (int)((i - 1) % OGB_SLOTS), &copy_s, why, len);
        prev = tc;
        prev_pos = pos;
    }
    if (st == OG_OK)
        st = finish(o, c, &prev, &prev_pos, (int)((count - 1) % OGB_SLOTS), &copy_s, why, len);
    for (int s = 0; s < OGB_SLOTS; s++) /* after a failure, nothing may stay pending */
        ogb_slots_wait(&o->slots, s);
    if (st == OG_OK && c->beta != 0.0f) {
        double t0 = now();
        copy_block(c->c, (size_t)c->ldc, o->image.p, (size_t)c->m, (size_t)c->m, (size_t)c->n);
        copy_s += now() - t0;
    }
    times->tiles = count;
    times->copy_s = copy_s;
    times->staged = o->staged;
    return st;
}
