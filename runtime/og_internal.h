/* Internals shared by the runtime's files (not installed). */
#ifndef OG_INTERNAL_H
#define OG_INTERNAL_H

#include <stdarg.h>
#include <volk.h>

#include "og_db.h"
#include "og_gen.h"
#include "onegpu.h"

/* Push constants of the tile template, in its declaration order. */
typedef struct og_push {
    uint32_t m, n, k, lda, ldb, ldc;
    uint32_t off_a, off_b, off_c;
    uint32_t stride_a, stride_b, stride_c;
    float alpha, beta;
} og_push;

typedef struct og_pipeline {
    og_kernel_key key;
    VkPipeline pipeline;
} og_pipeline;

struct og_context {
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

/* Records the message on the context and returns st. */
og_status og_fail(og_context *ctx, og_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
og_status og_vk_fail(og_context *ctx, VkResult r, const char *what);

/* The pipeline for key, compiled and cached on first use. */
og_status og_pipeline_get(og_context *ctx, const og_kernel_key *key, VkPipeline *out);
void og_pipelines_destroy(og_context *ctx);

/* Submits one recorded command buffer and waits for it. */
og_status og_submit_wait(og_context *ctx, VkCommandBuffer cmd);

/* Checks a GEMM call (shape, leading dimensions, offsets, strides, buffer
 * ranges, 32-bit indexing, grid) in 64-bit arithmetic. On success fills
 * push and the grid for tile bm x bn. The message names the dimension. */
og_status og_gemm_check(og_context *ctx, og_dtype dtype, const og_gemm_args *args,
                        const og_tile_params *p, og_push *push, uint32_t grid[3]);

/* Where a kernel choice came from. */
typedef enum og_source {
    OG_SOURCE_DEFAULT = 0,
    OG_SOURCE_DB = 1,
    OG_SOURCE_DB_NEAREST = 2
} og_source;

typedef struct og_choice {
    og_tile_params params;
    og_source source;
    int64_t m, n, k, batch; /* the tuned shape the record came from */
    double gflops;          /* its measured GFLOP/s (0 for the default) */
    char db_path[512];      /* which database ("" for the default) */
} og_choice;

/* Selection (DESIGN.md "Selection order"): exact record, nearest tuned
 * shape, else the default. Deterministic mode always takes the default. */
og_status og_select(og_context *ctx, og_dtype dtype, og_mode mode, int trans_a, int trans_b,
                    int64_t m, int64_t n, int64_t k, int64_t batch, og_choice *out);

/* Records a dispatch of kernel key with push constants and descriptor set. */
og_status og_record_dispatch(og_context *ctx, VkCommandBuffer cmd, const og_kernel_key *key,
                             VkDescriptorSet set, const og_push *push, const uint32_t grid[3]);

const char *og_dtype_name(og_dtype t);

#endif /* OG_INTERNAL_H */

/* ---- GEMM objects (og_gemm.c) ---- */

typedef struct og_binding {
    uint64_t a, b, c; /* og_buffer serial numbers */
    og_src src;
    int vec;
    VkDescriptorSet set;
} og_binding;

typedef struct og_shape_choice {
    int trans_a, trans_b;
    int64_t m, n, k, batch;
    og_tile_params params;
} og_shape_choice;

struct og_gemm {
    og_context *ctx;
    og_dtype dtype;
    og_mode mode;
    VkDescriptorPool pool; /* holds up to OG_BINDINGS_MAX sets */
    og_binding *bindings;  /* descriptor sets by (A, B, C) */
    size_t n_bindings;
    og_shape_choice *choices; /* selection cache: after the first call, a lookup */
    size_t n_choices, cap_choices;
};

#define OG_BINDINGS_MAX 64

/* The parameters as this call can use them: vector loads need aligned
 * operands, texel buffers operands within maxTexelBufferElements; otherwise
 * the same tile runs with element loads from storage buffers. */
og_tile_params og_params_for_call(const og_context *ctx, og_dtype dtype, const og_gemm_args *args,
                                  const og_tile_params *p);

/* Records the GEMM with the given tile parameters instead of the selected ones. */
og_status og_gemm_encode_params(og_gemm *g, VkCommandBuffer cmd, const og_gemm_args *args,
                                const og_tile_params *p);

/* The selected parameters for a call (selection cache, then og_select). */
og_status og_gemm_choose(og_gemm *g, const og_gemm_args *args, og_tile_params *p);

/* Times `reps` dispatches of the GEMM with parameters p after `warmup`
 * untimed ones, with timestamp queries; *median_us is the median of one call. */
og_status og_gemm_time(og_gemm *g, const og_gemm_args *args, const og_tile_params *p, int warmup,
                       int reps, double *median_us);
