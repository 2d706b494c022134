/* The low-bit decode kernel (templates/qgemm_decode.tmpl): C = A * W^T for
 * M <= 16 with W decoded from MXFP4, NVFP4, int4 groups, Q8_0, Q4_K or Q6_K
 * in registers (og_kernel_key.qformat; docs/number-formats.md); with dot=1
 * or 2, the integer path (int8 activations, 4x8-bit dot products;
 * docs/decode.md). */
#include <stdio.h>

#include "og_family.h"

og_params og_params_qdecode(int64_t m)
{
    og_params p = {.variant = OG_VARIANT_QDECODE, .rows = 1, .cols = 4, .slices = 32, .tn = 1, .vec = 4,
                   .unroll = 1};
    while (p.rows < 16 && p.rows < m)
        p.rows *= 2;
    return p;
}

/* Word loads, one unit a trip and one column an invocation unless the
 * string says otherwise. */
static void qdecode_finish(og_params *p, unsigned seen)
{
    if (!(seen & OG_KEY_VEC))
        p->vec = 1;
    if (!(seen & OG_KEY_UNROLL))
        p->unroll = 1;
    if (!(seen & OG_KEY_TN))
        p->tn = 1;
    if (!(seen & OG_KEY_DOT))
        p->dot = 0;
}

static void qdecode_format(const og_params *p, char *buf, size_t len)
{
    int used = snprintf(buf, len, "variant=qdecode,rows=%d,cols=%d,slices=%d,vec=%d", p->rows,
                        p->cols, p->slices, p->vec);
    /* Split-k (k ranges) and unrolling only where asked: the texts of
     * the kernels from before they existed stay as they were. */
    if (p->split != OG_SPLIT_RULE && used >= 0 && (size_t)used < len)
        used += snprintf(buf + used, len - (size_t)used, ",split=%d", p->split);
    if (p->unroll != 1 && used >= 0 && (size_t)used < len)
        used += snprintf(buf + used, len - (size_t)used, ",unroll=%d", p->unroll);
    if (p->tn != 1 && used >= 0 && (size_t)used < len)
        used += snprintf(buf + used, len - (size_t)used, ",tn=%d", p->tn);
    if (p->dot != 0 && used >= 0 && (size_t)used < len)
        used += snprintf(buf + used, len - (size_t)used, ",dot=%d", p->dot);
    if (p->src == OG_SRC_TEXEL && used >= 0 && (size_t)used < len)
        snprintf(buf + used, len - (size_t)used, ",src=texel");
}

/* The invocations of a workgroup: tn columns each. */
static int qdecode_threads(const og_params *p)
{
    return p->cols / (p->tn > 0 ? p->tn : 1) * p->slices;
}

/* Powers of two, rows up to 16 (the unrolled rows of A), cols up to 64,
 * slices up to 128, tn up to 8 (and cols), 32..1024 invocations. */
static int qdecode_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    int threads = qdecode_threads(p);
    if (!og_one_of(p->rows, og_pow2, 5) || !og_one_of(p->cols, og_pow2, 7) ||
        !og_one_of(p->slices, og_pow2, 8) || !og_one_of(p->tn, og_pow2, 4) || p->tn > p->cols ||
        threads < 32 || threads > 1024 ||
        p->src == OG_SRC_ADDR || (p->vec != 1 && p->vec != 4) || p->split < 0 ||
        p->split > 16 || (p->unroll != 1 && p->unroll != 2 && p->unroll != 4)) {
        snprintf(why, len,
                 "params: qdecode rows=%d, cols=%d, slices=%d, tn=%d must be powers of two (rows "
                 "up to 16, cols up to 64, slices up to 128, tn up to 8 and cols) with 32..1024 "
                 "invocations (cols / tn * slices), vec=%d 1 or 4, split=%d the rule (none) or "
                 "1..16 k ranges, unroll=%d 1, 2 or 4 units a trip, from storage or texel buffers",
                 p->rows, p->cols, p->slices, p->tn, p->vec, p->split, p->unroll);
        return -1;
    }
    /* The integer path: dot=1 multiplies with OpSDot/OpSUDot, dot=2 with the
     * packed emulation (the same int32 sums). */
    if (p->dot < 0 || p->dot > 2) {
        snprintf(why, len,
                 "params: qdecode dot=%d is 0 (the float path), 1 (int8 activations, "
                 "VK_KHR_shader_integer_dot_product) or 2 (int8 activations, packed emulation)",
                 p->dot);
        return -1;
    }
    if (lim && p->dot == 1 && !lim->integer_dot) {
        snprintf(why, len,
                 "limits: qdecode dot=1 needs VK_KHR_shader_integer_dot_product, which the device "
                 "does not offer (dot=2 emulates it)");
        return -1;
    }
    if (og_src_check(p, lim, NULL, why, len) != 0)
        return -1;
    return lim ? og_limits_check(p, lim, (uint32_t)threads, 1, why, len) : 0;
}

/* The integer path is the kernel's own (not the benchmarks' parts). */
static int qdecode_check_key(const og_kernel_key *key, char *why, size_t len)
{
    if (key->p.dot == 0)
        return 0;
    if (key->part != OG_PART_FULL) {
        snprintf(why, len,
                 "params: qdecode dot=%d: the benchmarks' parts (--parts) split the float path "
                 "only",
                 key->p.dot);
        return -1;
    }
    return 0;
}

/* One 32-bit sum per row, column and invocation. */
static uint32_t qdecode_shared_bytes(const og_params *p)
{
    return (uint32_t)(4 * p->rows * p->cols * p->slices);
}

static void qdecode_local_size(const og_params *p, uint32_t size[3])
{
    size[0] = (uint32_t)qdecode_threads(p);
}

/* 32-weight units a slice, then the slices' tree. */
static uint64_t qdecode_loops(const og_params *p, uint64_t k_len)
{
    return og_steps(k_len, 32 * p->slices) + 1u + 8u + 1u;
}

/* The decode kernel's columns and slices around its default for M (quick:
 * 2 to 8 columns, 16 to 64 slices, 16-byte loads; standard: 64 to 512
 * invocations, word loads too, and half the rows), each from storage and
 * from texel buffers, the default with 2 and
 * 4 units a trip, and where N gives few workgroups the default with k
 * split. */
static og_status qdecode_space(og_space_list *c, const og_space_ask *ask)
{
    static const int cols[] = {1, 2, 4, 8, 16}, slices[] = {8, 16, 32, 64, 128};
    og_params def = og_params_qdecode(ask->m);
    og_status st = og_space_add(c, def);
    /* Fewer rows than M reads W once more per extra tile of rows: only the
     * standard preset tries half the rows (less register pressure). */
    int row_counts = ask->standard && def.rows > 1 ? 2 : 1;
    for (int r = 0; r < row_counts; r++)
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j++)
                for (int vec = 4; vec >= 1 && st == OG_OK; vec -= 3) {
                    int threads = cols[i] * slices[j];
                    int keep = ask->standard
                                   ? threads >= 64 && threads <= 512
                                   : vec == 4 && cols[i] >= 2 && cols[i] <= 8 && slices[j] >= 16 &&
                                         slices[j] <= 64;
                    if (keep)
                        st = og_space_add_word_loads(c, (og_params){.variant = OG_VARIANT_QDECODE, .tn = 1,
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
        st = og_space_add(c, p);
    }
    /* tn columns an invocation, with the default's slices and half as many,
     * 4 columns of invocations: each value of A loaded serves tn columns
     * (A's loads, four times W's bytes for float32 A and 4-bit codes, bound
     * the one-column kernel on lavapipe). */
    for (int tn = 2; tn <= 4 && st == OG_OK; tn *= 2)
        for (int half = 0; half < 2 && st == OG_OK; half++) {
            og_params p = def;
            p.tn = tn;
            p.cols = def.cols * tn;
            p.slices = def.slices >> half;
            st = og_space_add_word_loads(c, p);
        }
    /* The integer path (Fast mode: the tuner measures Deterministic mode's
     * default only): the default and its tn = 4 neighbour, each with the
     * device's dot products and with the emulation, from storage and from
     * texel buffers. */
    for (int dot = 1; dot <= 2 && st == OG_OK; dot++)
        for (int tn = 1; tn <= 4 && st == OG_OK; tn *= 4) {
            og_params p = def;
            p.dot = dot;
            p.tn = tn;
            p.cols = def.cols * tn;
            st = og_space_add_word_loads(c, p);
        }
    /* Small N: fewer column workgroups than a large GPU has compute units
     * (an H100 has 132, a 7900 XTX 96 with two SIMDs each): the default
     * kernel also with k split in 2, 4 and 8 ranges, added in range order
     * by a second pass. */
    int64_t groups = (ask->n + def.cols - 1) / def.cols * ask->batch;
    for (int split = 2; split <= 8 && groups < 256 && st == OG_OK; split *= 2)
        if (ask->k / 32 >= 2 * split) {
            og_params p = def;
            p.split = split;
            st = og_space_add(c, p);
        }
    return st;
}

const og_family og_family_qdecode = {
    .variant = OG_VARIANT_QDECODE,
    .name = "qdecode",
    .template_name = OG_TEMPLATE_QDECODE,
    .can = OG_FAMILY_SPLIT | OG_FAMILY_WEIGHTS | OG_FAMILY_WGSL,
    .keys = OG_KEY_ROWS | OG_KEY_COLS | OG_KEY_SLICES,
    .extra = OG_KEY_VEC,
    .optional = OG_KEY_UNROLL | OG_KEY_SRC | OG_KEY_TN | OG_KEY_DOT,
    .keys_text = "rows, cols and slices (and vec, split, unroll, tn, dot, src) for variant=qdecode",
    .finish = qdecode_finish,
    .format = qdecode_format,
    .check = qdecode_check,
    .check_key = qdecode_check_key,
    .shared_bytes = qdecode_shared_bytes,
    .local_size = qdecode_local_size,
    .loop_iterations = qdecode_loops,
    .space = qdecode_space,
};
