/* Tiles of a call too large for one device buffer (ogb_tiles.h). */
#include "ogb_tiles.h"

/* Shrinks an operand of `*inner` stored rows and `*outer` stored columns
 * with leading dimension ld until it spans at most limit elements: fewer
 * columns, or one column of `limit` rows when even one does not fit.
 * Returns whether it shrank. */
static int fit(long long *inner, long long *outer, long long ld, long long limit)
{
    if (ogb_span(*inner, *outer, ld) <= limit)
        return 0;
    if (*inner > limit) {
        *inner = limit;
        *outer = 1;
    } else {
        *outer = (limit - *inner) / ld + 1;
    }
    return 1;
}

/* Blocks of at most `most` along a dimension of n: how many, and their
 * equal size (the last one ragged). */
static void cut(long long n, long long most, int *size, int *blocks)
{
    long long count = (n + most - 1) / most;
    *blocks = (int)count;
    *size = (int)((n + count - 1) / count);
}

void ogb_tiles_plan(const ogb_call *c, uint64_t limit, ogb_tiles *t)
{
    long long m = c->m, n = c->n, k = c->k;
    long long e = limit > (uint64_t)1 << 62 ? (long long)1 << 62 : (long long)limit;
    long long *a_inner = c->transa == 'N' ? &m : &k, *a_outer = c->transa == 'N' ? &k : &m;
    long long *b_inner = c->transb == 'N' ? &k : &n, *b_outer = c->transb == 'N' ? &n : &k;
    int shrank;
    do {
        shrank = fit(a_inner, a_outer, c->lda, e);
        shrank |= fit(b_inner, b_outer, c->ldb, e);
        shrank |= fit(&m, &n, m, e); /* C, dense: ld = its rows */
    } while (shrank);
    cut(c->m, m, &t->mb, &t->tm);
    cut(c->n, n, &t->nb, &t->tn);
    cut(c->k, k, &t->kb, &t->tk);
}

long ogb_tiles_count(const ogb_tiles *t)
{
    return (long)t->tm * t->tn * t->tk;
}

/* The size of block `index` of blocks of `size` along a dimension of n. */
static int block_size(int n, int size, int index)
{
    long long rest = (long long)n - (long long)size * index;
    return rest < size ? (int)rest : size;
}

ogb_call ogb_tile_call(const ogb_call *c, const ogb_tiles *t, long index, ogb_tile_pos *pos)
{
    long block = index / t->tk;
    int bi = (int)(block % t->tm), bj = (int)(block / t->tm), bl = (int)(index % t->tk);
    long long i0 = (long long)bi * t->mb, j0 = (long long)bj * t->nb, l0 = (long long)bl * t->kb;
    *pos = (ogb_tile_pos){.block = block, .first_k = bl == 0, .last_k = bl == t->tk - 1,
                          .row0 = (int)i0, .col0 = (int)j0};
    ogb_call s = *c;
    s.m = block_size(c->m, t->mb, bi);
    s.n = block_size(c->n, t->nb, bj);
    s.k = block_size(c->k, t->kb, bl);
    s.beta = bl == 0 ? c->beta : 1.0f;
    s.a = c->a + (c->transa == 'N' ? i0 + l0 * c->lda : l0 + i0 * c->lda);
    s.b = c->b + (c->transb == 'N' ? l0 + j0 * c->ldb : j0 + l0 * c->ldb);
    s.c = c->c + i0 + j0 * c->ldc;
    return s;
}
