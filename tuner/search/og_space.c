/* The tuning spaces: which parameters ogtune measures for a shape (float
 * GEMM tiles, split-k counts and few-rows shapes, float16 matrix tiles;
 * Int8Gemm tiles, matrix tiles and skinny shapes), filtered by the
 * device's limits. */
#include <stdlib.h>
#include <string.h>

#include "og_tuner.h"

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

typedef struct candidates {
    og_params *list;
    size_t n, cap;
    const og_limits *lim;
} candidates;

/* Adds p when the device allows it and it is not there yet. */
static og_status add(candidates *c, og_params p)
{
    char why[256];
    if (og_params_check(&p, c->lim, why, sizeof why) != 0)
        return OG_OK;
    for (size_t i = 0; i < c->n; i++)
        if (memcmp(&c->list[i], &p, sizeof p) == 0)
            return OG_OK;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        og_params *grown = realloc(c->list, cap * sizeof *grown);
        if (!grown)
            return OG_ERROR_OUT_OF_MEMORY;
        c->list = grown;
        c->cap = cap;
    }
    c->list[c->n++] = p;
    return OG_OK;
}

/* An Int8Gemm kernel with word loads, from storage buffers and from texel
 * buffers (og_params_check drops the texel one where the device has none). */
static og_status add_word_loads(candidates *c, og_params p)
{
    og_status st = add(c, p);
    p.src = OG_SRC_TEXEL;
    return st == OG_OK ? add(c, p) : st;
}

/* Few rows: the rule's shape first, then the column and slice counts
 * around it (256 columns times slices, and half and twice that), each read
 * one element and four elements at a time. */
static og_status fewrows_space(candidates *c, int trans_b, const og_shape *s, og_preset preset)
{
    static const int counts[] = {2, 4, 8, 16, 32, 64, 128};
    og_status st = add(c, og_params_fewrows(trans_b, s->n));
    for (int i = 0; i < 7 && st == OG_OK; i++)
        for (int j = 0; j < 7 && st == OG_OK; j++)
            for (int vec = 1; vec <= 4 && st == OG_OK; vec += 3) {
                int terms = counts[i] * counts[j];
                int keep =
                    preset == OG_PRESET_STANDARD ? terms >= 128 && terms <= 512 : terms == 256;
                /* B stored N x K read one element at a time wants whole
                 * subgroups of lanes on one column; four at a time, an
                 * invocation reads 16 bytes of its column (on lavapipe four
                 * slices, one invocation a column, stream B fastest). */
                if (trans_b && counts[j] < 16 && vec == 1)
                    keep = 0;
                if (counts[i] < vec || counts[j] < vec)
                    keep = 0;
                if (keep)
                    st = add(c, (og_params){.variant = OG_VARIANT_FEWROWS,
                                            .cols = counts[i],
                                            .slices = counts[j],
                                            .vec = vec});
            }
    return st;
}

/* Int8Gemm's skinny kernel: the reference design's shape first, then rows,
 * columns and slices around it, with 32-bit or packed dot products (where the
 * device has them: og_params_check drops them otherwise), then word loads
 * (four columns an invocation), each from storage and from texel buffers.
 * The quick preset keeps 512 invocations and
 * 1, 2 or 4 rows (one row: the decoder steps), and for word loads 64
 * columns with 4 or 8 slices or 128 with 4 (64 to 128 invocations: where
 * lavapipe ran them fastest at 768 and 3072 columns). */
static og_status skinny_space(candidates *c, og_preset preset)
{
    static const int rows[] = {1, 2, 4, 8, 16}, cols[] = {16, 32, 64, 128},
                     slices[] = {4, 8, 16, 32};
    og_status st = add(c, og_params_int8_skinny());
    for (int dot = 0; dot < 2; dot++)
        for (int r = 0; r < 5 && st == OG_OK; r++)
            for (int i = 0; i < 3 && st == OG_OK; i++)
                for (int j = 0; j < 4 && st == OG_OK; j++) {
                    int threads = cols[i] * slices[j];
                    int keep = preset == OG_PRESET_STANDARD ? threads >= 128
                                                            : threads == 512 && rows[r] <= 4;
                    if (keep)
                        st = add(c, (og_params){.variant = OG_VARIANT_INT8_SKINNY,
                                                .rows = rows[r],
                                                .cols = cols[i],
                                                .slices = slices[j],
                                                .dot = dot});
                }
    for (int r = 0; r < 5 && st == OG_OK; r++)
        for (int i = 0; i < 4 && st == OG_OK; i++)
            for (int j = 0; j < 4 && st == OG_OK; j++) {
                int keep = preset == OG_PRESET_STANDARD
                               ? 1
                               : rows[r] <= 4 && ((cols[i] == 64 && slices[j] <= 8) ||
                                                  (cols[i] == 128 && slices[j] == 4));
                if (keep) /* og_params_check drops too few or too many invocations */
                    st = add_word_loads(c, (og_params){.variant = OG_VARIANT_INT8_SKINNY,
                                                       .rows = rows[r],
                                                       .cols = cols[i],
                                                       .slices = slices[j],
                                                       .vec = 4});
            }
    return st;
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
static og_status int8_tile_space(candidates *c, og_preset preset)
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
        st = quick[i].load == OG_LOAD_DIRECT ? add_word_loads(c, quick[i]) : add(c, quick[i]);
    for (int a = 0; preset == OG_PRESET_STANDARD && a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int k = 0; k < 2; k++)
                for (int x = 0; x < 3; x++)
                    for (int y = 0; y < 3; y++)
                        for (int v = 0; v < 4 && st == OG_OK; v++) {
                            og_params p = int8_tile(tiles[a], tiles[b], steps[k], regs[x], regs[y],
                                                    v & 1, v >> 1);
                            if (p.wgx * p.wgy >= 32)
                                st = add(c, p);
                        }
    for (int a = 0; preset == OG_PRESET_STANDARD && a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int k = 0; k < 2; k++)
                for (int x = 0; x < 3; x++)
                    for (int y = 0; y < 3 && st == OG_OK; y++) {
                        og_params p = int8_direct(tiles[a], tiles[b], steps[k], direct_regs[x],
                                                  direct_regs[y]);
                        if (p.wgx * p.wgy >= 32)
                            st = add_word_loads(c, p);
                    }
    return st;
}

/* A matrix tile (float16, or Int8Gemm's) with NV and with KHR matrices,
 * in the subgroup size and fragment the device runs them with (add() drops
 * what the device does not take). */
static og_status add_matrix(candidates *c, og_params p)
{
    int sub = c->lim ? og_matrix_subgroup(c->lim) : 0;
    int int8 = p.variant == OG_VARIANT_INT8_COOPMAT;
    int in = int8 ? OG_COMPONENT_S8 : OG_COMPONENT_F16,
        acc = int8 ? OG_COMPONENT_S32 : OG_COMPONENT_F32;
    p.sub = sub ? sub : OG_COOPMAT_SUBGROUP;
    og_status st = OG_OK;
    for (int e = 0; e < 2 && st == OG_OK; e++) {
        p.mat = e ? OG_MATRIX_KHR : OG_MATRIX_NV;
        p.fm = p.fn = p.fk = 16;
        if (c->lim)
            og_matrix_fragment(&c->lim->matrix, p.mat, in, in, acc, &p.fm, &p.fn, &p.fk);
        if (p.bk % p.fk == 0) /* else the fragment is deeper than this tile's k step */
            st = add(c, p);
    }
    return st;
}

/* Int8Gemm's matrix tiles beside the portable ones: the 8- and 4-subgroup
 * 64x64x16 tiles (one and two buffers) and a double-buffered 128x128x32
 * tile of four subgroups; the standard preset adds 128-wide tiles, the 32
 * k step, other subgroup arrangements and no padding. Each with the NV and
 * the KHR extension where the device lists int8 x int8 -> int32 fragments
 * (add() drops the others). */
static og_status int8_matrix_space(candidates *c, og_preset preset)
{
    static const int tiles[][2] = {{64, 64}, {128, 64}, {64, 128}, {128, 128}},
                     groups[][2] = {{4, 2}, {2, 2}, {2, 4}, {4, 1}};
    og_status st = OG_OK;
    for (int sg = 8; sg >= 4 && st == OG_OK; sg /= 2)
        for (int buf = 1; buf <= 2 && st == OG_OK; buf++) {
            og_params p = og_params_int8_coopmat(sg);
            p.buf = buf;
            st = add_matrix(c, p);
        }
    og_params big = og_params_int8_coopmat(4);
    big.bm = big.bn = 128;
    big.bk = 32;
    big.buf = 2;
    if (st == OG_OK)
        st = add_matrix(c, big);
    for (int t = 0; preset == OG_PRESET_STANDARD && t < 4; t++)
        for (int k = 16; k <= 32; k += 16)
            for (int g = 0; g < 4; g++)
                for (int v = 0; v < 4 && st == OG_OK; v++) {
                    og_params p = og_params_int8_coopmat(8);
                    p.bm = tiles[t][0];
                    p.bn = tiles[t][1];
                    p.bk = k;
                    p.sgx = groups[g][0];
                    p.sgy = groups[g][1];
                    p.pad = v & 1 ? 0 : 16;
                    p.buf = 1 + (v >> 1);
                    st = add_matrix(c, p);
                }
    return st;
}

/* A cooperative-matrix tile (the extension and subgroup size: add_matrix). */
static og_params matrix_tile(int bm, int bn, int bk, int sgx, int sgy, int pad, int direct, int buf)
{
    return (og_params){.variant = OG_VARIANT_COOPMAT,
                       .bm = bm,
                       .bn = bn,
                       .bk = bk,
                       .sgx = sgx,
                       .sgy = sgy,
                       .pad = pad,
                       .load = direct ? OG_LOAD_DIRECT : OG_LOAD_STAGED,
                       .buf = buf};
}

/* The cooperative-matrix tiles: the reference design's 8- and 4-subgroup
 * 64x64x16 tiles staged and with direct fragment loads, and a 128x128x32
 * tile of four subgroups owning 64x64 each (16 accumulators), double
 * buffered. The standard preset adds 128-wide tiles, the 32 k step, other
 * subgroup arrangements and no padding (one buffer); two buffers for those
 * tiles with 8 or 4 subgroups; and the large tiles, 128x128, 256x128 and
 * 128x256, with k steps of 32 and 64, one or two buffers. Each with the NV
 * and the KHR extension where the device has it; add() drops what the
 * device's workgroup memory or invocations do not allow and arrangements
 * of more than 16 accumulators a subgroup. */
static og_status coopmat_space(candidates *c, og_preset preset)
{
    static const int tiles[][2] = {{64, 64}, {128, 64}, {64, 128}, {128, 128}},
                     large[][2] = {{128, 128}, {256, 128}, {128, 256}},
                     groups[][2] = {{4, 2}, {2, 2}, {2, 4}, {4, 1}}, pads[] = {8, 0};
    og_status st = OG_OK;
    for (int d = 0; d < 2 && st == OG_OK; d++)
        for (int sg = 8; sg >= 4 && st == OG_OK; sg /= 2) {
            og_params p = og_params_coopmat(sg);
            p.load = d ? OG_LOAD_DIRECT : OG_LOAD_STAGED;
            st = add_matrix(c, p);
        }
    for (int d = 0; d < 2 && st == OG_OK; d++)
        st = add_matrix(c, matrix_tile(128, 128, 32, 2, 2, 8, d, 2));
    for (int t = 0; preset == OG_PRESET_STANDARD && t < 4; t++)
        for (int k = 16; k <= 32; k += 16)
            for (int g = 0; g < 4; g++)
                for (int v = 0; v < 6 && st == OG_OK; v++) {
                    /* pad 8 and 0 with one buffer, pad 8 with two (8 or 4 subgroups) */
                    int buf = v < 4 ? 1 : 2;
                    if (buf == 1 || g < 2)
                        st = add_matrix(c, matrix_tile(tiles[t][0], tiles[t][1], k, groups[g][0],
                                                       groups[g][1], pads[v < 4 ? v / 2 : 0], v % 2,
                                                       buf));
                }
    for (int t = 0; preset == OG_PRESET_STANDARD && t < 3; t++)
        for (int k = 32; k <= 64; k *= 2)
            for (int g = 0; g < 3; g++)
                for (int v = 0; v < 4 && st == OG_OK; v++)
                    st = add_matrix(c, matrix_tile(large[t][0], large[t][1], k, groups[g][0],
                                                   groups[g][1], 8, v % 2, 1 + v / 2));
    return st;
}

/* The float GEMM's tiles of a preset for shape s: the quick tiles (the
 * default first), the standard preset's every tile, and split-k counts. */
static og_status tile_space(candidates *c, og_preset preset, const og_shape *s)
{
    static const int tiles[] = {32, 64, 128}, steps[] = {16, 32}, regs[] = {2, 4, 8, 16};
    og_status st = OG_OK;
    /* The default always comes first, whatever the preset. */
    for (size_t i = 0; i < OG_QUICK_TILES && st == OG_OK; i++)
        st = add(c, quick_tile(i));
    /* The standard preset: every tile, k step and register tile, each staged
     * (with and without padding) and direct (storage or texel buffers,
     * element or vector loads). */
    for (int a = 0; preset == OG_PRESET_STANDARD && a < 3; a++)
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
                                st = add(c, p);
                        }
    /* Split-k in Fast mode: where k is long enough to cut, tiles also run
     * unsplit and with 2 to 16 ranges, whatever the rule says: the default
     * and the vector texel tiles of both orders in the quick preset (on
     * lavapipe the chain's tile unsplit is the fastest kernel), every quick
     * tile in the standard one. */
    static const int splits[] = {1, 2, 4, 8, 16}, quick_split_tiles[] = {0, 7, 9};
    size_t n_split_tiles = preset == OG_PRESET_STANDARD ? OG_QUICK_TILES : 3;
    for (size_t i = 0; s->k >= 128 && i < n_split_tiles && st == OG_OK; i++)
        for (int j = 0; j < 5 && st == OG_OK; j++) {
            og_params p =
                quick_tile(preset == OG_PRESET_STANDARD ? i : (size_t)quick_split_tiles[i]);
            p.split = splits[j];
            if (s->k / splits[j] >= 32)
                st = add(c, p);
        }
    return st;
}

/* Hands the list of c to the caller, or frees it on an error. */
static og_status space_done(og_status st, candidates *c, og_params **out, size_t *n)
{
    if (st != OG_OK) {
        free(c->list);
        *n = 0;
        return st;
    }
    *out = c->list;
    *n = c->n;
    return OG_OK;
}

og_status og_space(const og_limits *lim, og_preset preset, og_dtype dtype, int trans_a, int trans_b,
                   const og_shape *s, og_params **out, size_t *n)
{
    candidates c = {.lim = lim};
    og_status st;
    int fewrows = og_fewrows_eligible(dtype, s->m, trans_a);
    *n = 0;
    if (og_dtype_is_int8(dtype) && og_int8_skinny_eligible(s->m, trans_b))
        st = skinny_space(&c, preset);
    else if (og_dtype_is_int8(dtype)) {
        /* The portable tiles, then the matrix tiles where the device qualifies. */
        st = int8_tile_space(&c, preset);
        if (st == OG_OK)
            st = int8_matrix_space(&c, preset);
    } else if (fewrows)
        st = fewrows_space(&c, trans_b, s, preset);
    else
        st = tile_space(&c, preset, s);
    /* Float16 in Fast mode: the cooperative-matrix tiles, where the device
     * qualifies (add() drops them elsewhere), after the portable ones so the
     * first candidate stays the portable default. */
    if (dtype == OG_F16 && !fewrows && st == OG_OK)
        st = coopmat_space(&c, preset);
    return space_done(st, &c, out, n);
}

og_status og_space_recovered(const og_limits *lim, og_dialect dialect, og_preset preset,
                             og_mode mode, const og_shape *s, og_params **out, size_t *n)
{
    candidates c = {.lim = lim}, all = {.lim = lim};
    *n = 0;
    og_status st = add(&c, og_params_recovered(lim, dialect, mode));
    if (st == OG_OK)
        st = tile_space(&all, preset, s);
    if (st == OG_OK)
        st = coopmat_space(&all, preset);
    for (size_t i = 0; i < all.n && st == OG_OK; i++) {
        og_params p = all.list[i];
        char why[256];
        if (p.variant == OG_VARIANT_TILE)
            p.split = 1;
        if (og_params_recover_check(&p, lim, dialect, OG_RECOVER_SHIFT, why, sizeof why) == 0)
            st = add(&c, p);
    }
    free(all.list);
    return space_done(st, &c, out, n);
}

og_status og_space_conv(const og_limits *lim, og_preset preset, og_dtype dtype, const og_shape *s,
                        og_params **out, size_t *n)
{
    candidates c = {.lim = lim}, all = {.lim = lim};
    *n = 0;
    og_params def = og_params_default();
    og_status st = add(&c, og_conv_params(&def));
    if (st == OG_OK)
        st = tile_space(&all, preset, s);
    /* Float16: the cooperative-matrix tiles after the portable ones, as
     * og_space orders them (staged, so a direct tile repeats its staged twin). */
    if (st == OG_OK && dtype == OG_F16)
        st = coopmat_space(&all, preset);
    for (size_t i = 0; i < all.n && st == OG_OK; i++)
        st = add(&c, og_conv_params(&all.list[i]));
    free(all.list);
    return space_done(st, &c, out, n);
}

og_status og_space_qgemm(const og_limits *lim, og_preset preset, const og_shape *s, og_params **out,
                         size_t *n)
{
    static const int cols[] = {1, 2, 4, 8, 16}, slices[] = {8, 16, 32, 64, 128};
    candidates c = {.lim = lim};
    *n = 0;
    og_params def = og_qgemm_default(s->m);
    og_status st = add(&c, def);
    if (def.variant == OG_VARIANT_TILE) {
        /* The prefill: og_space's tiles, each unsplit with element loads
         * from storage buffers (the weights are decoded one at a time). */
        candidates all = {.lim = lim};
        st = tile_space(&all, preset, s);
        for (size_t i = 0; i < all.n && st == OG_OK; i++) {
            og_params p = all.list[i];
            p.vec = 1;
            p.src = OG_SRC_STORAGE;
            p.split = 1;
            st = add(&c, p);
        }
        free(all.list);
        /* On matrix hardware, the matrix tiles that run recovered with range
         * scaling (og_space_recovered's, staged), which og_select_qgemm
         * weighs against the tile. */
        og_params *rec = NULL;
        size_t n_rec = 0;
        if (st == OG_OK)
            st = og_space_recovered(lim, OG_GLSL, preset, OG_MODE_FAST, s, &rec, &n_rec);
        for (size_t i = 0; i < n_rec && st == OG_OK; i++)
            if (rec[i].variant == OG_VARIANT_COOPMAT)
                st = add(&c, rec[i]);
        free(rec);
        /* The decode kernel over tiles of 16 rows competes (og_select_qgemm):
         * the default and its neighbours in columns and slices. */
        static const int qcols[] = {4, 2, 8}, qslices[] = {32, 16, 64};
        for (int i = 0; i < 3 && st == OG_OK; i++)
            for (int j = 0; j < 3 && st == OG_OK; j++) {
                og_params q = og_params_qdecode(s->m);
                q.cols = qcols[i];
                q.slices = qslices[j];
                if (preset == OG_PRESET_STANDARD || i == 0 || j == 0)
                    st = add(&c, q);
            }
        return space_done(st, &c, out, n);
    }
    /* Fewer rows than M reads W once more per extra tile of rows: only the
     * standard preset tries half the rows (less register pressure). */
    int row_counts = preset == OG_PRESET_STANDARD && def.rows > 1 ? 2 : 1;
    for (int r = 0; r < row_counts; r++)
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j++)
                for (int vec = 4; vec >= 1 && st == OG_OK; vec -= 3) {
                    int threads = cols[i] * slices[j];
                    int keep = preset == OG_PRESET_STANDARD
                                   ? threads >= 64 && threads <= 512
                                   : vec == 4 && cols[i] >= 2 && cols[i] <= 8 && slices[j] >= 16 &&
                                         slices[j] <= 64;
                    if (keep)
                        st = add(&c, (og_params){.variant = OG_VARIANT_QDECODE,
                                                 .rows = def.rows >> r,
                                                 .cols = cols[i],
                                                 .slices = slices[j],
                                                 .vec = vec,
                                                 .unroll = 1});
                }
    /* The default with 2 and 4 units a trip: fewer loop tests and more
     * loads in flight (the same sums, so the same bits). */
    for (int unroll = 2; unroll <= 4 && st == OG_OK; unroll *= 2) {
        og_params p = def;
        p.unroll = unroll;
        st = add(&c, p);
    }
    /* Small N: fewer column workgroups than a large GPU has compute units
     * (an H100 has 132, a 7900 XTX 96 with two SIMDs each): the default
     * kernel also with k split in 2, 4 and 8 ranges, added in range order
     * by a second pass. */
    int64_t groups = (s->n + def.cols - 1) / def.cols * s->batch;
    for (int split = 2; split <= 8 && groups < 256 && st == OG_OK; split *= 2)
        if (s->k / 32 >= 2 * split) {
            og_params p = def;
            p.split = split;
            st = add(&c, p);
        }
    return space_done(st, &c, out, n);
}
