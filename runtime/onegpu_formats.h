/*
 * onegpu number formats: conversions between float32 and the narrow formats
 * that GEMM operands are stored in, on the host, bit for bit.
 *
 * Pure C, no Vulkan, no state: every function is a pure function of its
 * arguments and safe from any thread. docs/number-formats.md tabulates the
 * formats. Where the behaviour comes from:
 *   IEEE 754-2019           binary16 (float16), binary32 (float32), the four
 *                           rounding-direction attributes, NaN payloads (6.2.3);
 *   bfloat16, TF32          binary32's exponent with 7 and 10 fraction bits;
 *   OCP OFP8 (v1.0, 2023)   FP8 E4M3 and E5M2;
 *   OCP MX v1.0 (2023)      FP6 E2M3 and E3M2, FP4 E2M1, the E8M0 scale and
 *                           the 32-element MX blocks (section 6.3: conversion);
 *   NVIDIA NVFP4            16 E2M1 elements, an E4M3 block scale and a
 *                           float32 tensor scale.
 *
 * Conventions, the same for every format:
 *   - Codes are sign-magnitude: the top bit of the format is the sign, the
 *     rest is (biased exponent, fraction). A format narrower than 8 bits sits
 *     in the low bits of its uint8_t; the high bits are zero on output and
 *     ignored on input.
 *   - Decoding is exact: every code's value is a float32 (NaN codes give a
 *     quiet float32 NaN of the same sign).
 *   - Encoding rounds once, from the exact value of the float32 argument
 *     (never through an intermediate format), so it never double-rounds.
 *   - -0 encodes as the format's -0, and a result that rounds to zero keeps
 *     the argument's sign, as in IEEE 754 (E8M0, which has neither sign nor
 *     zero, aside).
 *   - "Nearest even" is IEEE 754's roundTiesToEven: the nearest
 *     representable value, and of two equally near the one whose code is
 *     even (its last fraction bit is 0).
 */
#ifndef ONEGPU_FORMATS_H
#define ONEGPU_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* IEEE 754's rounding-direction attributes (4.3): to nearest with ties to
 * even (the default), toward zero, toward +Inf (up) and toward -Inf (down).
 * A value outside the enum rounds to nearest even. */
typedef enum og_rounding {
    OG_ROUND_NEAREST_EVEN = 0,
    OG_ROUND_TOWARD_ZERO = 1,
    OG_ROUND_UP = 2,
    OG_ROUND_DOWN = 3
} og_rounding;

/* What FP8 encoders do with a finite value whose rounded magnitude exceeds
 * the format's largest finite value (OFP8 defines both modes).
 * Non-saturating gives E4M3's NaN and E5M2's infinity; saturating gives the
 * largest finite value of the same sign. Only finite arguments overflow:
 * infinities and NaNs are special values, not large numbers. */
typedef enum og_overflow { OG_OVERFLOW_NONSATURATING = 0, OG_OVERFLOW_SATURATING = 1 } og_overflow;

/* ---- float16 (IEEE 754 binary16) ----
 * Bit 15 sign, bits 14..10 exponent (bias 15), bits 9..0 fraction. Largest
 * 65504 (0x7BFF), smallest normal 2^-14 (0x0400), smallest subnormal 2^-24
 * (0x0001), +Inf 0x7C00, NaN any 0x7C01..0x7FFF with its sign. */

/* float32 -> float16, rounded in direction r; subnormal results are rounded
 * like any other (gradual underflow, never flushed). Overflow follows IEEE
 * 754 (7.4): to nearest gives Inf from 65520 (the midpoint between 65504 and
 * 2^16) up, toward zero gives +-65504, up gives +Inf for positive and
 * -65504 for negative, down the mirror image. +-Inf stays +-Inf. NaN gives
 * a quiet NaN of the same sign keeping the top 9 payload bits (IEEE 754
 * 6.2.3): the result is never an infinity however the payload looks. */
uint16_t og_f32_to_f16(float x, og_rounding r);

/* float16 -> float32, exact. A NaN keeps its sign and payload (in the top
 * fraction bits) and comes back quiet. */
float og_f16_to_f32(uint16_t h);

/* ---- bfloat16 ----
 * The top 16 bits of a float32: bit 15 sign, bits 14..7 exponent (bias 127),
 * bits 6..0 fraction. Largest 0x1.FEp127 (0x7F7F), smallest normal 2^-126
 * (0x0080), smallest subnormal 2^-133 (0x0001), +Inf 0x7F80, NaN any
 * 0x7F81..0x7FFF with its sign. */

/* float32 -> bfloat16, rounded in direction r, with the same overflow rules
 * as og_f32_to_f16 (to nearest: Inf from 0x1.FFp127 up, which rounds the
 * largest float32 to Inf; toward zero: 0x7F7F). NaN gives a quiet NaN of the
 * same sign keeping the top 6 payload bits, never an infinity or a zero:
 * the classic add-a-bias-and-truncate conversion carries a NaN's fraction
 * into the exponent (0x7F800001 -> +Inf) or the sign (0x7FFF8C22 -> -0);
 * here NaNs never take the rounding path. */
uint16_t og_f32_to_bf16(float x, og_rounding r);

/* bfloat16 -> float32, exact: the code becomes the top half of the float32;
 * a NaN comes back quiet. */
float og_bf16_to_f32(uint16_t h);

/* ---- TF32 ----
 * Not a storage format but the operand precision of tensor cores: binary32's
 * 8-bit exponent (bias 127) with 10 fraction bits, here kept in a float32
 * whose low 13 fraction bits are zero. Largest 0x1.FF8p127, smallest normal
 * 2^-126, smallest subnormal 2^-136.
 *
 * x rounded to TF32 in direction r, with the overflow rules of
 * og_f32_to_f16 (to nearest: Inf from 0x1.FFCp127 up). OG_ROUND_NEAREST_EVEN
 * breaks ties to even, IEEE 754's default. NVIDIA's own conversion,
 * cvt.rna.tf32.f32, breaks ties away from zero instead, and tensor cores fed
 * unconverted float32 data simply drop the low 13 bits (OG_ROUND_TOWARD_ZERO
 * reproduces that). We chose ties to even because it is unbiased (ties away
 * pushes every tie's magnitude up, a drift that accumulates over long sums),
 * it is the rule of every other conversion here, and it is what a reference
 * written with IEEE arithmetic gets; the two differ only on exact ties (low
 * 13 bits 0x1000 with an even kept part). NaN stays NaN: sign kept, quiet,
 * fraction cut to its top 10 bits. */
float og_f32_round_tf32(float x, og_rounding r);

/* ---- FP8 E4M3 (OFP8) ----
 * Bit 7 sign, bits 6..3 exponent (bias 7), bits 2..0 fraction. No
 * infinities; the all-ones exponent holds normal numbers except 0x7F and
 * 0xFF, the only NaNs. Largest 448 (0x7E), smallest normal 2^-6 (0x08),
 * smallest subnormal 2^-9 (0x01).
 *
 * float32 -> E4M3: rounds to nearest even first, then applies o to a result
 * above 448 (so 464, a tie between 448 and the unencodable 480, gives 448,
 * and anything above 464 overflows): non-saturating gives NaN (0x7F/0xFF by
 * sign), saturating +-448. +-Inf gives NaN (0x7F / 0xFF) in both modes: the
 * format has no infinity and saturating an infinity would invent a finite
 * value. NaN gives NaN of the same sign. */
uint8_t og_f32_to_e4m3(float x, og_overflow o);
/* E4M3 -> float32, exact; 0x7F/0xFF give a quiet NaN of that sign. */
float og_e4m3_to_f32(uint8_t v);

/* ---- FP8 E5M2 (OFP8) ----
 * Bit 7 sign, bits 6..2 exponent (bias 15), bits 1..0 fraction: IEEE-like,
 * float16 with 8 fraction bits dropped. Largest 57344 (0x7B), smallest normal
 * 2^-14 (0x04), smallest subnormal 2^-16 (0x01), +Inf 0x7C, NaN 0x7D..0x7F
 * with the sign.
 *
 * float32 -> E5M2, rounded to nearest even. A finite value whose rounded
 * magnitude exceeds 57344 (from 61440 up) gives +-Inf when non-saturating
 * and +-57344 when saturating. +-Inf stays +-Inf in both modes: the format
 * represents it exactly, and saturation is for finite values that rounding
 * pushed out of range (the same split as E4M3: specials stay special). NaN
 * gives a quiet NaN of the same sign, 0x7E or 0x7F: its last bit is the
 * payload bit just below float32's quiet bit. */
uint8_t og_f32_to_e5m2(float x, og_overflow o);
/* E5M2 -> float32, exact; 0x7C/0xFC give +-Inf, 0x7D..0x7F a quiet NaN of
 * that sign with the code's payload. */
float og_e5m2_to_f32(uint8_t v);

/* ---- FP6 E2M3 and E3M2, FP4 E2M1 (OCP MX v1.0 element types) ----
 * No infinities and no NaN: every code is a finite number.
 *   E2M3: bit 5 sign, bits 4..3 exponent (bias 1), bits 2..0 fraction;
 *         largest 7.5 (0x1F), smallest normal 1, smallest subnormal 0.125.
 *   E3M2: bit 5 sign, bits 4..2 exponent (bias 3), bits 1..0 fraction;
 *         largest 28 (0x1F), smallest normal 0.25, smallest subnormal 0.0625.
 *   E2M1: bit 3 sign, bits 2..1 exponent (bias 1), bit 0 fraction; the
 *         magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 (largest 0x7).
 * float32 -> these formats rounds to nearest even and saturates: a result
 * above the largest value, and +-Inf, give the largest value of that sign.
 * NaN, which has no encoding (the MX spec leaves it to the implementation),
 * gives zero with the NaN's sign bit: a value that cannot be mistaken for a
 * large number. Code that must keep NaN uses the MX blocks below, whose
 * scale carries it. */
uint8_t og_f32_to_e2m3(float x);
float og_e2m3_to_f32(uint8_t v);
uint8_t og_f32_to_e3m2(float x);
float og_e3m2_to_f32(uint8_t v);
uint8_t og_f32_to_e2m1(float x);
float og_e2m1_to_f32(uint8_t v);

/* ---- E8M0 (OCP MX v1.0 scale) ----
 * An 8-bit biased exponent, no sign, no fraction, no zero: code v is
 * 2^(v - 127) for v in 0..254 (2^-127 .. 2^127), and 0xFF is NaN.
 *
 * float32 -> E8M0 in direction r between the two powers of two around x
 * (nearest even: 1.5 * 2^k is the tie, broken to the even code). Since there
 * is no zero, positive values below 2^-127 give 0x00 and values from 2^127 up
 * give 0xFE in every direction (the format's range saturates). x <= 0 (-0
 * too), +Inf and NaN have no power of two to stand for and give 0xFF (NaN). */
uint8_t og_f32_to_e8m0(float x, og_rounding r);
/* E8M0 -> float32: 2^(v - 127), exact (2^-127 is a float32 subnormal);
 * 0xFF gives a quiet NaN. */
float og_e8m0_to_f32(uint8_t v);

/* ---- MX blocks (OCP MX v1.0) ----
 * 32 elements of one element type sharing an E8M0 scale X: element i is
 * X * code_i. Codes are returned one per byte in the low bits (pack them as
 * the storage layout needs). */
typedef enum og_mx_element {
    OG_MX_E4M3,
    OG_MX_E5M2,
    OG_MX_E2M3,
    OG_MX_E3M2,
    OG_MX_E2M1
} og_mx_element;
#define OG_MX_BLOCK 32

/* Encodes x as section 6.3 of the MX spec does: the shared exponent is
 * floor(log2(amax)) - emax, with amax the largest |x_i| and emax the element
 * type's largest exponent (E4M3 8, E5M2 15, E2M3 2, E3M2 4, E2M1 2), clamped
 * below at -127 (E8M0's range: a block of tiny values keeps what it can);
 * *scale is that exponent plus 127. Each code is x_i / 2^exponent rounded to
 * nearest even and saturated (E4M3 and E5M2 in OG_OVERFLOW_SATURATING mode),
 * in one rounding from the exact quotient. A block of zeros gets scale 0x00
 * (2^-127, the clamp applied to log2(0) = -Inf) and zero codes, signs kept.
 * A block holding a NaN or an infinity gets scale 0xFF (NaN), as in the MX
 * reference code, where an infinite amax overflows the scale's range; its
 * codes are all zero. */
void og_mx_encode(og_mx_element t, const float x[OG_MX_BLOCK], uint8_t *scale,
                  uint8_t codes[OG_MX_BLOCK]);
/* out_i = 2^(scale - 127) * value(code_i) in float32: exact, except that a
 * scale larger than og_mx_encode gives for the element type can overflow to
 * +-Inf; scale 0xFF makes every element NaN. */
void og_mx_decode(og_mx_element t, uint8_t scale, const uint8_t codes[OG_MX_BLOCK],
                  float out[OG_MX_BLOCK]);

/* ---- NVFP4 (NVIDIA) ----
 * 16 E2M1 elements, packed two per byte (element 2i in the low nibble,
 * 2i + 1 in the high nibble), sharing an E4M3 block scale, under a float32
 * tensor scale for the whole tensor: element i is
 * value(code_i) * value(scale_e4m3) * tensor_scale. */
#define OG_NVFP4_BLOCK 16

/* The block scale is E4M3(amax / (6 * tensor_scale)), nearest even,
 * saturating (6 is E2M1's largest value), computed from the exact quotient;
 * each code is E2M1(x_i / (tensor_scale * block scale)), nearest even,
 * saturating, also from the exact quotient. A block whose scale rounds to
 * zero (all zeros, or amax at most 2^-10 * 6 * tensor_scale) gets zero
 * codes, signs kept.
 * A block holding a NaN or an infinity, or a tensor_scale that is not a
 * positive finite number, gets the NaN scale 0x7F and zero codes. */
void og_nvfp4_encode(const float x[OG_NVFP4_BLOCK], float tensor_scale, uint8_t *scale_e4m3,
                     uint8_t packed[OG_NVFP4_BLOCK / 2]);
/* out_i = value(code_i) * value(scale_e4m3) * tensor_scale, rounded once to
 * float32; a NaN scale (0x7F or 0xFF) makes every element NaN. */
void og_nvfp4_decode(float tensor_scale, uint8_t scale_e4m3,
                     const uint8_t packed[OG_NVFP4_BLOCK / 2], float out[OG_NVFP4_BLOCK]);

/* The tensor scale NVIDIA's recipe derives from the tensor's largest
 * magnitude: |amax| / (6 * 448), so that the largest block scale is E4M3's
 * largest value, rounded up to a float32 so that no block scale saturates.
 * Never returns zero: amax = 0 (or a quotient below the float32 normals)
 * gives FLT_MIN, which encodes any block of zeros. NaN and Inf pass through
 * (og_nvfp4_encode then marks every block NaN). */
float og_nvfp4_tensor_scale(float amax);

/* ---- Low-bit weight matrices (og_qgemm, onegpu.h) ----
 * A weight matrix W of N rows (output features) by K weights (the reduction
 * dimension), stored as onegpu's one layout for every format: a structure
 * of arrays in one contiguous image of og_qweights_layout.bytes bytes,
 * little-endian, every row of every plane starting on a 16-byte boundary:
 *
 *   codes plane   at byte 0:          row j at j * code_row_bytes;
 *   scales plane  at byte scales_at:  row j at scales_at + j * scale_row_bytes;
 *   zero points   at byte zeros_at:   row j at zeros_at + j * zero_row_bytes
 *                                     (INT4 with zero points only; else
 *                                     zero_row_bytes is 0 and zeros_at is
 *                                     the end of the scales, = bytes).
 *
 * Codes are packed along K in 32-bit words: a 4-bit code k of a row sits in
 * word k / 8, bits 4 * (k % 8) .. +3 (as bytes: byte k / 2, the even element
 * in the low nibble, as transformers and ONNX Runtime's MatMulNBits store
 * them); an 8-bit code k in byte k. Row j's block b covers weights
 * b * block .. b * block + block - 1 and has scale b of scale row j (and
 * zero point b of zero-point row j). A row's unused tail bytes are zero.
 *
 *   format  block           code             scale (bytes)        zero point    weight value
 *   MXFP4   32              E2M1 (4 bits)    E8M0 (1)              -            e2m1(q) * 2^(s - 127)
 *   NVFP4   16              E2M1 (4 bits)    UE4M3 (1)             -            e2m1(q) * e4m3(s) * tensor_scale
 *   INT4    group: 32, 64,  uint4 (4 bits)   float16 or            none (8),    (q - z) * s
 *           128 or K                         bfloat16 (2)          uint4 or s's type
 *   Q8_0    32              int8 (8 bits)    float16 (2)           -            q * s
 *   Q4_K    256 (8 x 32)    uint4 (4 bits)   16 (see below)        -            (d * sc) * q - dmin * m
 *   Q6_K    256 (16 x 16)   6 bits           18 (see below)        -            (d * sc) * (q - 32)
 *
 * GGUF's K-quants have a super-block of 256 weights (so K must be a
 * multiple of 256) with float16 scales d (and dmin) and small integer
 * scales per sub-block. Q4_K: a scale row holds per super-block GGUF's 16
 * head bytes as they are: float16 d, float16 dmin, then 12 bytes of 6-bit
 * scales sc and mins m for its 8 sub-blocks of 32 weights, packed as ggml's
 * get_scale_min_k4 reads them (sub-block s < 4: sc = byte s & 63, m = byte
 * s + 4 & 63; s >= 4: sc = (byte s + 4 & 15) | (byte s - 4 >> 6) << 4, m =
 * (byte s + 4 >> 4) | (byte s >> 6) << 4). Codes are 4-bit, in the order
 * above (not GGUF's). Q6_K: a code row is the low 4 bits of every code (4-bit
 * order above) followed, at byte K / 2, by the high 2 bits (code k in byte
 * K / 2 + k / 4, bits 2 * (k % 4) .. +1); a scale row holds the 16 int8
 * sub-block scales sc of every super-block (16 weights each), then, at byte
 * 16 * K / 256, every super-block's float16 d. d * sc and dmin * m are
 * exact in float32, so a weight is one rounding of the exact value, as
 * ggml's dequantize_row_q4_K and _q6_K compute it.
 *
 * Scales are bytes (E8M0, UE4M3: byte b of the row) or 16-bit values (2
 * bytes each, little-endian). uint4 zero points pack two to a byte, block 2i
 * in the low nibble (MatMulNBits' order); float zero points are 16-bit
 * values of the scale's type. NVFP4's float32 tensor scale is not stored:
 * it is an argument of the call. K must be a multiple of 32 and of the block
 * (INT4's group; 0 means one group a row: block = K). Stacked matrices (the
 * experts of a mixture) follow one another at a stride of at least `bytes`,
 * a multiple of 16.
 *
 * Weight values are as the table says, each one IEEE 754 float32 rounding
 * of the exact product: E8M0 0xFF and the E4M3 NaN codes 0x7F / 0xFF make
 * their block NaN; a product past float32's range rounds to +-Inf (MXFP4's
 * scale 0xFE with a code worth 2 or more: 0x4-0x7, 0xC-0xF). INT4 computes
 * (float)q - z first, in float32, then its product with s: exact in one
 * rounding with whole zero points (none, uint4, or a float zero point
 * without fraction), and two roundings, as the kernels do, when a float
 * zero point has a fraction. og_qweights_decode is the reference decoder of
 * the kernels. */

/* Weights in a super-block of GGUF's K-quants (ggml's QK_K). */
#define OG_QK_K 256

typedef enum og_qformat {
    OG_QFORMAT_MXFP4 = 0, /* OCP MX v1.0 FP4: 4.25 bits a weight */
    OG_QFORMAT_NVFP4 = 1, /* NVIDIA NVFP4: 4.5 bits a weight, plus a float32 per tensor */
    OG_QFORMAT_INT4 = 2,  /* integer groups (GPTQ, AWQ, MatMulNBits, GGUF Q4_0) */
    OG_QFORMAT_Q8_0 = 3,  /* GGUF's Q8_0: 8.5 bits a weight */
    OG_QFORMAT_Q4_K = 4,  /* GGUF's Q4_K: 4.5 bits a weight */
    OG_QFORMAT_Q6_K = 5   /* GGUF's Q6_K: 6.5625 bits a weight */
} og_qformat;

/* INT4's scale type. */
typedef enum og_qscale { OG_QSCALE_F16 = 0, OG_QSCALE_BF16 = 1 } og_qscale;

/* INT4's zero points: none (every group's zero point is 8, symmetric
 * quantisation), a uint4 per group, or a 16-bit float of the scale's type
 * per group. */
typedef enum og_qzero { OG_QZERO_NONE = 0, OG_QZERO_UINT4 = 1, OG_QZERO_FLOAT = 2 } og_qzero;

/* A weight format. group, scale and zero are INT4's and must be 0 for the
 * other formats. */
typedef struct og_qweights_format {
    og_qformat format;
    int group; /* INT4: 32, 64, 128, or 0 for one group a row (per channel) */
    og_qscale scale;
    og_qzero zero;
} og_qweights_format;

/* Where the planes of an N x K matrix lie (bytes). */
typedef struct og_qweights_layout {
    int64_t block;     /* weights one scale covers */
    int64_t blocks;    /* blocks of a row: K / block */
    int code_bits;     /* 4, 6 or 8 */
    int scale_bytes;   /* bytes of one block's scales: 1 or 2; Q4_K 16, Q6_K 18 */
    uint64_t code_row_bytes, scales_at, scale_row_bytes, zeros_at, zero_row_bytes;
    uint64_t bytes;    /* the whole image; a multiple of 16 */
} og_qweights_layout;

/* Fills *out for an n x k matrix of format f. Returns 0, or -1 with the
 * reason in why (len bytes; "qweights: K (2881) is not a multiple of 32"):
 * an unknown format, scale or zero-point kind, INT4 fields set for another
 * format, a group other than 0, 32, 64 or 128, n or k below 1, K not a
 * multiple of 32, of the group or (K-quants) of 256, or an image past 2^62
 * bytes. */
int og_qweights_layout_of(const og_qweights_format *f, int64_t n, int64_t k,
                          og_qweights_layout *out, char *why, size_t len);

/* Decodes the n x k matrix in image (og_qweights_layout_of's layout) to
 * float32, row-major n x k, by the table above: the kernels' reference.
 * tensor_scale is NVFP4's (ignored otherwise). Returns 0, or -1 (with why)
 * where og_qweights_layout_of refuses the shape. */
int og_qweights_decode(const og_qweights_format *f, int64_t n, int64_t k, const uint8_t *image,
                       float tensor_scale, float *w, char *why, size_t len);

/* Encodes the row-major n x k float32 matrix w into image (zero-filled
 * first): MXFP4 by og_mx_encode, NVFP4 by og_nvfp4_encode with tensor_scale;
 * INT4 per group with the scale's type rounded to nearest even: symmetric
 * (zero point 8, s = amax / 7, q = clamp(round(x / s) + 8, 0, 15)) without
 * zero points, else asymmetric (s = (max - min) / 15, z = round(-min / s)
 * clamped to 0..15, q = clamp(round(x / s) + z, 0, 15), where min <= 0 <=
 * max: the group's range extended to hold zero); Q8_0 as GGUF does
 * (ggml's quantize_row_q8_0_ref: d = amax / 127 and id = 1 / d in float32,
 * s = d as float16, q = roundf(x * id)); the K-quants by a plain
 * min-max rule (not ggml's search; models arrive quantised): Q4_K's sub-block
 * scale (max - min) / 15 and min -min (the range extended to hold zero),
 * Q6_K's sub-block scale amax / 31, each quantised against
 * d = largest / 63 (Q6_K: / 127) with d float16, nearest even, the codes then
 * rounded from the decoded d * sc and dmin * m. INT4's quotients are taken in
 * double and s rounded to float32, then to its type; a scale past the
 * type's range saturates to its largest finite value, and x / s rounds to
 * nearest, ties to even (Q8_0's roundf: ties away from zero, as ggml). A
 * group whose scale is 0 gets codes 8 (zero point 8). A group or block
 * holding a NaN or an infinity gets a NaN scale (and zero point 8, codes 8;
 * Q8_0: codes 0), so that it decodes to NaN, as MX and NVFP4 blocks do. For
 * tests and benchmarks: models arrive quantised, through the packers below.
 * Returns 0, or -1. */
int og_qweights_encode(const og_qweights_format *f, int64_t n, int64_t k, const float *w,
                       float tensor_scale, uint8_t *image, char *why, size_t len);

/* The text form of a format: "mxfp4", "nvfp4", "q8_0", "q4_k", "q6_k", or for INT4
 * "int4" then, each optional and in any order, ":gN" (group 32, 64 or 128;
 * default 32) or ":gc" (one group a row), ":f16" (default) or ":bf16" (the
 * scale's type), ":none" (default), ":uint4" or ":float" (zero points).
 * og_qweights_format_parse fills *out from text and returns 0, or -1 for
 * any other text (an option on a format other than INT4, a group the layout
 * refuses). og_qweights_format_name writes the canonical form (INT4 with
 * every option: "int4:g128:f16:uint4") into buf (len bytes, terminated):
 * 0, or -1 for a format outside the enums or a buffer too short. ogtune's
 * --weights takes these texts; a tuning record's op is "qgemm:" and the
 * canonical form. */
int og_qweights_format_parse(const char *text, og_qweights_format *out);
int og_qweights_format_name(const og_qweights_format *f, char *buf, size_t len);

/* ---- Packers: the orderings models ship in -> og_qweights_layout ----
 * Each writes the whole image (og_qweights_layout_of(f, n, k).bytes bytes,
 * padding zeroed) from the source arrays, which hold the n rows one after
 * another, and returns 0, or -1 (with why) for a shape the layout refuses. */

/* GGUF (ggml) blocks of a row-major n x k tensor, block after block along
 * each row: Q8_0 (34 bytes: float16 d, 32 int8 qs) -> Q8_0; Q4_0 (18 bytes:
 * float16 d, 16 bytes qs; element i in the low nibble of qs[i], element
 * i + 16 in its high nibble; value (q - 8) * d) -> INT4, group 32, float16
 * scales, no zero points; MXFP4 (17 bytes: E8M0 e, 16 bytes qs, the same
 * nibble order as Q4_0) -> MXFP4. Values are ggml's (dequantize_row_*)
 * but for two MXFP4 codes: e = 0xFF, which ggml reads as 2^128, is NaN
 * here (OCP MX), and code 0x8, +0 in ggml's table, is -0 here. Q4_K
 * (144 bytes: float16 d, float16 dmin, 12 bytes of scales and mins, 128
 * bytes qs; in each 64 weights j..j + 63, weight j + l in the low nibble of
 * qs[j / 2 + l] and j + 32 + l in its high nibble) -> Q4_K; Q6_K (210
 * bytes: ql[128], qh[64], int8 scales[16], float16 d; in each half of 128
 * weights h, for l < 32, weights h + l, + 32, + 64, + 96 take the low
 * nibble of ql[h / 2 + l], the low of ql[h / 2 + 32 + l], the high of
 * ql[h / 2 + l], the high of ql[h / 2 + 32 + l], and bits 0-1, 2-3, 4-5, 6-7
 * of qh[h / 4 + l]) -> Q6_K, as ggml's dequantize_row_q4_K and _q6_K read
 * them. */
typedef enum og_gguf_type {
    OG_GGUF_Q4_0 = 2,
    OG_GGUF_Q8_0 = 8,
    OG_GGUF_Q4_K = 12,
    OG_GGUF_Q6_K = 14,
    OG_GGUF_MXFP4 = 39
} og_gguf_type;
int og_qweights_from_gguf(og_gguf_type type, int64_t n, int64_t k, const uint8_t *blocks,
                          uint8_t *image, char *why, size_t len);

/* MXFP4 as transformers stores gpt-oss's experts: blocks, n x (k / 32) x 16
 * bytes, element 2i of a block in the low nibble of byte i and 2i + 1 in the
 * high; scales, n x (k / 32) E8M0 bytes. (transformers reads scale 0xFF as
 * 2^128; it is NaN here.) */
int og_qweights_from_mxfp4_planes(int64_t n, int64_t k, const uint8_t *blocks,
                                  const uint8_t *scales, uint8_t *image, char *why, size_t len);

/* NVFP4 as og_nvfp4_encode writes it: packed, n x (k / 2) bytes (element 2i
 * in the low nibble), and scales, n x (k / 16) E4M3 bytes. */
int og_qweights_from_nvfp4(int64_t n, int64_t k, const uint8_t *packed, const uint8_t *scales,
                           uint8_t *image, char *why, size_t len);

/* ONNX Runtime's MatMulNBits with bits = 4 (f->format INT4, f->group its
 * block_size): b, n x blocks x (group / 2) bytes (element 2i of a block in
 * the low nibble); scales, n x blocks 16-bit values of f->scale's type;
 * zeros (f->zero): NULL for none; uint8, n x ceil(blocks / 2) bytes, block
 * 2i in the low nibble (OG_QZERO_UINT4); or n x blocks 16-bit values of the
 * scale's type (OG_QZERO_FLOAT). The padding nibble after an odd count of
 * uint4 zero points is zeroed. Zero points must be given exactly when
 * f->zero asks for them. Not taken: bits other than 4, float32 scales or
 * zero points, and K that is not a multiple of the block (MatMulNBits pads
 * the last block; this layout refuses it). */
int og_qweights_from_matmulnbits(const og_qweights_format *f, int64_t n, int64_t k,
                                 const uint8_t *b, const uint16_t *scales, const void *zeros,
                                 uint8_t *image, char *why, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* ONEGPU_FORMATS_H */
