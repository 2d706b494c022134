/* Splitting a call whose operands exceed what one device buffer takes. */
#ifndef OGB_TILES_H
#define OGB_TILES_H

#include <stdint.h>

#include "ogb_call.h"

/* Blocks of M, N and K: every block but the last of a dimension has the
 * full size, the last the rest (ragged). */
typedef struct ogb_tiles {
    int mb, nb, kb; /* block sizes */
    int tm, tn, tk; /* blocks along M, N and K */
} ogb_tiles;

/* Where a tile lies in the call's loop over C's blocks. */
typedef struct ogb_tile_pos {
    long block;     /* C's block (i, j) as i + j * tm: consecutive blocks walk down C's columns */
    int first_k;    /* the block's first K block: the caller's beta, C read (beta != 0) */
    int last_k;     /* the block's last K block: C complete, read back */
    int row0, col0; /* the block's first row and column of C */
} ogb_tile_pos;

/* Chooses blocks of a call (alpha != 0, M, N, K > 0) so that each tile's
 * operands each span at most `limit` elements (limit >= 1): A's and B's
 * blocks as stored in the caller's memory with the caller's leading
 * dimensions (ld * (cols - 1) + rows, so a block's stored columns are what
 * shrink: K for A not transposed, M transposed; N for B not transposed, K
 * transposed), C's as a dense block (mb * nb). One block of each dimension
 * when the call fits. Otherwise the stored columns of an operand too large
 * shrink to what fits (its rows too, when one column does not), the three
 * operands in turn until all fit, and then each dimension is cut into
 * blocks of equal size but the last. K is split only where A's or B's
 * columns along K do not fit: each C block is then summed over the K
 * blocks on the device (ogb_tile_call's beta). */
void ogb_tiles_plan(const ogb_call *c, uint64_t limit, ogb_tiles *t);

/* Tiles in all: tm * tn * tk. */
long ogb_tiles_count(const ogb_tiles *t);

/* Tile `index` (0 .. count - 1, C's blocks in turn, each with its K blocks
 * in order) as a call of its own on the caller's memory: A, B and C
 * pointing at the block's first elements with the caller's leading
 * dimensions, beta the caller's for the first K block and 1 for the later
 * ones (C then holds the sum so far). Fills *pos. */
ogb_call ogb_tile_call(const ogb_call *c, const ogb_tiles *t, long index, ogb_tile_pos *pos);

#endif /* OGB_TILES_H */
