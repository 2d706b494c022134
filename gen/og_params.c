/* Parameters of the GEMM variants: the text form and the checks every
 * family shares, each asking the variant's entry (og_family.h) for what is
 * its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_family.h"

int og_params_matrix(const og_params *p)
{
    return og_family_can(p, OG_FAMILY_MATRIX);
}

const char *og_params_template(const og_params *p)
{
    return og_family_of(p)->template_name;
}

static const char *const src_names[] = {"ssbo", "texel", "addr"};

const char *og_src_name(og_src src)
{
    return src_names[src];
}

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
    og_family_of(p)->format(p, buf, len);
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
            seen |= OG_KEY_BM << position;
        } else if (strcmp(item, "load") == 0 &&
                   (strcmp(value, "staged") == 0 || strcmp(value, "direct") == 0)) {
            p.load = strcmp(value, "direct") == 0 ? OG_LOAD_DIRECT : OG_LOAD_STAGED;
            seen |= OG_KEY_LOAD;
        } else if (strcmp(item, "acc") == 0 &&
                   (strcmp(value, "blocked") == 0 || strcmp(value, "chain") == 0)) {
            p.acc = strcmp(value, "chain") == 0 ? OG_ACC_CHAIN : OG_ACC_BLOCKED;
            seen |= OG_KEY_ACC;
        } else if (strcmp(item, "split") == 0) {
            char *end;
            long v = strcmp(value, "rule") == 0 ? OG_SPLIT_RULE : strtol(value, &end, 10);
            if (strcmp(value, "rule") != 0 && (*value == '\0' || *end != '\0' || v < 1 || v > 16)) {
                snprintf(why, len, "params: split=%s is not 'rule' or 1..16", value);
                return -1;
            }
            p.split = (int)v;
        } else if (strcmp(item, "variant") == 0 && og_family_named(value)) {
            p.variant = og_family_named(value)->variant;
        } else if (strcmp(item, "src") == 0 && src_named(value, &p.src)) {
            seen |= OG_KEY_SRC;
        } else if (strcmp(item, "mat") == 0 &&
                   (strcmp(value, "nv") == 0 || strcmp(value, "khr") == 0 ||
                    strcmp(value, "emu") == 0)) {
            p.mat = strcmp(value, "khr") == 0   ? OG_MATRIX_KHR
                    : strcmp(value, "emu") == 0 ? OG_MATRIX_EMU
                                                : OG_MATRIX_NV;
            seen |= OG_KEY_MAT;
        } else if (strcmp(item, "frag") == 0) {
            char tail;
            if (sscanf(value, "%3dx%3dx%3d%c", &p.fm, &p.fn, &p.fk, &tail) != 3 || p.fm < 1 ||
                p.fn < 1 || p.fk < 1) {
                snprintf(why, len, "params: frag=%s is not MxNxK", value);
                return -1;
            }
            seen |= OG_KEY_FRAG;
        } else {
            snprintf(why, len, "params: unknown item %s=%s", item, value);
            return -1;
        }
    }
    /* The family's keys, those it may name all together (extra) or each
     * alone (optional); split only for families that split k. */
    const og_family *f = og_family_of(&p);
    unsigned optional = (seen & f->extra) == f->extra ? f->extra : 0u;
    optional |= seen & f->optional;
    if (f->finish)
        f->finish(&p, seen);
    if (seen != (f->keys | optional) ||
        (!(f->can & OG_FAMILY_SPLIT) && p.split != OG_SPLIT_RULE)) {
        snprintf(why, len, "params: '%s' needs exactly %s", text, f->keys_text);
        return -1;
    }
    *out = p;
    return 0;
}

uint32_t og_params_shared_bytes(const og_params *p)
{
    return og_family_of(p)->shared_bytes(p);
}

int og_one_of(int v, const int *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == v)
            return 1;
    return 0;
}

const int og_pow2[8] = {1, 2, 4, 8, 16, 32, 64, 128};

uint64_t og_steps(uint64_t k_len, int per_step)
{
    return (k_len + (uint64_t)per_step - 1) / (uint64_t)per_step;
}

int og_limits_check(const og_params *p, const og_limits *lim, uint32_t sx, uint32_t sy, char *why,
                    size_t len)
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


int og_dot_check(const og_params *p, const og_limits *lim, char *why, size_t len)
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


/* Texel loads: the device's texel buffers, where the family takes them.
 * Device addresses: the device's bufferDeviceAddress. */
int og_src_check(const og_params *p, const og_limits *lim, const char *texel_refused, char *why,
                 size_t len)
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
    if (texel_refused) {
        snprintf(why, len, "%s", texel_refused);
        return -1;
    }
    if (lim && lim->max_texel_elements == 0) {
        snprintf(why, len,
                 "limits: the device has no R32/R32G32/R32G32B32A32 uniform texel buffers");
        return -1;
    }
    return 0;
}

/* BM x BN of 8..128, BK 16 or 32, register tile of 1..16, the workgroup
 * times the register tile is the tile, padding 0..8. */
int og_tile_shape_check(const og_params *p, char *why, size_t len)
{
    static const int tiles[] = {8, 16, 32, 64, 128};
    static const int steps[] = {16, 32};
    if (!og_one_of(p->bm, tiles, 5) || !og_one_of(p->bn, tiles, 5)) {
        snprintf(why, len, "params: tile %dx%d is not made of 8, 16, 32, 64 or 128", p->bm, p->bn);
        return -1;
    }
    /* The blocked summation restarts its 16-term chain inside a k step. */
    if (!og_one_of(p->bk, steps, 2)) {
        snprintf(why, len, "params: bk=%d is not 16 or 32", p->bk);
        return -1;
    }
    if (!og_one_of(p->tm, og_pow2, 5) || !og_one_of(p->tn, og_pow2, 5)) {
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


int og_params_check(const og_params *p, const og_limits *lim, char *why, size_t len)
{
    if (!og_family_find(p->variant)) {
        snprintf(why, len, "params: unknown variant %d", (int)p->variant);
        return -1;
    }
    return og_family_of(p)->check(p, lim, why, len);
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
