/* Whether a device can run a kernel: its types, recovered float32, the
 * parameters' own checks, and the WGSL dialect's (og_wgsl.c). */
#include <stdio.h>

#include "og_family.h"

/* The float variants' type pairs: A and B equal, or FP8 beside FP8 or
 * float32 (bytes in words: element loads only). */
static int float_types_check(const og_kernel_key *key, char *why, size_t len)
{
    og_dtype a = key->dtype, b = og_kernel_b_type(key);
    if (a < OG_F32 || a > OG_FP8_E5M2 || b < OG_F32 || b > OG_FP8_E5M2) {
        snprintf(why, len, "gen: unknown input type (A %d, B %d)", (int)a, (int)b);
        return -1;
    }
    if (og_dtype_is_int8(a) || og_dtype_is_int8(b))
        return 0; /* the Int8Gemm rules */
    if (!og_dtype_is_fp8(a) && !og_dtype_is_fp8(b)) {
        if (a == b)
            return 0;
        snprintf(why, len, "gen: A (%s) and B (%s) differ without an FP8 operand", og_dtype_name(a),
                 og_dtype_name(b));
        return -1;
    }
    if ((a != OG_F32 && !og_dtype_is_fp8(a)) || (b != OG_F32 && !og_dtype_is_fp8(b))) {
        snprintf(why, len, "gen: an FP8 operand pairs with FP8 or float32, not %s with %s",
                 og_dtype_name(a), og_dtype_name(b));
        return -1;
    }
    if (!og_family_can(&key->p, OG_FAMILY_FP8)) {
        snprintf(why, len, "gen: FP8 inputs run the portable tile, the few-rows or the decode kernel");
        return -1;
    }
    if (og_family_can(&key->p, OG_FAMILY_FP8_ELEMENTS) && key->p.vec != 1) {
        snprintf(why, len, "gen: FP8 inputs are read one element at a time (vec=1)");
        return -1;
    }
    return 0;
}

/* Recovered float32: the staged portable tile (element loads from storage
 * buffers) or the staged cooperative-matrix tile, float32 inputs, a shift
 * in 1..12; a tile of residuals beside each staged tile. */
static int recover_check(const og_kernel_key *key, const og_limits *lim, char *why, size_t len)
{
    if (!key->recover && !key->scaled)
        return 0;
    const og_params *p = &key->p;
    /* A matrix tile stages its fragments; a portable one reads elements. */
    int elements = og_family_can(p, OG_FAMILY_MATRIX) || (p->vec == 1 && p->src == OG_SRC_STORAGE);
    if (key->kernel != OG_KERNEL_GEMM || !og_family_can(p, OG_FAMILY_RECOVER) || !elements ||
        p->load != OG_LOAD_STAGED) {
        snprintf(why, len,
                 "gen: recovered float32 runs the staged tile (vec=1, src=ssbo) or the staged "
                 "cooperative-matrix tile");
        return -1;
    }
    /* A low-bit weight product's prefill takes its A types (qformat_check). */
    if (!key->qformat && (key->dtype != OG_F32 || og_kernel_b_type(key) != OG_F32)) {
        snprintf(why, len, "gen: recovered float32 takes float32 inputs");
        return -1;
    }
    if (key->recover < 1 || key->recover > OG_RECOVER_SHIFT_MAX) {
        snprintf(why, len, "gen: residual shift %d is outside 1..%d", key->recover,
                 OG_RECOVER_SHIFT_MAX);
        return -1;
    }
    uint32_t shared = og_kernel_shared_bytes(key);
    if (lim && shared > lim->max_shared_bytes) {
        snprintf(why, len, "limits: %u bytes of workgroup memory exceed the device's %u", shared,
                 lim->max_shared_bytes);
        return -1;
    }
    return 0;
}

/* The convolution's kernels (og_kernel_key.conv): the depthwise kernel
 * (its own rules in its entry's check_key); the portable tile from
 * storage or texel buffers (vec = 4: four channels of a tap for NHWC input
 * and KRSC weights, else A gathered one element at a time; B, the weights
 * stored N x K, as the GEMM's), native products, in every dialect
 * (GLSL, HLSL, and WGSL within og_wgsl_check); its planes and their
 * reduction; the cooperative-matrix tile (float16, GLSL, staged loads,
 * one pass), whose device checks follow in og_kernel_check; and the
 * explicit im2col matrix (GLSL: a baseline for the benchmarks, never a
 * call's path), whose key names only the input type and the layouts. */
static int conv_check(const og_kernel_key *key, char *why, size_t len)
{
    if (key->kernel == OG_KERNEL_IM2COL &&
        (!key->conv || key->dialect != OG_GLSL ||
         (key->dtype != OG_F32 && key->dtype != OG_F16 && key->dtype != OG_BF16))) {
        snprintf(why, len,
                 "gen: the im2col kernel gathers a convolution's float32, float16 or bfloat16 "
                 "input (a conv key), in GLSL");
        return -1;
    }
    if (!key->conv)
        return 0;
    const og_params *p = &key->p;
    int layout = !key->trans_a && key->trans_b;
    int gather = og_kernel_has_params(key) && og_family_can(p, OG_FAMILY_CONV);
    int tile = gather && !og_family_can(p, OG_FAMILY_MATRIX) && p->src != OG_SRC_ADDR && layout;
    int matrix = gather && key->kernel == OG_KERNEL_GEMM && og_family_can(p, OG_FAMILY_MATRIX) &&
                 p->load == OG_LOAD_STAGED && key->dtype == OG_F16 && key->dialect == OG_GLSL &&
                 layout;
    if (key->conv < OG_CONV_KEY(0, 0) || key->conv > OG_CONV_KEY(1, 1) ||
        (!tile && !matrix && key->kernel != OG_KERNEL_REDUCE && key->kernel != OG_KERNEL_IM2COL)) {
        snprintf(why, len,
                 "gen: a convolution runs the portable tile (src=ssbo or texel, B transposed), its "
                 "split-k planes and their reduction, the cooperative-matrix tile (float16, "
                 "GLSL, load=staged, one pass), the depthwise kernel or the im2col kernel");
        return -1;
    }
    if (key->recover || key->scaled) {
        snprintf(why, len, "gen: a convolution takes native products (no recovered float32)");
        return -1;
    }
    return 0;
}

/* A weight format (og_kernel_key.qformat) goes with the low-bit decode
 * kernel (variant qdecode; GLSL, A float32, float16 or bfloat16 not
 * transposed), with the portable tile's prefill loads (variant tile, B
 * the weights N x K, element loads from storage buffers, no split-k pass)
 * and with the prefill on matrices (the staged cooperative-matrix tile,
 * recovered with range scaling, and range scaling's exponents pass, GLSL);
 * no other kernel takes one, and the decode kernel takes nothing else.
 * WGSL passes here and og_wgsl_check admits the decode kernel's one pass
 * with word loads (vec=1, unsplit) and the prefill tile. */
static int qformat_check(const og_kernel_key *key, char *why, size_t len)
{
    int params = og_kernel_has_params(key);
    int decode = params && og_family_can(&key->p, OG_FAMILY_WEIGHTS);
    if (!decode && !key->qformat)
        return 0;
    int q = key->qformat, format = OG_QFORMAT_KEY_FORMAT(q);
    int int4 = format == 2; /* OG_QFORMAT_INT4 */
    int prefill = params && og_family_can(&key->p, OG_FAMILY_PREFILL);
    int tile = prefill && !og_params_matrix(&key->p);
    /* The prefill on matrices: recovered float32 with range scaling, and
     * its exponents pass. */
    int matrix = prefill && og_params_matrix(&key->p);
    int exponents = key->kernel == OG_KERNEL_EXPONENTS;
    /* The tile's prefill is unsplit; the decode kernel has a split-k pass. */
    int kernel_ok = key->kernel == OG_KERNEL_GEMM || (decode && key->kernel == OG_KERNEL_PLANES) || exponents;
    if ((!decode && !tile && !matrix && !exponents) || !kernel_ok || q < 1 || format >= OG_QFORMAT_KEY_FORMATS || OG_QFORMAT_KEY_ZERO(q) > 2 ||
        (!int4 && (OG_QFORMAT_KEY_SCALE(q) || OG_QFORMAT_KEY_ZERO(q)))) {
        snprintf(why, len,
                 "gen: a weight format (qformat %d) goes with the low-bit decode kernel "
                 "(variant=qdecode, and its split-k pass), the portable tile's gemm pass and "
                 "the recovered cooperative-matrix tile's (with its exponents pass), and the "
                 "decode kernel takes one",
                 q);
        return -1;
    }
    if ((key->dialect != OG_GLSL && key->dialect != OG_WGSL) || key->trans_a ||
        key->trans_b != !decode || key->conv || key->dtype_b != 0 ||
        (key->dtype != OG_F32 && key->dtype != OG_F16 && key->dtype != OG_BF16)) {
        snprintf(why, len,
                 "gen: the low-bit weight kernels are GLSL and WGSL, with "
                 "float32, float16 or bfloat16 A not transposed (and the tile's B, the weights, "
                 "transposed)");
        return -1;
    }
    /* Range scaling keeps every decoded weight inside float16's range: the
     * matrix prefill is recovered and scaled, GLSL, staged; nothing else is
     * recovered. */
    if (matrix ? !key->recover || !key->scaled || key->dialect != OG_GLSL || key->p.load != OG_LOAD_STAGED
               : key->recover || key->scaled || (exponents && key->dialect != OG_GLSL)) {
        snprintf(why, len,
                 "gen: low-bit weights on matrices run the staged cooperative-matrix tile as "
                 "recovered float32 with range scaling (GLSL); the other low-bit kernels are "
                 "native");
        return -1;
    }
    if (tile && (key->p.vec != 1 || key->p.src != OG_SRC_STORAGE)) {
        snprintf(why, len,
                 "gen: the tile decodes low-bit weights one element at a time from storage "
                 "buffers (vec=1, src=ssbo)");
        return -1;
    }
    return 0;
}

int og_kernel_check(const og_kernel_key *key, const og_limits *lim, char *why, size_t len)
{
    if (key->kernel < OG_KERNEL_GEMM || key->kernel > OG_KERNEL_IM2COL) {
        snprintf(why, len, "gen: unknown kernel %d", (int)key->kernel);
        return -1;
    }
    if (conv_check(key, why, len) != 0 || qformat_check(key, why, len) != 0)
        return -1;
    /* Parts are the low-bit decode kernel's (its one pass, GLSL). */
    if (key->part != OG_PART_FULL &&
        (key->part < 0 || key->part > OG_PART_CONVERT || key->kernel != OG_KERNEL_GEMM ||
         !og_kernel_has_params(key) || !og_family_can(&key->p, OG_FAMILY_WEIGHTS) ||
         key->dialect != OG_GLSL)) {
        snprintf(why, len, "gen: part %d: only the low-bit decode kernel's one pass (GLSL) has parts",
                 key->part);
        return -1;
    }
    if (key->dialect == OG_WGSL && og_wgsl_check(key, why, len) != 0)
        return -1;
    if (!og_kernel_has_params(key))
        return 0;
    if (float_types_check(key, why, len) != 0 || recover_check(key, lim, why, len) != 0)
        return -1;
    /* glslang's HLSL front end has no buffer references (vk::RawBufferLoad
     * is DXC's alone). */
    if (key->p.src == OG_SRC_ADDR && key->dialect == OG_HLSL) {
        snprintf(why, len, "gen: src=addr (buffer device addresses) is GLSL only");
        return -1;
    }
    const og_family *f = og_family_of(&key->p);
    if (key->kernel == OG_KERNEL_PLANES && !(f->can & OG_FAMILY_SPLIT)) {
        snprintf(why, len,
                 "gen: split-k planes exist for the tile and the low-bit decode kernel only");
        return -1;
    }
    int integer_variant = (f->can & OG_FAMILY_INT8) != 0;
    int both_int8 = og_dtype_is_int8(key->dtype) && og_dtype_is_int8(key->dtype_b);
    int any_int8 = og_dtype_is_int8(key->dtype) || og_dtype_is_int8(key->dtype_b);
    if (integer_variant ? !both_int8 : any_int8) {
        snprintf(why, len, "gen: the Int8Gemm variants, and only they, take int8 or uint8 inputs");
        return -1;
    }
    if (f->check_key && f->check_key(key, why, len) != 0)
        return -1;
    if (integer_variant && key->p.dot && key->dialect != OG_GLSL) {
        snprintf(why, len, "gen: dot=1 is written in GLSL only (GL_EXT_spirv_intrinsics)");
        return -1;
    }
    if (og_params_check(&key->p, lim, why, len) != 0)
        return -1;
    return key->dialect == OG_WGSL ? og_wgsl_limits_check(key, why, len) : 0;
}
