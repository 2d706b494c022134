/* The GPU path's persistent buffers (ogb_stage.h). */
#include "ogb_stage.h"

#include <stdlib.h>

og_status ogb_stage_grow(const ogb_runtime *rt, og_context *ctx, ogb_stage *s, uint64_t bytes, uint64_t most,
                         ogb_stage_kind kind)
{
    if (bytes <= s->bytes && s->buf)
        return OG_OK;
    uint64_t want = bytes > s->bytes + s->bytes / 2 ? bytes : s->bytes + s->bytes / 2;
    want = want > most ? most : want;
    og_buffer *buf = NULL;
    og_status st = (kind == OGB_STAGE_HOST ? rt->buffer_create_host : rt->buffer_create)(ctx, want, &buf);
    if (st != OG_OK)
        return st;
    rt->buffer_destroy(s->buf);
    s->buf = buf;
    s->bytes = want;
    return OG_OK;
}

void ogb_stage_free(const ogb_runtime *rt, ogb_stage *s)
{
    rt->buffer_destroy(s->buf);
    *s = (ogb_stage){0};
}

int ogb_host_grow(ogb_host *h, size_t elems)
{
    if (elems <= h->elems)
        return 0;
    float *p = realloc(h->p, elems * sizeof *p);
    if (!p)
        return -1;
    h->p = p;
    h->elems = elems;
    return 0;
}

void ogb_host_free(ogb_host *h)
{
    free(h->p);
    *h = (ogb_host){0};
}
