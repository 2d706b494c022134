/*
 * onegpu: generated, autotuned GEMM kernels for Vulkan.
 *
 * The one public header of libonegpu. It computes
 *
 *     C = alpha * op(A) * op(B) + beta * C
 *
 * for `batch` independent products, as the reference GEMM design specifies
 * ("Matrix multiplication (Gemm)"; docs/reference-design.md). op(X) is X or its
 * transpose. A and B are float32, float16 or bfloat16; products and sums are
 * float32 and C is float32. Matrices are dense and row-major with a leading
 * dimension; every size, leading dimension, stride and offset counts elements,
 * not bytes.
 *
 * Shapes, with op(A) M x K, op(B) K x N and C M x N:
 *   A not transposed: A is stored M x K, element (i, k) at a_offset + i*lda + k, lda >= K
 *   A transposed:     A is stored K x M, element (i, k) at a_offset + k*lda + i, lda >= M
 *   B not transposed: B is stored K x N, element (k, j) at b_offset + k*ldb + j, ldb >= N
 *   B transposed:     B is stored N x K, element (k, j) at b_offset + j*ldb + k, ldb >= K
 *   C:                element (i, j) at c_offset + i*ldc + j, ldc >= N
 * Product b of the batch adds b*stride_a, b*stride_b and b*stride_c to the
 * offsets; stride_b = 0 shares one B across the batch.
 *
 * Errors: every function returns an og_status. On failure the context keeps
 * a message naming the operation and the dimension (og_context_last_error),
 * and nothing has been recorded, dispatched or written.
 *
 * Threads: a context and everything made from it are used by one thread at
 * a time; separate contexts are independent. A context that adopts the
 * application's queue (og_context_desc.adopt) submits to it in og_*_run,
 * og_buffer_create, og_buffer_write and og_buffer_read (all of which wait
 * for their own work before returning, on a fence of their own): during
 * these calls no other thread may use that queue (vkQueueSubmit needs the
 * queue externally synchronised), and work the application submitted
 * earlier to the queue runs first.
 *
 * Memory: buffers onegpu makes are device-local (og_buffer_create). Host
 * access maps them where the device offers device-local memory meant for
 * the host (integrated GPUs, resizable BAR) and otherwise copies through a
 * staging buffer; OG_STAGING=1 or og_context_desc.force_staging forces the
 * copies on any device.
 */
#ifndef ONEGPU_H
#define ONEGPU_H

#include <stddef.h>
#include <stdint.h>

/* Vulkan's types, as the application gets them: onegpu.h neither defines
 * nor undefines VK_NO_PROTOTYPES. An application that calls Vulkan through
 * the loader's prototypes links it (-lvulkan, CMake's Vulkan::Vulkan); one
 * that loads Vulkan itself (volk, its own vkGetInstanceProcAddr) defines
 * VK_NO_PROTOTYPES, or includes volk.h, before this header. The library
 * needs neither: it loads the loader at run time, under names of its own
 * (no vk* symbol of libonegpu.a or libonegpu.so meets the application's). */
#include <vulkan/vulkan.h>

#include "onegpu_formats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The types the ground floor (gen/, db/) shares with this header: the same
 * text as gen/og_types.h, under the same guard (tests/test_floors.sh checks
 * that the two agree). */
#ifndef OG_TYPES_H
#define OG_TYPES_H
/* Status codes. OG_OK is zero; everything else is an error. */
typedef enum og_status {
    OG_OK = 0,
    OG_ERROR_INVALID_ARGUMENT, /* a shape, stride, offset or option is out of range */
    OG_ERROR_UNSUPPORTED,      /* valid, but beyond what this device or build can do */
    OG_ERROR_OUT_OF_MEMORY,    /* host or device allocation failed */
    OG_ERROR_VULKAN,           /* a Vulkan call failed (the message gives the VkResult) */
    OG_ERROR_COMPILE,          /* a generated kernel failed to compile */
    OG_ERROR_NOT_FOUND,        /* no device, database record or file where one was asked for */
    OG_ERROR_DATABASE,         /* the tuning database could not be read or written */
    OG_ERROR_DEVICE_LOST       /* VK_ERROR_DEVICE_LOST (Vulkan spec 5.2.3, "Lost Device"):
                                  nothing more runs on this context; destroy it and create
                                  a new one (its buffers' contents are undefined) */
} og_status;

/* Element type of A and B. The float GEMM takes float32, float16, bfloat16
 * and the FP8 types (C is float32); Int8Gemm takes int8 and uint8 (C is
 * int32 or float32). FP8 elements are bytes (OCP 8-bit floating point,
 * decoded exactly as onegpu_formats.h's og_e4m3_to_f32 and og_e5m2_to_f32). */
typedef enum og_dtype {
    OG_F32 = 0,
    OG_F16 = 1,      /* IEEE 754 binary16 */
    OG_BF16 = 2,     /* bfloat16: the high 16 bits of a binary32 */
    OG_INT8 = 3,     /* two's complement, -128..127 */
    OG_UINT8 = 4,    /* 0..255 */
    OG_FP8_E4M3 = 5, /* 1 sign, 4 exponent (bias 7), 3 mantissa bits; max 448, no infinities */
    OG_FP8_E5M2 = 6  /* 1 sign, 5 exponent (bias 15), 2 mantissa bits; max 57344, infinities */
} og_dtype;

/* Fast may use any tuned variant and summation order; Deterministic always
 * runs the portable kernel with the documented summation order
 * (docs/accumulation-order.md), whatever the tuning database says. */
typedef enum og_mode { OG_MODE_FAST = 0, OG_MODE_DETERMINISTIC = 1 } og_mode;
#endif /* OG_TYPES_H */

/* Activation applied to each result element after alpha * product + beta * C
 * and the bias (reference design, "Bias and activation epilogue"). ReLU is a
 * compare and select: NaN and +Inf pass, anything below zero becomes +0.
 * GELU(x) = x * Phi(x) with erf, or with the tanh approximation of Hendrycks
 * and Gimpel; GELU(NaN) = NaN, GELU(+Inf) = +Inf, GELU(-Inf) = -0. */
typedef enum og_activation {
    OG_ACTIVATION_NONE = 0,
    OG_ACTIVATION_RELU = 1,
    OG_ACTIVATION_GELU_ERF = 2,
    OG_ACTIVATION_GELU_TANH = 3
} og_activation;

/* How the float GEMM forms its products (og_gemm_desc).
 * OG_PRECISION_RECOVERED: float32 recovered from float16 products (SGEMM-cube,
 * arXiv:2507.23387; Ootomo and Yokota's split): each float32 operand x is
 * split into hi = float16(x) and lo = float16((x - hi) * 2^s), and
 * op(A)*op(B) is rebuilt as sum(hi*hi) + sum(hi*lo + lo*hi) * 2^-s, the two
 * sums in float32 accumulators of their own, the small one added at the end
 * and lo*lo omitted. Inputs must keep their magnitudes inside float16's range
 * (|x| < 65520, and far above 2^-24 to keep precision) unless range_scaling
 * is on, which scales each row of op(A) and column of op(B) by a power of two
 * so its largest magnitude lies in [2^14, 2^15) before the split, and the
 * result back after it: then any finite inputs whose products and sums stay
 * in float32's range work. docs/recovered-float32.md gives the error. */
typedef enum og_precision {
    OG_PRECISION_NATIVE = 0,   /* products of the input type, float32 sums */
    OG_PRECISION_RECOVERED = 1 /* float32 inputs only: three float16 products per term */
} og_precision;

typedef struct og_context og_context;
typedef struct og_buffer og_buffer;
typedef struct og_gemm og_gemm;
typedef struct og_int8gemm og_int8gemm;

/* Host memory for the runtime's own allocations (contexts, buffers' and GEMM
 * objects' bookkeeping, pipeline and descriptor-set caches), like Vulkan's
 * VkAllocationCallbacks. The shader compiler, SQLite and the Vulkan driver
 * allocate on their own. alloc returns NULL on failure (the call then fails
 * with OG_ERROR_OUT_OF_MEMORY); free takes NULL. All three or none. */
typedef struct og_allocator {
    void *user;
    void *(*alloc)(void *user, size_t bytes);
    void *(*realloc)(void *user, void *ptr, size_t bytes);
    void (*free)(void *user, void *ptr);
} og_allocator;

/* The application's own Vulkan objects, for a context that adopts them
 * instead of creating an instance and a device. onegpu enables nothing on
 * them, destroys none of them, and uses only what the application enabled:
 * every kernel's eligibility (packed integer dot products, cooperative
 * matrices and what they need, bufferDeviceAddress with an instance of
 * Vulkan 1.2 or later for operands past maxStorageBufferRange) comes from
 * device_info. The kernels are
 * SPIR-V for Vulkan 1.1: the instance and device must allow at least that.
 * volk loads the instance's functions into process-wide pointers, so a
 * process uses one vkGetInstanceProcAddr for all its contexts. */
typedef struct og_vulkan_device {
    VkInstance instance;
    /* The application's loader entry point; NULL: the system's Vulkan loader. */
    PFN_vkGetInstanceProcAddr get_instance_proc_addr;
    uint32_t api_version; /* VkApplicationInfo.apiVersion of the instance; 0 is 1.1 */
    VkPhysicalDevice physical_device;
    VkDevice device;
    /* What the device was created with (read during og_context_create only):
     * its extensions and its pNext chain of feature structures. */
    const VkDeviceCreateInfo *device_info;
    VkQueue queue;         /* a queue of queue_family, which must support compute */
    uint32_t queue_family; /* command buffers given to og_*_encode come from its pools */
} og_vulkan_device;

/* Context creation. A NULL desc, or zeroed fields, take the defaults. */
typedef struct og_context_desc {
    /* Device by index or by a substring of its name; NULL reads the
     * OG_DEVICE environment variable, and when that is unset too the first
     * device is used. */
    const char *device;
    /* Tuning databases to search, ':'-separated, first match wins; "" for
     * none (the built-in defaults). NULL reads OG_TUNING_DB when it is set
     * and not empty; else the user's cache ($XDG_CACHE_HOME/onegpu/tuning.db
     * or ~/.cache/onegpu/tuning.db), then the pre-tuned databases installed
     * with the library, in that order. Those are every *.db, in name order,
     * of OG_PRETUNED_DIR when it is set; else of share/onegpu of the prefix
     * the library was installed to, found from its own file wherever the
     * prefix lies (<prefix>/lib/libonegpu.so, or a program linked with
     * libonegpu.a in <prefix>/bin), when that directory exists; else of
     * share/onegpu of the prefix configured when it was built. A program
     * linked statically and installed elsewhere sets OG_PRETUNED_DIR.
     *
     * Which records a database lends this device (docs/ogtune.md, "Which
     * driver's records"): those of the same vendor id, device id and driver
     * id (VkPhysicalDeviceDriverProperties::driverID) only. Among them,
     * records of this driver build (the same driverVersion, driverInfo and
     * pipelineCacheUUID) are used; records of another build (another
     * driverVersion, driverInfo or UUID, or an unknown build: a database
     * before schema version 5) are used only when the database has none of
     * this build for the kernel and key, with a warning on stderr, and
     * `ogtune select --json` reports them as "driver":{"rule":"other",...}.
     * Records of another vendor, device or driver id are never used. */
    const char *tuning_db;
    /* Non-zero enables VK_LAYER_KHRONOS_validation on the instance the
     * context creates and counts the errors it reports
     * (og_context_validation_errors); 2 adds its synchronisation validation
     * (hazards between commands, VK_EXT_validation_features).
     * OG_VALIDATION=1 and OG_VALIDATION=sync do the same. Not with adopt
     * (OG_ERROR_INVALID_ARGUMENT): the application's instance is validated
     * as the application enabled it, and its own messengers, which report
     * onegpu's calls on it too, are where the errors go; onegpu installs no
     * messenger there, so it neither counts nor prints the application's
     * errors as its own. */
    int validation;
    /* NULL: malloc, realloc and free. Copied; used until og_context_destroy. */
    const og_allocator *allocator;
    /* Non-NULL: adopt the application's device and queue (see
     * og_vulkan_device); device, OG_DEVICE and OG_VALIDATION are then
     * ignored, and validation must be 0. Read during og_context_create only. */
    const og_vulkan_device *adopt;
    /* Non-zero: og_buffer_write and og_buffer_read copy through a staging
     * buffer even where the buffers could be mapped (OG_STAGING=1 does the
     * same), so a device whose memory is all host-visible (lavapipe) runs
     * the path of a discrete GPU. */
    int force_staging;
    /* Bytes of one staging copy (0: 16 MiB); rounded up to a whole word. A
     * larger upload runs as several copies through the same staging buffer. */
    uint64_t staging_chunk_bytes;
} og_context_desc;

/* Creates a Vulkan instance and a logical device with one compute queue:
 * of a family without graphics where the device has one (the dedicated
 * compute queues of discrete GPUs), preferring one whose timestampValidBits
 * is not 0, so the tuner can time. Or, with desc->adopt, wraps the
 * application's objects (nothing created but a command pool, a fence,
 * layouts, pipelines and buffers of onegpu's own).
 * Errors: OG_ERROR_NOT_FOUND when no Vulkan device matches,
 * OG_ERROR_VULKAN when the loader or driver fails, OG_ERROR_INVALID_ARGUMENT
 * for an adopt description missing a handle or naming no queue family of
 * the device. On failure *out is NULL; og_last_error() gives the reason.
 *
 * Every pipeline the context creates goes through one VkPipelineCache,
 * seeded from the user's cache directory ($XDG_CACHE_HOME/onegpu, else
 * ~/.cache/onegpu, beside the compiled SPIR-V), file
 * pipelines-<vendorID>-<deviceID>-<driverVersion>-<pipelineCacheUUID>.bin
 * (hex), so another device or a driver update never reads it. The file is
 * handed to the driver only when its checksum holds and its
 * VkPipelineCacheHeaderVersionOne names this device and UUID; anything else
 * (missing, truncated, damaged, not a regular file) is ignored. Both caches
 * are off when OG_SPIRV_CACHE=0 and when neither XDG_CACHE_HOME nor HOME is
 * set. Reading or writing them never fails a call. */
og_status og_context_create(const og_context_desc *desc, og_context **out);

/* Frees everything the context owns, after waiting for the device to be
 * idle when the context created it. An adopted device is not waited for:
 * the application must have finished every command buffer it recorded with
 * onegpu (and the application's objects are left alone).
 * When the context created a pipeline and the cache is on, first writes the
 * driver's pipeline cache to its file (see og_context_create), to a
 * temporary file renamed into place, so another process sees the old file or
 * the new one, never a part. A process that ends without destroying its
 * context keeps only the SPIR-V it compiled. NULL is allowed. */
void og_context_destroy(og_context *ctx);

/* The message of the last failed call on this context ("" when none). */
const char *og_context_last_error(const og_context *ctx);

/* The message of the last failed og_context_create on this thread. */
const char *og_last_error(void);

/* The device's name, as VkPhysicalDeviceProperties reports it. */
const char *og_context_device_name(const og_context *ctx);

/* Errors reported by the validation layer since the context was created
 * (0 when validation is off, and for an adopted instance, whose errors go
 * to the application's messengers). */
uint32_t og_context_validation_errors(const og_context *ctx);

/* Vulkan handles, for recording into the caller's own command buffers. */
VkDevice og_context_vk_device(const og_context *ctx);
VkQueue og_context_vk_queue(const og_context *ctx);
uint32_t og_context_queue_family(const og_context *ctx);

/* Where the context's buffers live: "device-local" (host access through
 * staging copies), "device-local-mapped" (device-local memory the host maps:
 * integrated GPUs, resizable BAR) or "host-visible" (a device without
 * device-local memory). The rule, from memory-type flags and heap sizes: a
 * DEVICE_LOCAL | HOST_VISIBLE | HOST_COHERENT type in a heap at least half
 * as large as the largest device-local heap is mapped; otherwise a
 * device-local type is staged (forced on by force_staging / OG_STAGING).
 * Reads go through the mapping only when that type is HOST_CACHED. */
const char *og_context_memory_placement(const og_context *ctx);

/* What one operand may take on the context's device, for callers that
 * split larger work into pieces (the drop-in BLAS does). */
typedef struct og_device_limits {
    /* Bytes one storage binding covers (maxStorageBufferRange): each of C,
     * the bias and the column scales must span no more, from its first
     * element (its binding starts there, aligned down), and so must A and B
     * where they cannot be read by address (og_gemm_encode). */
    uint64_t max_binding_bytes;
    /* Bytes one device memory allocation may take (Vulkan 1.1's
     * maxMemoryAllocationSize): og_buffer_create of more may fail. */
    uint64_t max_buffer_bytes;
} og_device_limits;

/* Fills *out with the limits of the context's device. */
void og_context_device_limits(const og_context *ctx, og_device_limits *out);

/* Every descriptor set the context keeps may be rewritten from now on: the
 * caller promises that no command buffer recorded with onegpu before this
 * call is pending or will be submitted again. Sets are otherwise kept until
 * one of their buffers is destroyed, so this is only needed to bound memory
 * when buffers live long and many distinct operand combinations are
 * recorded. */
void og_context_release_bindings(og_context *ctx);

/* A device-local storage buffer of `bytes` bytes (0 allowed: an empty
 * operand), padded to a whole 32-bit word so 16-bit elements at an odd end
 * can be read as part of a word, and zero-filled on the device
 * (vkCmdFillBuffer, submitted and waited for). Usage: storage, uniform
 * texel, transfer source and destination, and shader device address (its
 * memory allocated with VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT) where the
 * context has bufferDeviceAddress. Errors: OG_ERROR_OUT_OF_MEMORY,
 * OG_ERROR_UNSUPPORTED when no memory type can back it. */
og_status og_buffer_create(og_context *ctx, uint64_t bytes, og_buffer **out);

/* A host-visible, host-coherent buffer of `bytes` bytes for the caller's
 * own staging copies (padded to a whole 32-bit word), mapped for its whole
 * life: og_buffer_host_pointer gives its bytes. Usage: transfer source and
 * destination only, so kernels never bind it (a GEMM, convolution or
 * Int8Gemm given one fails with OG_ERROR_INVALID_ARGUMENT naming the
 * operand); the caller records vkCmdCopyBuffer between it and
 * og_buffer_create's buffers (og_buffer_vk_buffer, og_buffer_vk_offset).
 * Memory: the type og_buffer_write's own staging uses (HOST_VISIBLE |
 * HOST_COHERENT, HOST_CACHED and not DEVICE_LOCAL where the device has
 * such a type), so the host writes and reads it at memory speed while the
 * device computes, and the copies, not the kernels, cross the bus. Its
 * contents start undefined. Errors: OG_ERROR_OUT_OF_MEMORY;
 * OG_ERROR_UNSUPPORTED when the device has no host-visible coherent type. */
og_status og_buffer_create_host(og_context *ctx, uint64_t bytes, og_buffer **out);

/* The host's address of the buffer's first byte where the host maps it:
 * always for og_buffer_create_host's buffers, and for og_buffer_create's
 * where og_context_memory_placement is not "device-local"; NULL otherwise
 * (staged and wrapped buffers). The host may touch those bytes only while
 * no submitted command that accesses the buffer is pending (Vulkan's rule
 * for mapped memory): its writes reach the device at the next
 * vkQueueSubmit (coherent memory), and the device's writes reach it after
 * the submission's fence has signalled when a barrier to HOST (HOST_READ)
 * follows them in the command buffer. */
void *og_buffer_host_pointer(const og_buffer *buf);

/* An og_buffer over bytes [offset, offset + bytes) of the application's
 * VkBuffer, without a copy and without ownership: og_buffer_destroy leaves
 * the VkBuffer alone, and the application keeps it (and its memory) alive
 * while the og_buffer is used. usage is the VkBuffer's usage flags: it must
 * include STORAGE_BUFFER; with UNIFORM_TEXEL_BUFFER the kernels may read A
 * and B through texel views; with SHADER_DEVICE_ADDRESS (its memory then
 * allocated with VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT, as Vulkan asks, on a
 * device with bufferDeviceAddress enabled) A and B may extend past
 * maxStorageBufferRange (see og_gemm_encode); with TRANSFER_DST / TRANSFER_SRC,
 * og_buffer_write / og_buffer_read copy to and from it through staging. The
 * offset needs no alignment beyond a 32-bit word: descriptors start at the
 * device's minStorageBufferOffsetAlignment (and texel alignment) below it
 * and the kernels' element offsets make up the rest. Errors:
 * OG_ERROR_INVALID_ARGUMENT for a null handle, usage without storage, or an
 * offset or size that is not a whole number of 32-bit words (the kernels
 * read words), or a size of 0. */
og_status og_buffer_wrap(og_context *ctx, VkBuffer buffer, uint64_t offset, uint64_t bytes,
                         VkBufferUsageFlags usage, og_buffer **out);

/* Frees the buffer (a wrapped VkBuffer is left alone) and every descriptor
 * set that names it: no command buffer using it may be pending (Vulkan's
 * rule for vkDestroyBuffer). NULL is allowed. */
void og_buffer_destroy(og_buffer *buf);
/* Size in bytes as requested at creation (without the padding). */
uint64_t og_buffer_size(const og_buffer *buf);
/* The VkBuffer and the byte offset of the buffer's first byte in it, for
 * the application's own barriers and copies. */
VkBuffer og_buffer_vk_buffer(const og_buffer *buf);
uint64_t og_buffer_vk_offset(const og_buffer *buf);
/* Copies bytes between host memory and the buffer: through the mapping
 * (at once: no command that uses the buffer may be pending), or through the
 * staging buffer in chunks (og_context_desc.staging_chunk_bytes), each one a
 * vkCmdCopyBuffer submitted on the context's queue and waited for, after a
 * barrier that orders it behind earlier compute and transfer work on the
 * queue. Errors: OG_ERROR_INVALID_ARGUMENT when offset + bytes
 * exceeds the buffer (nothing is copied); OG_ERROR_UNSUPPORTED for a wrapped
 * buffer whose usage lacks the transfer bit. */
og_status og_buffer_write(og_buffer *buf, uint64_t offset, const void *src, uint64_t bytes);
og_status og_buffer_read(const og_buffer *buf, uint64_t offset, void *dst, uint64_t bytes);

/* One GEMM call. Dimensions are signed so a negative value is caught and
 * reported rather than wrapped. */
typedef struct og_gemm_args {
    int trans_a, trans_b;   /* non-zero: op(X) = X^T */
    int64_t m, n, k, batch; /* batch 0 is taken as 1 */
    /* beta == 0: C is never read. alpha == 0 or K == 0: A and B are never
     * read (reference BLAS's rule), C = act(beta * C + bias), so NaN or Inf
     * in A or B cannot reach C; with beta == 1 and no epilogue too, C is left
     * bit for bit. */
    float alpha, beta;
    og_buffer *a, *b, *c;   /* a and b may be NULL when k == 0 */
    /* Leading dimensions (row-major: elements between rows as stored), at
     * least max(1, stored row length) as BLAS asks, also when that length
     * (K, N or M) is 0: lda >= max(1, K) for A not transposed, max(1, M)
     * transposed; ldb >= max(1, N), or max(1, K) transposed; ldc >= max(1, N). */
    int64_t lda, ldb, ldc;
    int64_t a_offset, b_offset, c_offset;
    /* Batch strides; stride_b 0 shares B; the products' outputs must not
     * overlap (stride_c >= (M-1)*ldc + N when batch > 1). */
    int64_t stride_a, stride_b, stride_c;
    /* Epilogue: C(i, j) = act(alpha * product + beta * C(i, j) + bias[bias_offset + j])
     * in the same dispatch. bias is float32 whatever the input type, N elements
     * from bias_offset, shared by every row and product; NULL adds nothing. */
    og_buffer *bias;
    int64_t bias_offset;
    og_activation activation;
    /* Per-tensor scales of FP8 operands (0 is taken as 1; ignored for the
     * other types), as cuBLASLt's A and B scales: the kernel sums the decoded
     * FP8 values in float32 and multiplies the sum by (alpha * scale_a) *
     * scale_b, rounded to float32 on the host, in place of alpha. */
    float scale_a, scale_b;
} og_gemm_args;

/* Creates a GEMM object for one input type and mode. Kernels are chosen per
 * shape: the exact tuned record in the database, else the nearest tuned
 * shape of the same key, else the reference design's default (64x64x16
 * tile, 256 invocations, 4x4 register tile). In Deterministic mode the
 * database is not consulted. Three cases are chosen from the shape in both
 * modes (reference design, "Small grids and few rows"): float32 products
 * with M <= 4 and A not transposed run the few-rows kernel; at most 16 rows
 * of A not transposed (float16 and bfloat16 from one row, float32 from
 * five) run the decode kernel, which reads B once for all rows
 * (docs/decode.md); and a grid of
 * fewer than 384 workgroups of 64 x 64 with K >= 128 is split along k into
 * ranges whose sums go to a 16 MiB float32 scratch the object allocates on
 * first use, then are added in range order by a second pass. The summation
 * order of each path is written down in docs/accumulation-order.md.
 * Float16 in Fast mode runs the cooperative-matrix kernel (64x64x16 tile,
 * 8 or 4 subgroups of 32, GL_NV_cooperative_matrix) on devices whose
 * capabilities qualify (docs/matrix-kernels.md), with the tuned records of
 * it and of the portable tile competing; bfloat16 and float32 keep the
 * portable kernel. */
og_status og_gemm_create(og_context *ctx, og_dtype input, og_mode mode, og_gemm **out);

/* A GEMM object with every option. Zeroed fields are float32 inputs, Fast
 * mode, native precision. */
typedef struct og_gemm_desc {
    /* Element types: A and B equal (float32, float16 or bfloat16), or at
     * least one FP8 type with the other FP8 or float32 (weight-only quantised
     * products). FP8 products run the portable tile, or with A not
     * transposed the few-rows kernel for M <= 4 and the decode kernel for
     * 5 <= M <= 16, as float32 does. */
    og_dtype a_type, b_type;
    og_mode mode;
    og_precision precision; /* OG_PRECISION_RECOVERED takes float32 A and B */
    /* Recovered precision: the residual shift s, 1..12 (0 takes 11), and
     * non-zero to scale rows and columns by powers of two (a pass over A and
     * B before the product writes one exponent per row and column, per
     * product, to a 4 MiB scratch the object allocates on first use; larger
     * calls run in pieces of whole products and rows). */
    int residual_shift;
    int range_scaling;
} og_gemm_desc;

/* Creates a GEMM object as desc says (og_gemm_create is the case of equal
 * types and native precision). Recovered precision runs, in Fast mode on
 * devices that take the float16 cooperative-matrix kernel, that kernel with
 * residual tiles (three float16 matrix products per step); elsewhere, and in
 * Deterministic mode, the portable tile (64x64x16, staged; the float16 high
 * products summed in the documented blocked order, the small terms in one
 * fma chain in increasing k; no split-k). Those are the defaults: in Fast
 * mode, without range scaling and with the default shift, a tuned record of
 * op "gemm_recovered" (ogtune tune --precision recovered; another staged
 * tile or matrix tile, unsplit) replaces them, and only such records do;
 * scaled calls, other shifts and Deterministic mode never consult the
 * database. FP8 inputs use float32's records and rules (tile geometry, few
 * rows).
 * Errors: OG_ERROR_INVALID_ARGUMENT naming the field (a type pair outside
 * the list above, recovered precision with non-float32 inputs, a shift
 * outside 1..12). */
og_status og_gemm_create_desc(og_context *ctx, const og_gemm_desc *desc, og_gemm **out);
void og_gemm_destroy(og_gemm *g);

/* Records the GEMM into `cmd`, which must be in the recording state and
 * belong to a pool of og_context_queue_family(). The caller submits it and
 * keeps the buffers alive until it completes. Split-k calls of one GEMM
 * object share its scratch: the command buffers recording them must run in
 * the order recorded, on one queue.
 *
 * Synchronisation (what it records around its dispatches):
 *  - before the first: a global memory barrier from COMPUTE_SHADER and
 *    TRANSFER (SHADER_WRITE, TRANSFER_WRITE) to COMPUTE_SHADER (SHADER_READ,
 *    SHADER_WRITE). So the application's earlier dispatches and copies that
 *    wrote A, B, C or the bias (vkCmdCopyBuffer, vkCmdFillBuffer,
 *    vkCmdUpdateBuffer, compute shaders) need no barrier of their own, and
 *    its earlier reads of C in those stages finish before C is written.
 *    Writes by other stages (graphics, the host after submission) need the
 *    application's barrier.
 *  - after each: a global memory barrier from COMPUTE_SHADER (SHADER_WRITE)
 *    to COMPUTE_SHADER, TRANSFER and HOST (SHADER_READ, SHADER_WRITE,
 *    TRANSFER_READ, TRANSFER_WRITE, HOST_READ). So C can be read by the
 *    next dispatch, copy or (after a fence) the host; and the application's
 *    later dispatches and transfers (vkCmdCopyBuffer, vkCmdFillBuffer,
 *    vkCmdUpdateBuffer) may write A, B, C or the bias with no barrier of
 *    their own: the barrier's execution dependency finishes the GEMM's reads
 *    first (write after read) and its TRANSFER_WRITE and SHADER_WRITE make
 *    C's writes land first (write after write). Other stages (graphics)
 *    need the application's barrier from COMPUTE_SHADER: source access
 *    SHADER_WRITE before they read or write C; before they write A, B or the
 *    bias, an execution dependency (no access mask) suffices. The host may
 *    write any of them once the submission's fence has signalled.
 * Operand size: every operand is bound as a storage buffer (or addressed)
 * from its own first element, aligned down to minStorageBufferOffsetAlignment
 * (at least 16 bytes), wherever it lies in its buffer; only its own extent
 * counts, from that aligned start to the end of its last element (of the
 * last product of the batch; the kernels read A and B through texel views,
 * which start at the buffer's base, only where those reach the operand, and
 * through the binding otherwise). Offsets may therefore pass
 * maxStorageBufferRange and 2^32 elements (computed in 64 bits on the host).
 * For C, the bias and the column scales that extent must fit in
 * maxStorageBufferRange bytes. A and B may extend past it where the device
 * has bufferDeviceAddress (Vulkan 1.2; enabled by og_context_create where
 * the device offers it, or by the application on its own device) and the
 * buffer has a device address (og_buffer_create gives one then; a wrapped
 * buffer with SHADER_DEVICE_ADDRESS usage): the call then reads A and B by
 * address (parameter src=addr, chosen per call; og_gemm_describe says so) in
 * the portable tile, its split-k planes and few rows, and in Int8Gemm's
 * kernels. From its aligned start an operand spans up to 2^32 elements (M,
 * N, K, leading dimensions and batch strides are 32-bit counts), and at most
 * 2^33 bytes when read by address. Recovered float32 and the
 * cooperative-matrix kernel read through bindings only and refuse A or B
 * past the range.
 * Errors: OG_ERROR_INVALID_ARGUMENT naming the dimension, with nothing
 * recorded (every pipeline and descriptor set is made before the first
 * command); OG_ERROR_UNSUPPORTED naming the operand that ends past
 * maxStorageBufferRange and why it cannot be read by address. */
og_status og_gemm_encode(og_gemm *g, VkCommandBuffer cmd, const og_gemm_args *args);

/* Records, submits and waits. Same checks and errors as og_gemm_encode. */
og_status og_gemm_run(og_gemm *g, const og_gemm_args *args);

/* Standalone epilogue kernels on the M x N region of C of every product in
 * args (m, n, batch, c, ldc, c_offset, stride_c; A, B, K, alpha and beta
 * are ignored): OG_ELEMENTWISE_BIAS adds bias[bias_offset + j] to column j,
 * OG_ELEMENTWISE_ACTIVATION applies args->activation. They run the same
 * functions as the fused epilogue, so a GEMM with bias and activation gives
 * the bits of the GEMM without them followed by these two kernels.
 * Errors: OG_ERROR_INVALID_ARGUMENT naming the dimension (ldc, outputs of a
 * batch that overlap, as for the GEMM), nothing recorded. */
typedef enum og_elementwise {
    OG_ELEMENTWISE_BIAS = 0,
    OG_ELEMENTWISE_ACTIVATION = 1
} og_elementwise;
og_status og_gemm_encode_elementwise(og_gemm *g, VkCommandBuffer cmd, og_elementwise op,
                                     const og_gemm_args *args);
og_status og_gemm_run_elementwise(og_gemm *g, og_elementwise op, const og_gemm_args *args);

/* Describes the kernels og_gemm_run would use for `args` in one line
 * ("gemm_tile bm=64,...,split=rule (default); 12 k ranges of 64"), into buf
 * of size len. */
og_status og_gemm_describe(og_gemm *g, const og_gemm_args *args, char *buf, size_t len);

/* ---- Int8Gemm: 8-bit products with 32-bit integer sums ----
 *
 * The reference design's Int8Gemm ("8-bit products on Apple matrix
 * hardware"), on any Vulkan device: for every product of the batch
 *
 *     sum(i, j) = sum over k of (op(A)(i, k) - zero_a) * (op(B)(k, j) - zero_b)
 *
 * in two's-complement int32 arithmetic, wrapping modulo 2^32 as the
 * definition does, so the result is the same integer for every summation
 * order and every kernel (Fast and Deterministic mode are one). No
 * intermediate is narrower than 32 bits and nothing saturates (Vulkan's
 * saturating dot products, the AccSat forms, are never used).
 * A and B are bytes (int8 or uint8, each with its own type and zero point);
 * shapes, leading dimensions, offsets and batch strides are as for the float
 * GEMM above, counted in elements (bytes for A and B, 32-bit words for C).
 * C is int32, or float32 with the dynamic-quantisation epilogue
 *
 *     C(i, j) = act(float(sum(i, j)) * (scale_a * scale_b(j)) + bias[j])
 *
 * where scale_b(j) = col_scales[col_scale_offset + j] when col_scales is
 * given, else scale_b; every operation is one IEEE 754 float32 rounding, in
 * that order. */

/* What Int8Gemm writes to C. */
typedef enum og_int8_output {
    OG_INT8_OUTPUT_INT32 = 0,     /* C(i, j) = sum(i, j) */
    OG_INT8_OUTPUT_INT32_ADD = 1, /* C(i, j) = C(i, j) + sum(i, j), modulo 2^32 */
    OG_INT8_OUTPUT_FLOAT32 = 2    /* the float32 epilogue above */
} og_int8_output;

typedef struct og_int8gemm_args {
    int trans_a, trans_b;    /* non-zero: op(X) = X^T */
    int64_t m, n, k, batch;  /* batch 0 is taken as 1 */
    og_dtype type_a, type_b; /* OG_INT8 or OG_UINT8 */
    int32_t zero_a, zero_b;  /* zero points, within their operand type's range */
    og_buffer *a, *b, *c;    /* a and b may be NULL when k == 0 */
    int64_t lda, ldb, ldc;
    int64_t a_offset, b_offset, c_offset;
    int64_t stride_a, stride_b, stride_c; /* stride_b 0 shares B across the batch */
    og_int8_output output;
    /* Read for the float32 output only; a bias, column scales or an
     * activation with an int32 output is an error. */
    float scale_a, scale_b;
    og_buffer *col_scales; /* NULL: scale_b for every column; else N float32 scales */
    int64_t col_scale_offset;
    og_buffer *bias; /* NULL: none; else N float32 values from bias_offset */
    int64_t bias_offset;
    og_activation activation;
} og_int8gemm_args;

/* Creates an Int8Gemm object. Kernels are chosen per shape: M <= 16 with B
 * not transposed runs the skinny kernel (32 columns x 4 rows a workgroup, k
 * split 16 ways), anything else the portable tile; either with the tuned
 * parameters of the nearest record for op "int8gemm" in the tuning database
 * (the same search as og_gemm_create), else the reference design's defaults. */
og_status og_int8gemm_create(og_context *ctx, og_int8gemm **out);
void og_int8gemm_destroy(og_int8gemm *g);

/* Records Int8Gemm into cmd, as og_gemm_encode does, with the same
 * barriers (C, the bias and the column scales as the float GEMM's C and
 * bias). Errors:
 * OG_ERROR_INVALID_ARGUMENT naming the dimension (a zero point outside its
 * type, a bias with an int32 output, ...); OG_ERROR_UNSUPPORTED for more
 * columns than maxComputeWorkGroupCount[0] workgroups cover or an operand
 * beyond maxStorageBufferRange that cannot be read by address (the rules of
 * og_gemm_encode; rows and products beyond the y and z counts run as
 * several dispatches). Nothing is recorded on error. */
og_status og_int8gemm_encode(og_int8gemm *g, VkCommandBuffer cmd, const og_int8gemm_args *args);

/* Records, submits and waits. Same checks and errors as og_int8gemm_encode. */
og_status og_int8gemm_run(og_int8gemm *g, const og_int8gemm_args *args);

/* Describes the kernel og_int8gemm_run would use for args in one line. */
og_status og_int8gemm_describe(og_int8gemm *g, const og_int8gemm_args *args, char *buf, size_t len);

/* ---- Convolution: forward, 1-D and 2-D, as an implicit GEMM ----
 *
 * The reference design's convolution "that shares the GEMM's tile"
 * (reference design, "Accumulation order"): forward convolution
 * (cross-correlation, as cuDNN, PyTorch and ONNX define Conv) of n images
 * with k filters, for every image, output channel kk and output pixel (p, q)
 *
 *   y(p, q, kk) = act(sum over c, r, s of x(h, w, g*Cg + c) * wt(kk, r, s, c)
 *                     + beta * y(p, q, kk) + bias[bias_offset + kk])
 *
 * with g = kk / Kg the filter's group, Cg = C / groups input channels and
 * Kg = K / groups output channels a group, h = p*stride_h + r*dilation_h -
 * pad_top, w = q*stride_w + s*dilation_w - pad_left, and x = 0 where (h, w)
 * lies in the padding. The output is P x Q with
 *
 *   P = floor((H + pad_top + pad_bottom - ((R - 1) * dilation_h + 1)) / stride_h) + 1
 *
 * and Q likewise from W, S, the left and right pads, stride_w and
 * dilation_w (og_conv_output_size). A 1-D convolution is H = 1, R = 1.
 * Tensors are dense, images one after another, indices in elements:
 *   x, NHWC: ((img*H + h)*W + w)*C + c     NCHW: ((img*C + c)*H + h)*W + w
 *   y, NHWC: ((img*P + p)*Q + q)*K + kk    NCHW: ((img*K + kk)*P + p)*Q + q
 *   wt, KRSC: ((kk*R + r)*S + s)*Cg + c    KCRS: ((kk*Cg + c)*R + r)*S + s
 * (the output takes the input's layout). x and wt are float32, float16 or
 * bfloat16 (the object's type), products and sums float32, y and the bias
 * float32.
 *
 * The kernel is the GEMM's portable tile with A gathered from x (M = P*Q
 * pixels, N = Kg, K = Cg*R*S, one product per image and group), B the
 * group's weights; a 1x1, stride 1, unpadded, ungrouped NHWC convolution of
 * more than 4 pixels is the GEMM itself (batched by image, the same bits);
 * groups of at most 8 input and 8 output channels (depthwise layers) run a
 * kernel of their own, with the same sums in the same order (the tile's
 * bits) where K is not split (docs/convolution.md).
 * Summation: the GEMM's documented order over
 * the reduction index in the weights' order (docs/accumulation-order.md,
 * "Convolution"), split-k by the GEMM's rule. */

typedef struct og_conv og_conv;

typedef enum og_conv_layout {
    OG_CONV_NHWC = 0, /* channels innermost (NWC for 1-D) */
    OG_CONV_NCHW = 1  /* rows of pixels innermost (NCW for 1-D) */
} og_conv_layout;

typedef enum og_conv_weights {
    OG_CONV_KRSC = 0, /* the filter's channels innermost */
    OG_CONV_KCRS = 1  /* the filter's columns innermost (PyTorch's layout) */
} og_conv_weights;

/* One convolution call. Sizes are signed so a negative one is reported.
 * Zero strides, dilations and groups are taken as 1. */
typedef struct og_conv_args {
    og_conv_layout layout;   /* of x and y */
    og_conv_weights weights; /* of wt */
    int64_t n, c, h, w;      /* images, input channels, input height and width */
    int64_t k, r, s;         /* output channels, filter height and width */
    int64_t groups;          /* C and K split into groups; groups = C is depthwise */
    int64_t stride_h, stride_w, dilation_h, dilation_w;
    int64_t pad_top, pad_bottom, pad_left, pad_right;
    float beta; /* 0: y is never read (a residual adds with 1) */
    og_buffer *x, *wt, *y;
    int64_t x_offset, w_offset, y_offset;
    og_buffer *bias; /* NULL: none; else K float32 values from bias_offset */
    int64_t bias_offset;
    og_activation activation;
} og_conv_args;

/* The output size P x Q of args (the formula above), without other checks;
 * values below 1 mean the call would be refused. */
void og_conv_output_size(const og_conv_args *args, int64_t *p, int64_t *q);

/* Creates a convolution object for one input type (float32, float16 or
 * bfloat16) and mode. Kernels are chosen per call as the GEMM chooses them
 * for the implicit GEMM's shape (the exact or nearest tuned tile record of
 * that shape, B transposed, else the reference design's default tile; in
 * Deterministic mode always the default), with the tile's storage or texel
 * buffers and its four-element loads of the weights (and, NHWC with KRSC,
 * of four channels of a tap) where the call's sizes and offsets are
 * multiples of 4; otherwise element loads from storage buffers.
 * Errors: OG_ERROR_INVALID_ARGUMENT for another input type or mode. */
og_status og_conv_create(og_context *ctx, og_dtype input, og_mode mode, og_conv **out);
void og_conv_destroy(og_conv *cv);

/* Records the convolution into cmd, with the barriers of og_gemm_encode
 * (x and wt as A and B, y as C). Every size, stride, dilation, padding,
 * group count and extent is checked in 64-bit arithmetic first. Errors:
 * OG_ERROR_INVALID_ARGUMENT naming the dimension (P or Q below 1, groups
 * not dividing C and K, a tensor past its buffer, y overlapping x, wt or
 * the bias), OG_ERROR_UNSUPPORTED for what the kernels cannot address
 * (strides, dilations, paddings or filter sizes of 65536 or more, a tensor
 * past maxStorageBufferRange or 2^32 elements); nothing is recorded then.
 * Grids past the device's workgroup counts run as several dispatches. */
og_status og_conv_encode(og_conv *cv, VkCommandBuffer cmd, const og_conv_args *args);

/* Records, submits and waits. Same checks and errors as og_conv_encode. */
og_status og_conv_run(og_conv *cv, const og_conv_args *args);

/* Describes the kernel og_conv_run would use for args in one line: the
 * tile's parameters as the call runs them (vec, src) and its split-k ranges. */
og_status og_conv_describe(og_conv *cv, const og_conv_args *args, char *buf, size_t len);

/* ---- Low-bit weights: products with MXFP4, NVFP4, int4 or Q8_0 weights ----
 *
 * For every product of the batch
 *
 *     C(i, j) = act(sum over k of A(i, k) * W(j, k) + beta * C(i, j) + bias[bias_offset + j])
 *
 * with A float32, float16 or bfloat16 (the object's type), M x K row-major
 * (element (i, k) at a_offset + i*lda + k, lda >= K), C float32 M x N
 * (c_offset + i*ldc + j, ldc >= N), and W a low-bit weight matrix of N rows
 * by K (a linear layer's weights, out_features x in_features) in
 * onegpu_formats.h's layout for the object's og_qweights_format: one image
 * of og_qweights_layout.bytes bytes at byte w_offset of w, the matrices of
 * a batch (stacked experts) stride_w bytes apart (0 shares one W). K is a
 * multiple of 32 and of the format's block. Each weight's value is
 * og_qweights_decode's; the kernel multiplies the codes, small integers in
 * float32, by A, sums each 32-weight unit (16 for NVFP4's blocks) in
 * increasing k, then multiplies the unit's sum by its block's scale
 * (NVFP4: the E4M3 scale times tensor_scale, rounded once) in float32
 * (docs/accumulation-order.md, "Low-bit weights", gives the whole order).
 * Deterministic mode runs the default kernel for M, whose order depends
 * only on K (and M > 16 or not); Fast mode may run tuned ones. There is no
 * alpha (a zeroed argument struct must not zero C); beta = 0 never reads C.
 *
 * Up to 16 rows the decode kernel (templates/qgemm_decode.tmpl) streams W
 * once. Larger M (prefill) runs the portable tile with each weight decoded
 * to float32 as it is loaded: the sums of the float32 GEMM over
 * og_qweights_decode's matrix, bit for bit. */
typedef struct og_qgemm og_qgemm;

typedef struct og_qgemm_args {
    int64_t m, n, k, batch; /* batch 0 is taken as 1 */
    og_buffer *a;
    int64_t lda, a_offset, stride_a; /* elements of the object's type */
    og_buffer *w;
    int64_t w_offset, stride_w; /* bytes, multiples of 16 */
    float tensor_scale;         /* NVFP4's float32 per tensor (0 is taken as 1); else unused */
    og_buffer *c;
    int64_t ldc, c_offset, stride_c;
    float beta;
    og_buffer *bias; /* NULL: none; else N float32 values from bias_offset */
    int64_t bias_offset;
    og_activation activation;
} og_qgemm_args;

/* Creates a product object for A of type input (float32, float16 or
 * bfloat16), a weight format and a mode. Errors: OG_ERROR_INVALID_ARGUMENT
 * naming the field (another input type, an unknown format, INT4's fields
 * on another format, a group other than 0, 32, 64 or 128). */
og_status og_qgemm_create(og_context *ctx, og_dtype input, const og_qweights_format *format,
                          og_mode mode, og_qgemm **out);
void og_qgemm_destroy(og_qgemm *q);

/* Records the product into cmd with the barriers of og_gemm_encode (A and
 * W as its A and B). Everything is checked in 64-bit arithmetic first.
 * Errors: OG_ERROR_INVALID_ARGUMENT naming the dimension (K not a multiple
 * of 32 or of the block, w_offset or stride_w not a multiple of 16,
 * stride_w below the image of one matrix, an operand past its buffer, ...);
 * OG_ERROR_UNSUPPORTED for more column tiles than maxComputeWorkGroupCount[0]
 * or an operand past maxStorageBufferRange (W is read through a binding).
 * Nothing is recorded on error. Rows and products past the y and z counts
 * run as several dispatches. A tuned kernel that splits k (Fast mode)
 * writes partial sums to a 16 MiB scratch the object allocates on first
 * use, as og_gemm_encode's split-k does: calls of one object share it, so
 * the command buffers recording them must run in the order recorded, on
 * one queue. */
og_status og_qgemm_encode(og_qgemm *q, VkCommandBuffer cmd, const og_qgemm_args *args);

/* Records, submits and waits. Same checks and errors as og_qgemm_encode. */
og_status og_qgemm_run(og_qgemm *q, const og_qgemm_args *args);

/* Describes the kernel og_qgemm_run would use for args in one line: the
 * record op ("qgemm:mxfp4"), the template and parameters it runs (word loads
 * where A or W is not on 16 bytes), and where they came from: the default,
 * or a tuning record of this shape or of the nearest tuned one (ogtune tune
 * --op qgemm --weights F). Errors: og_qgemm_encode's checks. */
og_status og_qgemm_describe(og_qgemm *q, const og_qgemm_args *args, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* ONEGPU_H */
