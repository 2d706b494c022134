/* Int8Gemm's portable tile (templates/int8gemm_tile.tmpl): int32 sums of
 * (a - za)(b - zb) (reference design, "8-bit products"). */
#include <stdio.h>

#include "og_family.h"

og_params og_params_int8_tile(void)
{
    og_params p = {.variant = OG_VARIANT_INT8_TILE,
                   .bm = 64,
                   .bn = 64,
                   .bk = 16,
                   .tm = 4,
                   .tn = 4,
                   .wgx = 16,
                   .wgy = 16};
    return p;
}

static void int8_tile_format(const og_params *p, char *buf, size_t len)
{
    int used = snprintf(
        buf, len, "variant=int8tile,bm=%d,bn=%d,bk=%d,tm=%d,tn=%d,wgx=%d,wgy=%d,pad=%d,dot=%d",
        p->bm, p->bn, p->bk, p->tm, p->tn, p->wgx, p->wgy, p->pad, p->dot);
    /* The staged tile keeps the text it had before direct loads existed,
     * so the records measured then keep their keys. */
    if (p->load == OG_LOAD_DIRECT && used >= 0 && (size_t)used < len)
        used += snprintf(buf + used, len - (size_t)used, ",load=direct,vec=%d", p->vec);
    if (p->src != OG_SRC_STORAGE && used >= 0 && (size_t)used < len)
        snprintf(buf + used, len - (size_t)used, ",src=%s", og_src_name(p->src));
}

static int int8_tile_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    if (og_tile_shape_check(p, why, len) != 0 || og_dot_check(p, lim, why, len) != 0 ||
        og_src_check(p, lim,
                     p->load != OG_LOAD_DIRECT
                         ? "params: Int8Gemm src=texel needs load=direct (tile) or vec (skinny)"
                         : NULL,
                     why, len) != 0)
        return -1;
    /* Direct loads multiply in float32 (exact, see the template), so not
     * with packed dot products; vec names their loads' width only. */
    if (p->load == OG_LOAD_STAGED && p->vec != 0) {
        snprintf(why, len, "params: int8tile vec=%d needs load=direct", p->vec);
        return -1;
    }
    if (p->load == OG_LOAD_DIRECT &&
        (p->dot != 0 || !(p->vec == 1 || (p->vec == 4 && p->tm % 4 == 0 && p->tn % 4 == 0)))) {
        snprintf(why, len,
                 "params: int8tile load=direct needs dot=0 and vec=1, or vec=4 with register "
                 "tiles of fours (dot=%d, vec=%d)",
                 p->dot, p->vec);
        return -1;
    }
    return lim ? og_limits_check(p, lim, (uint32_t)p->wgx, (uint32_t)p->wgy, why, len) : 0;
}

/* An int per element (dot = 0), or a word of four k (dot = 1); none with
 * direct loads. */
static uint32_t int8_tile_shared_bytes(const og_params *p)
{
    if (p->load == OG_LOAD_DIRECT)
        return 0;
    return (uint32_t)((p->dot ? 1 : 4) * p->bk * (p->bm + p->pad + p->bn + p->pad));
}

/* k steps, each with its KW words, then the register tile. Direct loads:
 * loops of chunks of 256 k around loops of steps, one pair for the whole
 * steps and one for the tail. A chunk costs a trip of its loop and one of
 * the step loop's exit; the tail may add a chunk; each chunk loop costs
 * one more at its exit. */
static uint64_t int8_tile_loops(const og_params *p, uint64_t k_len)
{
    if (p->load == OG_LOAD_DIRECT)
        return og_steps(k_len, p->bk) + 2u * (og_steps(k_len, 256) + 1u) + 2u +
               (uint64_t)(p->tm * p->tn) + 1u;
    uint64_t kw = (uint64_t)(p->dot ? p->bk / 4 : p->bk);
    return og_steps(k_len, p->bk) * (kw + 2u) + 1u + (uint64_t)(p->tm * p->tn) + 1u;
}

/* An Int8Gemm tile; wgx and wgy follow from the tiles. */
static og_params int8_tile(int bm, int bn, int bk, int tm, int tn, int pad, int dot)
{
    return (og_params){.variant = OG_VARIANT_INT8_TILE,
                       .bm = bm,
                       .bn = bn,
                       .bk = bk,
                       .tm = tm,
                       .tn = tn,
                       .wgx = bn / tn,
                       .wgy = bm / tm,
                       .pad = pad,
                       .dot = dot};
}

/* The direct-load Int8Gemm tile with word loads. */
static og_params int8_direct(int bm, int bn, int bk, int tm, int tn)
{
    og_params p = int8_tile(bm, bn, bk, tm, tn, 0, 0);
    p.load = OG_LOAD_DIRECT;
    p.vec = 4;
    return p;
}

/* Int8Gemm's tile: the default first; the quick preset adds larger register
 * tiles, a longer k step, padding, the packed dot products (where the
 * device has them: og_params_check drops them otherwise) and direct loads
 * (words from storage and from texel buffers, float32 products) with
 * register tiles of 4x4 to 16x8; the standard preset every tile, k step,
 * register tile, padding and product, staged and direct. */
static og_status int8_tile_space(og_space_list *c, const og_space_ask *ask)
{
    static const int tiles[] = {32, 64, 128}, steps[] = {16, 32}, regs[] = {2, 4, 8},
                     direct_regs[] = {4, 8, 16};
    const og_params quick[] = {
        og_params_int8_tile(),
        int8_tile(64, 64, 16, 4, 4, 0, 1),
        int8_tile(64, 64, 16, 4, 4, 1, 0),
        int8_tile(64, 64, 32, 4, 4, 0, 0),
        int8_tile(128, 64, 16, 8, 4, 0, 0),
        int8_tile(64, 64, 16, 8, 8, 0, 0),
        int8_tile(128, 64, 16, 8, 4, 0, 1),
        int8_tile(32, 32, 16, 2, 2, 0, 0),
        int8_direct(64, 64, 16, 4, 4),
        int8_direct(64, 64, 16, 8, 8),
        int8_direct(128, 64, 16, 16, 8),
        int8_direct(64, 128, 16, 8, 16),
        int8_direct(128, 64, 32, 8, 8),
    };
    og_status st = OG_OK;
    for (size_t i = 0; i < sizeof quick / sizeof quick[0] && st == OG_OK; i++)
        st = quick[i].load == OG_LOAD_DIRECT ? og_space_add_word_loads(c, quick[i]) : og_space_add(c, quick[i]);
    for (int a = 0; ask->standard && a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int k = 0; k < 2; k++)
                for (int x = 0; x < 3; x++)
                    for (int y = 0; y < 3; y++)
                        for (int v = 0; v < 4 && st == OG_OK; v++) {
                            og_params p = int8_tile(tiles[a], tiles[b], steps[k], regs[x], regs[y],
                                                    v & 1, v >> 1);
                            if (p.wgx * p.wgy >= 32)
                                st = og_space_add(c, p);
                        }
    for (int a = 0; ask->standard && a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int k = 0; k < 2; k++)
                for (int x = 0; x < 3; x++)
                    for (int y = 0; y < 3 && st == OG_OK; y++) {
                        og_params p = int8_direct(tiles[a], tiles[b], steps[k], direct_regs[x],
                                                  direct_regs[y]);
                        if (p.wgx * p.wgy >= 32)
                            st = og_space_add_word_loads(c, p);
                    }
    return st;
}

const og_family og_family_int8_tile = {
    .variant = OG_VARIANT_INT8_TILE,
    .name = "int8tile",
    .template_name = OG_TEMPLATE_INT8_TILE,
    .can = OG_FAMILY_TILED | OG_FAMILY_INT8 | OG_FAMILY_ADDRESS,
    .keys = OG_KEY_BM | OG_KEY_BN | OG_KEY_BK | OG_KEY_TM | OG_KEY_TN | OG_KEY_WGX | OG_KEY_WGY |
            OG_KEY_PAD | OG_KEY_DOT,
    .extra = OG_KEY_LOAD | OG_KEY_VEC,
    .optional = OG_KEY_SRC,
    .keys_text = "bm,bn,bk,tm,tn,wgx,wgy,pad,dot (and load with vec) for variant=int8tile",
    .format = int8_tile_format,
    .check = int8_tile_check,
    .shared_bytes = int8_tile_shared_bytes,
    .local_size = og_tile_local_size,
    .loop_iterations = int8_tile_loops,
    .space = int8_tile_space,
};
