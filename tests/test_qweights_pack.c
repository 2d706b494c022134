/* The packers of low-bit weight matrices (og_qweights_pack_*) against the
 * reference of og_qweights_ref.h: each packer's source arrays are written
 * here in the source's own ordering (ggml's block_q4_0 / block_q8_0 /
 * block_mxfp4, transformers' blocks and scales, ONNX Runtime's MatMulNBits B
 * / scales / zero_points), and the expected values come from that source's
 * own dequantisation formula; planted faults (swapped nibbles, the next
 * block's scale, rows of scales without their padding) must make those
 * comparisons fail. Only the float32 -> float16 conversion of the Q8_0 check
 * is borrowed (og_f32_to_f16, which test_formats_convert checks on every
 * float32). */
#include "og_qweights_ref.h"

/* ---- packers: sources written in their own orderings ---- */

/* float16 bit patterns of assorted magnitudes and signs, distinct. */
static const uint16_t F16_SCALES[] = {0x3C00, 0x2E66, 0xB800, 0x7BFF, 0x0001, 0x5640,
                                      0x1400, 0xC500, 0x3555, 0x4248, 0x0400, 0xE3D0};
static const uint8_t E8M0_SCALES[] = {0x7F, 0x76, 0x85, 0x00, 0xFE, 0x01, 0x80, 0x7E, 0x90};
#define NF16 (sizeof F16_SCALES / sizeof F16_SCALES[0])
#define NE8M0 (sizeof E8M0_SCALES / sizeof E8M0_SCALES[0])

/* Random codes, n x k, 0..15 (or -128..127 as bytes when wide); every
 * pair (2i, 2i + 1) and (i, i + 16) of a block differs somewhere, so that
 * nibble swaps show. */
static uint8_t *random_codes(int64_t n, int64_t k, int wide, uint64_t seed)
{
    uint8_t *q = malloc((size_t)(n * k));
    cr_assert_not_null(q);
    for (int64_t i = 0; i < n * k; i++)
        q[i] = (uint8_t)(wide ? rnd(&seed) % 256 : rnd(&seed) % 16);
    if (!wide)
        for (int64_t i = 0; i < n * k; i += 32)
            q[i] = 1, q[i + 1] = 9, q[i + 16] = 14;
    else
        for (int64_t i = 0; i < n * k; i += 32)
            q[i] = 0x80, q[i + 1] = 0x7F;
    return q;
}

/* GGUF blocks of a row-major n x k tensor: Q4_0 and MXFP4 write the scale
 * (float16 d, little-endian, or E8M0 e) and qs[i] = q[i] | q[i + 16] << 4;
 * Q8_0 d and the 32 int8 codes. The scale of block c is scales[c % count]. */
static uint8_t *gguf_blocks(og_gguf_type type, int64_t n, int64_t k, const uint8_t *q, size_t *size)
{
    size_t bb = type == OG_GGUF_Q4_0 ? 18 : type == OG_GGUF_Q8_0 ? 34 : 17;
    int64_t count = n * k / 32;
    uint8_t *src = malloc((size_t)count * bb), *p = src;
    cr_assert_not_null(src);
    for (int64_t c = 0; c < count; c++, p += bb) {
        const uint8_t *e = q + c * 32;
        if (type == OG_GGUF_MXFP4) {
            p[0] = E8M0_SCALES[c % NE8M0];
        } else {
            p[0] = (uint8_t)F16_SCALES[c % NF16];
            p[1] = (uint8_t)(F16_SCALES[c % NF16] >> 8);
        }
        if (type == OG_GGUF_Q8_0) {
            memcpy(p + 2, e, 32);
            continue;
        }
        uint8_t *qs = p + (type == OG_GGUF_Q4_0 ? 2 : 1);
        for (int i = 0; i < 16; i++)
            qs[i] = (uint8_t)(e[i] | e[i + 16] << 4);
    }
    *size = (size_t)count * bb;
    return src;
}

/* What ggml's dequantize_row_q4_0 / _q8_0 / _mxfp4 give for block c's
 * codes (MXFP4 by the OCP table: ggml's kvalues_mxfp4 has +0 for 0x8, and
 * the scales here avoid 0xFF, which ggml reads as 2^128). */
static void gguf_values(og_gguf_type type, int64_t n, int64_t k, const uint8_t *q, float *out)
{
    for (int64_t i = 0; i < n * k; i++) {
        int64_t c = i / 32;
        if (type == OG_GGUF_Q4_0)
            out[i] = to_f32((q[i] - 8) * ref_f16(F16_SCALES[c % NF16]));
        else if (type == OG_GGUF_Q8_0)
            out[i] = to_f32((int8_t)q[i] * ref_f16(F16_SCALES[c % NF16]));
        else
            out[i] = to_f32(FP4[q[i]] * ref_e8m0(E8M0_SCALES[c % NE8M0]));
    }
}

typedef int (*pack_fn)(const void *ctx, uint8_t *image, char *why, size_t len);

/* Packs (through fn), expects padding zero and the values want; returns
 * the image. */
static uint8_t *pack_and_check(const og_qweights_format *f, int64_t n, int64_t k, pack_fn fn,
                               const void *ctx, const float *want, float ts, const char *what)
{
    ref_layout l = ref_layout_of(f, n, k);
    uint8_t *img = image_alloc(l.bytes);
    char why[200] = "";
    cr_assert_eq(fn(ctx, img, why, sizeof why), 0, "%s: %s", what, why);
    expect_padding_zero(f, n, k, img, what);
    float *got = floats_alloc(n * k);
    cr_assert_eq(og_qweights_decode(f, n, k, img, ts, got, why, sizeof why), 0, "%s: %s", what,
                 why);
    expect_same(got, want, (size_t)(n * k), what);
    free(got);
    return img;
}

/* How many values of an image differ from want. */
static long image_mismatches(const og_qweights_format *f, int64_t n, int64_t k, const uint8_t *img,
                             float ts, const float *want)
{
    float *got = floats_alloc(n * k);
    char why[200] = "", first[200];
    cr_assert_eq(og_qweights_decode(f, n, k, img, ts, got, why, sizeof why), 0, "%s", why);
    long bad = mismatches(got, want, (size_t)(n * k), first, sizeof first);
    free(got);
    return bad;
}

typedef struct gguf_ctx {
    og_gguf_type type;
    int64_t n, k;
    const uint8_t *src;
} gguf_ctx;

static int pack_gguf(const void *ctx, uint8_t *image, char *why, size_t len)
{
    const gguf_ctx *c = ctx;
    return og_qweights_from_gguf(c->type, c->n, c->k, c->src, image, why, len);
}

static og_qweights_format gguf_format(og_gguf_type type)
{
    og_qweights_format f = {OG_QFORMAT_Q8_0, 0, 0, 0};
    if (type == OG_GGUF_Q4_0)
        f = (og_qweights_format){OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_NONE};
    if (type == OG_GGUF_MXFP4)
        f = MXFP4;
    return f;
}

Test(packers, gguf_blocks)
{
    static const og_gguf_type types[3] = {OG_GGUF_Q4_0, OG_GGUF_Q8_0, OG_GGUF_MXFP4};
    static const char *const names[3] = {"GGUF Q4_0", "GGUF Q8_0", "GGUF MXFP4"};
    /* ggml's type numbers (ggml.h, enum ggml_type). */
    cr_expect(OG_GGUF_Q4_0 == 2 && OG_GGUF_Q8_0 == 8 && OG_GGUF_MXFP4 == 39);
    const int64_t n = 3, k = 96; /* 3 blocks a row: scale rows padded */
    for (int t = 0; t < 3; t++) {
        og_qweights_format f = gguf_format(types[t]);
        uint8_t *q = random_codes(n, k, types[t] == OG_GGUF_Q8_0, 7 + (uint64_t)t);
        size_t size;
        uint8_t *src = gguf_blocks(types[t], n, k, q, &size);
        float *want = floats_alloc(n * k);
        gguf_values(types[t], n, k, q, want);
        gguf_ctx ctx = {types[t], n, k, src};
        uint8_t *img = pack_and_check(&f, n, k, pack_gguf, &ctx, want, 0, names[t]);
        free(img);
        free(want);
        free(src);
        free(q);
    }
}

Test(packers, gguf_q8_0_is_ggml_quantize)
{
    /* Blocks written as ggml's quantize_row_q8_0_ref does, from random
     * values, equal og_qweights_encode's image byte for byte. */
    const int64_t n = 7, k = 96;
    float w[7 * 96];
    uint64_t seed = 5;
    for (int i = 0; i < n * k; i++)
        w[i] = (float)(rnd_unit(&seed) * ldexp(1.0, i / 96 * 3 - 9));
    /* A block of ties: d = 1, and x * id = +-(m + 0.5), which roundf takes
     * away from zero (3.5 -> 4, -2.5 -> -3), not to even. */
    w[32] = 127;
    for (int i = 1; i < 32; i++)
        w[32 + i] = (float)((i % 2 ? 1 : -1) * (i / 2 + 0.5));
    uint8_t *src = malloc((size_t)(n * k / 32 * 34)), *p = src;
    cr_assert_not_null(src);
    for (int c = 0; c < n * k / 32; c++, p += 34) {
        const float *x = w + c * 32;
        float amax = 0;
        for (int i = 0; i < 32; i++)
            amax = fmaxf(amax, fabsf(x[i]));
        const float d = amax / ((1 << 7) - 1);
        const float id = d ? 1.0f / d : 0.0f;
        uint16_t h = og_f32_to_f16(d, OG_ROUND_NEAREST_EVEN);
        p[0] = (uint8_t)h, p[1] = (uint8_t)(h >> 8);
        for (int i = 0; i < 32; i++) {
            const float x0 = x[i] * id;
            p[2 + i] = (uint8_t)(int8_t)roundf(x0);
        }
    }
    ref_layout l = ref_layout_of(&Q8_0, n, k);
    uint8_t *a = image_alloc(l.bytes), *b = image_alloc(l.bytes);
    char why[200] = "";
    cr_assert_eq(og_qweights_from_gguf(OG_GGUF_Q8_0, n, k, src, a, why, sizeof why), 0, "%s", why);
    cr_assert_eq(og_qweights_encode(&Q8_0, n, k, w, 0, b, why, sizeof why), 0, "%s", why);
    cr_expect(memcmp(a, b, (size_t)l.bytes) == 0, "Q8_0: encode differs from ggml's blocks");
    free(a);
    free(b);
    free(src);
}

/* transformers' gpt-oss planes: blocks[j][b][i] = q[2i] | q[2i + 1] << 4,
 * scales[j][b]; value FP4_VALUES[q] * 2^(scale - 127) (torch.ldexp). */
typedef struct planes_ctx {
    int64_t n, k;
    const uint8_t *blocks, *scales;
} planes_ctx;

static int pack_planes(const void *ctx, uint8_t *image, char *why, size_t len)
{
    const planes_ctx *c = ctx;
    return og_qweights_from_mxfp4_planes(c->n, c->k, c->blocks, c->scales, image, why, len);
}

static void planes_of_codes(int64_t n, int64_t k, const uint8_t *q, uint8_t *blocks,
                            uint8_t *scales)
{
    for (int64_t j = 0; j < n; j++)
        for (int64_t g = 0; g < k / 32; g++) {
            int64_t c = j * (k / 32) + g;
            scales[c] = E8M0_SCALES[c % NE8M0];
            for (int i = 0; i < 16; i++)
                blocks[c * 16 + i] = (uint8_t)(q[c * 32 + 2 * i] | q[c * 32 + 2 * i + 1] << 4);
        }
}

Test(packers, mxfp4_planes_and_gguf_agree)
{
    const int64_t n = 7, k = 160;
    uint8_t *q = random_codes(n, k, 0, 11);
    uint8_t *blocks = malloc((size_t)(n * k / 2)), *scales = malloc((size_t)(n * k / 32));
    cr_assert(blocks && scales);
    planes_of_codes(n, k, q, blocks, scales);
    float *want = floats_alloc(n * k);
    for (int64_t i = 0; i < n * k; i++)
        want[i] = to_f32(ldexp(FP4[q[i]], (int)scales[i / 32] - 127));
    planes_ctx pc = {n, k, blocks, scales};
    uint8_t *a = pack_and_check(&MXFP4, n, k, pack_planes, &pc, want, 0, "transformers MXFP4");
    /* The same codes and scales as GGUF MXFP4 blocks: the same image. */
    size_t size;
    uint8_t *src = gguf_blocks(OG_GGUF_MXFP4, n, k, q, &size);
    gguf_ctx gc = {OG_GGUF_MXFP4, n, k, src};
    uint8_t *b = pack_and_check(&MXFP4, n, k, pack_gguf, &gc, want, 0, "GGUF MXFP4");
    cr_expect(memcmp(a, b, (size_t)ref_layout_of(&MXFP4, n, k).bytes) == 0,
              "GGUF and transformers MXFP4 images differ");
    free(a);
    free(b);
    free(src);
    free(want);
    free(blocks);
    free(scales);
    free(q);
}

typedef struct nvfp4_ctx {
    int64_t n, k;
    const uint8_t *packed, *scales;
} nvfp4_ctx;

static int pack_nvfp4(const void *ctx, uint8_t *image, char *why, size_t len)
{
    const nvfp4_ctx *c = ctx;
    return og_qweights_from_nvfp4(c->n, c->k, c->packed, c->scales, image, why, len);
}

Test(packers, nvfp4)
{
    static const uint8_t e4m3[] = {0x38, 0x7E, 0x01, 0x45, 0x2A, 0x7F, 0x50, 0x08, 0x33};
    const int64_t n = 3, k = 96;
    const float ts = 0.75f;
    uint8_t *q = random_codes(n, k, 0, 13);
    uint8_t *packed = calloc((size_t)(n * k / 2), 1), *scales = malloc((size_t)(n * k / 16));
    cr_assert(packed && scales);
    for (int64_t i = 0; i < n * k; i++)
        packed[i / 2] |= (uint8_t)(q[i] << (i % 2 * 4));
    for (int64_t c = 0; c < n * k / 16; c++)
        scales[c] = e4m3[c % sizeof e4m3];
    float *want = floats_alloc(n * k);
    for (int64_t i = 0; i < n * k; i++)
        want[i] = to_f32(FP4[q[i]] * ref_e4m3(scales[i / 16]) * ts);
    nvfp4_ctx ctx = {n, k, packed, scales};
    uint8_t *img = pack_and_check(&NVFP4, n, k, pack_nvfp4, &ctx, want, ts, "NVFP4");
    free(img);
    /* og_nvfp4_encode's output, block by block, packs to og_qweights_encode's image. */
    float w[3 * 96];
    uint64_t seed = 17;
    for (int i = 0; i < n * k; i++)
        w[i] = (float)rnd_unit(&seed) * 3.0f;
    for (int64_t c = 0; c < n * k / 16; c++)
        og_nvfp4_encode(w + c * 16, ts, &scales[c], packed + c * 8);
    ref_layout l = ref_layout_of(&NVFP4, n, k);
    uint8_t *a = image_alloc(l.bytes), *b = image_alloc(l.bytes);
    char why[200] = "";
    cr_assert_eq(og_qweights_from_nvfp4(n, k, packed, scales, a, why, sizeof why), 0, "%s", why);
    cr_assert_eq(og_qweights_encode(&NVFP4, n, k, w, ts, b, why, sizeof why), 0, "%s", why);
    cr_expect(memcmp(a, b, (size_t)l.bytes) == 0, "NVFP4: packed encode differs from encode");
    free(a);
    free(b);
    free(want);
    free(packed);
    free(scales);
    free(q);
}

/* ONNX Runtime's MatMulNBits (bits 4): B (N, blocks, block / 2), element 2i
 * of a blob in the low nibble of its byte i; scales (N, blocks); packed
 * zero_points (N, ceil(blocks / 2)) uint8, block 2i in the low nibble, or
 * (N, blocks) of the scale's type; absent: 8. Value (q - zp) * scale. */
typedef struct nbits_src {
    og_qweights_format f;
    int64_t n, k, blocks;
    uint8_t *b;
    uint16_t *scales, *fzeros;
    uint8_t *zeros;
} nbits_src;

static const uint16_t BF16_SCALES[] = {0x3F80, 0x3DCD, 0xBF00, 0x7F7F, 0x0001,
                                       0x42CA, 0x3A80, 0xC0A0, 0x3EAB, 0x4049};
static const uint16_t F16_ZEROS[] = {0x4780, 0x0001, 0xC280, 0x4800, 0x0000, 0x4B80, 0x3E00};
static const uint16_t BF16_ZEROS[] = {0x40F0, 0x3080, 0xC050, 0x4100, 0x0000, 0x4170, 0x3FC0};

static nbits_src nbits_make(const og_qweights_format *f, int64_t n, int64_t k, const uint8_t *q)
{
    nbits_src s = {*f, n, k, k / (f->group ? f->group : k), NULL, NULL, NULL, NULL};
    int64_t zb = (s.blocks + 1) / 2;
    s.b = calloc((size_t)(n * k / 2), 1);
    s.scales = malloc((size_t)(n * s.blocks) * 2);
    s.fzeros = malloc((size_t)(n * s.blocks) * 2);
    s.zeros = malloc((size_t)(n * zb));
    cr_assert(s.b && s.scales && s.fzeros && s.zeros);
    for (int64_t i = 0; i < n * k; i++)
        s.b[i / 2] |= (uint8_t)(q[i] << (i % 2 * 4));
    /* Padding nibbles of the packed zero points hold garbage (0xF). */
    memset(s.zeros, 0xFF, (size_t)(n * zb));
    for (int64_t j = 0; j < n; j++)
        for (int64_t b = 0; b < s.blocks; b++) {
            int64_t c = j * s.blocks + b;
            int bf = f->scale == OG_QSCALE_BF16;
            s.scales[c] = bf ? BF16_SCALES[c % 10] : F16_SCALES[c % NF16];
            s.fzeros[c] = bf ? BF16_ZEROS[c % 7] : F16_ZEROS[c % 7];
            unsigned z = (unsigned)(c * 5 + 3) % 16;
            uint8_t *p = s.zeros + j * zb + b / 2;
            *p = (uint8_t)((*p & ~(15 << (b % 2 * 4))) | z << (b % 2 * 4));
        }
    return s;
}

static void nbits_free(nbits_src *s)
{
    free(s->b);
    free(s->scales);
    free(s->fzeros);
    free(s->zeros);
}

static void nbits_values(const nbits_src *s, const uint8_t *q, float *out)
{
    int64_t block = s->k / s->blocks, zb = (s->blocks + 1) / 2;
    for (int64_t j = 0; j < s->n; j++)
        for (int64_t i = 0; i < s->k; i++) {
            int64_t b = i / block, c = j * s->blocks + b;
            double z = 8;
            if (s->f.zero == OG_QZERO_UINT4)
                z = (s->zeros[j * zb + b / 2] >> (b % 2 * 4)) & 15;
            else if (s->f.zero == OG_QZERO_FLOAT)
                z = ref_half(s->fzeros[c], s->f.scale);
            float d = to_f32(q[j * s->k + i] - z);
            out[j * s->k + i] = to_f32((double)d * ref_half(s->scales[c], s->f.scale));
        }
}

static int pack_nbits(const void *ctx, uint8_t *image, char *why, size_t len)
{
    const nbits_src *s = ctx;
    const void *zeros = s->f.zero == OG_QZERO_UINT4   ? (const void *)s->zeros
                        : s->f.zero == OG_QZERO_FLOAT ? (const void *)s->fzeros
                                                      : NULL;
    return og_qweights_from_matmulnbits(&s->f, s->n, s->k, s->b, s->scales, zeros, image, why, len);
}

Test(packers, matmulnbits)
{
    static const struct {
        og_qweights_format f;
        int64_t k;
    } cases[] = {
        {{OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_UINT4}, 96}, /* 3 blocks: a padding nibble */
        {{OG_QFORMAT_INT4, 32, OG_QSCALE_BF16, OG_QZERO_UINT4}, 160},
        {{OG_QFORMAT_INT4, 64, OG_QSCALE_F16, OG_QZERO_FLOAT}, 128},
        {{OG_QFORMAT_INT4, 32, OG_QSCALE_BF16, OG_QZERO_FLOAT}, 96},
        {{OG_QFORMAT_INT4, 128, OG_QSCALE_BF16, OG_QZERO_NONE}, 256},
        {{OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_NONE}, 96},
        {{OG_QFORMAT_INT4, 0, OG_QSCALE_F16, OG_QZERO_UINT4}, 64}, /* per channel: block_size K */
    };
    const int64_t n = 7;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const og_qweights_format *f = &cases[c].f;
        int64_t k = cases[c].k;
        char name[80];
        snprintf(name, sizeof name, "MatMulNBits ");
        config_name(f, name + strlen(name), sizeof name - strlen(name));
        uint8_t *q = random_codes(n, k, 0, 19 + c);
        nbits_src s = nbits_make(f, n, k, q);
        float *want = floats_alloc(n * k);
        nbits_values(&s, q, want);
        uint8_t *img = pack_and_check(f, n, k, pack_nbits, &s, want, 0, name);
        free(img);
        free(want);
        nbits_free(&s);
        free(q);
    }
}

Test(packers, q4_0_and_matmulnbits_agree)
{
    /* GGUF Q4_0 and MatMulNBits (group 32, float16, no zero points) of the
     * same codes and scales give one image. */
    const og_qweights_format f = {OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_NONE};
    const int64_t n = 3, k = 128;
    uint8_t *q = random_codes(n, k, 0, 23);
    size_t size;
    uint8_t *src = gguf_blocks(OG_GGUF_Q4_0, n, k, q, &size);
    nbits_src s = nbits_make(&f, n, k, q);
    for (int64_t c = 0; c < n * k / 32; c++)
        s.scales[c] = F16_SCALES[c % NF16]; /* gguf_blocks' */
    ref_layout l = ref_layout_of(&f, n, k);
    uint8_t *a = image_alloc(l.bytes), *b = image_alloc(l.bytes);
    char why[200] = "";
    cr_assert_eq(og_qweights_from_gguf(OG_GGUF_Q4_0, n, k, src, a, why, sizeof why), 0, "%s", why);
    cr_assert_eq(pack_nbits(&s, b, why, sizeof why), 0, "%s", why);
    cr_expect(memcmp(a, b, (size_t)l.bytes) == 0, "GGUF Q4_0 and MatMulNBits images differ");
    free(a);
    free(b);
    nbits_free(&s);
    free(src);
    free(q);
}

Test(packers, refusals)
{
    uint8_t src[64] = {0}, img[256];
    uint16_t scales[8] = {0};
    char why[200] = "";
    cr_expect_eq(og_qweights_from_gguf(3, 1, 32, src, img, why, sizeof why), -1);
    cr_expect(strstr(why, "GGUF type (3)") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_from_gguf(OG_GGUF_Q4_0, 1, 2881, src, img, why, sizeof why), -1);
    cr_expect(strstr(why, "K (2881)") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_from_gguf(OG_GGUF_Q4_0, 1, 32, NULL, img, why, sizeof why), -1);
    cr_expect(strstr(why, "NULL") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_from_mxfp4_planes(1, 32, src, NULL, img, why, sizeof why), -1);
    cr_expect(strstr(why, "scales") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_from_nvfp4(0, 32, src, src, img, why, sizeof why), -1);
    cr_expect(strstr(why, "N (0)") != NULL, "\"%s\"", why);
    og_qweights_format mx = MXFP4, u4 = {OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_UINT4},
                       none = {OG_QFORMAT_INT4, 32, OG_QSCALE_F16, OG_QZERO_NONE},
                       g48 = {OG_QFORMAT_INT4, 48, OG_QSCALE_F16, OG_QZERO_NONE};
    cr_expect_eq(og_qweights_from_matmulnbits(&mx, 1, 32, src, scales, NULL, img, why, sizeof why),
                 -1);
    cr_expect(strstr(why, "MatMulNBits") != NULL && strstr(why, "MXFP4") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_from_matmulnbits(&u4, 1, 32, src, scales, NULL, img, why, sizeof why),
                 -1);
    cr_expect(strstr(why, "zero points") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_from_matmulnbits(&none, 1, 32, src, scales, src, img, why, sizeof why),
                 -1);
    cr_expect(strstr(why, "zero points") != NULL, "\"%s\"", why);
    cr_expect_eq(og_qweights_from_matmulnbits(&g48, 1, 96, src, scales, NULL, img, why, sizeof why),
                 -1);
    cr_expect(strstr(why, "group (48)") != NULL, "\"%s\"", why);
}

/* ---- planted faults: each must make the comparison above fail ---- */

Test(faults, swapped_nibbles_are_caught)
{
    const int64_t n = 3, k = 96;
    const og_qweights_format q4 = gguf_format(OG_GGUF_Q4_0);
    uint8_t *q = random_codes(n, k, 0, 29);
    float *want = floats_alloc(n * k);
    gguf_values(OG_GGUF_Q4_0, n, k, q, want);
    /* A packer that took qs[i]'s high nibble for element i: the same as a
     * source with every qs byte's nibbles swapped. */
    size_t size;
    uint8_t *src = gguf_blocks(OG_GGUF_Q4_0, n, k, q, &size);
    for (size_t c = 0; c < size; c += 18)
        for (int i = 0; i < 16; i++)
            src[c + 2 + i] = (uint8_t)(src[c + 2 + i] >> 4 | src[c + 2 + i] << 4);
    ref_layout l = ref_layout_of(&q4, n, k);
    uint8_t *img = image_alloc(l.bytes);
    char why[200] = "";
    cr_assert_eq(og_qweights_from_gguf(OG_GGUF_Q4_0, n, k, src, img, why, sizeof why), 0, "%s",
                 why);
    long bad = image_mismatches(&q4, n, k, img, 0, want);
    cr_expect_gt(bad, n * k / 4, "Q4_0 with swapped nibbles: only %ld mismatches", bad);
    /* An image whose code bytes were written high nibble first (the even
     * element in the high nibble), from a right MatMulNBits packing. */
    nbits_src s = nbits_make(&q4, n, k, q);
    for (int64_t c = 0; c < n * k / 32; c++)
        s.scales[c] = F16_SCALES[c % NF16];
    uint8_t *good = pack_and_check(&q4, n, k, pack_nbits, &s, want, 0, "MatMulNBits as Q4_0");
    for (uint64_t i = 0; i < l.sat; i++)
        good[i] = (uint8_t)(good[i] >> 4 | good[i] << 4);
    bad = image_mismatches(&q4, n, k, good, 0, want);
    cr_expect_gt(bad, n * k / 4, "image with swapped nibbles: only %ld mismatches", bad);
    /* transformers' planes read with the GGUF split order. */
    uint8_t *blocks = malloc((size_t)(n * k / 2)), *scales = malloc((size_t)(n * k / 32));
    cr_assert(blocks && scales);
    planes_of_codes(n, k, q, blocks, scales);
    float *mxwant = floats_alloc(n * k);
    for (int64_t i = 0; i < n * k; i++)
        mxwant[i] = to_f32(ldexp(FP4[q[i]], (int)scales[i / 32] - 127));
    uint8_t *gsrc = malloc((size_t)(n * k / 32 * 17));
    cr_assert_not_null(gsrc);
    for (int64_t c = 0; c < n * k / 32; c++) {
        gsrc[c * 17] = scales[c];
        memcpy(gsrc + c * 17 + 1, blocks + c * 16, 16); /* interleaved bytes, taken as split */
    }
    cr_assert_eq(og_qweights_from_gguf(OG_GGUF_MXFP4, n, k, gsrc, img, why, sizeof why), 0, "%s",
                 why);
    bad = image_mismatches(&MXFP4, n, k, img, 0, mxwant);
    cr_expect_gt(bad, n * k / 4, "planes taken as GGUF order: only %ld mismatches", bad);
    free(gsrc);
    free(mxwant);
    free(blocks);
    free(scales);
    free(good);
    nbits_free(&s);
    free(img);
    free(src);
    free(want);
    free(q);
}

Test(faults, next_block_scale_is_caught)
{
    const int64_t n = 3, k = 96;
    const og_qweights_format q4 = gguf_format(OG_GGUF_Q4_0);
    uint8_t *q = random_codes(n, k, 0, 31);
    float *want = floats_alloc(n * k);
    gguf_values(OG_GGUF_Q4_0, n, k, q, want);
    /* A packer that took block c + 1's d for block c. */
    size_t size;
    uint8_t *src = gguf_blocks(OG_GGUF_Q4_0, n, k, q, &size);
    for (size_t c = 0; c + 18 < size; c += 18)
        memcpy(src + c, src + c + 18, 2);
    ref_layout l = ref_layout_of(&q4, n, k);
    uint8_t *img = image_alloc(l.bytes);
    char why[200] = "";
    cr_assert_eq(og_qweights_from_gguf(OG_GGUF_Q4_0, n, k, src, img, why, sizeof why), 0, "%s",
                 why);
    long bad = image_mismatches(&q4, n, k, img, 0, want);
    cr_expect_gt(bad, n * k / 2, "Q4_0 with the next block's scale: only %ld mismatches", bad);
    free(img);
    /* An image whose scale rows lost their padding (row j at j * blocks
     * bytes, not j * scale_row_bytes): rows after the first go wrong. */
    uint8_t *blocks = malloc((size_t)(n * k / 2)), *scales = malloc((size_t)(n * k / 32));
    cr_assert(blocks && scales);
    planes_of_codes(n, k, q, blocks, scales);
    float *mxwant = floats_alloc(n * k);
    for (int64_t i = 0; i < n * k; i++)
        mxwant[i] = to_f32(ldexp(FP4[q[i]], (int)scales[i / 32] - 127));
    planes_ctx pc = {n, k, blocks, scales};
    img = pack_and_check(&MXFP4, n, k, pack_planes, &pc, mxwant, 0, "transformers MXFP4");
    ref_layout ml = ref_layout_of(&MXFP4, n, k);
    memset(img + ml.sat, 0, (size_t)(n * ml.srow));
    memcpy(img + ml.sat, scales, (size_t)(n * k / 32));
    bad = image_mismatches(&MXFP4, n, k, img, 0, mxwant);
    cr_expect_gt(bad, k, "scale rows without padding: only %ld mismatches", bad);
    /* And the planes with each block given the next one's scale. */
    memmove(scales, scales + 1, (size_t)(n * k / 32 - 1));
    uint8_t *img2 = image_alloc(ml.bytes);
    cr_assert_eq(og_qweights_from_mxfp4_planes(n, k, blocks, scales, img2, why, sizeof why), 0,
                 "%s", why);
    bad = image_mismatches(&MXFP4, n, k, img2, 0, mxwant);
    cr_expect_gt(bad, n * k / 2, "planes with the next block's scale: only %ld mismatches", bad);
    free(img2);
    free(img);
    free(mxwant);
    free(blocks);
    free(scales);
    free(src);
    free(want);
    free(q);
}
