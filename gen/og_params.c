/* Parameters of the GEMM variants (tile, few rows, Int8Gemm tile and skinny):
 * defaults, text form, checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_gen.h"

og_params og_params_default(void)
{
    og_params p = {.variant = OG_VARIANT_TILE,
                   .bm = 64,
                   .bn = 64,
                   .bk = 16,
                   .tm = 4,
                   .tn = 4,
                   .wgx = 16,
                   .wgy = 16,
                   .load = OG_LOAD_STAGED,
                   .acc = OG_ACC_BLOCKED,
                   .vec = 1,
                   .src = OG_SRC_STORAGE,
                   .split = OG_SPLIT_RULE};
    return p;
}

og_params og_params_fewrows(int trans_b, int64_t n)
{
    og_params p = {.variant = OG_VARIANT_FEWROWS, .cols = 8, .slices = 32, .vec = 4};
    if (!trans_b) {
        /* From N = 8192 a row of 32 columns is 128 bytes: one full transaction. */
        p.cols = n >= 8192 ? 32 : 16;
        p.slices = n >= 8192 ? 8 : 16;
    }
    return p;
}

og_params og_params_int8_tile(void)
{
    og_params p = {.variant = OG_VARIANT_INT8_TILE,
                   .bm = 64,
                   .bn = 64,
                   .bk = 16,
                   .tm = 4,
                   .tn = 4,
                   .wgx = 16,
                   .wgy = 16};
    return p;
}

og_params og_params_int8_skinny(void)
{
    og_params p = {.variant = OG_VARIANT_INT8_SKINNY, .rows = 4, .cols = 32, .slices = 16};
    return p;
}

og_params og_params_qdecode(int64_t m)
{
    og_params p = {.variant = OG_VARIANT_QDECODE, .rows = 1, .cols = 4, .slices = 32, .vec = 4, .unroll = 1};
    while (p.rows < 16 && p.rows < m)
        p.rows *= 2;
    return p;
}

og_params og_params_qprefill(void)
{
    og_params p = og_params_default();
    p.split = 1;
    return p;
}

og_params og_params_coopmat(int subgroups)
{
    og_params p = {.variant = OG_VARIANT_COOPMAT,
                   .bm = 64,
                   .bn = 64,
                   .bk = 16,
                   .sgx = subgroups == 4 ? 2 : 4,
                   .sgy = 2,
                   .pad = 8,
                   .load = OG_LOAD_STAGED,
                   .mat = OG_MATRIX_NV,
                   .sub = OG_COOPMAT_SUBGROUP,
                   .fm = 16,
                   .fn = 16,
                   .fk = 16,
                   .buf = 1};
    return p;
}

og_params og_params_int8_coopmat(int subgroups)
{
    og_params p = og_params_coopmat(subgroups);
    p.variant = OG_VARIANT_INT8_COOPMAT;
    p.pad = 16; /* int8 rows of 32 bytes: fragments start on 16 bytes */
    return p;
}

int og_params_matrix(const og_params *p)
{
    return p->variant == OG_VARIANT_COOPMAT || p->variant == OG_VARIANT_INT8_COOPMAT;
}

const char *og_params_template(const og_params *p)
{
    switch (p->variant) {
    case OG_VARIANT_COOPMAT:
        return OG_TEMPLATE_COOPMAT;
    case OG_VARIANT_INT8_COOPMAT:
        return OG_TEMPLATE_INT8_COOPMAT;
    case OG_VARIANT_FEWROWS:
        return OG_TEMPLATE_FEWROWS;
    case OG_VARIANT_INT8_TILE:
        return OG_TEMPLATE_INT8_TILE;
    case OG_VARIANT_INT8_SKINNY:
        return OG_TEMPLATE_INT8_SKINNY;
    case OG_VARIANT_QDECODE:
        return OG_TEMPLATE_QDECODE;
    default:
        return OG_TEMPLATE_TILE;
    }
}

static const char *const src_names[] = {"ssbo", "texel", "addr"};

static int src_named(const char *value, og_src *out)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(value, src_names[i]) == 0) {
            *out = (og_src)i;
            return 1;
        }
    return 0;
}

void og_params_format(const og_params *p, char *buf, size_t len)
{
    if (p->variant == OG_VARIANT_FEWROWS) {
        snprintf(buf, len, "variant=fewrows,cols=%d,slices=%d,vec=%d%s", p->cols, p->slices, p->vec,
                 p->src == OG_SRC_ADDR ? ",src=addr" : "");
        return;
    }
    if (p->variant == OG_VARIANT_INT8_TILE) {
        int used = snprintf(
            buf, len, "variant=int8tile,bm=%d,bn=%d,bk=%d,tm=%d,tn=%d,wgx=%d,wgy=%d,pad=%d,dot=%d",
            p->bm, p->bn, p->bk, p->tm, p->tn, p->wgx, p->wgy, p->pad, p->dot);
        /* The staged tile keeps the text it had before direct loads existed,
         * so the records measured then keep their keys. */
        if (p->load == OG_LOAD_DIRECT && used >= 0 && (size_t)used < len)
            used += snprintf(buf + used, len - (size_t)used, ",load=direct,vec=%d", p->vec);
        if (p->src != OG_SRC_STORAGE && used >= 0 && (size_t)used < len)
            snprintf(buf + used, len - (size_t)used, ",src=%s", src_names[p->src]);
        return;
    }
    if (og_params_matrix(p)) {
        /* NV matrices in subgroups of 32 with one buffer keep the text they
         * had before KHR matrices and double buffering existed, so the
         * records measured then keep their keys. */
        int used = snprintf(buf, len, "variant=%s,bm=%d,bn=%d,bk=%d,sgx=%d,sgy=%d,pad=%d,load=%s",
                            p->variant == OG_VARIANT_COOPMAT ? "coopmat" : "int8coopmat", p->bm,
                            p->bn, p->bk, p->sgx, p->sgy, p->pad,
                            p->load == OG_LOAD_DIRECT ? "direct" : "staged");
        if (p->mat != OG_MATRIX_NV && used >= 0 && (size_t)used < len)
            used += snprintf(buf + used, len - (size_t)used, ",mat=%s",
                             p->mat == OG_MATRIX_KHR ? "khr" : "emu");
        if (p->sub != OG_COOPMAT_SUBGROUP && used >= 0 && (size_t)used < len)
            used += snprintf(buf + used, len - (size_t)used, ",sub=%d", p->sub);
        if (p->buf != 1 && used >= 0 && (size_t)used < len)
            used += snprintf(buf + used, len - (size_t)used, ",buf=%d", p->buf);
        if ((p->fm != 16 || p->fn != 16 || p->fk != 16) && used >= 0 && (size_t)used < len)
            snprintf(buf + used, len - (size_t)used, ",frag=%dx%dx%d", p->fm, p->fn, p->fk);
        return;
    }
    if (p->variant == OG_VARIANT_QDECODE) {
        int used = snprintf(buf, len, "variant=qdecode,rows=%d,cols=%d,slices=%d,vec=%d", p->rows,
                            p->cols, p->slices, p->vec);
        /* Split-k (k ranges) and unrolling only where asked: the texts of
         * the kernels from before they existed stay as they were. */
        if (p->split != OG_SPLIT_RULE && used >= 0 && (size_t)used < len)
            used += snprintf(buf + used, len - (size_t)used, ",split=%d", p->split);
        if (p->unroll != 1 && used >= 0 && (size_t)used < len)
            snprintf(buf + used, len - (size_t)used, ",unroll=%d", p->unroll);
        return;
    }
    if (p->variant == OG_VARIANT_INT8_SKINNY) {
        int used = snprintf(buf, len, "variant=int8skinny,rows=%d,cols=%d,slices=%d,dot=%d",
                            p->rows, p->cols, p->slices, p->dot);
        /* As for the tile: the byte-loading kernel keeps its old text. */
        if (p->vec != 0 && used >= 0 && (size_t)used < len)
            used += snprintf(buf + used, len - (size_t)used, ",vec=%d", p->vec);
        if (p->src != OG_SRC_STORAGE && used >= 0 && (size_t)used < len)
            snprintf(buf + used, len - (size_t)used, ",src=%s", src_names[p->src]);
        return;
    }
    char split[16];
    if (p->split == OG_SPLIT_RULE)
        snprintf(split, sizeof split, "rule");
    else
        snprintf(split, sizeof split, "%d", p->split);
    snprintf(buf, len,
             "bm=%d,bn=%d,bk=%d,tm=%d,tn=%d,wgx=%d,wgy=%d,pad=%d,load=%s,acc=%s,vec=%d,src=%s,"
             "split=%s",
             p->bm, p->bn, p->bk, p->tm, p->tn, p->wgx, p->wgy, p->pad,
             p->load == OG_LOAD_DIRECT ? "direct" : "staged",
             p->acc == OG_ACC_CHAIN ? "chain" : "blocked", p->vec, src_names[p->src], split);
}

/* The integer field named key, and its position in the table (for the
 * record of which keys were seen). */
static int *int_field(og_params *p, const char *key, unsigned *position)
{
    static const struct {
        const char *key;
        size_t offset;
    } fields[] = {
        {"bm", offsetof(og_params, bm)},         {"bn", offsetof(og_params, bn)},
        {"bk", offsetof(og_params, bk)},         {"tm", offsetof(og_params, tm)},
        {"tn", offsetof(og_params, tn)},         {"wgx", offsetof(og_params, wgx)},
        {"wgy", offsetof(og_params, wgy)},       {"pad", offsetof(og_params, pad)},
        {"vec", offsetof(og_params, vec)},       {"cols", offsetof(og_params, cols)},
        {"slices", offsetof(og_params, slices)}, {"rows", offsetof(og_params, rows)},
        {"dot", offsetof(og_params, dot)},       {"sgx", offsetof(og_params, sgx)},
        {"sgy", offsetof(og_params, sgy)},       {"sub", offsetof(og_params, sub)},
        {"buf", offsetof(og_params, buf)},       {"unroll", offsetof(og_params, unroll)},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (strcmp(fields[i].key, key) == 0) {
            *position = (unsigned)i;
            return (int *)((char *)p + fields[i].offset);
        }
    return NULL;
}

static int variant_named(const char *name, og_variant *out)
{
    static const char *const names[] = {
        [OG_VARIANT_TILE] = "tile",          [OG_VARIANT_FEWROWS] = "fewrows",
        [OG_VARIANT_INT8_TILE] = "int8tile", [OG_VARIANT_INT8_SKINNY] = "int8skinny",
        [OG_VARIANT_COOPMAT] = "coopmat",    [OG_VARIANT_INT8_COOPMAT] = "int8coopmat",
        [OG_VARIANT_QDECODE] = "qdecode"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (og_variant)i;
            return 1;
        }
    return 0;
}

int og_params_parse(const char *text, og_params *out, char *why, size_t len)
{
    og_params p;
    unsigned seen = 0; /* one bit per key */
    char item[64];
    const char *s = text;
    memset(&p, 0, sizeof p);
    while (*s) {
        size_t n = strcspn(s, ",");
        if (n == 0 || n >= sizeof item) {
            snprintf(why, len, "params: malformed item in '%s'", text);
            return -1;
        }
        memcpy(item, s, n);
        item[n] = '\0';
        s += n + (s[n] == ',');
        char *eq = strchr(item, '=');
        if (!eq) {
            snprintf(why, len, "params: '%s' has no '='", item);
            return -1;
        }
        *eq = '\0';
        const char *value = eq + 1;
        unsigned position = 0;
        int *field = int_field(&p, item, &position);
        if (field) {
            char *end;
            long v = strtol(value, &end, 10);
            if (*value == '\0' || *end != '\0' || v < 0 || v > 4096) {
                snprintf(why, len, "params: %s=%s is not a small integer", item, value);
                return -1;
            }
            *field = (int)v;
            seen |= 1u << (2 + position);
        } else if (strcmp(item, "load") == 0 &&
                   (strcmp(value, "staged") == 0 || strcmp(value, "direct") == 0)) {
            p.load = strcmp(value, "direct") == 0 ? OG_LOAD_DIRECT : OG_LOAD_STAGED;
            seen |= 1u << 0;
        } else if (strcmp(item, "acc") == 0 &&
                   (strcmp(value, "blocked") == 0 || strcmp(value, "chain") == 0)) {
            p.acc = strcmp(value, "chain") == 0 ? OG_ACC_CHAIN : OG_ACC_BLOCKED;
            seen |= 1u << 1;
        } else if (strcmp(item, "split") == 0) {
            char *end;
            long v = strcmp(value, "rule") == 0 ? OG_SPLIT_RULE : strtol(value, &end, 10);
            if (strcmp(value, "rule") != 0 && (*value == '\0' || *end != '\0' || v < 1 || v > 16)) {
                snprintf(why, len, "params: split=%s is not 'rule' or 1..16", value);
                return -1;
            }
            p.split = (int)v;
        } else if (strcmp(item, "variant") == 0 && variant_named(value, &p.variant)) {
            /* variant_named has set p.variant */
        } else if (strcmp(item, "src") == 0 && src_named(value, &p.src)) {
            seen |= 1u << 30;
        } else if (strcmp(item, "mat") == 0 &&
                   (strcmp(value, "nv") == 0 || strcmp(value, "khr") == 0 ||
                    strcmp(value, "emu") == 0)) {
            p.mat = strcmp(value, "khr") == 0   ? OG_MATRIX_KHR
                    : strcmp(value, "emu") == 0 ? OG_MATRIX_EMU
                                                : OG_MATRIX_NV;
            seen |= 1u << 29;
        } else if (strcmp(item, "frag") == 0) {
            char tail;
            if (sscanf(value, "%3dx%3dx%3d%c", &p.fm, &p.fn, &p.fk, &tail) != 3 || p.fm < 1 ||
                p.fn < 1 || p.fk < 1) {
                snprintf(why, len, "params: frag=%s is not MxNxK", value);
                return -1;
            }
            seen |= 1u << 28;
        } else {
            snprintf(why, len, "params: unknown item %s=%s", item, value);
            return -1;
        }
    }
    /* Bits 0 and 1 are load and acc, 2..10 the tile's integers, 11 and 12
     * cols and slices, 13 rows, 14 dot, 15 and 16 sgx and sgy, 17 sub, 18
     * buf, 19 unroll, 28 frag, 29 mat, 30 src. */
    static const struct {
        unsigned keys;
        const char *what;
    } wanted[] = {
        [OG_VARIANT_TILE] = {0x400007ffu,
                             "bm,bn,bk,tm,tn,wgx,wgy,pad,load,acc,vec,src (and split)"},
        [OG_VARIANT_FEWROWS] = {0x1800u, "cols and slices (and vec) for variant=fewrows"},
        [OG_VARIANT_INT8_TILE] = {0x43fcu, "bm,bn,bk,tm,tn,wgx,wgy,pad,dot (and load with vec) "
                                           "for variant=int8tile"},
        [OG_VARIANT_INT8_SKINNY] = {0x7800u,
                                    "rows, cols, slices and dot (and vec) for variant=int8skinny"},
        [OG_VARIANT_COOPMAT] = {0x1821du, "bm,bn,bk,sgx,sgy,pad,load for variant=coopmat"},
        [OG_VARIANT_INT8_COOPMAT] = {0x1821du, "bm,bn,bk,sgx,sgy,pad,load for variant=int8coopmat"},
        [OG_VARIANT_QDECODE] = {0x3800u,
                                "rows, cols and slices (and vec, split) for variant=qdecode"},
    };
    /* Few rows read one element at a time unless vec says otherwise. */
    if ((p.variant == OG_VARIANT_FEWROWS || p.variant == OG_VARIANT_QDECODE) && !(seen & 0x400u))
        p.vec = 1;
    int unsplit = p.variant != OG_VARIANT_TILE && p.variant != OG_VARIANT_QDECODE;
    /* The Int8Gemm tile may name its loads and their width (both or none),
     * the skinny kernel and few rows their loads' width; apart from those,
     * the Int8Gemm kernels and few rows may name their source (src). */
    unsigned extra = p.variant == OG_VARIANT_INT8_TILE ? 0x401u
                     : p.variant == OG_VARIANT_INT8_SKINNY || p.variant == OG_VARIANT_FEWROWS ||
                             p.variant == OG_VARIANT_QDECODE
                         ? 0x400u
                         : 0u;
    unsigned optional = (seen & extra) == extra ? extra : 0u;
    /* The decode kernel may name its unrolling (1 when absent). */
    if (p.variant == OG_VARIANT_QDECODE) {
        optional |= seen & (1u << 19);
        if (!(seen & (1u << 19)))
            p.unroll = 1;
    }
    if (p.variant != OG_VARIANT_TILE && !og_params_matrix(&p))
        optional |= seen & (1u << 30);
    /* The matrix kernels may name their extension, subgroup size, buffers
     * and fragment (NV, 32, 1 and 16x16x16 when absent). */
    if (og_params_matrix(&p)) {
        optional |= seen & (1u << 28 | 1u << 29 | 1u << 17 | 1u << 18);
        if (!(seen & (1u << 17)))
            p.sub = OG_COOPMAT_SUBGROUP;
        if (!(seen & (1u << 18)))
            p.buf = 1;
        if (!(seen & (1u << 28)))
            p.fm = p.fn = p.fk = 16;
    }
    if (seen != (wanted[p.variant].keys | optional) || (unsplit && p.split != OG_SPLIT_RULE)) {
        snprintf(why, len, "params: '%s' needs exactly %s", text, wanted[p.variant].what);
        return -1;
    }
    *out = p;
    return 0;
}

uint32_t og_params_shared_bytes(const og_params *p)
{
    /* Few rows: one float per row (up to 4) and invocation, for the slice sums. */
    if (p->variant == OG_VARIANT_FEWROWS)
        return (uint32_t)(16 * p->cols * p->slices);
    /* Int8Gemm skinny and the low-bit decode kernel: one 32-bit sum per
     * row and invocation. */
    if (p->variant == OG_VARIANT_INT8_SKINNY || p->variant == OG_VARIANT_QDECODE)
        return (uint32_t)(4 * p->rows * p->cols * p->slices);
    /* Cooperative matrix: the float16 A and B tiles, padded, once or twice
     * (buf), and a float32 fm x fn fragment per subgroup that the
     * accumulators leave through. */
    if (p->variant == OG_VARIANT_COOPMAT)
        return (uint32_t)(2 * p->buf * (p->bm * (p->bk + p->pad) + p->bk * (p->bn + p->pad)) +
                          4 * p->fm * p->fn * p->sgx * p->sgy);
    /* Int8Gemm's: the same with int8 tiles, and three int32 fragments per
     * subgroup (the sums, their row terms and their column terms). */
    if (p->variant == OG_VARIANT_INT8_COOPMAT)
        return (uint32_t)(p->buf * (p->bm * (p->bk + p->pad) + p->bk * (p->bn + p->pad)) +
                          12 * p->fm * p->fn * p->sgx * p->sgy);
    /* Int8Gemm tile: an int per element (dot = 0), or a word of four k (dot = 1);
     * none with direct loads. */
    if (p->variant == OG_VARIANT_INT8_TILE && p->load == OG_LOAD_DIRECT)
        return 0;
    if (p->variant == OG_VARIANT_INT8_TILE)
        return (uint32_t)((p->dot ? 1 : 4) * p->bk * (p->bm + p->pad + p->bn + p->pad));
    if (p->load == OG_LOAD_DIRECT)
        return 0;
    return (uint32_t)(4 * p->bk * (p->bm + p->pad + p->bn + p->pad));
}

static int one_of(int v, const int *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == v)
            return 1;
    return 0;
}

/* The device's limits on a workgroup of sx x sy invocations and the
 * parameters' workgroup memory. */
static int limits_check(const og_params *p, const og_limits *lim, uint32_t sx, uint32_t sy,
                        char *why, size_t len)
{
    if (sx * sy > lim->max_invocations) {
        snprintf(why, len, "limits: %u invocations per workgroup exceed the device's %u", sx * sy,
                 lim->max_invocations);
        return -1;
    }
    if (sx > lim->max_size[0] || sy > lim->max_size[1]) {
        snprintf(why, len, "limits: workgroup %ux%u exceeds the device's %ux%u", sx, sy,
                 lim->max_size[0], lim->max_size[1]);
        return -1;
    }
    uint32_t shared = og_params_shared_bytes(p);
    if (shared > lim->max_shared_bytes) {
        snprintf(why, len, "limits: %u bytes of workgroup memory exceed the device's %u", shared,
                 lim->max_shared_bytes);
        return -1;
    }
    return 0;
}

static const int pow2[] = {1, 2, 4, 8, 16, 32, 64, 128};

static int src_check(const og_params *p, const og_limits *lim, char *why, size_t len);

static int fewrows_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    int terms = p->cols * p->slices;
    if (!one_of(p->cols, pow2, 8) || !one_of(p->slices, pow2, 8) || terms < 32 || terms > 1024) {
        snprintf(why, len,
                 "params: few rows cols=%d, slices=%d must be powers of two up to 128 with "
                 "32..1024 columns times slices",
                 p->cols, p->slices);
        return -1;
    }
    /* vec=4: an invocation takes four columns (B K x N) or four slices (N x K). */
    if ((p->vec != 1 && p->vec != 4) || p->cols < p->vec || p->slices < p->vec) {
        snprintf(why, len, "params: few rows vec=%d must be 1 or 4, with cols and slices >= vec",
                 p->vec);
        return -1;
    }
    if (src_check(p, lim, why, len) != 0)
        return -1;
    int threads = terms / p->vec;
    return lim ? limits_check(p, lim, (uint32_t)threads, 1, why, len) : 0;
}

/* Packed dot products: 0 or 1, and 1 only where the device has them. */
static int dot_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    if (p->dot != 0 && p->dot != 1) {
        snprintf(why, len, "params: dot=%d is not 0 or 1", p->dot);
        return -1;
    }
    if (lim && p->dot && !lim->integer_dot) {
        snprintf(why, len,
                 "limits: dot=1 needs VK_KHR_shader_integer_dot_product, which the "
                 "device does not offer");
        return -1;
    }
    return 0;
}

/* Texel loads: the device's texel buffers; for an Int8Gemm kernel, its
 * named loads (load=direct for the tile, vec for the skinny kernel).
 * Device addresses: the device's bufferDeviceAddress. */
static int src_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    if (p->src == OG_SRC_ADDR) {
        if (lim && !lim->buffer_address) {
            snprintf(why, len,
                     "limits: src=addr needs bufferDeviceAddress, not enabled on this "
                     "device");
            return -1;
        }
        return 0;
    }
    if (p->src != OG_SRC_TEXEL)
        return 0;
    if (p->variant == OG_VARIANT_FEWROWS) {
        snprintf(why, len, "params: few rows read storage buffers or addresses (src=ssbo or addr)");
        return -1;
    }
    if ((p->variant == OG_VARIANT_INT8_TILE && p->load != OG_LOAD_DIRECT) ||
        (p->variant == OG_VARIANT_INT8_SKINNY && p->vec == 0)) {
        snprintf(why, len, "params: Int8Gemm src=texel needs load=direct (tile) or vec (skinny)");
        return -1;
    }
    if (lim && lim->max_texel_elements == 0) {
        snprintf(why, len,
                 "limits: the device has no R32/R32G32/R32G32B32A32 uniform texel buffers");
        return -1;
    }
    return 0;
}

static int skinny_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    int threads = p->cols * p->slices;
    if (!one_of(p->rows, pow2, 5) || !one_of(p->cols, pow2, 8) || !one_of(p->slices, pow2, 8) ||
        threads < 32 || threads > 1024) {
        snprintf(why, len,
                 "params: skinny rows=%d, cols=%d, slices=%d must be powers of two (rows up to "
                 "16, the others up to 128) with 32..1024 invocations",
                 p->rows, p->cols, p->slices);
        return -1;
    }
    if (dot_check(p, lim, why, len) != 0 || src_check(p, lim, why, len) != 0)
        return -1;
    /* Word loads: a quarter of the invocations, each owning four columns;
     * the byte-loading kernel the runtime falls back to keeps them all. */
    if (p->vec != 0 && (p->vec != 4 || p->dot != 0 || p->cols < 4 || threads / 4 < 32)) {
        snprintf(why, len,
                 "params: skinny vec=%d must be absent, or 4 with dot=0 and at least 128 "
                 "columns times slices",
                 p->vec);
        return -1;
    }
    return lim ? limits_check(p, lim, (uint32_t)(p->vec == 4 ? threads / 4 : threads), 1, why, len)
               : 0;
}

/* The low-bit decode kernel: powers of two, rows up to 16 (the unrolled
 * rows of A), cols up to 64, slices up to 128, 32..1024 invocations. */
static int qdecode_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    int threads = p->cols * p->slices;
    if (!one_of(p->rows, pow2, 5) || !one_of(p->cols, pow2, 7) || !one_of(p->slices, pow2, 8) ||
        threads < 32 || threads > 1024 || p->src != OG_SRC_STORAGE ||
        (p->vec != 1 && p->vec != 4) || p->split < 0 || p->split > 16 ||
        (p->unroll != 1 && p->unroll != 2 && p->unroll != 4)) {
        snprintf(why, len,
                 "params: qdecode rows=%d, cols=%d, slices=%d must be powers of two (rows up to "
                 "16, cols up to 64, slices up to 128) with 32..1024 invocations, vec=%d 1 or 4, "
                 "split=%d the rule (none) or 1..16 k ranges, unroll=%d 1, 2 or 4 units a trip, "
                 "from storage buffers",
                 p->rows, p->cols, p->slices, p->vec, p->split, p->unroll);
        return -1;
    }
    return lim ? limits_check(p, lim, (uint32_t)threads, 1, why, len) : 0;
}

/* Whether a fragment shape is one the matrix templates take. */
static int fragment_taken(uint32_t m, uint32_t n, uint32_t k)
{
    return (m == 8 || m == 16) && (n == 8 || n == 16) && (k == 8 || k == 16 || k == 32);
}

/* The shapes the device lists for extension mat. */
static const og_matrix_shape *listed(const og_matrix_caps *m, og_matrix_ext mat, uint32_t *n)
{
    *n = mat == OG_MATRIX_KHR ? m->n_khr_shapes : m->n_shapes;
    if (*n > OG_MATRIX_SHAPES_MAX)
        *n = OG_MATRIX_SHAPES_MAX;
    return mat == OG_MATRIX_KHR ? m->khr_shapes : m->shapes;
}

/* Whether s multiplies a of type a by b into accumulators (and results) of acc. */
static int shape_types(const og_matrix_shape *s, int a, int b, int acc)
{
    return s->subgroup && s->a == a && s->b == b && s->c == acc && s->result == acc;
}

int og_matrix_fragment(const og_matrix_caps *m, og_matrix_ext mat, int a, int b, int acc, int *fm,
                       int *fn, int *fk)
{
    uint32_t n;
    const og_matrix_shape *shapes = listed(m, mat, &n), *best = NULL;
    for (uint32_t i = 0; i < n; i++) {
        const og_matrix_shape *s = &shapes[i];
        if (!shape_types(s, a, b, acc) || !fragment_taken(s->m, s->n, s->k))
            continue;
        /* The most products; of as many, the squarer (16x16x16 before 16x8x32). */
        uint32_t size = s->m * s->n * s->k, best_size = best ? best->m * best->n * best->k : 0;
        if (!best || size > best_size || (size == best_size && s->m * s->n > best->m * best->n))
            best = s;
    }
    if (!best)
        return -1;
    *fm = (int)best->m;
    *fn = (int)best->n;
    *fk = (int)best->k;
    return 0;
}

int og_matrix_subgroup(const og_limits *lim)
{
    const og_matrix_caps *m = &lim->matrix;
    static const int sizes[] = {32, 64, 16, 8};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint32_t s = (uint32_t)sizes[i];
        if (m->size_control ? m->subgroup_min <= s && s <= m->subgroup_max
                            : lim->subgroup_size == s)
            return sizes[i];
    }
    return 0;
}

/* What the extension a matrix kernel speaks needs of the device: its
 * fragment listed with float16 A and B and float32 accumulators, or (the
 * Int8Gemm tile) int8 A and B and int32 accumulators. */
static int matrix_ext_check(const og_params *p, const og_matrix_caps *m, char *why, size_t len)
{
    const char *ext =
        p->mat == OG_MATRIX_KHR ? "VK_KHR_cooperative_matrix" : "VK_NV_cooperative_matrix";
    int int8 = p->variant == OG_VARIANT_INT8_COOPMAT;
    int in = int8 ? OG_COMPONENT_S8 : OG_COMPONENT_F16,
        acc = int8 ? OG_COMPONENT_S32 : OG_COMPONENT_F32;
    uint32_t n;
    const og_matrix_shape *shapes = listed(m, p->mat, &n);
    int found = 0;
    for (uint32_t i = 0; i < n && !found; i++)
        found = shapes[i].m == (uint32_t)p->fm && shapes[i].n == (uint32_t)p->fn &&
                shapes[i].k == (uint32_t)p->fk && shape_types(&shapes[i], in, in, acc);
    if (!found) {
        snprintf(why, len, "the device lists no %dx%dx%d %s combination for %s%s", p->fm, p->fn,
                 p->fk, int8 ? "int8 x int8 -> int32" : "float16", ext,
                 n                         ? ""
                 : p->mat == OG_MATRIX_KHR ? " (it lists no KHR shapes)"
                                           : " (it lists no NV shapes)");
        return -1;
    }
    if (p->mat == OG_MATRIX_KHR && !m->khr_compute) {
        snprintf(why, len,
                 "VK_KHR_cooperative_matrix's cooperativeMatrixSupportedStages lack compute");
        return -1;
    }
    return 0;
}

/* The emulated fragments (mat=emu, a test's kernel) need of the device
 * what the rest of the template needs: float16 in workgroup memory, and
 * 16-bit storage for direct loads; Int8Gemm's, int8 in workgroup memory. */
static int emulation_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    const og_matrix_caps *m = &lim->matrix;
    if ((p->fm * p->fn) % p->sub != 0) {
        snprintf(why, len,
                 "the emulated matrix kernel gives each of its %d lanes as many elements of a "
                 "%dx%d accumulator",
                 p->sub, p->fm, p->fn);
        return -1;
    }
    if (p->variant == OG_VARIANT_INT8_COOPMAT && !m->int8) {
        snprintf(why, len, "the emulated Int8Gemm matrix kernel needs shaderInt8");
        return -1;
    }
    if (p->variant == OG_VARIANT_COOPMAT &&
        (!m->float16 || (p->load == OG_LOAD_DIRECT && !m->storage16))) {
        snprintf(why, len, "the emulated matrix kernel needs shaderFloat16%s",
                 p->load == OG_LOAD_DIRECT ? " and storageBuffer16BitAccess" : "");
        return -1;
    }
    return limits_check(p, lim, (uint32_t)(p->sub * p->sgx * p->sgy), 1, why, len);
}

/* The cooperative-matrix tile's own rules: tiles of 32 to 256, k steps of
 * 16 to 64, fragments the templates take, 2 to 16 subgroups of 8 to 64
 * each owning whole fragments, at most 16 accumulators and 128 of their
 * elements a lane, one or two buffers. */
static int coopmat_shape_check(const og_params *p, char *why, size_t len)
{
    static const int tiles[] = {32, 64, 128, 256}, steps[] = {16, 32, 64}, splits[] = {1, 2, 4, 8},
                     pads[] = {0, 8}, bufs[] = {1, 2}, subs[] = {8, 16, 32, 64};
    int sg = p->sgx * p->sgy;
    /* Int8Gemm's rows are bytes: pad 0 or 16 keeps them on 16 bytes. */
    int int8 = p->variant == OG_VARIANT_INT8_COOPMAT;
    if (!one_of(p->bm, tiles, 4) || !one_of(p->bn, tiles, 4) || !one_of(p->bk, steps, 3) ||
        !one_of(int8 ? p->pad / 2 : p->pad, pads, 2) || (int8 && p->pad % 2) ||
        !one_of(p->buf, bufs, 2)) {
        snprintf(why, len,
                 "params: cooperative-matrix tile %dx%dx%d, pad=%d, buf=%d: tiles of 32, 64, 128 "
                 "or 256, k step 16, 32 or 64, pad %s, buf 1 or 2",
                 p->bm, p->bn, p->bk, p->pad, p->buf, int8 ? "0 or 16 (bytes)" : "0 or 8");
        return -1;
    }
    if (int8 && p->load != OG_LOAD_STAGED) {
        snprintf(why, len,
                 "params: int8coopmat loads staged only (uint8 operands are shifted into int8 "
                 "as they are staged)");
        return -1;
    }
    if (!fragment_taken((uint32_t)p->fm, (uint32_t)p->fn, (uint32_t)p->fk) || p->bk % p->fk != 0) {
        snprintf(why, len,
                 "params: fragment %dx%dx%d: M and N 8 or 16, K 8, 16 or 32 dividing the k step %d",
                 p->fm, p->fn, p->fk, p->bk);
        return -1;
    }
    if ((p->mat != OG_MATRIX_NV && p->mat != OG_MATRIX_KHR && p->mat != OG_MATRIX_EMU) ||
        !one_of(p->sub, subs, 4)) {
        snprintf(why, len,
                 "params: cooperative-matrix mat=%d sub=%d: NV, KHR or emu, subgroups of 8, 16, "
                 "32 or 64",
                 (int)p->mat, p->sub);
        return -1;
    }
    /* The split counts are checked before they divide the tile. */
    int splits_ok = one_of(p->sgx, splits, 4) && one_of(p->sgy, splits, 4);
    int wm = splits_ok ? p->bm / p->sgy : 0, wn = splits_ok ? p->bn / p->sgx : 0;
    int accs = splits_ok && wm % p->fm == 0 && wn % p->fn == 0 ? (wm / p->fm) * (wn / p->fn) : 0;
    if (!splits_ok || sg < 2 || sg > 16 || accs < 1 || accs > 16 ||
        accs * p->fm * p->fn > 128 * p->sub) {
        snprintf(why, len,
                 "params: %dx%d subgroups of %d must number 2 to 16 and each own whole %dx%d "
                 "fragments of the %dx%d tile, at most 16 accumulators and 128 of their elements "
                 "a lane",
                 p->sgx, p->sgy, p->sub, p->fm, p->fn, p->bn, p->bm);
        return -1;
    }
    return 0;
}

/* The cooperative-matrix tile: its own rules, then what it needs of the
 * device (reference design, "Which devices take the matrix kernel"). */
static int coopmat_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    if (coopmat_shape_check(p, why, len) != 0)
        return -1;
    if (!lim)
        return 0;
    if (p->mat == OG_MATRIX_EMU)
        return emulation_check(p, lim, why, len);
    int sg = p->sgx * p->sgy, int8 = p->variant == OG_VARIANT_INT8_COOPMAT;
    const og_matrix_caps *m = &lim->matrix;
    if (matrix_ext_check(p, m, why, len) != 0)
        return -1;
    uint32_t s = (uint32_t)p->sub;
    int can =
        m->size_control ? m->subgroup_min <= s && s <= m->subgroup_max : lim->subgroup_size == s;
    if (!can) {
        if (m->size_control && m->subgroup_min != m->subgroup_max)
            snprintf(why, len, "the device runs subgroups of %u to %u, none of %u", m->subgroup_min,
                     m->subgroup_max, s);
        else
            snprintf(why, len, "the device runs subgroups of %u only, the kernel needs %u",
                     m->size_control ? m->subgroup_min : lim->subgroup_size, s);
        return -1;
    }
    if (!m->full_subgroups) {
        snprintf(why, len, "the device cannot require full subgroups (computeFullSubgroups)");
        return -1;
    }
    /* Int8Gemm's fragments and tiles are int8 (the Int8 capability). */
    if (!(int8 ? m->int8 : m->float16) || !m->memory_model) {
        snprintf(why, len, "the device lacks %s",
                 !m->memory_model ? "the Vulkan memory model"
                 : int8           ? "shaderInt8"
                                  : "shaderFloat16");
        return -1;
    }
    if (p->load == OG_LOAD_DIRECT && !m->storage16) {
        snprintf(why, len, "direct fragment loads need storageBuffer16BitAccess");
        return -1;
    }
    return limits_check(p, lim, (uint32_t)(p->sub * sg), 1, why, len);
}

/* The tile's shape: BM x BN of 8..128, BK 16 or 32, register tile of 1..16,
 * the workgroup times the register tile is the tile, padding 0..8. */
static int tile_shape_check(const og_params *p, char *why, size_t len)
{
    static const int tiles[] = {8, 16, 32, 64, 128};
    static const int steps[] = {16, 32};
    if (!one_of(p->bm, tiles, 5) || !one_of(p->bn, tiles, 5)) {
        snprintf(why, len, "params: tile %dx%d is not made of 8, 16, 32, 64 or 128", p->bm, p->bn);
        return -1;
    }
    /* The blocked summation restarts its 16-term chain inside a k step. */
    if (!one_of(p->bk, steps, 2)) {
        snprintf(why, len, "params: bk=%d is not 16 or 32", p->bk);
        return -1;
    }
    if (!one_of(p->tm, pow2, 5) || !one_of(p->tn, pow2, 5)) {
        snprintf(why, len, "params: register tile %dx%d is not made of 1, 2, 4, 8 or 16", p->tm,
                 p->tn);
        return -1;
    }
    /* The template unrolls a k step into tm*tn*bk fmas (twice with direct
     * loads); beyond 2048 the shader compiler's time and stack grow without
     * any gain measured on lavapipe (16x16 tiles ran slower than 16x8). */
    if (p->tm * p->tn * p->bk > 2048) {
        snprintf(why, len, "params: register tile %dx%d times k step %d unrolls over 2048 fmas",
                 p->tm, p->tn, p->bk);
        return -1;
    }
    if (p->wgx * p->tn != p->bn || p->wgy * p->tm != p->bm) {
        snprintf(why, len,
                 "params: workgroup %dx%d times register tile %dx%d is not the tile %dx%d", p->wgx,
                 p->wgy, p->tn, p->tm, p->bn, p->bm);
        return -1;
    }
    if (p->pad < 0 || p->pad > 8 || (p->load == OG_LOAD_DIRECT && p->pad != 0)) {
        snprintf(why, len, "params: pad=%d must be 0..8, and 0 for direct loads", p->pad);
        return -1;
    }
    return 0;
}

static int int8_tile_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    if (tile_shape_check(p, why, len) != 0 || dot_check(p, lim, why, len) != 0 ||
        src_check(p, lim, why, len) != 0)
        return -1;
    /* Direct loads multiply in float32 (exact, see the template), so not
     * with packed dot products; vec names their loads' width only. */
    if (p->load == OG_LOAD_STAGED && p->vec != 0) {
        snprintf(why, len, "params: int8tile vec=%d needs load=direct", p->vec);
        return -1;
    }
    if (p->load == OG_LOAD_DIRECT &&
        (p->dot != 0 || !(p->vec == 1 || (p->vec == 4 && p->tm % 4 == 0 && p->tn % 4 == 0)))) {
        snprintf(why, len,
                 "params: int8tile load=direct needs dot=0 and vec=1, or vec=4 with register "
                 "tiles of fours (dot=%d, vec=%d)",
                 p->dot, p->vec);
        return -1;
    }
    return lim ? limits_check(p, lim, (uint32_t)p->wgx, (uint32_t)p->wgy, why, len) : 0;
}

int og_params_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    switch (p->variant) {
    case OG_VARIANT_TILE:
        break;
    case OG_VARIANT_FEWROWS:
        return fewrows_check(p, lim, why, len);
    case OG_VARIANT_INT8_TILE:
        return int8_tile_check(p, lim, why, len);
    case OG_VARIANT_INT8_SKINNY:
        return skinny_check(p, lim, why, len);
    case OG_VARIANT_QDECODE:
        return qdecode_check(p, lim, why, len);
    case OG_VARIANT_COOPMAT:
    case OG_VARIANT_INT8_COOPMAT:
        return coopmat_check(p, lim, why, len);
    default:
        snprintf(why, len, "params: unknown variant %d", (int)p->variant);
        return -1;
    }
    if (p->split < 0 || p->split > 16) {
        snprintf(why, len, "params: split=%d is not the rule or 1..16 ranges", p->split);
        return -1;
    }
    if (tile_shape_check(p, why, len) != 0)
        return -1;
    if (p->vec != 1 &&
        !(p->vec == 4 && p->load == OG_LOAD_DIRECT && p->tm % 4 == 0 && p->tn % 4 == 0)) {
        snprintf(why, len,
                 "params: vec=%d must be 1, or 4 with direct loads and register tiles of fours",
                 p->vec);
        return -1;
    }
    if (src_check(p, lim, why, len) != 0)
        return -1;
    return lim ? limits_check(p, lim, (uint32_t)p->wgx, (uint32_t)p->wgy, why, len) : 0;
}

uint32_t og_limits_lack(const og_limits *lim, uint32_t needs, char *why, size_t len)
{
    static const struct {
        uint32_t need;
        const char *feature;
    } names[] = {{OG_NEEDS_FLOAT16, "shaderFloat16"},
                 {OG_NEEDS_STORAGE16, "storageBuffer16BitAccess"},
                 {OG_NEEDS_MEMORY_MODEL, "vulkanMemoryModel"},
                 {OG_NEEDS_COOPMAT, "VK_NV_cooperative_matrix"},
                 {OG_NEEDS_INTEGER_DOT, "shaderIntegerDotProduct"},
                 {OG_NEEDS_ADDRESS, "bufferDeviceAddress"},
                 {OG_NEEDS_COOPMAT_KHR, "VK_KHR_cooperative_matrix"},
                 {OG_NEEDS_INT8, "shaderInt8"}};
    const og_matrix_caps *m = &lim->matrix;
    uint32_t have =
        (m->float16 ? OG_NEEDS_FLOAT16 : 0u) | (m->storage16 ? OG_NEEDS_STORAGE16 : 0u) |
        (m->memory_model ? OG_NEEDS_MEMORY_MODEL : 0u) | (m->n_shapes ? OG_NEEDS_COOPMAT : 0u) |
        (lim->integer_dot ? OG_NEEDS_INTEGER_DOT : 0u) |
        (lim->buffer_address ? OG_NEEDS_ADDRESS : 0u) |
        (m->n_khr_shapes ? OG_NEEDS_COOPMAT_KHR : 0u) | (m->int8 ? OG_NEEDS_INT8 : 0u);
    uint32_t lack = needs & ~have;
    size_t used = 0;
    if (lack && len)
        used = (size_t)snprintf(why, len, "limits: the kernel's SPIR-V capabilities need");
    for (size_t i = 0; i < sizeof names / sizeof names[0] && used < len; i++)
        if (lack & names[i].need)
            used += (size_t)snprintf(why + used, len - used, " %s", names[i].feature);
    if (lack && used < len)
        snprintf(why + used, len - used, ", not enabled on this device");
    return lack;
}
