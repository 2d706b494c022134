/* The portable tile (templates/gemm_tile.tmpl): float32, float16, bfloat16
 * and FP8 inputs; split-k; the convolution's gather, recovered float32 and
 * the low-bit prefill run on it (reference design, "The portable tile"). */
#include <stdio.h>

#include "og_family.h"

og_params og_params_default(void)
{
    og_params p = {.variant = OG_VARIANT_TILE,
                   .bm = 64,
                   .bn = 64,
                   .bk = 16,
                   .tm = 4,
                   .tn = 4,
                   .wgx = 16,
                   .wgy = 16,
                   .load = OG_LOAD_STAGED,
                   .acc = OG_ACC_BLOCKED,
                   .vec = 1,
                   .src = OG_SRC_STORAGE,
                   .split = OG_SPLIT_RULE};
    return p;
}

og_params og_params_qprefill(void)
{
    og_params p = og_params_default();
    p.split = 1;
    return p;
}

static void tile_format(const og_params *p, char *buf, size_t len)
{
    char split[16];
    if (p->split == OG_SPLIT_RULE)
        snprintf(split, sizeof split, "rule");
    else
        snprintf(split, sizeof split, "%d", p->split);
    snprintf(buf, len,
             "bm=%d,bn=%d,bk=%d,tm=%d,tn=%d,wgx=%d,wgy=%d,pad=%d,load=%s,acc=%s,vec=%d,src=%s,"
             "split=%s",
             p->bm, p->bn, p->bk, p->tm, p->tn, p->wgx, p->wgy, p->pad,
             p->load == OG_LOAD_DIRECT ? "direct" : "staged",
             p->acc == OG_ACC_CHAIN ? "chain" : "blocked", p->vec, og_src_name(p->src), split);
}

static int tile_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    if (p->split < 0 || p->split > 16) {
        snprintf(why, len, "params: split=%d is not the rule or 1..16 ranges", p->split);
        return -1;
    }
    if (og_tile_shape_check(p, why, len) != 0)
        return -1;
    if (p->vec != 1 &&
        !(p->vec == 4 && p->load == OG_LOAD_DIRECT && p->tm % 4 == 0 && p->tn % 4 == 0)) {
        snprintf(why, len,
                 "params: vec=%d must be 1, or 4 with direct loads and register tiles of fours",
                 p->vec);
        return -1;
    }
    if (og_src_check(p, lim, NULL, why, len) != 0)
        return -1;
    return lim ? og_limits_check(p, lim, (uint32_t)p->wgx, (uint32_t)p->wgy, why, len) : 0;
}

static uint32_t tile_shared_bytes(const og_params *p)
{
    if (p->load == OG_LOAD_DIRECT)
        return 0;
    return (uint32_t)(4 * p->bk * (p->bm + p->pad + p->bn + p->pad));
}

void og_tile_local_size(const og_params *p, uint32_t size[3])
{
    size[0] = (uint32_t)p->wgx;
    size[1] = (uint32_t)p->wgy;
}

/* k steps (direct loads: an unchecked loop of the whole steps, then a
 * checked one for the tail), then the register tile. */
static uint64_t tile_loops(const og_params *p, uint64_t k_len)
{
    return og_steps(k_len, p->bk) + 1u + (p->load == OG_LOAD_DIRECT ? 1u : 0u) +
           (uint64_t)(p->tm * p->tn) + 1u;
}

/* A tile candidate (split-k by the rule); wgx and wgy follow from the tiles. */
static og_params tile(int bm, int bn, int bk, int tm, int tn, int pad, og_load load, og_acc acc,
                      int vec, og_src src)
{
    return (og_params){.variant = OG_VARIANT_TILE,
                       .bm = bm,
                       .bn = bn,
                       .bk = bk,
                       .tm = tm,
                       .tn = tn,
                       .wgx = bn / tn,
                       .wgy = bm / tm,
                       .pad = pad,
                       .load = load,
                       .acc = acc,
                       .vec = vec,
                       .src = src,
                       .split = OG_SPLIT_RULE};
}

/* The quick preset: the default and a few of each kind the space holds
 * (staged and direct loads, storage and texel buffers, element and vector
 * loads, larger register tiles, padding, one fma chain) so a first run finds
 * what suits the device in minutes. */
static og_params quick_tile(size_t i)
{
    const og_load S = OG_LOAD_STAGED, D = OG_LOAD_DIRECT;
    const og_acc B = OG_ACC_BLOCKED, C = OG_ACC_CHAIN;
    const og_src M = OG_SRC_STORAGE, T = OG_SRC_TEXEL;
    const og_params quick[] = {
        tile(64, 64, 16, 4, 4, 0, S, B, 1, M), /* the default */
        tile(64, 64, 16, 4, 4, 1, S, B, 1, M),   tile(128, 64, 16, 8, 4, 0, S, B, 1, M),
        tile(64, 64, 16, 8, 8, 0, D, B, 1, M),   tile(64, 64, 16, 8, 8, 0, D, B, 4, M),
        tile(64, 64, 16, 8, 8, 0, D, B, 1, T),   tile(64, 64, 16, 8, 8, 0, D, B, 4, T),
        tile(128, 64, 16, 16, 8, 0, D, B, 4, T), tile(64, 64, 16, 8, 8, 0, D, C, 4, T),
        tile(128, 64, 16, 16, 8, 0, D, C, 4, T),
    };
    return quick[i];
}
#define OG_QUICK_TILES 10

/* The float GEMM's tiles of a preset for shape s: the quick tiles (the
 * default first), the standard preset's every tile, and split-k counts. */
static og_status tile_space(og_space_list *c, const og_space_ask *ask)
{
    static const int tiles[] = {32, 64, 128}, steps[] = {16, 32}, regs[] = {2, 4, 8, 16};
    og_status st = OG_OK;
    /* The default always comes first, whatever the preset. */
    for (size_t i = 0; i < OG_QUICK_TILES && st == OG_OK; i++)
        st = og_space_add(c, quick_tile(i));
    /* The standard preset: every tile, k step and register tile, each staged
     * (with and without padding) and direct (storage or texel buffers,
     * element or vector loads). */
    for (int a = 0; ask->standard && a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int k = 0; k < 2; k++)
                for (int x = 0; x < 4; x++)
                    for (int y = 0; y < 4; y++)
                        for (int v = 0; v < 6 && st == OG_OK; v++) {
                            og_params p = tile(tiles[a], tiles[b], steps[k], regs[x], regs[y],
                                               v == 1, v < 2 ? OG_LOAD_STAGED : OG_LOAD_DIRECT,
                                               OG_ACC_BLOCKED, v >= 2 && v % 2 ? 4 : 1,
                                               v >= 4 ? OG_SRC_TEXEL : OG_SRC_STORAGE);
                            /* Fewer than 32 invocations leave most devices' lanes idle. */
                            if (p.wgx * p.wgy >= 32)
                                st = og_space_add(c, p);
                        }
    /* Split-k in Fast mode: where k is long enough to cut, tiles also run
     * unsplit and with 2 to 16 ranges, whatever the rule says: the default
     * and the vector texel tiles of both orders in the quick preset (on
     * lavapipe the chain's tile unsplit is the fastest kernel), every quick
     * tile in the standard one. */
    static const int splits[] = {1, 2, 4, 8, 16}, quick_split_tiles[] = {0, 7, 9};
    size_t n_split_tiles = ask->standard ? OG_QUICK_TILES : 3;
    for (size_t i = 0; ask->k >= 128 && i < n_split_tiles && st == OG_OK; i++)
        for (int j = 0; j < 5 && st == OG_OK; j++) {
            og_params p =
                quick_tile(ask->standard ? i : (size_t)quick_split_tiles[i]);
            p.split = splits[j];
            if (ask->k / splits[j] >= 32)
                st = og_space_add(c, p);
        }
    return st;
}

const og_family og_family_tile = {
    .variant = OG_VARIANT_TILE,
    .name = "tile",
    .template_name = OG_TEMPLATE_TILE,
    .can = OG_FAMILY_TILED | OG_FAMILY_SPLIT | OG_FAMILY_FP8 | OG_FAMILY_FP8_ELEMENTS |
           OG_FAMILY_ADDRESS | OG_FAMILY_VEC4 | OG_FAMILY_CONV | OG_FAMILY_RECOVER |
           OG_FAMILY_PREFILL | OG_FAMILY_WGSL,
    .keys = OG_KEY_LOAD | OG_KEY_ACC | OG_KEY_BM | OG_KEY_BN | OG_KEY_BK | OG_KEY_TM | OG_KEY_TN |
            OG_KEY_WGX | OG_KEY_WGY | OG_KEY_PAD | OG_KEY_VEC | OG_KEY_SRC,
    .keys_text = "bm,bn,bk,tm,tn,wgx,wgy,pad,load,acc,vec,src (and split)",
    .format = tile_format,
    .check = tile_check,
    .shared_bytes = tile_shared_bytes,
    .local_size = og_tile_local_size,
    .loop_iterations = tile_loops,
    .space = tile_space,
};
