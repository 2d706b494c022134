/* Internals shared by the runtime's files (not installed). */
#ifndef OG_INTERNAL_H
#define OG_INTERNAL_H

#include <stdarg.h>
#include <volk.h>

#include "og_db.h"
#include "og_gen.h"
#include "onegpu.h"

/* Push constants of every kernel, in the declaration order of
 * templates/common.tmpl. */
typedef struct og_push {
    uint32_t m, n, k, lda, ldb, ldc;
    uint32_t off_a, off_b, off_c;
    uint32_t stride_a, stride_b, stride_c;
    float alpha, beta;
    uint32_t batch;          /* products in this dispatch */
    uint32_t range_len;      /* split-k: terms per range */
    uint32_t ranges;         /* split-k: number of ranges (planes) */
    uint32_t plane_stride;   /* split-k: floats between planes */
    uint32_t bias_off;       /* element offset of bias[0] */
    uint32_t epi;            /* activation in bits 0-1, bit 2: bias bound */
    uint32_t step_y, step_z; /* workgroups along y and z (reduce, elementwise) */
    int32_t zero_a, zero_b;  /* Int8Gemm: zero points of A and B */
    uint32_t scale_off;      /* Int8Gemm: element offset of the first column scale */
} og_push;

/* og_push.epi bits above the activation (bits 0-1). */
#define OG_EPI_BIAS 4u           /* a bias is bound */
#define OG_EPI_FLOAT_OUT 8u      /* Int8Gemm: C is float32 */
#define OG_EPI_COLUMN_SCALES 16u /* Int8Gemm: per-column scales bound */
#define OG_EPI_ACCUMULATE 32u    /* Int8Gemm: C += sum */

typedef struct og_pipeline {
    og_kernel_key key;
    VkPipeline pipeline;
} og_pipeline;

struct og_context {
    og_allocator allocator; /* the runtime's host memory */
    VkInstance instance;
    VkPhysicalDevice physical;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family;
    struct VolkDeviceTable vk;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties memory;
    og_device_info info;
    og_limits limits;
    int has_timestamps;
    og_dialect dialect; /* of the kernels the GEMMs compile: GLSL; tests switch to HLSL */

    VkCommandPool pool;
    VkCommandBuffer cmd; /* for og_gemm_run and timing */
    VkFence fence;
    /* One layout per og_src: A and B as storage or as uniform texel buffers. */
    VkDescriptorSetLayout set_layout[2];
    VkPipelineLayout pipeline_layout[2];

    og_pipeline *pipelines; /* cache by kernel key (template, params, dialect) */
    size_t n_pipelines, cap_pipelines;
    /* The driver's cache every pipeline is created with (VK_NULL_HANDLE when
     * the driver could not make one), its file ("" when the on-disk caches are
     * off), and the bytes of that file handed to the driver at creation (0:
     * none, or the file was missing or refused; og_pipeline_cache.c). */
    VkPipelineCache pipeline_cache;
    char pipeline_cache_path[1024];
    size_t pipeline_cache_loaded;

    struct og_db_entry {
        og_db *db;
        char path[512];
    } * dbs; /* tuning databases that opened, in search order */
    size_t n_dbs;
    int dbs_loaded;
    char *db_paths;

    og_buffer *placeholder; /* bound for A and B when K = 0 and they are absent */

    VkDebugUtilsMessengerEXT messenger;
    uint32_t validation_errors;
    char error[1024];
};

struct og_buffer {
    og_context *ctx;
    uint64_t serial; /* unique in the process: a cache key no later buffer can reuse */
    VkBuffer buffer;
    VkDeviceMemory memory;
    void *mapped;
    uint64_t size;          /* as requested */
    uint64_t allocated;     /* padded to a whole 32-bit word, at least one word */
    VkBufferView texels[3]; /* views of 1, 2 and 4 words a texel, made on first use */
};

/* The buffer's view with texels of `words` 32-bit words (1, 2 or 4:
 * R32_UINT, R32G32_UINT, R32G32B32A32_UINT), created on first use. */
og_status og_buffer_texels(og_buffer *buf, uint32_t words, VkBufferView *out);

/* The runtime's host memory (og_alloc.c): og_mem_alloc zeroes what it
 * returns; a NULL allocator, or one with NULL functions, is the C library's. */
void *og_mem_alloc(const og_allocator *a, size_t bytes);
void *og_mem_realloc(const og_allocator *a, void *ptr, size_t bytes);
void og_mem_free(const og_allocator *a, void *ptr);
char *og_mem_strdup(const og_allocator *a, const char *s);

/* The feature structures and extensions a device is created with
 * (og_device_caps.c): chain is the pNext of VkDeviceCreateInfo. */
typedef struct og_device_features {
    VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR dot;
    VkPhysicalDeviceCooperativeMatrixFeaturesNV matrix;
    VkPhysicalDeviceSubgroupSizeControlFeaturesEXT size_control;
    VkPhysicalDeviceVulkan11Features v11;
    VkPhysicalDeviceVulkan12Features v12;
    const char *extensions[4];
    uint32_t n_extensions;
    void *chain;
} og_device_features;

/* Reads what the kernels can use (ctx->limits.integer_dot, ctx->limits.matrix)
 * and fills f with what to enable for it. ctx->physical, props and limits
 * must be read first. */
void og_device_features_read(og_context *ctx, og_device_features *f);

/* Records the message on the context and returns st. */
og_status og_fail(og_context *ctx, og_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
og_status og_vk_fail(og_context *ctx, VkResult r, const char *what);

/* ---- On-disk caches (og_cache_file.c) ---- */

/* The directory of the on-disk caches, $XDG_CACHE_HOME/onegpu, else
 * ~/.cache/onegpu, into dir. Returns 0 (the caches are off) when
 * OG_SPIRV_CACHE=0, when neither variable is set, or when the path does not
 * fit in len. Read on every call: the environment decides. */
int og_cache_dir(char *dir, size_t len);

/* 64-bit FNV-1a of n bytes, continuing from h (OG_FNV_OFFSET to start). */
#define OG_FNV_OFFSET 1469598103934665603ull
uint64_t og_fnv1a(uint64_t h, const void *data, size_t n);

/* Reads a file that og_cache_write wrote: returns 1 with *data (allocated
 * from a, NULL: malloc; free with og_mem_free(a, ...)) holding *bytes bytes,
 * min_bytes <= *bytes <= max_bytes, whose checksum holds; else 0 with *data
 * NULL: no file, not a regular file, another size, or a wrong checksum. */
int og_cache_read(const og_allocator *a, const char *path, size_t min_bytes, size_t max_bytes,
                  void **data, size_t *bytes);

/* Writes data and its checksum to a new file beside path (creating the
 * directories, mode 0600), then renames it onto path. Returns 0, or -1 with
 * nothing left behind and path as it was. */
int og_cache_write(const char *path, const void *data, size_t bytes);

/* SPIR-V of a kernel that passed og_build_kernel's checks, kept on disk
 * (og_spirv_cache.c). load returns 1 with *words malloc'ed, or 0. */
int og_spirv_cache_load(const og_kernel_key *key, uint32_t **words, size_t *count);
void og_spirv_cache_store(const og_kernel_key *key, const uint32_t *words, size_t count);

/* The driver's pipeline cache, kept on disk (og_pipeline_cache.c). open
 * (og_context_create, after the device) makes ctx->pipeline_cache, seeded
 * from the file of this device, driver version and pipelineCacheUUID when
 * that file is intact and its header names the same device and UUID; close
 * (og_context_destroy, before the pipelines go) writes the driver's data
 * back when the context created a pipeline, then destroys the cache.
 * Neither fails: the cache is an optimisation. */
void og_pipeline_cache_open(og_context *ctx);
void og_pipeline_cache_close(og_context *ctx);

/* The pipeline for key, compiled and cached on first use. */
og_status og_pipeline_get(og_context *ctx, const og_kernel_key *key, VkPipeline *out);
void og_pipelines_destroy(og_context *ctx);

/* Submits one recorded command buffer and waits for it. */
og_status og_submit_wait(og_context *ctx, VkCommandBuffer cmd);

/* Checks a GEMM call of object g (shape, leading dimensions, offsets,
 * strides, buffer ranges for its element types, 32-bit indexing, bias and
 * activation) in 64-bit arithmetic. On success fills push for the whole
 * product, with FP8 scales folded into alpha. The message names the dimension. */
og_status og_gemm_check(og_gemm *g, const og_gemm_args *args, og_push *push);

/* Refuses (OG_ERROR_UNSUPPORTED, naming op and N) a grid of gx workgroups
 * along x, N's direction, beyond the device's maxComputeWorkGroupCount[0]. */
og_status og_grid_x_check(og_context *ctx, const char *op, int64_t n, uint64_t gx);

/* Refuses (OG_ERROR_UNSUPPORTED, naming op and K) a kernel whose invocations
 * would run more loop iterations for a k range of k_len terms than the
 * device lets one invocation run (og_limits.max_loop_iterations: lavapipe),
 * which would end its loops early and leave C silently wrong. */
og_status og_loops_check(og_context *ctx, const char *op, const og_kernel_key *key, int64_t k,
                         uint64_t k_len);

/* Checks the C region and the epilogue of an elementwise call (bias add or
 * activation) and fills push. */
og_status og_elementwise_check(og_context *ctx, const og_gemm_args *args, og_push *push);

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
int og_fewrows_eligible(og_dtype dtype, const og_gemm_args *args);

/* Where a kernel choice came from. */
typedef enum og_source {
    OG_SOURCE_DEFAULT = 0,
    OG_SOURCE_DB = 1,
    OG_SOURCE_DB_NEAREST = 2
} og_source;

/* A cooperative-matrix variant considered for a call, and why it was not
 * chosen ("" when it was). */
typedef struct og_matrix_note {
    og_params params;
    int chosen;
    char why[192];
} og_matrix_note;

/* The matrix variants in order of preference: 8 subgroups, then 4 (for
 * devices with fewer than 256 invocations or too little shared memory). */
#define OG_MATRIX_VARIANTS 2

/* Considers the matrix variants for dtype and mode on a device with limits
 * lim (reference design, "Which devices take the matrix kernel"): fills one
 * note per variant and returns the index of the one to run, or -1 when the
 * portable kernel runs. */
int og_matrix_choose(const og_limits *lim, og_dtype dtype, og_mode mode,
                     og_matrix_note notes[OG_MATRIX_VARIANTS]);

typedef struct og_choice {
    og_params params;
    og_source source;
    int64_t m, n, k, batch;                    /* the tuned shape the record came from */
    double gflops;                             /* its measured GFLOP/s (0 for the default) */
    char db_path[512];                         /* which database ("" for the default) */
    og_matrix_note matrix[OG_MATRIX_VARIANTS]; /* the matrix variants considered */
} og_choice;

/* Selection (DESIGN.md "Selection order"): exact record, nearest tuned
 * shape, else the default. Deterministic mode always takes the default.
 * Where a matrix variant qualifies (og_matrix_choose) it is the default, and
 * records of it and of the portable tile compete: an exact match before a
 * nearest one, then the higher GFLOP/s. */
og_status og_select(og_context *ctx, og_dtype dtype, og_mode mode, int trans_a, int trans_b,
                    int64_t m, int64_t n, int64_t k, int64_t batch, og_choice *out);

/* Records a dispatch of kernel key with push constants and descriptor set,
 * then a barrier that makes its writes visible to later compute work,
 * transfers and the host. */
og_status og_record_dispatch(og_context *ctx, VkCommandBuffer cmd, const og_kernel_key *key,
                             VkDescriptorSet set, const og_push *push, const uint32_t grid[3]);

/* ---- GEMM objects (og_gemm.c) ---- */

typedef struct og_binding {
    uint64_t a, b, c, bias, scales; /* og_buffer serial numbers */
    og_src src;
    int vec;
    VkDescriptorSet set;
} og_binding;

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
    int recover;           /* recovered float32: the residual shift s; 0 for native products */
    og_params recovered;   /* ... and its kernel (og_params_recovered, fixed at creation) */
    int scaled;            /* recovered float32 with power-of-two row and column scaling */
    og_buffer *exponents;  /* their exponents, OG_EXPONENT_BYTES, made on first use */
    VkDescriptorPool pool; /* holds up to OG_BINDINGS_MAX sets */
    og_binding *bindings;  /* descriptor sets by (A, B, C) */
    size_t n_bindings;
    og_shape_choice *choices; /* selection cache: after the first call, a lookup */
    size_t n_choices, cap_choices;
    og_buffer *scratch;     /* split-k planes, made on first use */
    uint64_t scratch_bytes; /* its size: OG_SCRATCH_BYTES (tests lower it) */
};

/* The instance-owned float32 scratch of split-k (reference design). */
#define OG_SCRATCH_BYTES (16u << 20)

/* The int32 exponents of the recovered scheme's row and column scaling:
 * (rows + N) * products of one piece. */
#define OG_EXPONENT_BYTES (4u << 20)

#define OG_BINDINGS_MAX 64

/* The parameters as this call can use them: vector loads need aligned
 * operands (and split-k ranges of a multiple of 4 terms, range_len), texel
 * buffers operands within maxTexelBufferElements; otherwise the same tile
 * runs with element loads from storage buffers. */
og_params og_params_for_call(const og_gemm *g, const og_gemm_args *args, const og_params *p,
                             uint32_t range_len);

/* The descriptor set of A, B, C and the bias (NULL: the placeholder) bound
 * as src, with vector texel views when vec is 4, made on first use. Once
 * all OG_BINDINGS_MAX sets are taken, the pool is reset: a command buffer
 * recorded with an older set must have completed by then (documented on
 * og_gemm_release_bindings). Recording allocates nothing for a cached set. */
og_status og_binding_set(og_gemm *g, og_src src, int vec, og_buffer *a, og_buffer *b, og_buffer *c,
                         og_buffer *bias, og_buffer *scales, VkDescriptorSet *out);

/* Sets up and tears down the object's descriptor pool and binding table
 * (og_gemm_create and og_int8gemm_create). init cleans up after itself. */
og_status og_gemm_init(og_context *ctx, og_gemm *g, og_dtype input, og_mode mode);
void og_gemm_fini(og_gemm *g);

/* Records the GEMM with the given parameters instead of the selected ones
 * (the tuner's candidates, the tests' forced variants). */
og_status og_gemm_encode_params(og_gemm *g, VkCommandBuffer cmd, const og_gemm_args *args,
                                const og_params *p);

/* The selection cache of a GEMM object: *p for a shape chosen before
 * (returns 1), or 0; and adding one. */
int og_choice_cached(const og_gemm *g, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                     int64_t batch, og_params *p);
og_status og_choice_cache(og_gemm *g, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                          int64_t batch, const og_params *p);

/* The selected parameters for a call (selection cache, then og_select;
 * recovered float32 always runs og_params_recovered). */
og_status og_gemm_choose(og_gemm *g, const og_gemm_args *args, og_params *p);

/* The kernel recovered float32 runs on ctx in mode: the cooperative-matrix
 * tile (8 subgroups, else 4) where the device takes float16 matrices in that
 * mode (og_matrix_choose) and has the memory for the residual tiles, else the
 * portable default tile (its summation order) without split-k. */
og_params og_params_recovered(const og_context *ctx, og_mode mode);

/* The input type whose records and rules select g's kernels: float32's for
 * FP8 inputs (the same tile and few-rows geometry), else A's. */
og_dtype og_gemm_select_type(const og_gemm *g);

/* Records work into a command buffer (og_time_encoder's callback). */
typedef og_status (*og_encoder)(void *user, VkCommandBuffer cmd);

/* Begins the context's command buffer, records through fn, submits, waits. */
og_status og_run_recorded(og_context *ctx, og_encoder fn, void *user);

/* Times `reps` recordings of encode after `warmup` untimed ones, in one
 * command buffer, with timestamp queries; *median_us is the median of one. */
og_status og_time_encoder(og_context *ctx, og_encoder encode, void *user, int warmup, int reps,
                          double *median_us);

/* Times `reps` dispatches of the GEMM with parameters p after `warmup`
 * untimed ones, with timestamp queries; *median_us is the median of one call. */
og_status og_gemm_time(og_gemm *g, const og_gemm_args *args, const og_params *p, int warmup,
                       int reps, double *median_us);

/* ---- Int8Gemm objects (og_int8gemm.c) ---- */

/* An Int8Gemm: a GEMM object's descriptor sets and selection cache, with
 * input type OG_INT8 standing for both 8-bit types. */
struct og_int8gemm {
    og_gemm gemm;
};

/* Checks an Int8Gemm call (as og_gemm_check, plus types, zero points, output
 * and column scales) and fills push. The message names the dimension. */
og_status og_int8gemm_check(og_context *ctx, const og_int8gemm_args *args, og_push *push);

/* The shape, layout and buffers of an Int8Gemm call as float GEMM
 * arguments (no epilogue): what the two share. */
og_gemm_args og_int8gemm_layout(const og_int8gemm_args *args);

/* Whether a product may run the skinny kernel: M <= 16, B not transposed. */
int og_int8_skinny_eligible(const og_int8gemm_args *args);

/* Selection for Int8Gemm: the skinny kernel's or the tile's record for op
 * "int8gemm" (input type "i8", Fast mode), else its default. */
og_status og_select_int8(og_context *ctx, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                         int64_t batch, og_choice *out);

/* The selected parameters for a call (selection cache, then og_select_int8). */
og_status og_int8gemm_choose(og_int8gemm *g, const og_int8gemm_args *args, og_params *p);

/* Records Int8Gemm with the given parameters (the tuner's candidates, tests). */
og_status og_int8gemm_encode_params(og_int8gemm *g, VkCommandBuffer cmd,
                                    const og_int8gemm_args *args, const og_params *p);

/* Times Int8Gemm with parameters p, as og_gemm_time. */
og_status og_int8gemm_time(og_int8gemm *g, const og_int8gemm_args *args, const og_params *p,
                           int warmup, int reps, double *median_us);

#endif /* OG_INTERNAL_H */
