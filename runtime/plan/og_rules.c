/* The reference design's rules for a call: split-k ranges, few rows and
 * the skinny Int8Gemm kernel, which devices take the matrix kernels, what
 * parameters a call's operands allow, and recovered float32's kernel. */
#include <stdio.h>
#include <string.h>

#include "og_plan.h"

int og_fewrows_eligible(og_dtype dtype, int64_t m, int trans_a)
{
    return og_family_fewrows.takes(dtype, m, trans_a);
}

int og_decode_eligible(og_dtype dtype, int64_t m, int trans_a, og_dialect dialect)
{
    return og_family_decode.takes(dtype, m, trans_a) && dialect != OG_HLSL;
}

int og_gemm_has_product(const og_gemm_args *args)
{
    return args->alpha != 0.0f && args->k != 0;
}

int og_int8_skinny_eligible(int64_t m, int trans_b)
{
    return m >= 1 && m <= 16 && !trans_b;
}

void og_split_ranges(int split, int64_t m, int64_t n, int64_t k, int64_t batch,
                     uint64_t scratch_floats, uint32_t *ranges, uint32_t *range_len)
{
    *ranges = 1;
    *range_len = (uint32_t)k;
    if (split == 1 || k < 2 || m <= 0 || n <= 0 || batch <= 0)
        return;
    uint64_t len;
    if (split == OG_SPLIT_RULE) {
        uint64_t wgs =
            og_ceil_div((uint64_t)m, 64) * og_ceil_div((uint64_t)n, 64) * (uint64_t)batch;
        if (wgs >= 384 || k < 128)
            return;
        uint64_t want = og_ceil_div(384, wgs);
        len = og_ceil_div(og_ceil_div((uint64_t)k, want < 16 ? want : 16), 32) * 32;
        if (len < 64)
            len = 64;
    } else {
        len = og_ceil_div((uint64_t)k, (uint64_t)split);
    }
    uint64_t count = og_ceil_div((uint64_t)k, len);
    uint64_t plane;
    if (__builtin_mul_overflow((uint64_t)m, (uint64_t)n, &plane) ||
        __builtin_mul_overflow(plane, (uint64_t)batch, &plane) || plane > scratch_floats / 2)
        return; /* not even two planes fit */
    if (count * plane > scratch_floats) {
        /* Fewer, longer ranges: as many planes as the scratch holds. */
        len = og_ceil_div((uint64_t)k, scratch_floats / plane);
        if (split == OG_SPLIT_RULE)
            len = og_ceil_div(len, 32) * 32;
        count = og_ceil_div((uint64_t)k, len);
    }
    if (count < 2)
        return;
    *ranges = (uint32_t)count;
    *range_len = (uint32_t)len;
}

int og_conv_depthwise_eligible(const og_conv_shape *s)
{
    if (s->empty || s->gemm || s->groups < 2 || s->cg > 8 || s->kg > 8)
        return 0;
    /* Unbounded scratch: a rule that would split with any scratch splits here. */
    uint32_t ranges, len;
    og_split_ranges(OG_SPLIT_RULE, s->m, s->n, s->k, s->batch, UINT64_MAX, &ranges, &len);
    return ranges == 1;
}

/* One past the last element of an operand that a call reads. */
static uint64_t operand_end(int64_t off, int64_t batch, int64_t stride, int64_t rows, int64_t ld,
                            int64_t cols)
{
    return (uint64_t)(off + (batch - 1) * stride + (rows - 1) * ld + cols);
}

/* One past the last 32-bit word of an operand of type t that a call reads. */
static uint64_t operand_words(og_dtype t, int64_t off, int64_t batch, int64_t stride, int64_t rows,
                              int64_t ld, int64_t cols)
{
    uint64_t end = operand_end(off, batch, stride, rows, ld, cols);
    return t == OG_F32 ? end : og_dtype_is_fp8(t) ? (end + 3) / 4 : (end + 1) / 2;
}

/* Whether texel views of A's and B's buffers reach the operands' last words
 * (a_words and b_words counted from the operands' base; a view starts at the
 * buffer's base, skew bytes before the operand). */
static int texels_reach(const og_limits *lim, const og_buffer *a, const og_buffer *b,
                        uint64_t a_words, uint64_t b_words)
{
    return og_buffer_texel_ok(a) && og_buffer_texel_ok(b) &&
           a_words + a->skew / 4 <= lim->max_texel_elements &&
           b_words + b->skew / 4 <= lim->max_texel_elements;
}

/* Bytes from the start of an operand's binding to its last element's end. */
static uint64_t operand_bytes(const og_limits *lim, og_dtype t, const og_buffer *buf, int64_t off,
                              int64_t batch, int64_t stride, int64_t rows, int64_t ld, int64_t cols)
{
    uint64_t e = og_dtype_bytes(t);
    return operand_end(off, batch, stride, rows, ld, cols) * e + buf->skew -
           og_binding_start(lim, buf->skew + (uint64_t)off * e);
}

const char *og_operand_past_binding(const og_limits *lim, og_dtype ta, og_dtype tb,
                                    const og_gemm_args *g)
{
    if (g->m == 0 || g->n == 0 || g->k == 0)
        return NULL;
    int64_t batch = g->batch ? g->batch : 1;
    if (operand_bytes(lim, ta, g->a, g->a_offset, batch, g->stride_a, g->trans_a ? g->k : g->m, g->lda,
                      g->trans_a ? g->m : g->k) > lim->max_storage_range)
        return "A";
    if (operand_bytes(lim, tb, g->b, g->b_offset, batch, g->stride_b, g->trans_b ? g->n : g->k, g->ldb,
                      g->trans_b ? g->k : g->n) > lim->max_storage_range)
        return "B";
    return NULL;
}

/* Device addresses for an operand past maxStorageBufferRange, in the
 * kernels that read them (the portable tile and its split-k planes, few
 * rows, the Int8Gemm kernels); texel views that reach it stay. */
static og_params by_address(const og_limits *lim, const char *past, const og_gemm_args *g,
                            og_params q)
{
    int floats = !og_family_can(&q, OG_FAMILY_INT8);
    if (!past || q.src == OG_SRC_TEXEL || !lim->buffer_address ||
        !og_family_can(&q, OG_FAMILY_ADDRESS))
        return q;
    q.src = OG_SRC_ADDR;
    /* A float kernel's groups of four elements are 8 or 16 bytes from a
     * 16-byte-aligned address: the buffers' addresses must keep them so
     * (the Int8Gemm kernels' words only need the words' alignment). */
    if (floats && q.vec != 1 && (g->a->address % 16 || g->b->address % 16))
        q.vec = 1;
    return q;
}

/* Whether a call can use vector loads (vec = 4) as tuned: A's and B's
 * offsets, leading dimensions and batch strides multiples of 4 elements (for
 * 8-bit operands: of a 32-bit word); otherwise the kernel drops to vec = 1. */
static int vec_aligned(const og_gemm_args *g)
{
    const int64_t v[] = {g->a_offset, g->lda, g->stride_a, g->b_offset, g->ldb, g->stride_b};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (v[i] % 4 != 0)
            return 0;
    return 1;
}

/* Tile parameters q with texel loads of operands a and b of type t, whose
 * last words lie a_words and b_words from the buffers' bases: storage
 * buffers where a texel view cannot reach them, element loads where a
 * buffer holds no whole vector texel. */
static og_params texel_loads(const og_limits *lim, uint64_t texel, const og_buffer *a,
                             const og_buffer *b, uint64_t a_words, uint64_t b_words, og_params q)
{
    if (!texels_reach(lim, a, b, a_words, b_words)) {
        q.src = OG_SRC_STORAGE;
        return q;
    }
    /* A vector texel view needs at least one whole texel. */
    if (a->allocated < texel || b->allocated < texel)
        q.vec = 1;
    return q;
}

/* texel_loads for a GEMM call whose vector texels are `texel` bytes. */
static og_params texels_for_call(const og_gemm_config *cfg, const og_limits *lim,
                                 const og_gemm_args *g, uint64_t texel, og_params q)
{
    /* Only called on checked arguments, so the extents cannot overflow. */
    int64_t batch = g->batch ? g->batch : 1;
    uint64_t a = operand_words(cfg->a_type, g->a_offset, batch, g->stride_a,
                               g->trans_a ? g->k : g->m, g->lda, g->trans_a ? g->m : g->k);
    uint64_t b = operand_words(cfg->b_type, g->b_offset, batch, g->stride_b,
                               g->trans_b ? g->n : g->k, g->ldb, g->trans_b ? g->k : g->n);
    return texel_loads(lim, texel, g->a, g->b, a, b, q);
}

static og_params float_loads_for_call(const og_gemm_config *cfg, const og_limits *lim,
                                      const og_gemm_args *g, const og_params *p,
                                      uint32_t range_len)
{
    og_params q = *p;
    /* A wrapped buffer's skew must keep vector groups aligned. */
    int skewed = g->a->skew % 16 || g->b->skew % 16;
    if (og_family_can(&q, OG_FAMILY_VEC16)) {
        /* 16-byte loads of eight 16-bit values: A's offset, leading
         * dimension and batch stride in eights, and B's where it is read in
         * 16 bytes (N x K, or K x N eight columns an invocation, which also
         * needs N in eights). */
        int b_vec = g->trans_b || q.tn == 8;
        const int64_t v[] = {g->a_offset,           g->lda,
                             g->stride_a,           b_vec ? g->b_offset : 0,
                             b_vec ? g->ldb : 0,    b_vec ? g->stride_b : 0,
                             g->trans_b ? 0 : q.tn == 8 ? g->n : 0};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            if (v[i] % 8 != 0)
                q.vec = 1;
        if (skewed)
            q.vec = 1;
        return q.src == OG_SRC_TEXEL ? texels_for_call(cfg, lim, g, 16, q) : q;
    }
    if (!og_family_can(&q, OG_FAMILY_VEC4))
        return q;
    /* Four elements at a time need offsets, leading dimensions and batch
     * strides in fours; a range starts range * range_len terms into k; FP8
     * bytes load one by one where the family reads them as elements. */
    int ranged = og_family_can(&q, OG_FAMILY_SPLIT) && range_len % 4 != 0;
    int fp8 = og_family_can(&q, OG_FAMILY_FP8_ELEMENTS) &&
              (og_dtype_is_fp8(cfg->a_type) || og_dtype_is_fp8(cfg->b_type));
    if (q.vec != 1 && (!vec_aligned(g) || ranged || skewed || fp8))
        q.vec = 1;
    if (q.src == OG_SRC_TEXEL)
        q = texels_for_call(cfg, lim, g, cfg->a_type == OG_F32 ? 16 : 8, q);
    return q;
}

og_params og_params_for_call(const og_gemm_config *cfg, const og_limits *lim, const og_gemm_args *g,
                             const og_params *p, uint32_t range_len)
{
    og_params q = float_loads_for_call(cfg, lim, g, p, range_len);
    /* Recovered float32 reads its operands through bindings only. */
    if (cfg->recover || cfg->scaled)
        return q;
    return by_address(lim, og_operand_past_binding(lim, cfg->a_type, cfg->b_type, g), g, q);
}

og_params og_conv_loads_for_call(const og_limits *lim, og_dtype input, const og_conv_args *args,
                                 const og_conv_shape *s, const og_params *p, uint32_t range_len)
{
    og_params q = *p;
    if (!og_family_can(&q, OG_FAMILY_CONV) || og_params_matrix(&q))
        return q;
    /* B's rows (K = Cg*R*S terms) and ranges in fours from an aligned first
     * weight; with NHWC input and KRSC weights A's taps too (four channels
     * of a group from an aligned first element). */
    int channels_vec = args->layout == OG_CONV_NHWC && args->weights == OG_CONV_KRSC;
    if (q.vec != 1 &&
        (s->k % 4 != 0 || args->w_offset % 4 != 0 || args->wt->skew % 16 != 0 ||
         range_len % 4 != 0 ||
         (channels_vec && (s->cg % 4 != 0 || args->x_offset % 4 != 0 || args->x->skew % 16 != 0))))
        q.vec = 1;
    if (q.src == OG_SRC_TEXEL) {
        /* Only called on checked arguments, so the extents cannot overflow. */
        uint64_t x = operand_words(input, args->x_offset, 1, 0, 1, 0,
                                   args->n * args->c * args->h * args->w);
        uint64_t w = operand_words(input, args->w_offset, 1, 0, 1, 0, args->k * s->k);
        q = texel_loads(lim, input == OG_F32 ? 16 : 8, args->x, args->wt, x, w, q);
    }
    return q;
}

static og_params int8_loads_for_call(const og_limits *lim, const og_int8gemm_args *args,
                                     const og_params *p)
{
    og_params q = *p;
    if (!og_family_can(&q, OG_FAMILY_INT8) || og_params_matrix(&q))
        return q;
    og_gemm_args g = og_int8gemm_layout(args);
    /* Nothing is read when K = 0 (placeholders may bind for A and B). */
    int skewed = args->k > 0 && (args->a->skew % 4 || args->b->skew % 4);
    if (q.vec == 4 && (!vec_aligned(&g) || skewed))
        q.vec = og_family_can(&q, OG_FAMILY_TILED) ? 1 : 0; /* the tile's element loads, the skinny kernel's bytes */
    if (q.src != OG_SRC_TEXEL)
        return q;
    /* The skinny kernel's byte loads keep storage buffers; with K = 0 the
     * placeholder binds for A and B. Only called on checked arguments, so
     * the extents cannot overflow. */
    int64_t batch = g.batch ? g.batch : 1;
    uint64_t a = (operand_end(g.a_offset, batch, g.stride_a, g.trans_a ? g.k : g.m, g.lda,
                              g.trans_a ? g.m : g.k) + 3) / 4;
    uint64_t b = (operand_end(g.b_offset, batch, g.stride_b, g.trans_b ? g.n : g.k, g.ldb,
                              g.trans_b ? g.k : g.n) + 3) / 4;
    if (q.vec == 0 || g.k == 0 || !texels_reach(lim, args->a, args->b, a, b))
        q.src = OG_SRC_STORAGE;
    return q;
}

og_params og_int8_params_for_call(const og_limits *lim, const og_int8gemm_args *args,
                                  const og_params *p)
{
    og_gemm_args g = og_int8gemm_layout(args);
    return by_address(lim, og_operand_past_binding(lim, OG_INT8, OG_INT8, &g), &g,
                      int8_loads_for_call(lim, args, p));
}

/* Matrix tile p as variant i (NV first, then KHR) runs on a device with
 * limits lim: its subgroup size, and its fragment for A and B of component
 * type a and b summed in acc, and a k step that holds whole fragments;
 * where the device lists none, p's 16x16x16 stays for the reason to name. */
static og_params variant_on(const og_limits *lim, int i, og_params p, int a, int b, int acc)
{
    p.mat = i < 2 ? OG_MATRIX_NV : OG_MATRIX_KHR;
    int sub = og_matrix_subgroup(lim);
    p.sub = sub ? sub : OG_COOPMAT_SUBGROUP;
    og_matrix_fragment(&lim->matrix, p.mat, a, b, acc, &p.fm, &p.fn, &p.fk);
    /* A fragment deeper than the k step (Int8Gemm's 16x16x32 on NVIDIA)
     * takes a k step of its own depth. */
    if (p.bk % p.fk != 0)
        p.bk = p.fk;
    return p;
}

og_params og_matrix_variant(const og_limits *lim, int i)
{
    return variant_on(lim, i, og_params_coopmat(i % 2 ? 4 : 8), OG_COMPONENT_F16,
                      OG_COMPONENT_F16, OG_COMPONENT_F32);
}

int og_matrix_choose(const og_limits *lim, og_dtype dtype, og_mode mode,
                     og_matrix_note notes[OG_MATRIX_VARIANTS])
{
    int chosen = -1;
    for (int i = 0; i < OG_MATRIX_VARIANTS; i++) {
        og_matrix_note *n = &notes[i];
        memset(n, 0, sizeof *n);
        n->params = og_matrix_variant(lim, i);
        if (mode != OG_MODE_FAST)
            snprintf(n->why, sizeof n->why, "Deterministic mode keeps the portable kernel");
        else if (dtype == OG_BF16)
            snprintf(n->why, sizeof n->why,
                     "bfloat16 takes the portable kernel (GL_NV_cooperative_matrix, which the "
                     "KHR form is rewritten from, has no bfloat16)");
        else if (dtype != OG_F16)
            snprintf(n->why, sizeof n->why,
                     "%s takes the portable kernel (the matrix kernels take float16)",
                     og_dtype_name(dtype));
        else if (og_params_check(&n->params, lim, n->why, sizeof n->why) != 0)
            continue;
        else if (chosen >= 0)
            snprintf(n->why, sizeof n->why,
                     "the %s %d-subgroup variant qualifies first (both are tuner candidates)",
                     notes[chosen].params.mat == OG_MATRIX_KHR ? "KHR" : "NV",
                     notes[chosen].params.sgx * notes[chosen].params.sgy);
        else
            chosen = i;
        n->chosen = chosen == i;
    }
    return chosen;
}

void og_coopmat2_note(const og_limits *lim, og_dtype dtype, og_mode mode, og_matrix_note *note)
{
    memset(note, 0, sizeof *note);
    note->params = og_params_coopmat2(og_matrix_subgroup(lim));
    if (mode != OG_MODE_FAST)
        snprintf(note->why, sizeof note->why, "Deterministic mode keeps the portable kernel");
    else if (dtype != OG_F16)
        snprintf(note->why, sizeof note->why,
                 "%s takes the portable kernel (the coopmat2 kernel takes float16)",
                 og_dtype_name(dtype));
    else if (og_params_check(&note->params, lim, note->why, sizeof note->why) == 0)
        snprintf(note->why, sizeof note->why,
                 "a tuner candidate (ogtune tune measures it against the matrix tile), never the "
                 "default: no database here holds a faster record of it");
}

og_params og_matrix_int8_variant(const og_limits *lim, int i)
{
    return variant_on(lim, i, og_params_int8_coopmat(i % 2 ? 4 : 8), OG_COMPONENT_S8,
                      OG_COMPONENT_S8, OG_COMPONENT_S32);
}

int og_matrix_int8_choose(const og_limits *lim, og_dialect dialect,
                          og_matrix_note notes[OG_MATRIX_VARIANTS])
{
    int chosen = -1;
    for (int i = 0; i < OG_MATRIX_VARIANTS; i++) {
        og_matrix_note *n = &notes[i];
        memset(n, 0, sizeof *n);
        n->params = og_matrix_int8_variant(lim, i);
        if (og_params_check(&n->params, lim, n->why, sizeof n->why) != 0)
            continue;
        if (dialect != OG_GLSL)
            snprintf(n->why, sizeof n->why,
                     "this context generates HLSL; the Int8Gemm matrix kernel is GLSL only");
        else if (chosen >= 0)
            snprintf(n->why, sizeof n->why,
                     "the %s %d-subgroup variant qualifies first (both are tuner candidates)",
                     notes[chosen].params.mat == OG_MATRIX_KHR ? "KHR" : "NV",
                     notes[chosen].params.sgx * notes[chosen].params.sgy);
        else
            chosen = i;
        n->chosen = chosen == i;
    }
    return chosen;
}

og_params og_params_recovered(const og_limits *lim, og_dialect dialect, og_mode mode)
{
    og_matrix_note notes[OG_MATRIX_VARIANTS];
    if (dialect == OG_GLSL && og_matrix_choose(lim, OG_F16, mode, notes) >= 0) {
        for (int i = 0; i < OG_MATRIX_VARIANTS; i++) {
            og_kernel_key key = {.p = og_matrix_variant(lim, i),
                                 .dtype = OG_F32,
                                 .dialect = OG_GLSL,
                                 .recover = OG_RECOVER_SHIFT};
            char why[256];
            if (og_kernel_check(&key, lim, why, sizeof why) == 0)
                return key.p;
        }
    }
    return og_params_recovered_tile();
}

og_params og_params_recovered_tile(void)
{
    og_params p = og_params_default();
    p.split = 1;
    return p;
}

int og_params_recover_check(const og_params *p, const og_limits *lim, og_dialect dialect,
                            int recover, char *why, size_t len)
{
    if (og_family_can(p, OG_FAMILY_SPLIT) && p->split != 1) {
        snprintf(why, len, "recovered float32 runs the tile unsplit (split=1)");
        return -1;
    }
    og_kernel_key key = {
        .kernel = OG_KERNEL_GEMM, .p = *p, .dtype = OG_F32, .dialect = dialect, .recover = recover};
    return og_kernel_check(&key, lim, why, len);
}
