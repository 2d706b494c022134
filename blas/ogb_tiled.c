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
 * equal but the last), those of both slots when it has several tiles, and
 * o->image when beta != 0. */
static og_status prepare(ogb_gpu_objects *o, const ogb_call *c, const ogb_tiles *t, char *why, size_t len)
{
    ogb_tile_pos pos;
    ogb_call f = ogb_tile_call(c, t, 0, &pos);
    int sets = ogb_tiles_count(t) > 1 ? OGB_SLOTS : 1, c_sets = (long)t->tm * t->tn > 1 ? OGB_SLOTS : 1;
    uint64_t cb = 4 * (uint64_t)f.m * (uint64_t)f.n;
    og_status st = OG_OK;
    for (int s = 0; s < sets && st == OG_OK; s++)
        if ((st = ogb_stage_grow(o->rt, o->ctx, &o->a[s], a_bytes(&f), o->most)) != OG_OK ||
            (st = ogb_stage_grow(o->rt, o->ctx, &o->b[s], b_bytes(&f), o->most)) != OG_OK ||
            (s < c_sets && (st = ogb_stage_grow(o->rt, o->ctx, &o->c[s], cb, o->most)) != OG_OK))
            return fail_og(o, "og_buffer_create", st, why, len);
    size_t mn = (size_t)c->m * (size_t)c->n;
    if (c->beta != 0.0f && ogb_host_grow(&o->image, mn))
        return no_host_memory(mn, why, len);
    return OG_OK;
}

/* Uploads a tile's A and B into slot s's buffers and, at its block's first
 * K block with beta != 0, its C block (packed) into C buffer cs. */
static og_status upload(ogb_gpu_objects *o, const ogb_call *tc, const ogb_tile_pos *pos, int s, int cs, char *why,
                        size_t len)
{
    og_status st;
    if ((st = o->rt->buffer_write(o->a[s].buf, 0, tc->a, a_bytes(tc))) != OG_OK ||
        (st = o->rt->buffer_write(o->b[s].buf, 0, tc->b, b_bytes(tc))) != OG_OK)
        return fail_og(o, "og_buffer_write", st, why, len);
    if (!pos->first_k || tc->beta == 0.0f)
        return OG_OK;
    size_t m = (size_t)tc->m, mn = m * (size_t)tc->n;
    const float *src = tc->c;
    if (tc->ldc != tc->m) {
        if (ogb_host_grow(&o->pack, mn))
            return no_host_memory(mn, why, len);
        for (size_t j = 0; j < (size_t)tc->n; j++)
            memcpy(o->pack.p + j * m, tc->c + j * (size_t)tc->ldc, m * sizeof(float));
        src = o->pack.p;
    }
    if ((st = o->rt->buffer_write(o->c[cs].buf, 0, src, mn * 4)) != OG_OK)
        return fail_og(o, "og_buffer_write", st, why, len);
    return OG_OK;
}

/* Records a tile into slot s's command buffer and submits it. */
static og_status launch(ogb_gpu_objects *o, const ogb_call *tc, int s, int cs, char *why, size_t len)
{
    VkResult r = ogb_slots_begin(&o->slots, s);
    if (r != VK_SUCCESS)
        return fail_vk("vkBeginCommandBuffer", r, why, len);
    og_gemm_args args = ogb_row_major_args(tc, o->a[s].buf, o->b[s].buf, o->c[cs].buf);
    og_status st = o->rt->gemm_encode(o->gemm, o->slots.cmd[s], &args);
    if (st != OG_OK)
        return fail_og(o, "og_gemm_encode", st, why, len);
    r = ogb_slots_submit(&o->slots, s);
    return r != VK_SUCCESS ? fail_vk("vkQueueSubmit", r, why, len) : OG_OK;
}

/* Reads C buffer cs, the complete block of tile tc, into the caller's C
 * (beta = 0) or o->image: straight there when the destination's columns
 * are the block's, else through o->pack. */
static og_status download(ogb_gpu_objects *o, const ogb_call *c, const ogb_call *tc, const ogb_tile_pos *pos, int cs,
                          char *why, size_t len)
{
    size_t m = (size_t)tc->m, mn = m * (size_t)tc->n;
    size_t ld = c->beta == 0.0f ? (size_t)c->ldc : (size_t)c->m;
    float *dst = c->beta == 0.0f ? tc->c : o->image.p + pos->row0 + (size_t)pos->col0 * ld;
    int direct = ld == m;
    if (!direct && ogb_host_grow(&o->pack, mn))
        return no_host_memory(mn, why, len);
    og_status st = o->rt->buffer_read(o->c[cs].buf, 0, direct ? dst : o->pack.p, mn * 4);
    if (st != OG_OK)
        return fail_og(o, "og_buffer_read", st, why, len);
    if (!direct)
        for (size_t j = 0; j < (size_t)tc->n; j++)
            memcpy(dst + j * ld, o->pack.p + j * m, m * sizeof(float));
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
    og_status st = download(o, c, tc, pos, (int)(pos->block % OGB_SLOTS), why, len);
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
            st = launch(o, &tc, s, cs, why, len);
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
        for (size_t j = 0; j < (size_t)c->n; j++)
            memcpy(c->c + j * (size_t)c->ldc, o->image.p + j * (size_t)c->m, (size_t)c->m * sizeof(float));
        copy_s += now() - t0;
    }
    times->tiles = count;
    times->copy_s = copy_s;
    return st;
}
