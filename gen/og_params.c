/* Parameters of the portable tile template: defaults, text form, checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_gen.h"

og_tile_params og_params_default(void)
{
    og_tile_params p = {
        64, 64, 16, 4, 4, 16, 16, 0, OG_LOAD_STAGED, OG_ACC_BLOCKED, 1, OG_SRC_STORAGE};
    return p;
}

void og_params_format(const og_tile_params *p, char *buf, size_t len)
{
    snprintf(buf, len,
             "bm=%d,bn=%d,bk=%d,tm=%d,tn=%d,wgx=%d,wgy=%d,pad=%d,load=%s,acc=%s,vec=%d,src=%s",
             p->bm, p->bn, p->bk, p->tm, p->tn, p->wgx, p->wgy, p->pad,
             p->load == OG_LOAD_DIRECT ? "direct" : "staged",
             p->acc == OG_ACC_CHAIN ? "chain" : "blocked", p->vec,
             p->src == OG_SRC_TEXEL ? "texel" : "ssbo");
}

/* The integer field named key, and its position in the table (for the
 * record of which keys were seen). */
static int *int_field(og_tile_params *p, const char *key, unsigned *position)
{
    static const struct {
        const char *key;
        size_t offset;
    } fields[] = {
        {"bm", offsetof(og_tile_params, bm)},   {"bn", offsetof(og_tile_params, bn)},
        {"bk", offsetof(og_tile_params, bk)},   {"tm", offsetof(og_tile_params, tm)},
        {"tn", offsetof(og_tile_params, tn)},   {"wgx", offsetof(og_tile_params, wgx)},
        {"wgy", offsetof(og_tile_params, wgy)}, {"pad", offsetof(og_tile_params, pad)},
        {"vec", offsetof(og_tile_params, vec)},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (strcmp(fields[i].key, key) == 0) {
            *position = (unsigned)i;
            return (int *)((char *)p + fields[i].offset);
        }
    return NULL;
}

int og_params_parse(const char *text, og_tile_params *out, char *why, size_t len)
{
    og_tile_params p;
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
        } else if (strcmp(item, "src") == 0 &&
                   (strcmp(value, "ssbo") == 0 || strcmp(value, "texel") == 0)) {
            p.src = strcmp(value, "texel") == 0 ? OG_SRC_TEXEL : OG_SRC_STORAGE;
            seen |= 1u << 11;
        } else {
            snprintf(why, len, "params: unknown item %s=%s", item, value);
            return -1;
        }
    }
    if (seen != 0xfffu) {
        snprintf(why, len, "params: '%s' lacks some of bm,bn,bk,tm,tn,wgx,wgy,pad,load,acc,vec,src",
                 text);
        return -1;
    }
    *out = p;
    return 0;
}

uint32_t og_params_shared_bytes(const og_tile_params *p)
{
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

int og_params_check(const og_tile_params *p, const og_limits *lim, char *why, size_t len)
{
    static const int tiles[] = {8, 16, 32, 64, 128};
    static const int steps[] = {16, 32};
    static const int regs[] = {1, 2, 4, 8, 16};
    if (!one_of(p->bm, tiles, 5) || !one_of(p->bn, tiles, 5)) {
        snprintf(why, len, "params: tile %dx%d is not made of 8, 16, 32, 64 or 128", p->bm, p->bn);
        return -1;
    }
    /* The blocked summation restarts its 16-term chain inside a k step. */
    if (!one_of(p->bk, steps, 2)) {
        snprintf(why, len, "params: bk=%d is not 16 or 32", p->bk);
        return -1;
    }
    if (!one_of(p->tm, regs, 5) || !one_of(p->tn, regs, 5)) {
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
    if (p->vec != 1 &&
        !(p->vec == 4 && p->load == OG_LOAD_DIRECT && p->tm % 4 == 0 && p->tn % 4 == 0)) {
        snprintf(why, len,
                 "params: vec=%d must be 1, or 4 with direct loads and register tiles of fours",
                 p->vec);
        return -1;
    }
    if (!lim)
        return 0;
    if (p->src == OG_SRC_TEXEL && lim->max_texel_elements == 0) {
        snprintf(why, len,
                 "limits: the device has no R32/R32G32/R32G32B32A32 uniform texel buffers");
        return -1;
    }
    uint32_t inv = (uint32_t)(p->wgx * p->wgy);
    if (inv > lim->max_invocations) {
        snprintf(why, len, "limits: %u invocations per workgroup exceed the device's %u", inv,
                 lim->max_invocations);
        return -1;
    }
    if ((uint32_t)p->wgx > lim->max_size[0] || (uint32_t)p->wgy > lim->max_size[1]) {
        snprintf(why, len, "limits: workgroup %dx%d exceeds the device's %ux%u", p->wgx, p->wgy,
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

int og_params_vec_aligned(const og_gemm_args *g)
{
    const int64_t v[] = {g->a_offset, g->lda, g->stride_a, g->b_offset, g->ldb, g->stride_b};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (v[i] % 4 != 0)
            return 0;
    return 1;
}
