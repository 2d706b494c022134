/*
 * The generator: parameters -> template -> GLSL or HLSL -> SPIR-V, plus
 * SPIR-V reflection and MSL export. Internal to onegpu (the runtime and
 * ogtune use it); nothing here touches Vulkan.
 */
#ifndef OG_GEN_H
#define OG_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "og_types.h"

/* The templates' dialects: GLSL and HLSL compile to SPIR-V (shaderc); WGSL
 * is text for WebGPU (the portable tile and the split-k reduction only,
 * og_wgsl_check; docs/wgsl.md). */
typedef enum og_dialect { OG_GLSL = 0, OG_HLSL = 1, OG_WGSL = 2 } og_dialect;
typedef enum og_load { OG_LOAD_STAGED = 0, OG_LOAD_DIRECT = 1 } og_load;
typedef enum og_acc { OG_ACC_BLOCKED = 0, OG_ACC_CHAIN = 1 } og_acc;
/* How A and B are read: storage buffers, uniform texel buffers (whose
 * fetches some drivers, lavapipe among them, turn into vector gathers), or
 * 64-bit buffer device addresses in the push constants (GLSL only:
 * GL_EXT_buffer_reference), which no binding's range limits. The runtime
 * picks OG_SRC_ADDR per call for an operand past maxStorageBufferRange. */
typedef enum og_src { OG_SRC_STORAGE = 0, OG_SRC_TEXEL = 1, OG_SRC_ADDR = 2 } og_src;

/* Which template a GEMM variant runs: the portable tile, or the few-rows
 * kernel (float32, M <= 4, A not transposed; reference design "Small grids
 * and few rows"); Int8Gemm's portable tile, or its skinny kernel (M <= 16,
 * B not transposed; reference design "8-bit products"); the float16
 * cooperative-matrix tile; Int8Gemm's cooperative-matrix tile (int8
 * fragments, int32 accumulators; docs/matrix-kernels.md "Int8Gemm on
 * matrices"). */
typedef enum og_variant {
    OG_VARIANT_TILE = 0,
    OG_VARIANT_FEWROWS = 1,
    OG_VARIANT_INT8_TILE = 2,
    OG_VARIANT_INT8_SKINNY = 3,
    OG_VARIANT_COOPMAT = 4,
    OG_VARIANT_INT8_COOPMAT = 5,
    /* Low-bit weights (og_qgemm): C = A * W^T with W decoded from MXFP4,
     * NVFP4, int4 groups, Q8_0, Q4_K or Q6_K (og_kernel_key.qformat). */
    OG_VARIANT_QDECODE = 6,
    /* Decode-shaped products of 16-bit inputs: M <= 16 rows of float16 or
     * bfloat16 A against B of the same type, N x K or K x N. */
    OG_VARIANT_DECODE = 7,
    /* Float16 on VK_NV_cooperative_matrix2's flexible dimensions: each
     * subgroup one (bm/sgy) x (bn/sgx) accumulator matrix, k steps of bk
     * (docs/matrix-kernels.md, "coopmat2"). */
    OG_VARIANT_COOPMAT2 = 8,
    /* A convolution's own kernel for few channels a group (depthwise,
     * grouped): each invocation sums all Cg*R*S terms of tn output channels
     * of one output pixel, taps walked in the weights' order
     * (docs/accumulation-order.md, "Convolution"); never a GEMM's. */
    OG_VARIANT_DEPTHWISE = 9,
    OG_VARIANT_COUNT /* the number of variants: a new one goes above */
} og_variant;

/* The cooperative-matrix extension a kernel is written for: the module
 * glslang compiles (VK_NV_cooperative_matrix), or its rewrite into
 * SPV_KHR_cooperative_matrix (og_spirv_khr) for VK_KHR_cooperative_matrix. */
typedef enum og_matrix_ext {
    OG_MATRIX_NV = 0,
    OG_MATRIX_KHR = 1,
    /* Test only: the same template with each 16x16x16 fragment operation
     * emulated in plain GLSL, so a device without matrices (lavapipe) runs
     * everything else of the kernel; never a tuner candidate or a choice. */
    OG_MATRIX_EMU = 2
} og_matrix_ext;

/* Split-k ranges (og_params.split): the documented rule, or a fixed count. */
#define OG_SPLIT_RULE 0

/* Parameters of one GEMM variant. The tile fields serve templates/gemm_tile.tmpl
 * (and bm..pad, load, vec, dot templates/int8gemm_tile.tmpl), cols and slices
 * templates/gemm_fewrows.tmpl (and with rows templates/int8gemm_skinny.tmpl);
 * the other variants' fields are 0. */
typedef struct og_params {
    og_variant variant;
    int bm, bn, bk; /* tile of C per workgroup, and k step */
    int tm, tn;     /* register tile per invocation */
    int wgx, wgy;   /* workgroup shape: wgx = bn / tn, wgy = bm / tm */
    int pad;        /* floats of padding per workgroup-memory row (staged only) */
    og_load load;
    og_acc acc;
    /* Elements per load inside C (1, or 4: direct loads only); the Int8Gemm
     * tile: 0 when staged, 1 (bytes) or 4 (32-bit words) when direct. */
    int vec;
    og_src src;
    int split; /* k ranges: OG_SPLIT_RULE, 1 (never split) or 2..16 */
    /* Few rows: columns of C per workgroup, and k slices (B stored K x N) or
     * lanes per column (B stored N x K); cols * slices invocations. Int8Gemm
     * skinny and the low-bit decode kernel: rows and cols of C per
     * workgroup, k split into slices. */
    int cols, slices, rows;
    /* The low-bit decode kernel: 32-weight units per trip of its k loop
     * (1, 2 or 4; the order of the sums is the same for each); 0 for the
     * other variants. */
    int unroll;
    /* Int8Gemm: 1 multiplies with packed 4x8-bit dot products
     * (VK_KHR_shader_integer_dot_product), 0 with 32-bit integer products
     * (the direct-load tile: exact float32 products, see its template). */
    int dot;
    /* Cooperative matrix (with bm, bn, bk, pad and load): subgroups along N
     * and M; each owns (bm/sgy) x (bn/sgx) of C as fm x fn accumulators. */
    int sgx, sgy;
    og_matrix_ext mat; /* which extension's matrices the module speaks */
    int sub;           /* invocations per subgroup the kernel divides its tile by: 8 to 64 */
    /* The fragment shape, one the device lists (og_matrix_fragment): A
     * fragments fm x fk, B fragments fk x fn, accumulators fm x fn. */
    int fm, fn, fk;
    /* Workgroup-memory buffers of the staged tiles: 1, or 2 (the next k step
     * is staged into one while the products read the other). */
    int buf;
} og_params;

/* Whether p is a cooperative-matrix variant (float16 or Int8Gemm): the
 * fields sgx, sgy, mat, sub, fm, fn, fk and buf are its. */
int og_params_matrix(const og_params *p);

/* The kernels behind one GEMM call. */
typedef enum og_kernel {
    OG_KERNEL_GEMM = 0,     /* the variant of p, writing C through the epilogue */
    OG_KERNEL_PLANES = 1,   /* the tile of p, writing raw range sums to split-k planes */
    OG_KERNEL_REDUCE = 2,   /* adds the planes in range order, then the epilogue */
    OG_KERNEL_BIAS = 3,     /* standalone bias add on C */
    OG_KERNEL_ACTIVATE = 4, /* standalone activation on C */
    OG_KERNEL_EXPONENTS = 5, /* recovered float32: power-of-two scales of A's rows, B's columns */
    OG_KERNEL_SCALE = 6,     /* C = act(beta * C + bias): a GEMM with alpha = 0 or K = 0 */
    OG_KERNEL_IM2COL = 7     /* a convolution's explicit im2col matrix (conv_im2col.tmpl) */
} og_kernel;

/* Everything that selects one compiled kernel. */
typedef struct og_kernel_key {
    og_kernel kernel;
    og_params p;      /* GEMM and PLANES; zero for the others */
    og_dtype dtype;   /* of A, and of B unless dtype_b says otherwise (og_kernel_b_type) */
    og_dtype dtype_b; /* B's: Int8Gemm's OG_INT8 or OG_UINT8; an FP8 type; 0 otherwise */
    int trans_a, trans_b;
    og_dialect dialect;
    /* Float32 recovered from float16 products (the tile, GEMM kernel): the
     * residual shift s (1..12), 0 for native products; with scaled set, rows
     * of A and columns of B are scaled by the powers of two of binding 3. */
    int recover, scaled;
    /* Convolution (og_conv_*): 0 for the GEMM; else 1 + OG_CONV_LAYOUT +
     * 2 * OG_CONV_WEIGHTS (the tile's A gathered from the input tensor as a
     * virtual im2col matrix, templates/conv_gather.tmpl; GEMM, PLANES and
     * REDUCE kernels, native products, GLSL). */
    int conv;
    /* Low-bit weights (OG_VARIANT_QDECODE): 0 otherwise; else
     * OG_QFORMAT_KEY of the weights' format, scale type and zero points
     * (onegpu_formats.h). B's words are the weights' image. */
    int qformat;
    /* A part of the low-bit decode kernel, for benchmarks that split its
     * time (ogtune bench --op qgemm --parts; templates/qgemm_decode.tmpl's
     * PART): OG_PART_FULL (the kernel), OG_PART_LOAD, OG_PART_CONVERT. */
    int part;
} og_kernel_key;

enum { OG_PART_FULL = 0, OG_PART_LOAD = 1, OG_PART_CONVERT = 2 };

/* og_kernel_key.qformat's parts: the og_qformat (0..5), INT4's og_qscale
 * (0, 1) and og_qzero (0..2). The group is a push constant. */
#define OG_QFORMAT_KEY(format, scale, zero) (1 + (format) + 8 * (scale) + 16 * (zero))
#define OG_QFORMAT_KEY_FORMAT(q) (((q) - 1) & 7)
/* The og_qformat values a key names: MXFP4 .. Q6_K. */
#define OG_QFORMAT_KEY_FORMATS 6
#define OG_QFORMAT_KEY_SCALE(q) ((((q) - 1) >> 3) & 1)
#define OG_QFORMAT_KEY_ZERO(q) (((q) - 1) >> 4)

/* og_kernel_key.conv's parts: the input and output layout (0 NHWC, 1 NCHW)
 * and the weights' (0 KRSC, 1 KCRS). */
#define OG_CONV_KEY(layout, weights) (1 + (layout) + 2 * (weights))
#define OG_CONV_KEY_LAYOUT(conv) (((conv) - 1) & 1)
#define OG_CONV_KEY_WEIGHTS(conv) ((((conv) - 1) >> 1) & 1)

/* The residual shift of the recovered float32 scheme when none is given. */
#define OG_RECOVER_SHIFT 11
#define OG_RECOVER_SHIFT_MAX 12

/* B's element type of a kernel: dtype_b where set (Int8Gemm, FP8), float32
 * beside an FP8 A (dtype_b 0 is OG_F32), else A's type. */
og_dtype og_kernel_b_type(const og_kernel_key *key);

/* Component types of a cooperative-matrix shape: the values of
 * VkComponentTypeKHR (the same as VkComponentTypeNV's). */
enum {
    OG_COMPONENT_F16 = 0,
    OG_COMPONENT_F32 = 1,
    OG_COMPONENT_S8 = 3,
    OG_COMPONENT_S32 = 5,
    OG_COMPONENT_U8 = 7,
    OG_COMPONENT_U32 = 9
};

/* A cooperative-matrix shape a device lists (VkCooperativeMatrixPropertiesNV
 * or VkCooperativeMatrixPropertiesKHR): an M x K A times a K x N B added to
 * an M x N C into an M x N result, component types OG_COMPONENT_*. */
typedef struct og_matrix_shape {
    uint32_t m, n, k;
    int a, b, c, result; /* component types */
    int subgroup;        /* subgroup scope */
} og_matrix_shape;

#define OG_MATRIX_SHAPES_MAX 32

/* What the cooperative-matrix kernels need of a device and its driver. */
typedef struct og_matrix_caps {
    uint32_t n_shapes; /* 0 without VK_NV_cooperative_matrix */
    og_matrix_shape shapes[OG_MATRIX_SHAPES_MAX];
    /* VK_KHR_cooperative_matrix's shapes (0 without the extension or its
     * cooperativeMatrix feature), and whether its
     * cooperativeMatrixSupportedStages include compute. */
    uint32_t n_khr_shapes;
    og_matrix_shape khr_shapes[OG_MATRIX_SHAPES_MAX];
    int khr_compute;
    uint32_t subgroup_min, subgroup_max; /* subgroup sizes compute shaders can run with */
    int size_control;   /* the size can be pinned (VK_EXT_subgroup_size_control, compute) */
    int full_subgroups; /* computeFullSubgroups */
    int float16;        /* shaderFloat16 */
    int storage16;      /* storageBuffer16BitAccess */
    int memory_model;   /* vulkanMemoryModel */
    int int8;           /* shaderInt8: int8 fragments and workgroup memory (Int8Gemm's matrix tile) */
    /* VK_NV_cooperative_matrix2's cooperativeMatrixFlexibleDimensions,
     * enabled: matrices of any multiple of a listed shape's granularity
     * (flex_shapes' m, n and k) up to flex_max
     * (cooperativeMatrixFlexibleDimensionsMaxDimension) in each dimension. */
    int flexible;
    uint32_t flex_max;
    uint32_t n_flex_shapes;
    og_matrix_shape flex_shapes[OG_MATRIX_SHAPES_MAX];
} og_matrix_caps;

/* Why og_limits.buffer_address is 0, for the message that refuses an
 * operand past maxStorageBufferRange. */
typedef enum og_address_off {
    OG_ADDRESS_UNSUPPORTED = 0, /* the device has no bufferDeviceAddress (or no Vulkan 1.2) */
    OG_ADDRESS_NOT_ENABLED = 1, /* the device has it; the application's device was made without */
    OG_ADDRESS_OLD_INSTANCE = 2 /* enabled, but the application's instance is below Vulkan 1.2 */
} og_address_off;

/* What a device allows a kernel, from VkPhysicalDeviceLimits. */
typedef struct og_limits {
    uint32_t max_invocations;    /* maxComputeWorkGroupInvocations */
    uint32_t max_size[3];        /* maxComputeWorkGroupSize */
    uint32_t max_count[3];       /* maxComputeWorkGroupCount */
    uint32_t max_shared_bytes;   /* maxComputeSharedMemorySize */
    uint64_t max_storage_range;  /* maxStorageBufferRange, bytes */
    /* Where a storage binding may start: minStorageBufferOffsetAlignment,
     * at least 16 so vector loads stay aligned; 0: at the buffer's start. */
    uint32_t bind_align;
    uint32_t max_push_bytes;     /* maxPushConstantsSize */
    uint32_t subgroup_size;      /* VkPhysicalDeviceSubgroupProperties */
    uint32_t max_texel_elements; /* maxTexelBufferElements; 0: no R32, R32G32 and R32G32B32A32
                                    UINT uniform texel buffers */
    int integer_dot;       /* VK_KHR_shader_integer_dot_product's shaderIntegerDotProduct enabled */
    int buffer_address;    /* bufferDeviceAddress enabled (Vulkan 1.2) */
    og_address_off address_off; /* when buffer_address is 0: why */
    og_matrix_caps matrix; /* cooperative matrices, enabled where the device has them */
    /* Loop iterations one invocation may run, all its loops together; 0: no
     * limit. Lavapipe (Mesa's gallivm) leaves every loop of a shader once
     * 65535 iterations have run in all (LP_MAX_TGSI_LOOP_ITERATIONS), so a
     * longer k loop would end early and leave C silently wrong. */
    uint32_t max_loop_iterations;
} og_limits;

/* Device features that a module's SPIR-V capabilities need and that onegpu
 * enables only where the device has them (og_reflection.needs); the other
 * capabilities the kernels declare are Vulkan 1.1's core (and checked by the
 * validation layer in the tests). */
enum {
    OG_NEEDS_FLOAT16 = 1u,      /* Float16: shaderFloat16 */
    OG_NEEDS_STORAGE16 = 2u,    /* StorageBuffer16BitAccess */
    OG_NEEDS_MEMORY_MODEL = 4u, /* VulkanMemoryModel */
    OG_NEEDS_COOPMAT = 8u,      /* CooperativeMatrixNV */
    OG_NEEDS_INTEGER_DOT = 16u, /* DotProduct, DotProductInput4x8BitPacked */
    OG_NEEDS_ADDRESS = 32u,     /* PhysicalStorageBufferAddresses: bufferDeviceAddress */
    OG_NEEDS_COOPMAT_KHR = 64u, /* CooperativeMatrixKHR */
    OG_NEEDS_INT8 = 128u        /* Int8: shaderInt8 */
};

/* What SPIR-V reflection reports of a compiled kernel. */
typedef struct og_reflection {
    uint32_t local_size[3];
    uint32_t shared_bytes; /* sum of the Workgroup-storage variables */
    uint32_t bindings;     /* distinct storage and texel buffer bindings in set 0 */
    uint32_t push_bytes;   /* size of the push-constant block */
    uint32_t needs;        /* OG_NEEDS_* of its OpCapability declarations */
} og_reflection;

/* The OG_NEEDS_* of a module's OpCapability declarations. */
uint32_t og_spirv_needs(const uint32_t *words, size_t count);

/* The features of needs that a device with limits lim has not enabled,
 * named in why; 0 when it has them all. */
uint32_t og_limits_lack(const og_limits *lim, uint32_t needs, char *why, size_t len);

#define OG_TEMPLATE_TILE "gemm_tile"
#define OG_TEMPLATE_FEWROWS "gemm_fewrows"
#define OG_TEMPLATE_REDUCE "gemm_reduce"
#define OG_TEMPLATE_ELEMENTWISE "elementwise"
#define OG_TEMPLATE_INT8_TILE "int8gemm_tile"
#define OG_TEMPLATE_INT8_SKINNY "int8gemm_skinny"
#define OG_TEMPLATE_COOPMAT "gemm_coopmat"
#define OG_TEMPLATE_INT8_COOPMAT "int8gemm_coopmat"
#define OG_TEMPLATE_EXPONENTS "gemm_exponents"
#define OG_TEMPLATE_QDECODE "qgemm_decode"
#define OG_TEMPLATE_IM2COL "conv_im2col"
#define OG_TEMPLATE_DECODE "gemm_decode"
#define OG_TEMPLATE_COOPMAT2 "gemm_coopmat2"
#define OG_TEMPLATE_DEPTHWISE "conv_depthwise"
/* The subgroup size the cooperative-matrix kernels divide a tile by where
 * a parameter string names none (they take 8, 16, 32 or 64). */
#define OG_COOPMAT_SUBGROUP 32
/* Local size of the reduce and elementwise kernels. */
#define OG_ELEMENTWISE_THREADS 64
#define OG_PARAMS_MAX 160 /* bytes of a formatted parameter string */

/* "f32", "f16", "bf16", "i8", "u8", "e4m3", "e5m2". */
const char *og_dtype_name(og_dtype t);
/* Whether t is an Int8Gemm input type (OG_INT8 or OG_UINT8). */
int og_dtype_is_int8(og_dtype t);
/* Whether t is an FP8 input type (OG_FP8_E4M3 or OG_FP8_E5M2). */
int og_dtype_is_fp8(og_dtype t);
/* Bytes of an element as stored: 4 for float32, 2 for float16 and
 * bfloat16, 1 for FP8, int8 and uint8. */
size_t og_dtype_bytes(og_dtype t);

/* The reference design's default: 64x64x16 tile, 16x16 invocations, 4x4
 * register tile, staged loads, blocked summation, split-k by the rule. */
og_params og_params_default(void);

/* The few-rows shape the rule fixes for N columns: B stored K x N takes
 * 16 columns and 16 k slices (32 and 8 from N = 8192); B stored N x K takes
 * 8 columns of 32 lanes. */
og_params og_params_fewrows(int trans_b, int64_t n);

/* Int8Gemm's defaults: the portable tile (64x64x16, 16x16 invocations, 4x4
 * register tile, 32-bit integer products), and the skinny kernel of the
 * reference design (32 columns x 4 rows, k split 16 ways). */
og_params og_params_int8_tile(void);
og_params og_params_int8_skinny(void);
/* The low-bit decode kernel's defaults for M rows: rows of C a workgroup
 * the power of two from M up to 16, 4 columns, 32 k slices, 16-byte loads
 * (vec=4; the runtime reads words where A or W is not aligned for them). */
og_params og_params_qdecode(int64_t m);
/* The low-bit weight product's prefill default (M above 16): the portable
 * tile of og_params_default, unsplit (split=1), each weight decoded as it
 * is loaded (element loads from storage buffers). */
og_params og_params_qprefill(void);
/* The dense decode kernel's default for M rows (og_family_decode.c): rows
 * of C a workgroup the power of two from M up to 16; B N x K: 4 columns of
 * 32 k slices; B K x N: 64 columns of 4 slices, 8 neighbouring columns an
 * invocation; whole-unit loads (vec=4). */
og_params og_params_decode(int64_t m, int trans_b);

/* The reference design's cooperative-matrix tiles: 64x64x16 with 8 subgroups
 * (2x4, each 32x16 of C) or 4 (2x2, each 32x32), staged through padded
 * workgroup memory; NV matrices, subgroups of 32, 16x16x16 fragments (the
 * device's own: og_matrix_variant). */
og_params og_params_coopmat(int subgroups);

/* Int8Gemm's cooperative-matrix tile: the same 64x64x16 tiles with 8 or 4
 * subgroups, staged (int8 in workgroup memory), pad 8, NV matrices,
 * subgroups of 32, 16x16x16 fragments (the device's own:
 * og_matrix_int8_variant). */
og_params og_params_int8_coopmat(int subgroups);

/* The coopmat2 tile (og_family_coopmat2.c): 64x64 with a k step of 16, 2x2
 * subgroups of sub invocations (og_matrix_subgroup's; 0: OG_COOPMAT_SUBGROUP), each one 32x32
 * float32 accumulator matrix, staged through padded workgroup memory, two
 * buffers; KHR matrices of flexible dimensions (VK_NV_cooperative_matrix2). */
og_params og_params_coopmat2(int sub);

/* The depthwise convolution kernel's default (og_family_depthwise.c): 64
 * invocations a workgroup, each 4 output pixels of one output channel. */
og_params og_params_depthwise(void);

/* The subgroup size a device runs the matrix kernels with, from its
 * capabilities (never its vendor): its fixed size, or the first it can pin
 * with subgroup size control, of 32, 64 (RADV's wave64), 16 and 8 (Intel,
 * lavapipe); 0 when it runs none of them. */
int og_matrix_subgroup(const og_limits *lim);

/* The fragment the matrix kernels take for A of type a and B of type b
 * (OG_COMPONENT_F16, S8 or U8) accumulated in acc (F32 or S32) with
 * extension mat (NV or KHR) on a device with matrix capabilities m: of the
 * shapes it lists at subgroup scope with those types, with M and N 8 or 16
 * and K 8, 16 or 32, the one of most products (16x16x16 before 16x8x16 and
 * 8x16x16; 8x8x8 on lavapipe). Sets fm, fn, fk and returns 0, or returns -1
 * when the device lists none. */
int og_matrix_fragment(const og_matrix_caps *m, og_matrix_ext mat, int a, int b, int acc,
                       int *fm, int *fn, int *fk);

/* Template file of a variant. */
const char *og_params_template(const og_params *p);

/* Tile:
 * "bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,load=staged,acc=blocked,vec=1,src=ssbo,split=rule";
 * few rows: "variant=fewrows,cols=16,slices=16"; Int8Gemm:
 * "variant=int8tile,bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,dot=0" (staged; direct
 * loads add ",load=direct,vec=4") and
 * "variant=int8skinny,rows=4,cols=32,slices=16,dot=0"; cooperative matrix:
 * "variant=coopmat,bm=64,bn=64,bk=16,sgx=4,sgy=2,pad=8,load=staged", followed by
 * ",mat=khr" for KHR matrices, ",sub=64" for subgroups of 64 (8, 16, 32 or 64)
 * and ",frag=8x8x8" for fragments of 8x8x8 (absent: NV, 32, 16x16x16);
 * Int8Gemm's the same with "variant=int8coopmat". */
void og_params_format(const og_params *p, char *buf, size_t len);

/* Parses what og_params_format writes (keys in any order, all present but
 * split, which defaults to the rule, and the Int8Gemm tile's load and vec,
 * which default to staged). Returns 0, or -1 with a reason in why. */
int og_params_parse(const char *text, og_params *p, char *why, size_t len);

/* Checks the parameters for the template's own rules and, when lim is not
 * NULL, the device's limits. Returns 0, or -1 with a reason in why. */
int og_params_check(const og_params *p, const og_limits *lim, char *why, size_t len);

/* Workgroup-memory bytes the template declares for p. */
uint32_t og_params_shared_bytes(const og_params *p);

/* Whether the kernel takes the tuned parameters (the GEMM and its split-k
 * planes; not the reduction and elementwise kernels). */
int og_kernel_has_params(const og_kernel_key *key);
/* Workgroup-memory bytes, and the workgroup size, the template declares
 * for a kernel (the formulas the reflection is checked against). */
uint32_t og_kernel_shared_bytes(const og_kernel_key *key);
void og_kernel_local_size(const og_kernel_key *key, uint32_t size[3]);

/* At most how many loop iterations one invocation of a GEMM, PLANES or
 * EXPONENTS kernel runs for a k range of k_len terms
 * (og_limits.max_loop_iterations). */
uint64_t og_kernel_loop_iterations(const og_kernel_key *key, uint64_t k_len);

/* Checks a kernel key: its parameters (og_params_check, for GEMM and PLANES
 * kernels), and that the kernel fits lim (may be NULL). */
int og_kernel_check(const og_kernel_key *key, const og_limits *lim, char *why, size_t len);

/* WebGPU's default limits, which every adapter offers unless a device asks
 * for more: a WGSL kernel is checked against them. */
#define OG_WGSL_MAX_INVOCATIONS 256u  /* maxComputeInvocationsPerWorkgroup */
#define OG_WGSL_MAX_SIZE_XY 256u      /* maxComputeWorkgroupSizeX and Y */
#define OG_WGSL_MAX_SHARED_BYTES 16384u /* maxComputeWorkgroupStorageSize */

/* The kernels the WGSL dialect is written for (og_kernel_check calls it
 * first for a WGSL key): the tile's GEMM and split-k planes with float32,
 * float16 or bfloat16 inputs, few rows (float32), all with vec=1 and
 * src=ssbo, the split-k reduction and the elementwise kernels. */
int og_wgsl_check(const og_kernel_key *key, char *why, size_t len);

/* WebGPU's default limits as og_limits, for the tuner's spaces of a
 * WebGPU device (the WebGPU specification, "Limits"): 65535 workgroups a
 * dimension, 128 MiB storage bindings starting on 256 bytes; no texel
 * buffers, device addresses or matrix hardware. Subgroups: 32, a guess
 * (WebGPU reports none without the subgroups feature). */
og_limits og_wgsl_limits(void);

/* A WGSL kernel's workgroup within WebGPU's default limits (og_kernel_check
 * calls it last, after the parameters' own checks). */
int og_wgsl_limits_check(const og_kernel_key *key, char *why, size_t len);

/* The template a kernel expands. */
const char *og_kernel_template(const og_kernel_key *key);

/* 64-bit FNV-1a of n bytes, continuing from h (OG_FNV_OFFSET to start). */
#define OG_FNV_OFFSET 1469598103934665603ull
uint64_t og_fnv1a(uint64_t h, const void *data, size_t n);

/* 64-bit FNV-1a of the template text and the parts it includes: the version
 * recorded with every tuning record, so records of an older template are ignored.
 * A template or part is the built-in text, or the file OG_TEMPLATE_DIR/NAME.tmpl
 * where the environment names a directory holding one (og_template.c). */
uint64_t og_template_hash(const char *template_name);

/* 64-bit FNV-1a of what turns a key and a template into kernel text: the
 * template engine (built in, or OG_TEMPLATE_DIR/engine.lua) and the C source
 * of the generator (gen/og_template.c, embedded at build time). Part of the
 * SPIR-V cache key, not of the tuning records' version. */
uint64_t og_generator_hash(void);

/* The shader compiler's identity: the SPIR-V version shaderc targets and the
 * path, size and modification time of the file that holds it (the shared
 * library, or the program when linked statically), so a compiler upgrade
 * compiles kernels again. Part of the SPIR-V cache key. */
uint64_t og_compiler_hash(void);

/* Expands the template for key into GLSL or HLSL. *src is malloc'ed.
 * Errors: OG_ERROR_INVALID_ARGUMENT (bad parameters) or OG_ERROR_COMPILE
 * (a template error), with the reason in err. */
og_status og_gen_source(const og_kernel_key *key, char **src, char *err, size_t errlen);

/* Compiles source of the given dialect to SPIR-V (target Vulkan 1.1, SPIR-V
 * 1.3, as glslang's HLSL front end needs for structured buffers). *words is
 * malloc'ed. With assembly non-zero, *words holds SPIR-V assembly text
 * instead and *count its length in bytes. */
og_status og_compile(const char *src, og_dialect dialect, int assembly, uint32_t **words,
                     size_t *count, char *err, size_t errlen);

/* Reflects a SPIR-V module through SPIRV-Cross. */
og_status og_reflect(const uint32_t *words, size_t count, og_reflection *out, char *err,
                     size_t errlen);

/* Reflection from the module's words alone: what og_reflect uses for
 * modules with cooperative matrices, which Debian 12's SPIRV-Cross cannot
 * parse (the tests hold it against SPIRV-Cross on the other kernels). */
void og_reflect_raw(const uint32_t *words, size_t count, og_reflection *out);

/* Rewrites a module compiled with SPV_NV_cooperative_matrix into the
 * SPV_KHR_cooperative_matrix form (gen/og_spirv_khr.c; opcodes and operands
 * from the two extensions' texts in the SPIR-V registry): the capability
 * and extension, one OpTypeCooperativeMatrixKHR per use (MatrixA, MatrixB,
 * MatrixAccumulator; an NV type serving A and B becomes two), loads and
 * stores with a constant MemoryLayout before the stride, MulAdd and Length.
 * The result is deterministic (the same words for the same module). *khr is
 * malloc'ed, *khr_count in words. Errors: OG_ERROR_COMPILE naming what it
 * refuses (no CooperativeMatrixNV capability; matrices inside composites,
 * function signatures or access chains; a Column Major operand that is not
 * a constant; one value used as two different operands; Length of a type
 * split by use), OG_ERROR_OUT_OF_MEMORY. */
og_status og_spirv_khr(const uint32_t *nv, size_t count, uint32_t **khr, size_t *khr_count,
                       char *err, size_t errlen);

/* Translates SPIR-V to Metal Shading Language through SPIRV-Cross; *msl is malloc'ed. */
og_status og_export_msl(const uint32_t *words, size_t count, char **msl, char *err, size_t errlen);

/* Convenience: key -> source -> SPIR-V -> reflection, checking the result
 * against lim (may be NULL) before anything is dispatched. */
og_status og_build_kernel(const og_kernel_key *key, const og_limits *lim, uint32_t **words,
                          size_t *count, og_reflection *refl, char *err, size_t errlen);

#endif /* OG_GEN_H */
