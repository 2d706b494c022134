/* The dense decode kernel (templates/gemm_decode.tmpl): at most 16 rows of A
 * against B, N x K (the layout models ship) or K x N, float32 sums; float16
 * or bfloat16 of one type at 1..16 rows, float32 and FP8 (the few-rows
 * kernel's types) at 5..16; each value of B read once a workgroup and used
 * for every row (docs/accumulation-order.md, "Decode kernel"). */
#include <stdio.h>

#include "og_family.h"

og_params og_params_decode(int64_t m, int trans_b)
{
    og_params p = {.variant = OG_VARIANT_DECODE, .rows = 1, .cols = 4, .slices = 32, .tn = 1, .vec = 4};
    if (!trans_b) {
        /* Eight neighbouring columns an invocation: 16 bytes of a row of B
         * a k (eight invocations stream 128 bytes of it); the slices' sums
         * of 16 rows fit Vulkan's least workgroup memory, 16 KiB. */
        p.cols = 64;
        p.slices = 4;
        p.tn = 8;
    }
    while (p.rows < 16 && p.rows < m)
        p.rows *= 2;
    return p;
}

/* A not transposed; float16 or bfloat16 at 1 <= M <= 16; float32 or FP8 at
 * 5 <= M <= 16 (the few-rows kernel takes 1..4 rows of them). */
static int decode_takes(og_dtype a_type, int64_t m, int trans_a)
{
    int half = a_type == OG_F16 || a_type == OG_BF16;
    int wide = a_type == OG_F32 || og_dtype_is_fp8(a_type);
    return !trans_a && m <= 16 && ((half && m >= 1) || (wide && m >= 5));
}

/* Element loads unless the string names 16-byte ones; one column an
 * invocation unless it names tn. */
static void decode_finish(og_params *p, unsigned seen)
{
    if (!(seen & OG_KEY_VEC))
        p->vec = 1;
    if (!(seen & OG_KEY_TN))
        p->tn = 1;
}

static void decode_format(const og_params *p, char *buf, size_t len)
{
    snprintf(buf, len, "variant=decode,rows=%d,cols=%d,slices=%d,tn=%d,vec=%d%s", p->rows,
             p->cols, p->slices, p->tn, p->vec, p->src == OG_SRC_TEXEL ? ",src=texel" : "");
}

/* Powers of two: rows up to 16 (unrolled rows of A), cols up to 64, slices
 * up to 128, tn up to 8 (and cols); 32..1024 invocations; vec 1 or 4;
 * storage or texel buffers. */
static int decode_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    int threads = p->cols / (p->tn > 0 ? p->tn : 1) * p->slices;
    if (!og_one_of(p->rows, og_pow2, 5) || !og_one_of(p->cols, og_pow2, 7) ||
        !og_one_of(p->slices, og_pow2, 8) || !og_one_of(p->tn, og_pow2, 4) || p->tn > p->cols ||
        threads < 32 || threads > 1024 ||
        (p->vec != 1 && p->vec != 4) || p->src == OG_SRC_ADDR) {
        snprintf(why, len,
                 "params: decode rows=%d, cols=%d, slices=%d, tn=%d must be powers of two (rows "
                 "up to 16, cols up to 64, slices up to 128, tn up to 8 and cols) with 32..1024 "
                 "invocations (cols / tn * slices), vec=%d 1 or 4, from storage or texel buffers",
                 p->rows, p->cols, p->slices, p->tn, p->vec);
        return -1;
    }
    if (og_src_check(p, lim, NULL, why, len) != 0)
        return -1;
    return lim ? og_limits_check(p, lim, (uint32_t)threads, 1, why, len) : 0;
}

/* Float16 or bfloat16 A and B of one type, float32 A and B, or FP8 on
 * either side with FP8 or float32 on the other; A not transposed; GLSL, or
 * WGSL (og_wgsl_check: float32, float16 or bfloat16, vec=1, storage
 * buffers). */
static int decode_check_key(const og_kernel_key *key, char *why, size_t len)
{
    og_dtype a = key->dtype, b = og_kernel_b_type(key);
    int wide_a = a == OG_F32 || og_dtype_is_fp8(a), wide_b = b == OG_F32 || og_dtype_is_fp8(b);
    int pair = ((a == OG_F16 || a == OG_BF16) && b == a) || (wide_a && wide_b);
    if (!pair || key->trans_a || key->dialect == OG_HLSL) {
        snprintf(why, len,
                 "gen: the decode kernel takes float16 or bfloat16 A and B of one type, or "
                 "float32 and FP8 A and B, A not transposed, in GLSL or WGSL");
        return -1;
    }
    return 0;
}

/* One float per row and invocation, for the slice sums. */
static uint32_t decode_shared_bytes(const og_params *p)
{
    return (uint32_t)(4 * p->rows * p->cols * p->slices);
}

static void decode_local_size(const og_params *p, uint32_t size[3])
{
    size[0] = (uint32_t)(p->cols / p->tn * p->slices);
}

/* Units of eight a slice (and the loop's exit), then the slices' tree. */
static uint64_t decode_loops(const og_params *p, uint64_t k_len)
{
    return og_steps(k_len, 8 * p->slices) + 1u + 8u + 1u;
}

/* Whether the space of ask keeps cols x slices invocations of tn columns
 * with loads of vec: quick, 64 to 256 invocations, 4 to 32 slices, 16-byte
 * loads and one column an invocation or the wide ones (4 for B N x K, 8 for
 * K x N's row loads); standard, 32 to 512 invocations, any tn, element
 * loads too. B N x K: at most 16 groups of columns (many slices); K x N: at
 * least 8 (neighbouring columns). */
static int decode_keeps(const og_space_ask *ask, int cols, int slices, int tn, int vec)
{
    int groups = cols / tn, threads = groups * slices;
    int wide = ask->trans_b ? 4 : 8;
    int keep = ask->standard ? threads >= 32 && threads <= 512
                             : vec == 4 && threads >= 64 && threads <= 256 && slices >= 4 &&
                                   slices <= 32 && (tn == 1 || tn == wide);
    return keep && tn <= cols && (ask->trans_b ? groups <= 16 : groups >= 8);
}

/* The default for M, then columns, slices and columns an invocation around
 * it (decode_keeps), each from storage and from texel buffers; standard
 * also with half the rows. */
static og_status decode_space(og_space_list *c, const og_space_ask *ask)
{
    static const int counts[] = {1, 2, 4, 8, 16, 32, 64, 128};
    og_params def = og_params_decode(ask->m, ask->trans_b);
    og_status st = og_space_add(c, def);
    int row_counts = ask->standard && def.rows > 1 ? 2 : 1;
    for (int r = 0; r < row_counts; r++)
        for (int i = 0; i < 7; i++)
            for (int j = 0; j < 8; j++)
                for (int t = 1; t <= 8; t *= 2)
                    for (int vec = 4; vec >= 1 && st == OG_OK; vec -= 3)
                        if (decode_keeps(ask, counts[i], counts[j], t, vec))
                            st = og_space_add_word_loads(
                                c, (og_params){.variant = OG_VARIANT_DECODE,
                                               .rows = def.rows >> r,
                                               .cols = counts[i],
                                               .slices = counts[j],
                                               .tn = t,
                                               .vec = vec});
    return st;
}

const og_family og_family_decode = {
    .variant = OG_VARIANT_DECODE,
    .name = "decode",
    .template_name = OG_TEMPLATE_DECODE,
    .can = OG_FAMILY_VEC16 | OG_FAMILY_FP8 | OG_FAMILY_WGSL,
    .takes = decode_takes,
    .takes_text = "the decode kernel takes float16 or bfloat16 inputs at 1 <= M <= 16, float32 "
                  "or FP8 at 5 <= M <= 16, and A not transposed",
    .keys = OG_KEY_ROWS | OG_KEY_COLS | OG_KEY_SLICES,
    .extra = OG_KEY_VEC,
    .optional = OG_KEY_TN | OG_KEY_SRC,
    .keys_text = "rows, cols and slices (and vec, tn, src) for variant=decode",
    .finish = decode_finish,
    .format = decode_format,
    .check = decode_check,
    .check_key = decode_check_key,
    .shared_bytes = decode_shared_bytes,
    .local_size = decode_local_size,
    .loop_iterations = decode_loops,
    .space = decode_space,
};
