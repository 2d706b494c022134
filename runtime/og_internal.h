/* The runtime's top layer (not installed): GEMM, Int8Gemm, convolution and
 * low-bit weight objects, which check, select, plan and record each call
 * through the layers below:
 *
 *   og_gemm.c, og_gemm_call.c, og_int8gemm.c, og_conv.c, og_qgemm.c
 *             objects, the public calls and their op tables
 *   og_op.c   the path every call shares: check once, choose, plan, then
 *             encode, run, time or describe
 *   og_tuning.c  what the tuner needs beside onegpu.h (og_tuning.h)
 *   record/   a plan into commands
 *   plan/     checks, rules, selection and plans: plain data, no Vulkan
 *   vk/       context, memory, buffers, descriptor sets, pipelines, timing
 *   formats/  number formats and low-bit weight layouts: pure functions
 *
 * Each layer calls only the layers below it. */
#ifndef OG_INTERNAL_H
#define OG_INTERNAL_H

#include "plan/og_plan.h"
#include "record/og_record.h"
#include "vk/og_vk.h"
#include "og_tuning.h" /* what the tuner uses of the runtime */

typedef struct og_shape_choice {
    int trans_a, trans_b;
    int64_t m, n, k, batch;
    og_params params;
} og_shape_choice;

struct og_gemm {
    og_context *ctx;
    og_dtype dtype;  /* of A */
    og_dtype b_type; /* of B */
    og_mode mode;
    int recover;          /* recovered float32: the residual shift s; 0 for native products */
    og_params recovered;  /* ... its default kernel (og_params_recovered, at creation) */
    int scaled;           /* recovered float32 with power-of-two row and column scaling */
    og_buffer *exponents; /* their exponents, OG_EXPONENT_BYTES, made on first use */
    og_shape_choice *choices; /* selection cache: after the first call, a lookup */
    size_t n_choices, cap_choices;
    og_buffer *scratch;     /* split-k planes, made on first use */
    uint64_t scratch_bytes; /* its size: OG_SCRATCH_BYTES (tests lower it) */
};

/* An Int8Gemm: a GEMM object's selection cache, with input type OG_INT8
 * standing for both 8-bit types. */
struct og_int8gemm {
    og_gemm gemm;
};

/* A convolution's kernel choice for one geometry (og_conv_choose's cache):
 * its record op, layouts and implicit GEMM's shape. */
typedef struct og_conv_choice {
    char op[32];
    og_conv_layout layout;
    og_conv_weights weights;
    int64_t m, n, k, batch;
    og_params params;
} og_conv_choice;

/* A convolution object: a GEMM object for the input type, mode, split-k
 * scratch and the 1x1 calls that are GEMMs; its own selection cache. */
struct og_conv {
    og_gemm gemm;
    og_conv_choice *choices;
    size_t n_choices, cap_choices;
};

/* A low-bit weight product: a GEMM object for A's type and the mode (its
 * selection cache and split-k scratch), the weights' format and its kernel
 * key (OG_QFORMAT_KEY). */
struct og_qgemm {
    og_gemm gemm;
    og_qweights_format format;
    int qformat;
    /* OG_PART_*: what the decode kernel's calls run (benchmarks set it;
     * og_qgemm_create leaves the full kernel). */
    int part;
};

/* What g fixes for the plan layer. */
og_gemm_config og_gemm_config_of(const og_gemm *g);

/* Sets up and tears down a GEMM object (og_gemm_create and og_int8gemm_create). */
void og_gemm_init(og_context *ctx, og_gemm *g, og_dtype input, og_mode mode);
void og_gemm_fini(og_gemm *g);

/* The selection cache of a GEMM object: *p for a shape chosen before
 * (returns 1), or 0; and adding one. */
int og_choice_cached(const og_gemm *g, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                     int64_t batch, og_params *p);
og_status og_choice_cache(og_gemm *g, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                          int64_t batch, const og_params *p);

/* The kernel choice for a call of g, uncached: og_select; for recovered
 * float32 with the default shift and no range scaling og_select_recovered;
 * other recovered calls always run g->recovered (og_params_recovered:
 * only the unscaled kernel with the default shift is tuned). */
og_status og_gemm_select(og_gemm *g, const og_gemm_args *args, og_choice *c);

/* A kernel chosen from the shape that reads its operands through bindings
 * only (the decode kernel) gives way to the portable tile, which reaches an
 * operand past maxStorageBufferRange by its device address: *p becomes
 * og_params_default() where that happens, and 1 is returned; else 0. */
int og_gemm_bindings_reach(og_gemm *g, const og_gemm_args *args, og_params *p);

/* The input type whose records and rules select g's kernels: float32's for
 * FP8 inputs (the same tile and few-rows geometry), else A's. */
og_dtype og_gemm_select_type(const og_gemm *g);

/* The tile a convolution runs (og_conv_params of og_select_conv's choice),
 * through the object's cache. shape: og_conv_check's. */
og_status og_conv_choose(og_conv *cv, const og_conv_args *args, const og_conv_shape *shape,
                         og_params *p);

/* ---- One path for every op object (og_op.c) ----
 * Each public call of the GEMM, Int8Gemm, low-bit weight and convolution
 * objects (and the GEMM's elementwise calls) is checked once by its op's
 * check, which leaves what it found in an og_checked; choose, plan and
 * describe take that instead of checking again. og_op.c holds the
 * sequence every op shares: run (record into the context's command buffer,
 * submit, wait), encode (record into the application's), time (timestamps
 * around the recording) and describe; the objects keep only their table. */

/* A checked call: what its op's check found. */
typedef struct og_checked {
    og_push push;       /* the kernels' push constants for the whole call */
    og_gemm_args shape; /* a low-bit weight product as a GEMM's arguments */
    og_conv_shape conv; /* a convolution's shape */
    int empty;          /* nothing to record: the call succeeds at once */
} og_checked;

/* What differs between the op objects; obj is the object, args its call's
 * arguments (og_gemm_args, og_int8gemm_args, ...). */
typedef struct og_op {
    const char *name; /* of the messages: "gemm", "conv", ... */
    og_context *(*context)(const void *obj);
    /* Checks a call (the op's messages), filling c. */
    og_status (*check)(void *obj, const void *args, og_checked *c);
    /* The parameters a checked call selects (the object's cache, then the
     * selection); NULL where the op has no choice to make. */
    og_status (*choose)(void *obj, const void *args, const og_checked *c, og_params *p);
    /* Plans a checked call with parameters p into call: its plan, the
     * scratch it needs (made on first use) and its operands. */
    og_status (*plan)(void *obj, const void *args, const og_checked *c, const og_params *p,
                      og_call *call);
    /* The text of what a call would run (onegpu.h, og_*_describe): of a
     * checked call (c) where describe_checks, else of the arguments as
     * they are (c NULL). */
    og_status (*describe)(void *obj, const void *args, const og_checked *c, char *buf, size_t len);
    int describe_checks;
} og_op;

/* The op tables (og_gemm_call.c, og_int8gemm.c, og_qgemm.c, og_conv.c);
 * og_op_elementwise's object is an og_elementwise_call. */
extern const og_op og_op_gemm, og_op_elementwise, og_op_int8gemm, og_op_qgemm, og_op_conv;

/* The object of og_op_elementwise: a GEMM object and the pass over C. */
typedef struct og_elementwise_call {
    og_gemm *g;
    og_elementwise op;
} og_elementwise_call;

/* What og_op_call does with a planned call. */
typedef enum og_op_way { OG_OP_ENCODE, OG_OP_RUN } og_op_way;

/* Checks a call (og_op.check) into c. */
og_status og_op_check(const og_op *op, void *obj, const void *args, og_checked *c);

/* Chooses (p NULL) or takes p, plans and records a checked call into cmd
 * (OG_OP_ENCODE) or runs it (OG_OP_RUN); an empty call succeeds at once. */
og_status og_op_call(const og_op *op, void *obj, og_op_way way, VkCommandBuffer cmd,
                     const void *args, const og_checked *c, const og_params *p);

/* Check, then og_op_call: encode into cmd, or run. p: given parameters
 * (the tuner's, the tests'), or NULL for the selected ones. */
og_status og_op_encode(const og_op *op, void *obj, VkCommandBuffer cmd, const void *args,
                       const og_params *p);
og_status og_op_run(const og_op *op, void *obj, const void *args, const og_params *p);

/* Check, plan with p and time (og_time_encoder's plan and result); an
 * empty call is refused ("<name>: nothing to time"). */
og_status og_op_time(const og_op *op, void *obj, const void *args, const og_params *p,
                     const og_timing_plan *plan, og_timing *out);

/* The op's describe, after its check where describe_checks. */
og_status og_op_describe(const og_op *op, void *obj, const void *args, char *buf, size_t len);

#endif /* OG_INTERNAL_H */
