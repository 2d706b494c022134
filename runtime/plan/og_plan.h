/* The runtime's middle layer (not installed): a call is checked, its kernel
 * selected, and planned, as plain data computed from the arguments and the
 * device's capabilities (og_limits) without a Vulkan call, so every rule can
 * be tested without a device. The record layer (../record) turns a plan
 * into commands. Messages go to err, OG_ERROR_MAX bytes. */
#ifndef OG_PLAN_H
#define OG_PLAN_H

#include "../vk/og_vk.h"
#include "og_family.h"

/* The selection calls (og_select and its kin), og_choice, og_conv_shape and
 * the rules the tuner shares are declared in ../og_tuning.h (through
 * og_vk.h). */

/* ceil(a / b) for b > 0. */
static inline uint64_t og_ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/* What a GEMM object fixes for all its calls. */
typedef struct og_gemm_config {
    og_dtype a_type, b_type;
    og_mode mode;
    int recover; /* recovered float32: the residual shift s; 0 for native products */
    int scaled;  /* ... with power-of-two row and column scaling */
    og_dialect dialect;
    uint64_t scratch_bytes; /* split-k planes: OG_SCRATCH_BYTES (tests lower it) */
} og_gemm_config;

/* The int32 exponents of the recovered scheme's row and column scaling:
 * (rows + N) * products of one piece. */
#define OG_EXPONENT_BYTES (4u << 20)

/* ---- Checks (og_check.c) ---- */

/* Checks a GEMM call of a config (shape, leading dimensions, offsets,
 * strides, buffer ranges for its element types, 32-bit indexing, bias and
 * activation) in 64-bit arithmetic. On success fills push for the whole
 * product, with FP8 scales folded into alpha and wrapped buffers' skews in
 * the element offsets. The message names the dimension. */
og_status og_gemm_check(const og_gemm_config *cfg, const og_limits *lim, char *err,
                        const og_gemm_args *args, og_push *push);

/* Checks an Int8Gemm call (as og_gemm_check, plus types, zero points, output
 * and column scales) and fills push. */
og_status og_int8gemm_check(const og_limits *lim, char *err, const og_int8gemm_args *args,
                            og_push *push);

/* The checks of a product (og_check.c): the fields (non-negative, 32-bit),
 * the leading dimensions, the epilogue, the batch's outputs apart, and A,
 * B and C inside their buffers and bindings, in 64-bit arithmetic; fills
 * push with the whole product's fields. Elements of a_bytes and b_bytes;
 * b_bytes 0 leaves B (and ldb) to the caller. */
og_status og_check_product(const og_limits *lim, char *err, const char *op, uint64_t a_bytes,
                           uint64_t b_bytes, const og_gemm_args *g, og_push *push);

/* The push constants og_check_product fills for a product of M, N > 0
 * that has passed its checks, or a check that covers them (a 1x1
 * convolution's GEMM after og_conv_check): computed, not checked. */
void og_product_push(const og_limits *lim, uint64_t a_bytes, uint64_t b_bytes,
                     const og_gemm_args *g, og_push *push);

/* Checks a low-bit weight product of A of a_type and weights of format f
 * (og_qgemm_check.c; onegpu.h, og_qgemm_encode) and fills push as
 * templates/qgemm_decode.tmpl reads it, and *shape with the call as a
 * GEMM's arguments (B the weights counted in 32-bit words). */
og_status og_qgemm_check(const og_limits *lim, char *err, og_dtype a_type,
                         const og_qweights_format *f, const og_qgemm_args *args,
                         og_gemm_args *shape, og_push *push);

/* Checks the C region and the epilogue of an elementwise call (bias add or
 * activation) and fills push. */
og_status og_elementwise_check(const og_limits *lim, char *err, const og_gemm_args *args,
                               og_push *push);

/* The checks calls share (og_check.c): an operand of buf with elem_bytes
 * elements at off, batch x (rows x cols with leading dimension ld), stride
 * apart, lies in its buffer, spans at most 2^32 elements from its binding's
 * start and fits maxStorageBufferRange (or may be read by address: A and
 * B); messages begin "op: name". */
og_status og_check_operand(const og_limits *lim, char *err, const char *op, const char *name,
                           const og_buffer *buf, uint64_t elem_bytes, int64_t off, int64_t batch,
                           int64_t stride, int64_t rows, int64_t ld, int64_t cols);

/* A named dimension of a call. */
typedef struct og_field {
    const char *name;
    int64_t v;
} og_field;

/* Every field is non-negative and, but for the offsets (which bindings
 * and addresses absorb), fits the kernels' 32-bit indexing. */
og_status og_check_fields(char *err, const char *op, const og_field *f, size_t n);

/* A float32 vector read at offset + j for every column j < n (the bias, the
 * column scales). */
og_status og_check_columns(const og_limits *lim, char *err, const char *op, const char *name,
                           const og_buffer *buf, int64_t offset, int64_t n);

/* Refuses (OG_ERROR_UNSUPPORTED, naming op and N) a grid of gx workgroups
 * along x, N's direction, beyond the device's maxComputeWorkGroupCount[0]. */
og_status og_grid_x_check(const og_limits *lim, char *err, const char *op, int64_t n, uint64_t gx);

/* Refuses (OG_ERROR_UNSUPPORTED, naming op and K) a kernel whose invocations
 * would run more loop iterations for a k range of k_len terms than the
 * device lets one invocation run (og_limits.max_loop_iterations: lavapipe),
 * which would end its loops early and leave C silently wrong. */
og_status og_loops_check(const og_limits *lim, char *err, const char *op, const og_kernel_key *key,
                         int64_t k, uint64_t k_len);

/* ---- Convolution (og_conv_check.c, og_conv_plan.c) ---- */

/* Checks a convolution call with input elements of in_bytes bytes in
 * 64-bit arithmetic (onegpu.h, og_conv_encode) and fills shape, and push
 * for the convolution kernel (conv_gather.tmpl's use of the GEMM's push
 * constants). The message names the dimension. */
og_status og_conv_check(const og_limits *lim, char *err, uint64_t in_bytes,
                        const og_conv_args *args, og_conv_shape *shape, og_push *push);

/* The GEMM that a 1x1, stride 1, unpadded, ungrouped NHWC convolution is
 * (shape->gemm): per image M = H*W, N = K, K = C, B (the weights)
 * transposed and shared, a batch of n. */
og_gemm_args og_conv_as_gemm(const og_conv_args *args);

/* ---- Rules of the reference design (og_rules.c) ---- */

/* Whether a GEMM call has a product to compute: alpha and K non-zero.
 * Otherwise A and B are never read and C = act(beta * C + bias) (reference
 * BLAS's rule, onegpu.h), one elementwise pass. */
int og_gemm_has_product(const og_gemm_args *args);

/* Which operand of a checked call ("A", then "B"; NULL for neither) ends
 * past maxStorageBufferRange from the start of its binding, so that only a
 * device address reads it. ta and tb: the element types of A and B. */
const char *og_operand_past_binding(const og_limits *lim, og_dtype ta, og_dtype tb,
                                    const og_gemm_args *g);

/* The parameters as this call, a product (M, N, K and alpha non-zero), can
 * use: vector loads need aligned operands (and split-k ranges of a multiple
 * of 4 terms, range_len), texel buffers operands within
 * maxTexelBufferElements whose buffers allow texel views; otherwise the
 * same tile runs with element loads from storage buffers. Where A or B
 * ends past maxStorageBufferRange (og_operand_past_binding) and no texel
 * view reaches it, the portable tile and few rows read A and B by device
 * address (src = addr; recovered float32 and the cooperative-matrix tile
 * keep their bindings, and og_gemm_plan refuses the call). */
og_params og_params_for_call(const og_gemm_config *cfg, const og_limits *lim,
                             const og_gemm_args *args, const og_params *p, uint32_t range_len);

/* The convolution's tile p (og_conv_params) as a call of args can use it:
 * vector loads (vec = 4) need K = Cg*R*S, the weights' offset and split-k's
 * range_len in fours with the weights' buffer 16-byte aligned, and for NHWC
 * input with KRSC weights (whose four consecutive reduction indices are
 * four channels of one tap) Cg and the input's offset in fours too; texel
 * buffers need the input and the weights within maxTexelBufferElements
 * words. Otherwise the same tile runs with element loads from storage. */
og_params og_conv_loads_for_call(const og_limits *lim, og_dtype input, const og_conv_args *args,
                                 const og_conv_shape *s, const og_params *p, uint32_t range_len);

/* The Int8Gemm parameters a call runs: word loads (vec = 4, the direct-load
 * tile and the skinny kernel) need A's and B's offsets, leading dimensions,
 * batch strides and buffer skews in whole 32-bit words; otherwise the same
 * kernel reads bytes (the tile with vec = 1, the skinny kernel without vec).
 * Texel loads (src = texel) need buffers that allow texel views and
 * operands within maxTexelBufferElements words; otherwise storage buffers,
 * or device addresses for an operand past maxStorageBufferRange. Other
 * parameters run as they are. */
og_params og_int8_params_for_call(const og_limits *lim, const og_int8gemm_args *args,
                                  const og_params *p);

/* Matrix variant i (0..OG_MATRIX_VARIANTS-1) of og_matrix_choose's order
 * on a device with limits lim: its subgroup size is og_matrix_subgroup's
 * (32 where the device has no size it can run, for the reason to say so)
 * and its fragment og_matrix_fragment's (16x16x16 where the device lists
 * none). */
og_params og_matrix_variant(const og_limits *lim, int i);

/* Considers the matrix variants for dtype and mode on a device with limits
 * lim (reference design, "Which devices take the matrix kernel"): fills one
 * note per variant and returns the index of the one to run, or -1 when the
 * portable kernel runs. */
int og_matrix_choose(const og_limits *lim, og_dtype dtype, og_mode mode,
                     og_matrix_note notes[OG_MATRIX_VARIANTS]);

/* The note on the coopmat2 kernel (og_params_coopmat2 in the subgroup
 * size og_matrix_subgroup gives) for a GEMM of dtype in mode on a device
 * with limits lim: why it cannot run, or that it is a tuner candidate,
 * never the default (docs/matrix-kernels.md, "coopmat2"). */
void og_coopmat2_note(const og_limits *lim, og_dtype dtype, og_mode mode, og_matrix_note *note);

/* Int8Gemm's matrix variant i (0..OG_MATRIX_VARIANTS-1, the same order:
 * NV 8 and 4 subgroups, then KHR) on a device with limits lim: the
 * int8coopmat tile with og_matrix_subgroup's subgroup size and the
 * fragment og_matrix_fragment lists for int8 x int8 -> int32 (16x16x16
 * where the device lists none). */
og_params og_matrix_int8_variant(const og_limits *lim, int i);

/* Considers Int8Gemm's matrix variants on a device with limits lim for a
 * context generating dialect: fills one note per variant (the reason from
 * og_params_check: "the device lists no 8x8x8 int8 x int8 -> int32
 * combination for VK_NV_cooperative_matrix ...") and returns the index of
 * the first that qualifies, or -1. Int8Gemm is exact in every mode, so the
 * matrix kernel may serve any call. */
int og_matrix_int8_choose(const og_limits *lim, og_dialect dialect,
                          og_matrix_note notes[OG_MATRIX_VARIANTS]);

/* Recovered float32's portable tile: the default tile without split-k. */
og_params og_params_recovered_tile(void);

/* ---- Selection (og_select.c): the tuning databases, else the defaults ---- */

/* The directory of the pre-tuned databases (og_pretuned.c), into buf of
 * size len: OG_PRETUNED_DIR (environment) when set; else <prefix>/share/onegpu
 * of the prefix the library was installed to, found from the file holding
 * its code (libonegpu.so's directory, or the program's when linked
 * statically), when that directory exists; else the prefix configured at
 * build time. */
void og_pretuned_dir(char *buf, size_t len);

/* ---- Plans (og_gemm_plan.c, og_int8gemm_plan.c) ---- */

/* What a binding of a step holds. */
typedef enum og_operand {
    OG_OPERAND_NONE = 0, /* the context's placeholder: nothing is read */
    OG_OPERAND_A,
    OG_OPERAND_B,
    OG_OPERAND_C,
    OG_OPERAND_BIAS,
    OG_OPERAND_SCALES,    /* Int8Gemm's column scales */
    OG_OPERAND_SCRATCH,   /* split-k planes */
    OG_OPERAND_EXPONENTS, /* range scaling's exponents */
    OG_OPERANDS
} og_operand;

/* One dispatch: kernel, push constants, grid, and what its bindings 0, 1,
 * 2, 3 and 5 hold (A and B as storage buffers, or as texel views when
 * key.p.src is OG_SRC_TEXEL, with vector views of vec_words words at 3 and
 * 4 and what binding 3 holds moved to 6). A
 * barrier after it makes its writes visible to later compute work,
 * transfers and the host. */
typedef struct og_step {
    og_kernel_key key;
    og_push push;
    uint32_t grid[3];
    og_src src; /* the layout: OG_SRC_STORAGE also where key.p.src is OG_SRC_ADDR */
    uint32_t vec_words;
    og_operand bind[5];
} og_step;

/* A piece of the grid: whole tiles of rows and whole products, each with
 * the split-k ranges of the whole product, so cutting never changes the
 * bits. At most three steps: exponents, then the product (or its planes
 * and their reduction). */
#define OG_PIECE_STEPS 3
typedef struct og_piece {
    og_step step[OG_PIECE_STEPS];
    int n_steps;
} og_piece;

typedef enum og_plan_kind {
    OG_PLAN_GEMM,
    OG_PLAN_INT8GEMM,
    OG_PLAN_ELEMENTWISE,
    OG_PLAN_CONV, /* a GEMM plan whose pieces step over pixels and whole images */
    OG_PLAN_QGEMM /* one kernel over tiles of rows and products, as OG_PLAN_INT8GEMM */
} og_plan_kind;

/* What one call records: pieces i = 0 .. pieces-1, each made by og_plan_piece. */
typedef struct og_plan {
    og_plan_kind kind;
    og_push push;      /* the whole call, as checked */
    og_kernel_key key; /* the product's kernel (PLANES when split; the ranges are push constants) */
    uint32_t ranges, range_len;   /* split-k; 1 range: not split */
    uint32_t gx;                  /* workgroups along N */
    uint32_t tile_rows;           /* rows of C a workgroup covers (1 for few rows) */
    uint64_t rows_per, batch_per; /* rows and products of one piece */
    uint64_t row_pieces, pieces;  /* 0 pieces: nothing to record */
    uint64_t a_row;               /* elements of A between rows of op(A) */
    int k_zero;                   /* Int8Gemm, K = 0: A and B are not read, the placeholder binds */
    int scaled;                   /* recovered float32 with range scaling: an exponents step */
    uint32_t vec_words;
    og_dialect dialect;
    uint32_t max_count[3];       /* the device's maxComputeWorkGroupCount */
    uint64_t start[OG_OPERANDS]; /* bytes past each operand's buffer base where its binding
                                    or address starts (og_binding_starts) */
    uint64_t scratch_bytes;      /* the split-k scratch the recording needs (0: none) */
    uint64_t exponent_bytes;     /* the exponents scratch it needs (0: none) */
} og_plan;

/* The byte where an operand's storage binding (or device address) starts,
 * for an operand whose first element is `first` bytes past its buffer's
 * base: first aligned down to lim->bind_align (0 when that is 0). Each
 * operand is bound from there, so only its own extent counts against
 * maxStorageBufferRange, and offsets past 2^32 elements are absorbed there. */
uint64_t og_binding_start(const og_limits *lim, uint64_t first);

/* The element offset, from its binding's start, of an operand at element
 * `offset` of buf (elements of elem_bytes; the buffer's skew included):
 * what the push constants carry. Called on checked arguments only. */
uint32_t og_binding_offset(const og_limits *lim, const og_buffer *buf, int64_t offset,
                           uint64_t elem_bytes);

/* Bytes past each buffer's base where each operand's binding starts
 * (og_binding_start), for og_plan.start: A, B, C, the bias and Int8Gemm's
 * column scales of a checked call (scales: NULL, or the scales buffer at
 * element scale_offset). */
void og_binding_starts(const og_limits *lim, const og_gemm_args *g, uint64_t a_bytes,
                       uint64_t b_bytes, const og_buffer *scales, int64_t scale_offset,
                       uint64_t start[OG_OPERANDS]);

/* Plans a checked GEMM call (push from og_gemm_check) with parameters p:
 * split-k ranges, kernel, grid and pieces under the device's counts.
 * Errors: OG_ERROR_UNSUPPORTED naming what the device lacks. */
og_status og_gemm_plan(const og_gemm_config *cfg, const og_limits *lim, char *err,
                       const og_gemm_args *args, const og_params *p, const og_push *push,
                       og_plan *out);

/* Plans a checked Int8Gemm call with parameters p. */
og_status og_int8gemm_plan(const og_limits *lim, char *err, og_dialect dialect,
                           const og_int8gemm_args *args, const og_params *p, const og_push *push,
                           og_plan *out);

/* Plans a checked bias add or activation over C (og_elementwise_check's push). */
og_status og_elementwise_plan(const og_limits *lim, char *err, og_dialect dialect,
                              og_elementwise op, const og_gemm_args *args, const og_push *push,
                              og_plan *out);

/* Plans a checked convolution in mode with tile parameters p
 * (og_conv_params) and a scratch of scratch_bytes for split-k: ranges by
 * the GEMM's rule on the implicit GEMM (the portable tile; the
 * cooperative-matrix tile runs one pass, in Fast mode only), pieces of
 * whole tiles of pixels and whole images. */
og_status og_conv_plan(const og_limits *lim, char *err, og_dtype input, og_mode mode,
                       const og_conv_args *args, const og_conv_shape *shape, const og_params *p,
                       const og_push *push, uint64_t scratch_bytes, og_plan *out);

/* Plans the im2col kernel (templates/conv_im2col.tmpl) of a checked
 * convolution (push from og_conv_check): the virtual im2col matrix of
 * every image written to out as float32, row p*Q + q of an image holding
 * group g's Cg*R*S columns (in the weights' order) at column g*Cg*R*S,
 * images og_conv_im2col_bytes / images apart. The benchmarks' explicit
 * im2col + GEMM baseline. Errors: OG_ERROR_UNSUPPORTED when the matrix
 * exceeds one binding (maxStorageBufferRange) or the grid's limits. */
og_status og_conv_im2col_plan(const og_limits *lim, char *err, og_dtype input,
                              const og_conv_args *args, const og_conv_shape *shape,
                              const og_push *push, og_buffer *out, og_plan *plan);

/* The parameters a checked product runs with p: vec = 4 (16-byte loads)
 * only where A's offset, lda and stride and W's binding offset keep every
 * load on 16 bytes, else vec = 1 (word loads). */
og_params og_qgemm_run_params(og_dtype a_type, const og_push *push, const og_params *p);

/* Plans a checked low-bit weight product (og_qgemm_check's shape and push)
 * with parameters p (the decode kernel, the prefill tile, or in Fast mode
 * the staged cooperative-matrix tile, recovered with range scaling) for
 * the weights' key qformat; split-k's planes of the whole call must fit
 * scratch_bytes (fewer ranges where they would not). part is OG_PART_FULL,
 * or for measurement the decode kernel's load or convert part (OG_PART_*,
 * refused for any other kernel). */
og_status og_qgemm_plan(const og_limits *lim, char *err, og_dtype a_type, int qformat, og_mode mode,
                        const og_gemm_args *shape, const og_params *p, const og_push *push,
                        uint64_t scratch_bytes, int part, og_plan *out);

/* For the plan files: an empty plan of kind for push, and the count of
 * pieces once rows_per and batch_per are set (og_pieces.c). */
void og_plan_start(og_plan *out, og_plan_kind kind, const og_limits *lim, og_dialect dialect,
                   const og_push *push);
void og_plan_count_pieces(og_plan *out);

/* Range scaling's exponents pass for a plan of tiles of bm rows whose
 * rows_per and batch_per are set: fewer rows and products a piece where a
 * piece's exponents, (rows + N) per product, would not fit the scratch of
 * OG_EXPONENT_BYTES; sets scaled and exponent_bytes (og_gemm_plan.c).
 * Errors: OG_ERROR_UNSUPPORTED naming op when N leaves no room for a tile. */
og_status og_plan_exponents(og_plan *out, char *err, const char *op, int64_t m, int64_t n, int bm);

/* Piece i of a plan (i < pl->pieces). Every piece has piece 0's steps
 * with other push constants and grids: the same kernel keys, layouts,
 * vector views and bindings, so what piece 0 needs (pipelines, descriptor
 * sets) serves them all. */
void og_plan_piece(const og_plan *pl, uint64_t i, og_piece *out);

#endif /* OG_PLAN_H */
