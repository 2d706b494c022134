/* The runtime's bottom layer: Vulkan objects (not installed). The context
 * (an owned or an adopted device and queue), memory and buffers, descriptor
 * sets, pipelines and their caches, submission and timing. Nothing here
 * knows GEMM: the plan layer (../plan) decides what runs, the record layer
 * (../record) turns that into commands through these objects. */
#ifndef OG_VK_H
#define OG_VK_H

#include <stdarg.h>
#include "og_volk.h"

#include "og_db.h"
#include "og_gen.h"
#include "onegpu.h"
/* What the tuner uses of the runtime besides onegpu.h: OG_ERROR_MAX,
 * og_fail, the timing types and og_time_encoder among them. */
#include "og_tuning.h"

/* Push constants of every kernel, in the declaration order of
 * templates/common.tmpl: the one push-constant range of every pipeline layout. */
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
    /* src = addr: the device addresses of A and B, low and high words,
     * 16-byte aligned (off_a and off_b then count from them); set when the
     * step is recorded. */
    uint32_t addr_a[2], addr_b[2];
} og_push;

/* og_push.epi bits above the activation (bits 0-1). */
#define OG_EPI_BIAS 4u           /* a bias is bound */
#define OG_EPI_FLOAT_OUT 8u      /* Int8Gemm: C is float32 */
#define OG_EPI_COLUMN_SCALES 16u /* Int8Gemm: per-column scales bound */
#define OG_EPI_ACCUMULATE 32u    /* Int8Gemm: C += sum */

/* ---- Memory (og_memory.c) ---- */

/* Where operands live, as records and `ogtune devices` name it. */
typedef enum og_placement {
    OG_PLACEMENT_DEVICE_LOCAL = 0, /* device-local; host access through staging copies */
    OG_PLACEMENT_DEVICE_MAPPED,    /* device-local and host-visible, mapped directly */
    OG_PLACEMENT_HOST_VISIBLE      /* the device has no device-local type */
} og_placement;

/* "device-local", "device-local-mapped" or "host-visible". */
const char *og_placement_name(og_placement p);

/* The memory types onegpu uses on a device, decided from the memory
 * properties alone (flags and heap sizes, never the vendor):
 *  - operands and scratch: a DEVICE_LOCAL type. It is mapped directly when
 *    a DEVICE_LOCAL | HOST_VISIBLE | HOST_COHERENT type lies in a heap at
 *    least half the size of the largest device-local heap: the memory an
 *    integrated GPU shares with the host, or a discrete GPU's whole memory
 *    behind a resizable BAR (a HOST_CACHED one first, where there is one).
 *    The 256 MiB BAR window of a discrete GPU without
 *    it is not meant for operands and is left alone. Otherwise a device-local
 *    type that is not host-visible (else any device-local type) and no
 *    mapping. force_staging keeps the mapping off on any device.
 *  - reads through the mapping only when that type is also HOST_CACHED
 *    (uncached reads across PCIe crawl); otherwise downloads are staged.
 *  - staging: HOST_VISIBLE | HOST_COHERENT, preferring HOST_CACHED and not
 *    DEVICE_LOCAL (system memory, so no BAR space is spent on it).
 * bits limits the types (a buffer's memoryTypeBits; ~0u for the device). */
typedef struct og_memory_choice {
    int operand_type; /* -1: no usable type */
    int staging_type; /* -1: none (then the operand type must be mapped) */
    int map_writes;   /* og_buffer_write copies into the mapping */
    int map_reads;    /* og_buffer_read copies out of the mapping */
    og_placement placement;
} og_memory_choice;
void og_memory_choose(const VkPhysicalDeviceMemoryProperties *mp, uint32_t bits, int force_staging,
                      og_memory_choice *out);

/* Default bytes of one staging copy (og_context_desc.staging_chunk_bytes). */
#define OG_STAGING_CHUNK (16u << 20)

/* ---- The context (og_context.c, og_instance.c, og_device_caps.c) ---- */

typedef struct og_pipeline {
    og_kernel_key key;
    VkPipeline pipeline;
} og_pipeline;

/* A cached descriptor set: the buffers (serial numbers) of bindings 0, 1,
 * 2, 3 and 5 and how A and B are bound. */
typedef struct og_set_key {
    uint64_t serial[5];
    uint64_t offset[5]; /* bytes past each buffer's base where its storage binding starts */
    uint32_t src;       /* og_src */
    uint32_t vec_words; /* texel layouts: words of A's and B's vector views (1, 2 or 4) */
} og_set_key;

typedef struct og_set_entry {
    og_set_key key;
    uint64_t made;       /* the set's number in the order sets entered the table */
    VkDescriptorSet set; /* VK_NULL_HANDLE: an empty slot */
    int removed;         /* a tombstone of open addressing */
} og_set_entry;

/* A set in a buffer's list: its key and og_set_entry.made, so that a set
 * made again for the same key after a release is not taken for the old. */
typedef struct og_set_ref {
    og_set_key key;
    uint64_t made;
} og_set_ref;

/* Descriptor sets by their buffers, in pools that grow (og_descriptors.c).
 * A set leaves the table only when one of its buffers is destroyed or the
 * caller releases them all; it is then kept for reuse, never freed or
 * rewritten while a command buffer may still use it. */
typedef struct og_set_cache {
    og_set_entry *table; /* open addressing, linear probing; cap a power of two */
    size_t cap, used, removed;
    VkDescriptorPool *pools;
    size_t n_pools;
    uint32_t room;             /* sets left in the newest pool */
    uint64_t made;             /* sets that have entered the table */
    uint64_t forget_visits;    /* keys og_sets_forget has looked up: its cost, for the tests */
    VkDescriptorSet *spare[2]; /* released sets by layout (og_src), rewritten when reused */
    size_t n_spare[2], cap_spare[2];
} og_set_cache;

struct og_context {
    og_allocator allocator; /* the runtime's host memory */
    int owns_instance, owns_device; /* 0: adopted from the application (never destroyed) */
    VkInstance instance;
    VkPhysicalDevice physical;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family;
    uint32_t timestamp_bits; /* timestampValidBits of the queue family (0: cannot time) */
    struct VolkDeviceTable vk;
    VkPhysicalDeviceProperties props;
    uint64_t max_allocation; /* VkPhysicalDeviceMaintenance3Properties::maxMemoryAllocationSize */
    VkPhysicalDeviceMemoryProperties memory_props;
    og_memory_choice memory; /* for the device: what og_buffer_create will take */
    int force_staging;
    uint64_t staging_chunk;
    og_buffer *staging; /* staging_chunk bytes, host-visible, made on first use */
    og_device_info info;
    og_limits limits;
    og_dialect dialect; /* of the kernels the GEMMs compile: GLSL; tests switch to HLSL */

    VkCommandPool pool;
    VkCommandBuffer cmd;      /* for og_*_run and timing */
    VkCommandBuffer copy_cmd; /* for buffers' fills and staging copies, which may come while
                                 cmd is being recorded (a scratch made on first use) */
    VkFence fence;
    /* One layout per og_src: A and B as storage or as uniform texel buffers. */
    VkDescriptorSetLayout set_layout[2];
    VkPipelineLayout pipeline_layout[2];
    og_set_cache sets;

    og_pipeline *pipelines; /* cache by kernel key (template, params, dialect) */
    size_t n_pipelines, cap_pipelines;
    /* The driver's cache every pipeline is created with (VK_NULL_HANDLE when
     * the driver could not make one), its file ("" when the on-disk caches are
     * off), and the bytes of that file handed to the driver at creation (0:
     * none, or the file was missing or refused; og_pipeline_cache.c). */
    VkPipelineCache pipeline_cache;
    char pipeline_cache_path[1024];
    size_t pipeline_cache_loaded;
    /* Kernels generated and compiled by shaderc for this context: the
     * pipelines whose SPIR-V the disk cache did not hold. */
    uint32_t kernels_compiled;

    struct og_db_entry {
        og_db *db;
        char path[512];
    } * dbs; /* tuning databases that opened, in search order */
    size_t n_dbs;
    int dbs_loaded;
    int warned_other_driver; /* the warning about another driver build's records, once */
    char *db_paths;

    og_buffer *placeholder; /* bound where a kernel's binding has no operand */

    VkDebugUtilsMessengerEXT messenger;
    uint32_t validation_errors;
    char error[OG_ERROR_MAX];
};

/* Records the message into err (OG_ERROR_MAX bytes) and returns st. */
og_status og_failf(char *err, og_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
og_status og_vk_fail(og_context *ctx, VkResult r, const char *what);
/* Empties og_last_error's message (og_context_create, at its start). */
void og_last_error_clear(void);

/* Instance side of og_context_create (og_instance.c): the instance with the
 * validation layer when asked (validation 1; 2 adds synchronisation
 * validation), the physical device OG_DEVICE names, and its properties and
 * limits into ctx (props, memory_props, info, limits). */
og_status og_instance_create(og_context *ctx, int validation);
og_status og_physical_pick(og_context *ctx, const char *want);
void og_properties_read(og_context *ctx);

/* VK_KHR_cooperative_matrix, which Debian 12's Vulkan headers (1.3.239)
 * predate: its structures and command as the Vulkan registry (vk.xml,
 * VK_KHR_cooperative_matrix revision 2) declares them, under onegpu's names.
 * Component types and scopes are the NV extension's values
 * (VK_COMPONENT_TYPE_FLOAT16_KHR 0, FLOAT32 1; VK_SCOPE_SUBGROUP_KHR 3). */
#define OG_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME "VK_KHR_cooperative_matrix"
#define OG_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR ((VkStructureType)1000506000)
#define OG_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR ((VkStructureType)1000506001)
#define OG_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR \
    ((VkStructureType)1000506002)

/* VkCooperativeMatrixPropertiesKHR. */
typedef struct og_coopmat_props_khr {
    VkStructureType sType;
    void *pNext;
    uint32_t MSize, NSize, KSize;
    VkComponentTypeNV AType, BType, CType, ResultType;
    VkBool32 saturatingAccumulation;
    VkScopeNV scope;
} og_coopmat_props_khr;

/* VkPhysicalDeviceCooperativeMatrixFeaturesKHR. */
typedef struct og_coopmat_features_khr {
    VkStructureType sType;
    void *pNext;
    VkBool32 cooperativeMatrix;
    VkBool32 cooperativeMatrixRobustBufferAccess;
} og_coopmat_features_khr;

/* VkPhysicalDeviceCooperativeMatrixPropertiesKHR. */
typedef struct og_coopmat_device_props_khr {
    VkStructureType sType;
    void *pNext;
    VkShaderStageFlags cooperativeMatrixSupportedStages;
} og_coopmat_device_props_khr;

/* vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR, loaded by name. */
typedef VkResult(VKAPI_PTR *og_coopmat_props_khr_fn)(VkPhysicalDevice, uint32_t *,
                                                     og_coopmat_props_khr *);

/* VK_NV_cooperative_matrix2 (also past Debian 12's headers), as vk.xml
 * declares it (revision 1): the features, the device's limits, and the
 * flexible-dimensions shapes (granularities in MSize, NSize, KSize). */
#define OG_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME "VK_NV_cooperative_matrix2"
#define OG_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV \
    ((VkStructureType)1000593000)
#define OG_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV \
    ((VkStructureType)1000593001)
#define OG_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV \
    ((VkStructureType)1000593002)

/* VkPhysicalDeviceCooperativeMatrix2FeaturesNV. */
typedef struct og_coopmat2_features_nv {
    VkStructureType sType;
    void *pNext;
    VkBool32 cooperativeMatrixWorkgroupScope;
    VkBool32 cooperativeMatrixFlexibleDimensions;
    VkBool32 cooperativeMatrixReductions;
    VkBool32 cooperativeMatrixConversions;
    VkBool32 cooperativeMatrixPerElementOperations;
    VkBool32 cooperativeMatrixTensorAddressing;
    VkBool32 cooperativeMatrixBlockLoads;
} og_coopmat2_features_nv;

/* VkPhysicalDeviceCooperativeMatrix2PropertiesNV. */
typedef struct og_coopmat2_props_nv {
    VkStructureType sType;
    void *pNext;
    uint32_t cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
    uint32_t cooperativeMatrixFlexibleDimensionsMaxDimension;
    uint32_t cooperativeMatrixWorkgroupScopeReservedSharedMemory;
} og_coopmat2_props_nv;

/* VkCooperativeMatrixFlexibleDimensionsPropertiesNV. */
typedef struct og_coopmat_flex_props_nv {
    VkStructureType sType;
    void *pNext;
    uint32_t MGranularity, NGranularity, KGranularity;
    VkComponentTypeNV AType, BType, CType, ResultType;
    VkBool32 saturatingAccumulation;
    VkScopeNV scope;
    uint32_t workgroupInvocations;
} og_coopmat_flex_props_nv;

/* vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV. */
typedef VkResult(VKAPI_PTR *og_coopmat_flex_props_fn)(VkPhysicalDevice, uint32_t *,
                                                      og_coopmat_flex_props_nv *);

/* The feature structures and extensions a device is created with
 * (og_device_caps.c): chain is the pNext of VkDeviceCreateInfo. */
typedef struct og_device_features {
    VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR dot;
    VkPhysicalDeviceCooperativeMatrixFeaturesNV matrix;
    og_coopmat_features_khr matrix_khr;
    og_coopmat2_features_nv matrix2;
    VkPhysicalDeviceSubgroupSizeControlFeaturesEXT size_control;
    VkPhysicalDeviceVulkan11Features v11;
    VkPhysicalDeviceVulkan12Features v12;
    const char *extensions[6];
    uint32_t n_extensions;
    void *chain;
} og_device_features;

/* Reads what the kernels can use (ctx->limits.integer_dot, ctx->limits.matrix)
 * and fills f with what to enable for it. ctx->physical, props and limits
 * must be read first. */
void og_device_features_read(og_context *ctx, og_device_features *f);

/* The same for a device the application created: what the kernels may use
 * is what info enabled (its extensions and its pNext chain of feature
 * structures, or pEnabledFeatures) and the device supports. */
void og_device_features_adopt(og_context *ctx, const VkDeviceCreateInfo *info);

/* The runtime's host memory (og_alloc.c): og_mem_alloc zeroes what it
 * returns; a NULL allocator, or one with NULL functions, is the C library's. */
void *og_mem_alloc(const og_allocator *a, size_t bytes);
void *og_mem_realloc(const og_allocator *a, void *ptr, size_t bytes);
void og_mem_free(const og_allocator *a, void *ptr);
char *og_mem_strdup(const og_allocator *a, const char *s);

/* ---- Buffers (og_buffer.c, og_staging.c) ---- */

struct og_buffer {
    og_context *ctx;
    uint64_t serial; /* unique in the process: a cache key no later buffer can reuse */
    VkBuffer buffer;
    VkDeviceMemory memory; /* VK_NULL_HANDLE for a wrapped buffer */
    void *mapped;          /* NULL: host access goes through staging copies */
    int map_reads;         /* reads may use the mapping */
    int wrapped;           /* the application's VkBuffer: never destroyed here */
    VkBufferUsageFlags usage;
    uint64_t size;      /* as requested */
    uint64_t allocated; /* bytes from base the kernels may read: whole 32-bit words, at least one */
    /* Descriptors start at base (offset rounded down to the device's storage
     * and texel offset alignments); the operand's first byte is skew bytes
     * further, which the plan adds to the element offsets. 0 and 0 for
     * buffers onegpu made. */
    uint64_t base, skew;
    /* The device address of base (vkGetBufferDeviceAddress), or 0 where the
     * device or the buffer's usage has none. */
    uint64_t address;
    VkBufferView texels[3]; /* views of 1, 2 and 4 words a texel, made on first use */
    /* The cached descriptor sets that bind this buffer, so that destroying
     * it visits its own sets alone (og_sets_forget). One whose set has since
     * left the table (another of its buffers went, or a release) is dropped
     * when the list would grow. */
    og_set_ref *sets;
    size_t n_sets, cap_sets;
};

/* Whether A or B may be read through texel views of buf (its usage has
 * UNIFORM_TEXEL_BUFFER). */
int og_buffer_texel_ok(const og_buffer *buf);
/* Whether kernels may bind buf (its usage has STORAGE_BUFFER; a host buffer's
 * has not). */
int og_buffer_bindable(const og_buffer *buf);

/* Backs buf (ctx, size, allocated and usage set) with a VkBuffer of
 * buf->allocated bytes bound to memory of its own: the operand type of
 * og_memory_choose, mapped where writes may use the mapping; or, with
 * staging set, the staging type, always mapped. Memory of a buffer with
 * VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT is allocated for addresses.
 * On error what was made stays in buf for og_buffer_free. */
og_status og_buffer_back(og_buffer *buf, int staging);
/* A new og_buffer of ctx for `bytes` bytes (a serial of its own, nothing
 * backing it yet), or NULL without memory. */
og_buffer *og_buffer_new(og_context *ctx, uint64_t bytes);
/* A buffer of onegpu's own: `bytes` bytes padded to whole 32-bit words (a
 * 16-bit element at the end of an odd-length buffer is read as part of a
 * word) with `usage`, backed by og_buffer_back (host: the staging memory
 * type, mapped), into *out; what names the call in errors. */
og_status og_buffer_made(og_context *ctx, const char *what, uint64_t bytes, VkBufferUsageFlags usage,
                         int host, og_buffer **out);
/* Destroys the VkBuffer and memory of a buffer backed by og_buffer_back
 * (either may be VK_NULL_HANDLE), then buf; no descriptor-set bookkeeping
 * (og_buffer_destroy does that). NULL is ignored. */
void og_buffer_free(og_buffer *buf);
/* Copies through the staging buffer in chunks of ctx->staging_chunk bytes,
 * each one submit (og_staging.c). */
og_status og_staging_write(og_buffer *buf, uint64_t offset, const void *src, uint64_t bytes);
og_status og_staging_read(const og_buffer *buf, uint64_t offset, void *dst, uint64_t bytes);
/* Fills bytes [0, allocated) of a buffer onegpu made with zeros on the device. */
og_status og_buffer_zero(og_buffer *buf);

/* ---- Descriptor sets (og_descriptors.c) ---- */

/* The set of key, whose buffers are bufs[0..4] (bindings 0, 1, 2, 3, 5),
 * written on first use; texel layouts bind A's and B's scalar views at 0
 * and 1, their views of key->vec_words words at 3 and 4, and bufs[3] at 6.
 * Recording a cached set allocates nothing. */
og_status og_set_get(og_context *ctx, const og_set_key *key, og_buffer *const bufs[5],
                     VkDescriptorSet *out);
/* A buffer is being destroyed: its sets go to the spare lists, visiting
 * only the keys of buf's own list, which is freed. */
void og_sets_forget(og_buffer *buf);
/* Every cached set goes to the spare lists (og_context_release_bindings). */
void og_sets_forget_all(og_context *ctx);
void og_sets_destroy(og_context *ctx);

/* ---- Pipelines and caches ---- */

/* The directory of the on-disk caches, $XDG_CACHE_HOME/onegpu, else
 * ~/.cache/onegpu, into dir. Returns 0 (the caches are off) when
 * OG_SPIRV_CACHE=0, when neither variable is set, or when the path does not
 * fit in len. Read on every call: the environment decides. */
int og_cache_dir(char *dir, size_t len);

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

/* ---- Submission and timing (og_submit.c, og_timer.c) ---- */

/* Records one global memory barrier (VkMemoryBarrier) from the src stages
 * and accesses to the dst ones. */
void og_cmd_barrier(og_context *ctx, VkCommandBuffer cmd, VkPipelineStageFlags src_stages,
                    VkAccessFlags src_access, VkPipelineStageFlags dst_stages,
                    VkAccessFlags dst_access);

/* Submits one recorded command buffer and waits for it. */
og_status og_submit_wait(og_context *ctx, VkCommandBuffer cmd);

/* Begins cmd (one of the context's), records through fn, submits, waits. */
og_status og_run_on(og_context *ctx, VkCommandBuffer cmd, og_encoder fn, void *user);
/* The same on the context's command buffer ctx->cmd. */
og_status og_run_recorded(og_context *ctx, og_encoder fn, void *user);

/* The time between two timestamps of a queue family with valid_bits valid
 * bits (Vulkan: only those bits count; the counter wraps at 2^valid_bits),
 * in ns, with period ns a tick (timestampPeriod). */
double og_timestamp_ns(uint64_t start, uint64_t end, uint32_t valid_bits, float period);

#endif /* OG_VK_H */
