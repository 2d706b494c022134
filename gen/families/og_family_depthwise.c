/* The depthwise convolution kernel (templates/conv_depthwise.tmpl): a
 * convolution's own kernel for few channels a group (depthwise and grouped
 * layers: MobileNet, ConvNeXt, Whisper-like grouped conv1d). Each
 * invocation takes tm output pixels and tn output channels of its group and
 * sums every term of the implicit GEMM's row (Cg*R*S) in the weights'
 * order, walking the taps without divisions; the sums follow the tile's
 * blocked order, so the bits are the default tile's
 * (docs/accumulation-order.md, "Convolution"). */
#include <stdio.h>

#include "og_family.h"

og_params og_params_depthwise(void)
{
    return (og_params){.variant = OG_VARIANT_DEPTHWISE, .rows = 64, .tm = 4, .tn = 1, .vec = 1};
}

/* Never a GEMM's kernel: only og_conv_* plans it. */
static int depthwise_takes(og_dtype a_type, int64_t m, int trans_a)
{
    (void)a_type;
    (void)m;
    (void)trans_a;
    return 0;
}

static void depthwise_finish(og_params *p, unsigned seen)
{
    if (!(seen & OG_KEY_TM))
        p->tm = 1;
    if (!(seen & OG_KEY_TN))
        p->tn = 1;
    p->vec = 1;
}

static void depthwise_format(const og_params *p, char *buf, size_t len)
{
    snprintf(buf, len, "variant=depthwise,rows=%d,tm=%d,tn=%d%s", p->rows, p->tm, p->tn,
             p->src == OG_SRC_TEXEL ? ",src=texel" : "");
}

/* rows (invocations) 32..256, tm (output pixels an invocation) and tn
 * (output channels an invocation) 1..8, powers of two; element loads from
 * storage or texel buffers. */
static int depthwise_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    static const int rows[] = {32, 64, 128, 256};
    if (!og_one_of(p->rows, rows, 4) || !og_one_of(p->tm, og_pow2, 4) ||
        !og_one_of(p->tn, og_pow2, 4) || p->vec != 1 || p->src == OG_SRC_ADDR) {
        snprintf(why, len,
                 "params: depthwise rows=%d must be 32, 64, 128 or 256, tm=%d and tn=%d 1, 2, 4 "
                 "or 8 (element loads from storage or texel buffers)",
                 p->rows, p->tm, p->tn);
        return -1;
    }
    if (og_src_check(p, lim, NULL, why, len) != 0)
        return -1;
    return lim ? og_limits_check(p, lim, (uint32_t)p->rows, 1, why, len) : 0;
}

/* A convolution's GEMM pass (a conv key: B, the weights, N x K), float32,
 * float16 or bfloat16, native products, GLSL. */
static int depthwise_check_key(const og_kernel_key *key, char *why, size_t len)
{
    og_dtype t = key->dtype;
    if (!key->conv || key->kernel != OG_KERNEL_GEMM || key->dialect != OG_GLSL ||
        (t != OG_F32 && t != OG_F16 && t != OG_BF16) || og_kernel_b_type(key) != t) {
        snprintf(why, len,
                 "gen: the depthwise kernel runs a convolution (a conv key, one pass) of float32, "
                 "float16 or bfloat16, in GLSL");
        return -1;
    }
    return 0;
}

static uint32_t depthwise_shared_bytes(const og_params *p)
{
    (void)p;
    return 0;
}

static void depthwise_local_size(const og_params *p, uint32_t size[3])
{
    size[0] = (uint32_t)p->rows;
}

/* Chunks of 16 terms, each its inner loop of at most 16 and the exit. */
static uint64_t depthwise_loops(const og_params *p, uint64_t k_len)
{
    (void)p;
    return og_steps(k_len, 16) * 17u + 1u;
}

/* Each from storage and from texel buffers. Quick: 64 invocations of 1, 4
 * or 8 pixels, one output channel or, with more channels a group, two;
 * standard: every rows, tm and tn up to the group's channels. */
static og_status depthwise_space(og_space_list *c, const og_space_ask *ask)
{
    og_status st = og_space_add(c, og_params_depthwise());
    for (int rows = 32; rows <= 256 && st == OG_OK; rows *= 2)
        for (int tm = 1; tm <= 8 && st == OG_OK; tm *= 2)
            for (int tn = 1; tn <= 8 && st == OG_OK; tn *= 2) {
                int keep = ask->standard
                               ? tn == 1 || tn <= ask->n
                               : rows == 64 && tm != 2 && (tn == 1 || (tn == 2 && ask->n >= 2));
                if (keep)
                    st = og_space_add_word_loads(c, (og_params){.variant = OG_VARIANT_DEPTHWISE,
                                                                .rows = rows,
                                                                .tm = tm,
                                                                .tn = tn,
                                                                .vec = 1});
            }
    return st;
}

const og_family og_family_depthwise = {
    .variant = OG_VARIANT_DEPTHWISE,
    .name = "depthwise",
    .template_name = OG_TEMPLATE_DEPTHWISE,
    .can = OG_FAMILY_CONV | OG_FAMILY_DEPTHWISE,
    .takes = depthwise_takes,
    .takes_text = "the depthwise kernel runs convolutions only",
    .keys = OG_KEY_ROWS,
    .optional = OG_KEY_TM | OG_KEY_TN | OG_KEY_SRC,
    .keys_text = "rows (and tm, tn, src) for variant=depthwise",
    .finish = depthwise_finish,
    .format = depthwise_format,
    .check = depthwise_check,
    .check_key = depthwise_check_key,
    .shared_bytes = depthwise_shared_bytes,
    .local_size = depthwise_local_size,
    .loop_iterations = depthwise_loops,
    .space = depthwise_space,
};
