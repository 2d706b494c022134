/*
 * The generator: parameters -> template -> GLSL or HLSL -> SPIR-V, plus
 * SPIR-V reflection and MSL export. Internal to onegpu (the runtime and
 * ogtune use it); nothing here touches Vulkan.
 */
#ifndef OG_GEN_H
#define OG_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "onegpu.h"

typedef enum og_dialect { OG_GLSL = 0, OG_HLSL = 1 } og_dialect;
typedef enum og_load { OG_LOAD_STAGED = 0, OG_LOAD_DIRECT = 1 } og_load;
typedef enum og_acc { OG_ACC_BLOCKED = 0, OG_ACC_CHAIN = 1 } og_acc;
/* How A and B are bound: storage buffers, or uniform texel buffers (whose
 * fetches some drivers, lavapipe among them, turn into vector gathers). */
typedef enum og_src { OG_SRC_STORAGE = 0, OG_SRC_TEXEL = 1 } og_src;

/* Parameters of the portable tile template (templates/gemm_tile.tmpl). */
typedef struct og_tile_params {
    int bm, bn, bk; /* tile of C per workgroup, and k step */
    int tm, tn;     /* register tile per invocation */
    int wgx, wgy;   /* workgroup shape: wgx = bn / tn, wgy = bm / tm */
    int pad;        /* floats of padding per workgroup-memory row (staged only) */
    og_load load;
    og_acc acc;
    int vec; /* elements per load inside C (1, or 4: direct loads only) */
    og_src src;
} og_tile_params;

/* Everything that selects one compiled kernel. */
typedef struct og_kernel_key {
    og_tile_params p;
    og_dtype dtype;
    int trans_a, trans_b;
    og_dialect dialect;
} og_kernel_key;

/* What a device allows a kernel, from VkPhysicalDeviceLimits. */
typedef struct og_limits {
    uint32_t max_invocations;    /* maxComputeWorkGroupInvocations */
    uint32_t max_size[3];        /* maxComputeWorkGroupSize */
    uint32_t max_count[3];       /* maxComputeWorkGroupCount */
    uint32_t max_shared_bytes;   /* maxComputeSharedMemorySize */
    uint64_t max_storage_range;  /* maxStorageBufferRange, bytes */
    uint32_t max_push_bytes;     /* maxPushConstantsSize */
    uint32_t subgroup_size;      /* VkPhysicalDeviceSubgroupProperties */
    uint32_t max_texel_elements; /* maxTexelBufferElements; 0: no R32, R32G32 and R32G32B32A32
                                    UINT uniform texel buffers */
} og_limits;

/* What SPIR-V reflection reports of a compiled kernel. */
typedef struct og_reflection {
    uint32_t local_size[3];
    uint32_t shared_bytes; /* sum of the Workgroup-storage variables */
    uint32_t bindings;     /* distinct storage and texel buffer bindings in set 0 */
    uint32_t push_bytes;   /* size of the push-constant block */
} og_reflection;

#define OG_TEMPLATE_TILE "gemm_tile"
#define OG_PARAMS_MAX 160 /* bytes of a formatted parameter string */

/* The reference design's default: 64x64x16 tile, 16x16 invocations, 4x4
 * register tile, staged loads, blocked summation. */
og_tile_params og_params_default(void);

/* "bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,load=staged,acc=blocked,vec=1,src=ssbo" */
void og_params_format(const og_tile_params *p, char *buf, size_t len);

/* Parses what og_params_format writes (keys in any order, all present).
 * Returns 0, or -1 with a reason in why. */
int og_params_parse(const char *text, og_tile_params *p, char *why, size_t len);

/* Checks the parameters for the template's own rules and, when lim is not
 * NULL, the device's limits. Returns 0, or -1 with a reason in why. */
int og_params_check(const og_tile_params *p, const og_limits *lim, char *why, size_t len);

/* Whether a call can use p as it is: vector loads (vec = 4) need A's and
 * B's offsets, leading dimensions and batch strides to be multiples of 4
 * elements. The runtime drops to vec = 1 otherwise. */
int og_params_vec_aligned(const og_gemm_args *args);

/* Workgroup-memory bytes the template declares for p (the formula the
 * reflection is checked against). */
uint32_t og_params_shared_bytes(const og_tile_params *p);

/* 64-bit FNV-1a of the template text: the version recorded with every tuning
 * record, so records of an older template are ignored. */
uint64_t og_template_hash(const char *template_name);

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

/* Translates SPIR-V to Metal Shading Language through SPIRV-Cross; *msl is malloc'ed. */
og_status og_export_msl(const uint32_t *words, size_t count, char **msl, char *err, size_t errlen);

/* Convenience: key -> source -> SPIR-V -> reflection, checking the result
 * against lim (may be NULL) before anything is dispatched. */
og_status og_build_kernel(const og_kernel_key *key, const og_limits *lim, uint32_t **words,
                          size_t *count, og_reflection *refl, char *err, size_t errlen);

#endif /* OG_GEN_H */
