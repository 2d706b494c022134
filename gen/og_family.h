/*
 * Kernel families: one entry per og_variant (gen/families/og_family_*.c),
 * listed in gen/og_families.c. An entry owns its family's name in parameter
 * strings, its template, its defaults, the text form of its parameters
 * (which keys it takes, how they print), their checks, the workgroup memory,
 * workgroup size and loop count its template declares, and its rules for a
 * kernel key; and it says what it can do (OG_FAMILY_*), which the generator,
 * the runtime's planning and the tuner ask instead of comparing variants.
 * docs/architecture.md, "Adding a kernel family", lists the places a new
 * family touches.
 */
#ifndef OG_FAMILY_H
#define OG_FAMILY_H

#include <stddef.h>
#include <stdint.h>

#include "og_gen.h"

/* What a family can do. */
enum {
    /* Tiles C in rows and columns (bm x bn); else in columns of few rows
     * (cols, slices, rows, vec and unroll reach its template). */
    OG_FAMILY_TILED = 1u << 0,
    /* Runs k in ranges (split) with a pass writing raw sums to split-k
     * planes (OG_KERNEL_PLANES). */
    OG_FAMILY_SPLIT = 1u << 1,
    /* Cooperative matrices: sgx, sgy, mat, sub, fm, fn, fk and buf are its. */
    OG_FAMILY_MATRIX = 1u << 2,
    /* Int8Gemm: int8 or uint8 A and B, int32 sums; no other family takes them. */
    OG_FAMILY_INT8 = 1u << 3,
    /* Takes FP8 inputs (beside FP8 or float32). */
    OG_FAMILY_FP8 = 1u << 4,
    /* Reads FP8 one element at a time (vec=1). */
    OG_FAMILY_FP8_ELEMENTS = 1u << 5,
    /* Its vec=4 loads are units of eight elements (16 bytes of 16-bit
     * ones): offsets, leading dimensions and strides in eights. */
    OG_FAMILY_VEC16 = 1u << 13,
    /* Reads A and B through buffer device addresses where a binding cannot
     * reach them (src=addr). */
    OG_FAMILY_ADDRESS = 1u << 6,
    /* Its vec=4 loads need offsets, leading dimensions and strides in fours. */
    OG_FAMILY_VEC4 = 1u << 7,
    /* Gathers a convolution's input as its A (og_kernel_key.conv). */
    OG_FAMILY_CONV = 1u << 8,
    /* Multiplies float32 recovered from float16 parts (og_kernel_key.recover). */
    OG_FAMILY_RECOVER = 1u << 9,
    /* The low-bit decode kernel: B is the packed weights, M <= 16. */
    OG_FAMILY_WEIGHTS = 1u << 10,
    /* Decodes low-bit weights as it stages them: a prefill (M > 16). */
    OG_FAMILY_PREFILL = 1u << 11,
    /* Written in WGSL too (og_wgsl_check says which kernels and options). */
    OG_FAMILY_WGSL = 1u << 12,
    /* A convolution's own kernel, no GEMM's: one invocation an output pixel
     * and tn output channels of its group, every term in one pass (no
     * split-k); chosen for few channels a group (og_conv_depthwise_eligible). */
    OG_FAMILY_DEPTHWISE = 1u << 14
};

/* The keys of a parameter string, one bit each (og_family.keys). */
enum {
    OG_KEY_LOAD = 1u << 0,
    OG_KEY_ACC = 1u << 1,
    OG_KEY_BM = 1u << 2,
    OG_KEY_BN = 1u << 3,
    OG_KEY_BK = 1u << 4,
    OG_KEY_TM = 1u << 5,
    OG_KEY_TN = 1u << 6,
    OG_KEY_WGX = 1u << 7,
    OG_KEY_WGY = 1u << 8,
    OG_KEY_PAD = 1u << 9,
    OG_KEY_VEC = 1u << 10,
    OG_KEY_COLS = 1u << 11,
    OG_KEY_SLICES = 1u << 12,
    OG_KEY_ROWS = 1u << 13,
    OG_KEY_DOT = 1u << 14,
    OG_KEY_SGX = 1u << 15,
    OG_KEY_SGY = 1u << 16,
    OG_KEY_SUB = 1u << 17,
    OG_KEY_BUF = 1u << 18,
    OG_KEY_UNROLL = 1u << 19,
    OG_KEY_FRAG = 1u << 28,
    OG_KEY_MAT = 1u << 29,
    OG_KEY_SRC = 1u << 30
};

/* A tuning space being built: parameters in order, each once, each that
 * og_params_check allows on lim (NULL: by their own rules alone). */
typedef struct og_space_list {
    og_params *list;
    size_t n, cap;
    const og_limits *lim;
} og_space_list;

/* What a space is for: the preset (quick, or standard: every candidate
 * worth measuring) and the product's shape, B's layout. */
typedef struct og_space_ask {
    int standard;
    int64_t m, n, k, batch;
    int trans_b;
} og_space_ask;

typedef struct og_family {
    og_variant variant;
    const char *name;          /* variant=NAME in parameter strings */
    const char *template_name; /* its GEMM kernel's template (templates/NAME.tmpl) */
    unsigned can;              /* OG_FAMILY_* */
    /* Whether a GEMM of M rows of A of a_type (transposed or not) can run
     * it, and the rule in words for the refusal (NULL: any GEMM the kernel
     * key's rules allow). */
    int (*takes)(og_dtype a_type, int64_t m, int trans_a);
    const char *takes_text;
    /* Parsing: the keys a string must name, keys it may name all together
     * (extra) or each alone (optional), and the message naming them. */
    unsigned keys, extra, optional;
    const char *keys_text;
    /* Fills the fields of keys a parsed string left out (may be NULL). */
    void (*finish)(og_params *p, unsigned seen);
    void (*format)(const og_params *p, char *buf, size_t len);
    /* Its parameters' own rules and, when lim is not NULL, the device's. */
    int (*check)(const og_params *p, const og_limits *lim, char *why, size_t len);
    /* Its rules for a GEMM or PLANES kernel key's types, layouts and
     * dialect, after the rules every family shares (may be NULL). */
    int (*check_key)(const og_kernel_key *key, char *why, size_t len);
    uint32_t (*shared_bytes)(const og_params *p);
    void (*local_size)(const og_params *p, uint32_t size[3]);
    /* Loop iterations one invocation runs for k_len terms
     * (og_kernel_loop_iterations). */
    uint64_t (*loop_iterations)(const og_params *p, uint64_t k_len);
    /* Its tuning space (og_space_list.c): the candidates ogtune measures
     * for ask, its default first, in the order they are measured. */
    og_status (*space)(struct og_space_list *c, const struct og_space_ask *ask);
} og_family;

/* The entry of variant, or NULL where none has it. */
const og_family *og_family_find(og_variant variant);
/* The entry of p's variant; the portable tile's for a variant none has. */
const og_family *og_family_of(const og_params *p);
/* Whether p's family can do all of what (OG_FAMILY_*). */
int og_family_can(const og_params *p, unsigned what);
/* The entry named name in parameter strings, or NULL. */
const og_family *og_family_named(const char *name);

/* The entries (gen/families/). */
extern const og_family og_family_tile, og_family_fewrows, og_family_int8_tile,
    og_family_int8_skinny, og_family_coopmat, og_family_int8_coopmat, og_family_qdecode,
    og_family_decode, og_family_coopmat2, og_family_depthwise;

/* Rules the entries share (gen/og_params.c). */
int og_one_of(int v, const int *set, size_t n);
extern const int og_pow2[8]; /* 1, 2, 4, ..., 128 */
/* The device's limits on a workgroup of sx x sy invocations and p's
 * workgroup memory. */
int og_limits_check(const og_params *p, const og_limits *lim, uint32_t sx, uint32_t sy, char *why,
                    size_t len);
/* src=addr needs bufferDeviceAddress; src=texel the device's texel
 * buffers, and is refused with texel_refused where that is not NULL. */
int og_src_check(const og_params *p, const og_limits *lim, const char *texel_refused, char *why,
                 size_t len);
/* Packed dot products: dot 0 or 1, and 1 only where the device has them. */
int og_dot_check(const og_params *p, const og_limits *lim, char *why, size_t len);
/* A tile's shape: BM x BN, BK, the register tile, the workgroup, padding. */
int og_tile_shape_check(const og_params *p, char *why, size_t len);
/* Adds p to c when c->lim allows it and c does not hold it yet
 * (OG_ERROR_OUT_OF_MEMORY when it cannot grow). */
og_status og_space_add(og_space_list *c, og_params p);
/* Adds an Int8Gemm kernel with word loads from storage buffers, and from
 * texel buffers (og_params_check drops that one where the device has none). */
og_status og_space_add_word_loads(og_space_list *c, og_params p);
/* Adds a matrix tile with NV and with KHR matrices, in the subgroup size
 * and fragment the device runs them with (og_space_add drops what the
 * device does not take). */
og_status og_space_add_matrix(og_space_list *c, og_params p);

/* What every matrix kernel needs of the device beside its matrices (the
 * matrix tiles, coopmat2): subgroups of p->sub it can pin, full subgroups,
 * shaderFloat16 (int8: shaderInt8) and the Vulkan memory model. */
int og_matrix_device_check(const og_params *p, const og_limits *lim, int int8, char *why,
                           size_t len);

/* A tile's workgroup: wgx x wgy invocations (the portable and Int8Gemm tiles). */
void og_tile_local_size(const og_params *p, uint32_t size[3]);
/* "ssbo", "texel", "addr". */
const char *og_src_name(og_src src);
/* Trips of a loop taking per_step of k_len terms a trip. */
uint64_t og_steps(uint64_t k_len, int per_step);

#endif /* OG_FAMILY_H */
