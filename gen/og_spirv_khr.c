/* The KHR form of a cooperative-matrix module: a word-level rewrite of a
 * module compiled with SPV_NV_cooperative_matrix (Debian 12's glslang knows
 * no GL_KHR_cooperative_matrix) into SPV_KHR_cooperative_matrix. What
 * changes comes from the two extension texts in the SPIR-V registry
 * (opcodes and operands as in spirv.core.grammar.json):
 *   OpCapability CooperativeMatrixNV (5357) -> CooperativeMatrixKHR (6022);
 *   OpExtension "SPV_NV_cooperative_matrix" -> "SPV_KHR_cooperative_matrix";
 *   OpTypeCooperativeMatrixNV (5358: Component Type, Execution, Rows,
 *     Columns) -> OpTypeCooperativeMatrixKHR (4456: the same, then a Use id:
 *     MatrixAKHR 0, MatrixBKHR 1, MatrixAccumulatorKHR 2), one type per use,
 *     so an NV type serving A and B becomes two types (and so do the
 *     Function pointers to it);
 *   OpCooperativeMatrixLoadNV (5359: Pointer, Stride, Column Major bool,
 *     memory access) -> OpCooperativeMatrixLoadKHR (4457: Pointer,
 *     MemoryLayout id RowMajorKHR 0 or ColumnMajorKHR 1, Stride, memory
 *     access), and the stores 5360 -> 4458 the same way;
 *   OpCooperativeMatrixMulAddNV (5361) -> OpCooperativeMatrixMulAddKHR
 *     (4459), followed by Cooperative Matrix Operands where the NV types are
 *     signed integers (NV types carry signedness in their OpTypeInt, KHR
 *     takes it from these operands: MatrixASignedComponentsKHR 0x1,
 *     MatrixBSigned 0x2, MatrixCSigned 0x4, MatrixResultSigned 0x8); none
 *     for float or unsigned components, and never SaturatingAccumulation
 *     (0x10: Int8Gemm's sums wrap modulo 2^32);
 *   OpCooperativeMatrixLengthNV (5362) -> OpCooperativeMatrixLengthKHR (4460).
 * The uses follow the data: MulAdd's A and B operands, its C operand and
 * result (accumulator), joined through OpPhi, OpSelect, OpCopyObject,
 * arithmetic and the Function variables they pass through. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_gen.h"

enum {
    OP_NAME = 5,
    OP_MEMBER_NAME = 6,
    OP_EXTENSION = 10,
    OP_CAPABILITY = 17,
    OP_TYPE_INT = 21,
    OP_TYPE_ARRAY = 28,
    OP_TYPE_RUNTIME_ARRAY = 29,
    OP_TYPE_STRUCT = 30,
    OP_TYPE_POINTER = 32,
    OP_TYPE_FUNCTION = 33,
    OP_CONSTANT_TRUE = 41,
    OP_CONSTANT_FALSE = 42,
    OP_CONSTANT = 43,
    OP_LOAD = 61,
    OP_STORE = 62,
    OP_ACCESS_CHAIN = 65,
    OP_IN_BOUNDS_ACCESS_CHAIN = 66,
    OP_PHI = 245,
    CAP_NV = 5357,
    CAP_KHR = 6022,
    TYPE_NV = 5358,
    LOAD_NV = 5359,
    STORE_NV = 5360,
    MULADD_NV = 5361,
    LENGTH_NV = 5362,
    TYPE_KHR = 4456,
    LOAD_KHR = 4457,
    STORE_KHR = 4458,
    MULADD_KHR = 4459,
    LENGTH_KHR = 4460
};

/* Uses (SPV_KHR_cooperative_matrix's CooperativeMatrixUse), as bits. */
enum { USE_A = 1, USE_B = 2, USE_ACC = 4 };

#define NV_EXTENSION "SPV_NV_cooperative_matrix"
#define KHR_EXTENSION "SPV_KHR_cooperative_matrix"

/* What the rewrite knows of each id of the module. */
typedef struct rewrite {
    const uint32_t *in;
    size_t count;
    uint32_t bound;
    uint8_t *kind;      /* KIND_* of an id */
    uint8_t *is_signed; /* an OpTypeInt with Signedness 1, and an NV matrix type of one */
    uint32_t *pointee;  /* a pointer type's cooperative-matrix type */
    uint32_t *type;     /* a tracked value's result type */
    uint32_t *parent;   /* union-find of values that must share a use */
    uint8_t *uses;      /* USE_* of a set (at its root) or of a type */
    uint32_t *split[3]; /* per type id: the KHR type (or pointer) of each use */
    uint32_t uint_type; /* the first OpTypeInt 32 0 */
    uint32_t consts[3]; /* OpConstant uint 0, 1, 2 the rewrite declares */
    char *err;
    size_t errlen;
} rewrite;

enum { KIND_NONE = 0, KIND_MATRIX, KIND_POINTER, KIND_VALUE, KIND_FALSE, KIND_TRUE };

/* Instructions whose result (word 2, type in word 1) may be a cooperative
 * matrix or a pointer to one, and whose operands do not change its use
 * beyond what note_uses joins. */
static int tracked_result(uint32_t op)
{
    switch (op) {
    case 1:   /* OpUndef */
    case 44:  /* OpConstantComposite */
    case 46:  /* OpConstantNull */
    case 59:  /* OpVariable */
    case 61:  /* OpLoad */
    case 80:  /* OpCompositeConstruct */
    case 83:  /* OpCopyObject */
    case 115: /* OpFConvert */
    case 127: /* OpFNegate */
    case 129: /* OpFAdd */
    case 131: /* OpFSub */
    case 133: /* OpFMul */
    case 136: /* OpFDiv */
    case 143: /* OpMatrixTimesScalar */
    case 169: /* OpSelect */
    case 245: /* OpPhi */
    case LOAD_NV:
    case MULADD_NV:
        return 1;
    default:
        return 0;
    }
}

static uint32_t find(rewrite *r, uint32_t id)
{
    while (r->parent[id] != id) {
        r->parent[id] = r->parent[r->parent[id]];
        id = r->parent[id];
    }
    return id;
}

/* Joins the sets of a and b when both are tracked values. */
static void join(rewrite *r, uint32_t a, uint32_t b)
{
    if (a >= r->bound || b >= r->bound || r->kind[a] != KIND_VALUE || r->kind[b] != KIND_VALUE)
        return;
    a = find(r, a);
    b = find(r, b);
    if (a == b)
        return;
    r->parent[b] = a;
    r->uses[a] |= r->uses[b];
}

static void mark(rewrite *r, uint32_t id, uint8_t use)
{
    if (id < r->bound && r->kind[id] == KIND_VALUE)
        r->uses[find(r, id)] |= use;
}

static int fail(rewrite *r, const char *what, uint32_t op, size_t at)
{
    snprintf(r->err, r->errlen, "spirv khr: %s (Op %u at word %zu)", what, op, at);
    return -1;
}

/* Whether id is a cooperative-matrix type or a pointer to one. */
static int matrix_typed(const rewrite *r, uint32_t id)
{
    return id < r->bound && (r->kind[id] == KIND_MATRIX || r->kind[id] == KIND_POINTER);
}

/* First pass: the types, the tracked values and the constructs the
 * rewrite refuses (cooperative matrices inside composites, function
 * parameters and results, access chains into them, instructions it does
 * not know on them, a Column Major operand that is not a constant). */
static int scan(rewrite *r)
{
    for (size_t i = 5; i < r->count;) {
        const uint32_t *w = r->in + i;
        uint32_t op = w[0] & 0xffffu, len = w[0] >> 16;
        if (len == 0 || i + len > r->count)
            return fail(r, "truncated instruction", op, i);
        if (op == OP_TYPE_INT && len == 4 && w[2] == 32 && w[3] == 0 && !r->uint_type)
            r->uint_type = w[1];
        if (op == OP_TYPE_INT && len == 4 && w[1] < r->bound)
            r->is_signed[w[1]] = w[3] == 1;
        if ((op == OP_CONSTANT_TRUE || op == OP_CONSTANT_FALSE) && len == 3 && w[2] < r->bound)
            r->kind[w[2]] = op == OP_CONSTANT_TRUE ? KIND_TRUE : KIND_FALSE;
        if (op == TYPE_NV) {
            if (len != 6 || w[1] >= r->bound || w[2] >= r->bound)
                return fail(r, "malformed OpTypeCooperativeMatrixNV", op, i);
            r->kind[w[1]] = KIND_MATRIX;
            r->is_signed[w[1]] = r->is_signed[w[2]];
        } else if (op == OP_TYPE_POINTER && len == 4 && w[1] < r->bound && matrix_typed(r, w[3])) {
            if (r->kind[w[3]] != KIND_MATRIX)
                return fail(r, "a pointer to a pointer to a cooperative matrix", op, i);
            r->kind[w[1]] = KIND_POINTER;
            r->pointee[w[1]] = w[3];
        } else if (op == OP_TYPE_ARRAY || op == OP_TYPE_RUNTIME_ARRAY || op == OP_TYPE_STRUCT ||
                   op == OP_TYPE_FUNCTION) {
            for (uint32_t k = 2; k < len; k++)
                if (matrix_typed(r, w[k]))
                    return fail(r, "a cooperative matrix inside a composite or function type", op,
                                i);
        } else if ((op == OP_ACCESS_CHAIN || op == OP_IN_BOUNDS_ACCESS_CHAIN) && len >= 4 &&
                   w[3] < r->bound && r->kind[w[3]] == KIND_VALUE) {
            return fail(r, "an access chain into a cooperative matrix", op, i);
        } else if (len >= 3 && matrix_typed(r, w[1]) && op != OP_NAME && op != OP_MEMBER_NAME) {
            if (!tracked_result(op))
                return fail(r, "an instruction the rewrite does not know on a cooperative matrix",
                            op, i);
            if (w[2] >= r->bound)
                return fail(r, "result id out of bounds", op, i);
            r->kind[w[2]] = KIND_VALUE;
            r->type[w[2]] = w[1];
        }
        if (op == LOAD_NV || op == STORE_NV) {
            uint32_t need = op == LOAD_NV ? 6 : 5, major = w[need - 1];
            if (len < need || major >= r->bound ||
                (r->kind[major] != KIND_TRUE && r->kind[major] != KIND_FALSE))
                return fail(r, "a Column Major operand that is not OpConstantTrue or False", op, i);
        }
        if (op == MULADD_NV && (len != 6 || w[3] >= r->bound || w[4] >= r->bound ||
                                w[5] >= r->bound))
            return fail(r, "malformed OpCooperativeMatrixMulAddNV", op, i);
        i += len;
    }
    if (!r->uint_type) {
        snprintf(r->err, r->errlen, "spirv khr: the module declares no 32-bit unsigned integer");
        return -1;
    }
    return 0;
}

/* Second pass: which use each set of values has. */
static void note_uses(rewrite *r)
{
    for (size_t i = 5; i < r->count;) {
        const uint32_t *w = r->in + i;
        uint32_t op = w[0] & 0xffffu, len = w[0] >> 16;
        int value = len >= 3 && w[2] < r->bound && r->kind[w[2]] == KIND_VALUE &&
                    tracked_result(op) && matrix_typed(r, w[1]);
        if (op == MULADD_NV) {
            mark(r, w[3], USE_A);
            mark(r, w[4], USE_B);
            mark(r, w[5], USE_ACC);
            mark(r, w[2], USE_ACC);
            join(r, w[2], w[5]);
        } else if (op == OP_STORE && len >= 3) {
            join(r, w[1], w[2]);
        } else if (value && op == OP_PHI) {
            for (uint32_t k = 3; k < len; k += 2)
                join(r, w[2], w[k]);
        } else if (value && op != OP_LOAD && op != LOAD_NV && op != 59 && op != 44 && op != 80) {
            /* Copies, selections, conversions and arithmetic keep the use. */
            for (uint32_t k = 3; k < len; k++)
                join(r, w[2], w[k]);
        } else if (value && op == OP_LOAD) {
            join(r, w[2], w[3]);
        }
        i += len;
    }
}

/* A set's one use: accumulator when nothing says otherwise (values only
 * loaded and stored); -1 for a set used as two different operands. */
static int use_of(rewrite *r, uint32_t id)
{
    uint8_t u = r->uses[find(r, id)];
    if (u == 0)
        return 2;
    if (u != USE_A && u != USE_B && u != USE_ACC)
        return -1;
    return u == USE_A ? 0 : u == USE_B ? 1 : 2;
}

/* The uses each type (and pointer type) serves, then the ids of their KHR
 * forms: the first use keeps the NV id, the others take new ids. */
static int assign_types(rewrite *r, uint32_t *next)
{
    for (uint32_t id = 1; id < r->bound; id++) {
        if (r->kind[id] != KIND_VALUE)
            continue;
        int u = use_of(r, id);
        if (u < 0) {
            snprintf(r->err, r->errlen,
                     "spirv khr: value %%%u serves as more than one cooperative-matrix operand "
                     "(A, B, accumulator)",
                     id);
            return -1;
        }
        uint32_t t = r->type[id];
        r->uses[t] |= (uint8_t)(1u << u);
        if (r->kind[t] == KIND_POINTER)
            r->uses[r->pointee[t]] |= (uint8_t)(1u << u);
    }
    /* Matrix types first: a pointer no value has takes its pointee's first use. */
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t id = 1; id < r->bound; id++) {
            if (r->kind[id] != (pass == 0 ? KIND_MATRIX : KIND_POINTER))
                continue;
            if (r->uses[id] == 0)
                r->uses[id] =
                    pass == 0 ? USE_ACC
                              : (uint8_t)(r->uses[r->pointee[id]] & -(int)r->uses[r->pointee[id]]);
            int first = 1;
            for (int u = 0; u < 3; u++) {
                if (!(r->uses[id] & (1u << u)))
                    continue;
                r->split[u][id] = first ? id : (*next)++;
                first = 0;
            }
        }
    return 0;
}

/* The output, grown as words are appended. */
typedef struct out {
    uint32_t *w;
    size_t n, cap;
} out;

static int put(out *o, const uint32_t *w, size_t n)
{
    if (o->n + n > o->cap) {
        size_t cap = o->cap * 2 + n + 256;
        uint32_t *grown = realloc(o->w, cap * sizeof *grown);
        if (!grown)
            return -1;
        o->w = grown;
        o->cap = cap;
    }
    memcpy(o->w + o->n, w, n * sizeof *w);
    o->n += n;
    return 0;
}

/* Whether an OpExtension names s. */
static int names(const uint32_t *w, uint32_t len, const char *s)
{
    size_t n = strlen(s);
    return (len - 1) * 4 > n && memcmp(w + 1, s, n) == 0 && ((const char *)(w + 1))[n] == '\0';
}

/* The KHR type (or pointer) id of a value's type. */
static uint32_t typed(rewrite *r, uint32_t value)
{
    return r->split[use_of(r, value)][r->type[value]];
}

/* Writes one instruction in its KHR form: -1 when out of memory, -2 (with
 * the reason in r->err) for a construct the rewrite refuses. */
static int emit(rewrite *r, out *o, const uint32_t *w, uint32_t op, uint32_t len)
{
    if (op == OP_EXTENSION && names(w, len, NV_EXTENSION)) {
        uint32_t ext[8] = {0};
        memcpy(ext + 1, KHR_EXTENSION, sizeof KHR_EXTENSION);
        ext[0] = OP_EXTENSION | (uint32_t)(1 + (sizeof KHR_EXTENSION + 3) / 4) << 16;
        return put(o, ext, ext[0] >> 16);
    }
    if (op == TYPE_NV) {
        for (int u = 0; u < 3; u++) {
            if (!(r->uses[w[1]] & (1u << u)))
                continue;
            uint32_t t[7] = {TYPE_KHR | 7u << 16, r->split[u][w[1]], w[2], w[3], w[4], w[5],
                             r->consts[u]};
            if (put(o, t, 7) != 0)
                return -1;
        }
        return 0;
    }
    if (op == OP_TYPE_POINTER && r->kind[w[1]] == KIND_POINTER) {
        for (int u = 0; u < 3; u++) {
            if (!(r->uses[w[1]] & (1u << u)))
                continue;
            uint32_t t[4] = {w[0], r->split[u][w[1]], w[2], r->split[u][w[3]]};
            if (put(o, t, 4) != 0)
                return -1;
        }
        return 0;
    }
    if (op == LENGTH_NV &&
        (len != 4 || !matrix_typed(r, w[3]) || (r->uses[w[3]] & (r->uses[w[3]] - 1)))) {
        snprintf(r->err, r->errlen,
                 "spirv khr: OpCooperativeMatrixLengthNV of a type split by use (Op %u)", op);
        return -2;
    }
    if (op == MULADD_NV) {
        /* Result type, result, A, B, C; then the signed operands, if any. */
        uint32_t m[7] = {MULADD_KHR | 6u << 16, typed(r, w[2]), w[2], w[3], w[4], w[5], 0};
        m[6] = (r->is_signed[r->type[w[3]]] ? 0x1u : 0u) | (r->is_signed[r->type[w[4]]] ? 0x2u : 0u) |
               (r->is_signed[r->type[w[5]]] ? 0x4u : 0u) | (r->is_signed[w[1]] ? 0x8u : 0u);
        if (m[6])
            m[0] = MULADD_KHR | 7u << 16;
        return put(o, m, m[6] ? 7 : 6);
    }
    size_t at = o->n;
    if (put(o, w, len) != 0)
        return -1;
    uint32_t *b = o->w + at;
    if (op == OP_CAPABILITY && len == 2 && w[1] == CAP_NV) {
        b[1] = CAP_KHR;
    } else if (op == LOAD_NV || op == STORE_NV) {
        /* Pointer, Stride, Column Major -> Pointer, MemoryLayout, Stride. */
        uint32_t s = op == LOAD_NV ? 4 : 3;
        b[0] = (op == LOAD_NV ? LOAD_KHR : STORE_KHR) | len << 16;
        b[s] = r->consts[r->kind[w[s + 1]] == KIND_TRUE ? 1 : 0];
        b[s + 1] = w[s];
    } else if (op == LENGTH_NV) {
        b[0] = LENGTH_KHR | len << 16;
    }
    if (len >= 3 && w[2] < r->bound && r->kind[w[2]] == KIND_VALUE && tracked_result(op) &&
        matrix_typed(r, w[1]))
        b[1] = typed(r, w[2]);
    if (op == OP_TYPE_INT && w[1] == r->uint_type)
        for (uint32_t v = 0; v < 3; v++) {
            uint32_t c[4] = {OP_CONSTANT | 4u << 16, r->uint_type, r->consts[v], v};
            if (put(o, c, 4) != 0)
                return -1;
        }
    return 0;
}

og_status og_spirv_khr(const uint32_t *nv, size_t count, uint32_t **khr, size_t *khr_count,
                       char *err, size_t errlen)
{
    *khr = NULL;
    *khr_count = 0;
    if (count < 5 || nv[0] != 0x07230203u || nv[3] == 0 || nv[3] > (1u << 22)) {
        snprintf(err, errlen, "spirv khr: not a SPIR-V module");
        return OG_ERROR_COMPILE;
    }
    rewrite r = {.in = nv, .count = count, .bound = nv[3], .err = err, .errlen = errlen};
    r.kind = calloc(r.bound, 1);
    r.is_signed = calloc(r.bound, 1);
    r.uses = calloc(r.bound, 1);
    r.pointee = calloc(r.bound, sizeof *r.pointee);
    r.type = calloc(r.bound, sizeof *r.type);
    r.parent = malloc(r.bound * sizeof *r.parent);
    for (int u = 0; u < 3; u++)
        r.split[u] = calloc(r.bound, sizeof *r.split[u]);
    out o = {0};
    og_status st = OG_OK;
    if (!r.kind || !r.is_signed || !r.uses || !r.pointee || !r.type || !r.parent || !r.split[0] || !r.split[1] ||
        !r.split[2]) {
        snprintf(err, errlen, "spirv khr: out of memory");
        st = OG_ERROR_OUT_OF_MEMORY;
        goto done;
    }
    for (uint32_t id = 0; id < r.bound; id++)
        r.parent[id] = id;
    int has_nv = 0;
    for (size_t i = 5; i + 1 < count && (nv[i] >> 16);) {
        has_nv |= (nv[i] & 0xffffu) == OP_CAPABILITY && nv[i + 1] == CAP_NV;
        i += nv[i] >> 16;
    }
    if (!has_nv) {
        snprintf(err, errlen, "spirv khr: the module declares no CooperativeMatrixNV capability");
        st = OG_ERROR_COMPILE;
        goto done;
    }
    if (scan(&r) != 0) {
        st = OG_ERROR_COMPILE;
        goto done;
    }
    note_uses(&r);
    uint32_t next = r.bound;
    for (int v = 0; v < 3; v++)
        r.consts[v] = next++;
    if (assign_types(&r, &next) != 0) {
        st = OG_ERROR_COMPILE;
        goto done;
    }
    for (size_t i = 0; i < count;) {
        int bad = i < 5 ? put(&o, nv, 5) : emit(&r, &o, nv + i, nv[i] & 0xffffu, nv[i] >> 16);
        if (bad != 0) {
            if (bad == -1)
                snprintf(err, errlen, "spirv khr: out of memory");
            st = bad == -1 ? OG_ERROR_OUT_OF_MEMORY : OG_ERROR_COMPILE;
            goto done;
        }
        i += i < 5 ? 5 : nv[i] >> 16;
    }
    o.w[3] = next;
    *khr = o.w;
    *khr_count = o.n;
    o.w = NULL;
done:
    free(o.w);
    free(r.kind);
    free(r.is_signed);
    free(r.uses);
    free(r.pointee);
    free(r.type);
    free(r.parent);
    for (int u = 0; u < 3; u++)
        free(r.split[u]);
    return st;
}
