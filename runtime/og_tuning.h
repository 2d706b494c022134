/* What ogtune needs of the runtime that applications don't (not installed):
 * the calls and types the tuner (tuner/) uses beside onegpu.h, so that it
 * never reaches into the runtime's objects or its Vulkan device. The
 * runtime's private headers build on this one (og_internal.h, vk/og_vk.h
 * and plan/og_plan.h include it); tuner/ includes this one and no other of
 * them (tests/test_layers.sh checks). Implemented across the layers: the
 * context's facts in og_tuning.c, timing in vk/, selection and the rules
 * in plan/, the objects' calls with given parameters in the object files
 * through og_op.c's shared path. */
#ifndef OG_TUNING_H
#define OG_TUNING_H

#include "og_db.h"
#include "og_gen.h"
#include "onegpu.h"

/* Messages are cut to this many bytes. */
#define OG_ERROR_MAX 1024

/* The instance-owned float32 scratch of split-k (reference design). */
#define OG_SCRATCH_BYTES (16u << 20)

/* ---- The context (og_tuning.c, vk/) ---- */

/* The device's limits, the kernels' dialect and the device's identity as
 * the tuning databases key it (og_context_create found them). */
const og_limits *og_context_limits(const og_context *ctx);
og_dialect og_context_dialect(const og_context *ctx);
const og_device_info *og_context_device_info(const og_context *ctx);

/* What `ogtune devices` and `ogtune first-call` report of a context beside
 * onegpu.h's calls. */
typedef struct og_context_facts {
    uint32_t queue_family;          /* the compute queue's family */
    uint32_t timestamp_bits;        /* its timestampValidBits (0: cannot time) */
    int validation;                 /* the validation layer reports to this context */
    int caches_on;                  /* the on-disk caches are on */
    uint64_t pipeline_cache_loaded; /* bytes of the pipeline cache file handed to the driver */
    uint32_t kernels_compiled;      /* kernels generated and compiled so far */
    /* The device's memory and the types onegpu takes (og_memory_choose):
     * operands and scratch, staging (-1: none), and whether writes and reads
     * go through the mapping. */
    VkPhysicalDeviceMemoryProperties memory_props;
    int operand_type, staging_type, map_writes, map_reads;
} og_context_facts;
void og_context_facts_of(const og_context *ctx, og_context_facts *out);

/* The context each object was made on. */
og_context *og_gemm_context(const og_gemm *g);
og_context *og_int8gemm_context(const og_int8gemm *g);
og_context *og_conv_context(const og_conv *cv);
og_context *og_qgemm_context(const og_qgemm *q);

/* Records the message into the context's message (og_context_create's
 * thread-local one when ctx is NULL) and returns st. */
og_status og_fail(og_context *ctx, og_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Counts n errors of the validation layer against ctx and in the process's
 * total: the messenger's, one at a time, and the tuner's for errors its
 * worker processes report on ctx's behalf. */
void og_validation_count(og_context *ctx, uint32_t n);
/* The validation layer's errors against every context of this process since
 * it started, those counted while a context was destroyed and those of
 * destroyed contexts included (og_context_validation_errors can no longer be
 * read then): what a process checks at its end. */
uint32_t og_validation_errors_total(void);

/* Breaks a rule of the Vulkan specification on purpose (a buffer of size
 * 0, VUID-VkBufferCreateInfo-size-00912) where the validation layer
 * reports to ctx, so that its error is counted; nothing elsewhere (a
 * driver need not take it). ogtune's planted faults. */
void og_validation_provoke(og_context *ctx);

/* mkdir -p of the directory part of path (mode 0700, as the XDG base
 * directory specification asks of the cache): every missing directory up to
 * the last '/'. path is restored; a directory that cannot be made is left
 * for the open that follows to report. */
void og_make_dirs(char *path);

/* ---- Recording and timing (og_tuning.c, vk/og_timer.c) ---- */

/* Records work into a command buffer. */
typedef og_status (*og_encoder)(void *user, VkCommandBuffer cmd);

/* Records a copy of bytes from the start of src to the start of dst into
 * cmd, without a barrier: the copy `ogtune bench --op qgemm` times beside
 * the kernels. */
void og_record_copy(VkCommandBuffer cmd, const og_buffer *src, const og_buffer *dst,
                    uint64_t bytes);

/* How og_time_encoder repeats: warmup untimed recordings, then one timed
 * call to estimate, then as many timed calls as cover min_gpu_us of GPU
 * time, within [min_reps, max_reps]. */
typedef struct og_timing_plan {
    int warmup;
    int min_reps, max_reps;
    double min_gpu_us;
} og_timing_plan;

/* The tuner's plan: 1 warm-up, 3 to 1000 calls covering 0.2 s; ogtune
 * bench's rounds: the same covering 0.1 s each. */
#define OG_TIMING_DEFAULT ((og_timing_plan){1, 3, 1000, 2e5})
#define OG_TIMING_BENCH ((og_timing_plan){1, 3, 1000, 1e5})

/* One measurement: the median of reps timed calls, and their spread
 * ((slowest - fastest) / median). */
typedef struct og_timing {
    double median_us;
    double spread;
    int reps;
} og_timing;

/* Times recordings of encode with timestamp queries (differences masked to
 * the queue family's timestampValidBits, times timestampPeriod). Errors:
 * OG_ERROR_UNSUPPORTED naming the queue family when it has no valid
 * timestamp bits. */
og_status og_time_encoder(og_context *ctx, og_encoder encode, void *user,
                          const og_timing_plan *plan, og_timing *out);

/* ---- Selection and the rules the tuner shares (plan/) ---- */

/* A cooperative-matrix variant considered for a call, and why it was not
 * chosen ("" when it was). */
typedef struct og_matrix_note {
    og_params params;
    int chosen;
    char why[192];
} og_matrix_note;

/* The matrix variants in order of preference: NV matrices with 8
 * subgroups, then 4 (for devices with fewer than 256 invocations or too
 * little shared memory), then the same with KHR matrices (a device with both
 * extensions runs NV by default; the tuner measures both). */
#define OG_MATRIX_VARIANTS 4

/* Where a kernel choice came from. */
typedef enum og_source {
    OG_SOURCE_DEFAULT = 0,
    OG_SOURCE_DB = 1,
    OG_SOURCE_DB_NEAREST = 2
} og_source;

/* A kernel choice and what it came from. */
typedef struct og_choice {
    og_params params;
    og_source source;
    int64_t m, n, k, batch; /* the tuned shape the record came from */
    char op[32];            /* its op ("" for the default) */
    double gflops;          /* its measured GFLOP/s (0 for the default) */
    char db_path[512];      /* which database ("" for the default) */
    /* The driver the record was measured on ("" for the default): its
     * version, info and pipeline cache UUID as its database keeps them
     * ("" unknown), and whether it is another build of this device's driver
     * than the context's (og_db_select's rule; used, with a warning). */
    uint32_t driver_version;
    char driver_info[256];
    char pipeline_cache_uuid[33];
    int other_driver;
    og_matrix_note matrix[OG_MATRIX_VARIANTS]; /* the matrix variants considered */
    /* The coopmat2 kernel (float16 GEMMs): chosen only from a record, since
     * it is a tuner candidate and never the default; why otherwise. */
    og_matrix_note coopmat2;
} og_choice;

/* Selection (docs/reference-design.md, "Selection order"): exact record, nearest tuned
 * shape, else the default. Deterministic mode always takes the default.
 * Where a matrix variant qualifies (og_matrix_choose) it is the default, and
 * records of it and of the portable tile compete: an exact match before a
 * nearest one, then the higher GFLOP/s. Reads the context's databases. */
og_status og_select(og_context *ctx, og_dtype dtype, og_mode mode, int trans_a, int trans_b,
                    int64_t m, int64_t n, int64_t k, int64_t batch, og_choice *out);

struct og_conv_shape; /* below */

/* Selection for a convolution of input type dtype whose implicit GEMM is
 * shape (og_conv_geometry_check's). Few channels a group
 * (og_conv_depthwise_eligible): the depthwise kernel, its exact record of
 * the convolution's op (og_conv_op), layout (trans_a) and weights (trans_b)
 * or the nearest tuned shape of them, else og_params_depthwise. Otherwise
 * the tile's record of them, exact or nearest; where there is none, the
 * GEMM's selection for the implicit GEMM with B transposed (og_select: its
 * portable or cooperative-matrix tile; another variant leaves the default
 * tile). Deterministic mode: the default (the depthwise kernel or the
 * tile), the same bits either way. */
og_status og_select_conv(og_context *ctx, og_dtype dtype, og_mode mode, const og_conv_args *args,
                         const struct og_conv_shape *shape, og_choice *out);

/* Selection for float32 recovered from float16 products with the default
 * residual shift and no range scaling (og_gemm_choose keeps the others on
 * og_params_recovered): the exact record for op OG_OP_GEMM_RECOVERED (float32,
 * mode, trans_a, trans_b), else the nearest tuned shape, else
 * og_params_recovered. A record must run recovered here (the staged tile
 * unsplit or the staged matrix kernel, og_kernel_check with the shift) or it
 * is skipped with a warning. Where the default is a matrix variant, records
 * of it and of the portable tile compete as in og_select. Deterministic mode
 * always takes the default. out->matrix notes whether float16 matrices
 * qualify and whether recovered runs them. Reads the context's databases. */
og_status og_select_recovered(og_context *ctx, og_mode mode, int trans_a, int trans_b, int64_t m,
                              int64_t n, int64_t k, int64_t batch, og_choice *out);

/* Selection for a low-bit weight product of A of type dtype and weights of
 * format f, M x N x K x batch: the exact record of its op (og_qgemm_op),
 * dtype and mode, else the nearest tuned shape of them (with the rows of
 * the default for this M where its M differs and the device allows them),
 * else the default for M (og_qgemm_default). Above 16 rows, records of the
 * prefill tile and of the decode kernel compete: an exact match before a
 * nearest one, then the higher GFLOP/s. Deterministic mode always takes
 * the default: its order depends on the slice count. Reads the context's
 * databases. */
og_status og_select_qgemm(og_context *ctx, og_dtype dtype, const og_qweights_format *f,
                          og_mode mode, int64_t m, int64_t n, int64_t k, int64_t batch,
                          og_choice *out);

/* Selection for Int8Gemm: M <= 16 with B not transposed takes the skinny
 * kernel (its record for op "int8gemm", input type "i8", Fast mode, else
 * its default); other shapes take the matrix tile where a variant
 * qualifies (og_matrix_int8_choose), and records of it and of the portable
 * tile compete as in og_select; else the portable tile's record or
 * default. out->matrix notes each matrix variant and why it was not taken. */
og_status og_select_int8(og_context *ctx, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                         int64_t batch, og_choice *out);

/* The split-k ranges of a product (reference design, "Small grids and few
 * rows"): split = OG_SPLIT_RULE applies the rule (fewer than 384 workgroups
 * of 64 x 64 and K >= 128: up to 16 ranges of a multiple of 32 terms, at
 * least 64, aiming at 384 workgroups), 1 never splits, n >= 2 cuts K into n
 * ranges of ceil(K / n). Then fewer ranges while ranges * batch * M * N floats
 * exceed scratch_floats. *ranges = 1 means no split. */
void og_split_ranges(int split, int64_t m, int64_t n, int64_t k, int64_t batch,
                     uint64_t scratch_floats, uint32_t *ranges, uint32_t *range_len);

/* Whether a product may run the few-rows kernel: float32 (or FP8 inputs,
 * selected as float32), 1 <= M <= 4, A not transposed. */
int og_fewrows_eligible(og_dtype dtype, int64_t m, int trans_a);

/* Whether a product runs the dense decode kernel: float16 or bfloat16 at
 * 1 <= M <= 16, float32 (or FP8 inputs, selected as float32) at
 * 5 <= M <= 16, A not transposed (og_family_decode.c), generated as GLSL
 * or WGSL (not HLSL: there such products run the tile). */
int og_decode_eligible(og_dtype dtype, int64_t m, int trans_a, og_dialect dialect);

/* Whether an Int8Gemm product may run the skinny kernel: M <= 16, B not transposed. */
int og_int8_skinny_eligible(int64_t m, int trans_b);

/* The shape, layout and buffers of an Int8Gemm call as float GEMM
 * arguments (no epilogue): what the two share. */
og_gemm_args og_int8gemm_layout(const og_int8gemm_args *args);

/* The kernel recovered float32 runs in dialect and mode on a device with
 * limits lim: the cooperative-matrix tile (og_matrix_choose's order) where the
 * device takes float16 matrices in that mode (og_matrix_choose) and has the
 * memory for the residual tiles, else the portable default tile (its
 * summation order) without split-k. */
og_params og_params_recovered(const og_limits *lim, og_dialect dialect, og_mode mode);

/* Whether parameters p (checked by og_params_check already) run recovered
 * float32 with residual shift recover (1..12) in dialect on a device with
 * limits lim: the staged tile unsplit (split=1: split-k's planes kernel has
 * no recovered form) or the staged cooperative-matrix tile, with the
 * residual tiles in workgroup memory (og_kernel_check). Returns 0, or -1
 * with the reason in why. The tuner's recovered space and the selection of
 * recovered records both apply it. */
int og_params_recover_check(const og_params *p, const og_limits *lim, og_dialect dialect,
                            int recover, char *why, size_t len);

/* A checked convolution call: its output size and implicit GEMM. */
typedef struct og_conv_shape {
    int64_t p, q;           /* output height and width */
    int64_t groups, cg, kg; /* groups, and input and output channels a group */
    int64_t m, n, k, batch; /* the implicit GEMM: P*Q, Kg, Cg*R*S, images * groups */
    int gemm;               /* 1x1, stride 1, unpadded, ungrouped NHWC of more than 4 pixels:
                               the GEMM itself */
    int empty;              /* no image or no output channel: nothing to record */
} og_conv_shape;

/* The geometry of a convolution call alone (sizes, output size, groups,
 * what the kernel can carry, the activation), not its tensors: fills shape
 * (everything of og_conv_check's but the tensors' checks). */
og_status og_conv_geometry_check(char *err, const og_conv_args *args, og_conv_shape *shape);

/* The tile parameters a convolution runs for the GEMM's choice p: p's
 * tile from storage or texel buffers (og_conv_loads_for_call decides per
 * call); p's cooperative-matrix
 * tile with staged loads; p itself where it names the depthwise kernel; the
 * default tile where p is another variant. */
og_params og_conv_params(const og_params *p);

/* Whether a convolution of implicit GEMM shape runs the depthwise kernel by
 * default: more than one group, at most 8 input and 8 output channels a
 * group, and k that the split-k rule leaves whole (the kernel sums in one
 * pass; unsplit, its bits are the default tile's). */
int og_conv_depthwise_eligible(const og_conv_shape *shape);

/* The op of a convolution's tuning records (db/og_db.h, og_record_key):
 * OG_OP_CONV_PREFIX, then "RxS:sHxW:dHxW" (filter, strides, dilations). */
void og_conv_op(const og_conv_args *args, char *buf, size_t len);

/* Bytes of a checked convolution's explicit im2col matrix as
 * og_conv_im2col_plan lays it out (float32; 0 for an empty call). */
uint64_t og_conv_im2col_bytes(const og_conv_shape *shape);

/* The GEMM that multiplies group `group` of image `image`'s im2col matrix
 * (cols, as og_conv_im2col_plan lays it out) by the group's weights into
 * the convolution's output: NHWC as cols_g W_g^T, NCHW as W_g cols_g^T,
 * with the call's beta, neither bias nor activation. Float32 weights only
 * (cols is float32). One product: NHWC's groups are interleaved columns
 * of the output, which a batch stride cannot step over. */
og_gemm_args og_conv_im2col_gemm(const og_conv_args *args, const og_conv_shape *shape,
                                 og_buffer *cols, int64_t image, int64_t group);

/* A low-bit weight product's record op: OG_OP_QGEMM_PREFIX and the
 * format's canonical text (og_qweights_format_name). */
void og_qgemm_op(const og_qweights_format *f, char *buf, size_t len);

/* A low-bit weight product's default kernel for M rows: the decode kernel
 * (og_params_qdecode) up to 16 rows, where it streams W once; beyond, the
 * prefill tile (og_params_qprefill), which reuses each decoded weight for
 * BM rows. */
og_params og_qgemm_default(int64_t m);

/* ---- The objects with given parameters (the object files, og_op.c) ----
 * The tuner's candidates and the tests' forced kernels: each call is
 * checked as the public one is, then planned with p instead of the
 * selected parameters, and recorded into cmd (encode), into the context's
 * command buffer, submitted and waited for (run_with) or timed
 * (og_time_encoder's plan and result). */

/* The selected parameters for a call (selection cache, then og_gemm_select). */
og_status og_gemm_choose(og_gemm *g, const og_gemm_args *args, og_params *p);

/* Records the GEMM with the given parameters instead of the selected ones
 * (the tuner's candidates, the tests' forced variants). */
og_status og_gemm_encode_params(og_gemm *g, VkCommandBuffer cmd, const og_gemm_args *args,
                                const og_params *p);

/* Runs the GEMM with parameters p (submitted and waited for). */
og_status og_gemm_run_with(og_gemm *g, const og_gemm_args *args, const og_params *p);

/* Times the GEMM with parameters p (og_time_encoder's plan and result). */
og_status og_gemm_time(og_gemm *g, const og_gemm_args *args, const og_params *p,
                       const og_timing_plan *plan, og_timing *out);

/* The selected parameters for an Int8Gemm call (selection cache, then og_select_int8). */
og_status og_int8gemm_choose(og_int8gemm *g, const og_int8gemm_args *args, og_params *p);

/* Records Int8Gemm with the given parameters (the tuner's candidates, tests). */
og_status og_int8gemm_encode_params(og_int8gemm *g, VkCommandBuffer cmd,
                                    const og_int8gemm_args *args, const og_params *p);

/* Runs Int8Gemm with parameters p, as og_gemm_run_with. */
og_status og_int8gemm_run_with(og_int8gemm *g, const og_int8gemm_args *args, const og_params *p);

/* Times Int8Gemm with parameters p, as og_gemm_time. */
og_status og_int8gemm_time(og_int8gemm *g, const og_int8gemm_args *args, const og_params *p,
                           const og_timing_plan *plan, og_timing *out);

/* Records the convolution kernel with tile parameters p (og_conv_params
 * applies), also for a 1x1 call that og_conv_encode would hand to the GEMM:
 * the tuner's candidates and the tests' forced tiles. */
og_status og_conv_encode_params(og_conv *cv, VkCommandBuffer cmd, const og_conv_args *args,
                                const og_params *p);

/* Runs the convolution kernel with parameters p, as og_gemm_run_with
 * (og_conv_encode_params's kernel). */
og_status og_conv_run_with(og_conv *cv, const og_conv_args *args, const og_params *p);

/* Times the convolution kernel with parameters p, as og_gemm_time. */
og_status og_conv_time(og_conv *cv, const og_conv_args *args, const og_params *p,
                       const og_timing_plan *plan, og_timing *out);

/* The explicit im2col matrix of a convolution call written to out
 * (og_conv_im2col_plan's layout: float32, og_conv_im2col_bytes of it), or
 * timed as og_gemm_time: the benchmarks' im2col + GEMM baseline, never a
 * call's path. Errors: an empty call, out too small, a matrix past one
 * binding of the device. */
og_status og_conv_im2col_run(og_conv *cv, const og_conv_args *args, og_buffer *out);
og_status og_conv_im2col_time(og_conv *cv, const og_conv_args *args, og_buffer *out,
                              const og_timing_plan *plan, og_timing *t);

/* The decode kernel's parameters for a low-bit weight call (selection
 * cache, then og_select_qgemm), before og_qgemm_run_params. */
og_status og_qgemm_choose(og_qgemm *q, const og_qgemm_args *args, og_params *p);

/* Records a low-bit weight product with parameters p (the tuner's
 * candidates, the tests' forced shapes). */
og_status og_qgemm_encode_params(og_qgemm *q, VkCommandBuffer cmd, const og_qgemm_args *args,
                                 const og_params *p);

/* Runs a low-bit weight product with parameters p, as og_gemm_run_with. */
og_status og_qgemm_run_with(og_qgemm *q, const og_qgemm_args *args, const og_params *p);

/* Times a low-bit weight product with parameters p, as og_gemm_time. */
og_status og_qgemm_time(og_qgemm *q, const og_qgemm_args *args, const og_params *p,
                        const og_timing_plan *plan, og_timing *out);

/* Times part `part` (OG_PART_LOAD or OG_PART_CONVERT, gen/og_gen.h) of the
 * decode kernel with parameters p (variant qdecode, one pass), for ogtune
 * bench --parts: C receives what the part folds, not the product.
 * OG_ERROR_UNSUPPORTED for another kernel or part. */
og_status og_qgemm_time_part(og_qgemm *q, const og_qgemm_args *args, const og_params *p, int part,
                             const og_timing_plan *plan, og_timing *out);

#endif /* OG_TUNING_H */
