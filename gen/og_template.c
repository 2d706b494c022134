/* Expands the embedded kernel templates with the Lua template engine. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_family.h"
#include "og_template_table.h"

/* Embedded at build time from gen/engine.lua and templates/ (cmake/embed.cmake). */
extern const char og_embed_engine[];
extern const char og_embed_generator[];
/* The parts templates include: "common" (every kernel), "int8_common" (the
 * Int8Gemm kernels), "float_loads" (the float kernels' element loads and
 * the FP8 decoders), "recover" (recovered float32), "conv_gather" (the
 * convolution's loads of A), "qweights_element" (a low-bit weight decoded,
 * for the prefill's loads of B), "kquants" (GGUF K-quant scales, for the
 * low-bit weight kernels). A template's hash adds the parts it includes, or
 * its parts include, in this order, so a new part goes last. */
static const char *const parts[] = {"common",      "int8_common",      "float_loads", "recover",
                                    "conv_gather", "qweights_element", "kquants"};

/* The built-in text of a template or part (og_template_table.h). */
static const char *builtin_text(const char *name)
{
    for (size_t i = 0; i < og_builtin_template_count; i++)
        if (strcmp(name, og_builtin_templates[i].name) == 0)
            return og_builtin_templates[i].text;
    return NULL;
}

/* The whole of a regular file, malloc'ed and NUL-terminated; NULL when it
 * cannot be read. */
static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t len = 0, cap = 1 << 14;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0;) {
        len += got;
        char *bigger = cap - len < 2 ? realloc(buf, cap *= 2) : buf;
        if (!bigger)
            free(buf);
        buf = bigger;
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

/* The text of a template or part: NAME.tmpl in the directory OG_TEMPLATE_DIR
 * names, when that file can be read (template development: a changed
 * template is tried, and tuned, without rebuilding; its records carry its
 * own og_template_hash, so they are stale for a build without it), else the
 * built-in text. *owned is what the caller frees (NULL for built-in text). */
static const char *template_text(const char *name, char **owned)
{
    const char *dir = getenv("OG_TEMPLATE_DIR");
    *owned = NULL;
    if (dir && *dir && builtin_text(name)) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s.tmpl", dir, name) < (int)sizeof path)
            *owned = read_file(path);
    }
    return *owned ? *owned : builtin_text(name);
}

/* The template engine: OG_TEMPLATE_DIR/engine.lua where the environment
 * names a directory holding one (for work on the engine without a
 * rebuild), else the built-in gen/engine.lua. *owned as for template_text. */
static const char *engine_text(char **owned)
{
    const char *dir = getenv("OG_TEMPLATE_DIR");
    *owned = NULL;
    if (dir && *dir) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/engine.lua", dir) < (int)sizeof path)
            *owned = read_file(path);
    }
    return *owned ? *owned : og_embed_engine;
}

/* Whether a template's text includes a part: ${include("name")}. */
static int includes_part(const char *text, const char *part)
{
    char call[64];
    snprintf(call, sizeof call, "include(\"%s\")", part);
    return text && strstr(text, call) != NULL;
}

uint64_t og_fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *s = data;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* og_fnv1a of a text without its NUL (nothing for NULL). */
static uint64_t fnv1a(uint64_t h, const char *text)
{
    return text ? og_fnv1a(h, text, strlen(text)) : h;
}

#define PARTS (sizeof parts / sizeof parts[0])

uint64_t og_template_hash(const char *name)
{
    char *owned, *part_owned[PARTS] = {NULL};
    const char *text = template_text(name, &owned), *part_text[PARTS] = {NULL};
    uint64_t h = fnv1a(OG_FNV_OFFSET, text);
    /* A part counts where the template includes it or an earlier part it
     * counts does (a part includes only parts before it in the list). */
    for (size_t i = 0; i < PARTS; i++) {
        int used = includes_part(text, parts[i]);
        for (size_t j = 0; j < i && !used; j++)
            used = part_text[j] && includes_part(part_text[j], parts[i]);
        if (!used)
            continue;
        part_text[i] = template_text(parts[i], &part_owned[i]);
        h = fnv1a(h, part_text[i]);
    }
    for (size_t i = 0; i < PARTS; i++)
        free(part_owned[i]);
    free(owned);
    return h;
}

uint64_t og_generator_hash(void)
{
    char *owned;
    uint64_t h = fnv1a(OG_FNV_OFFSET, engine_text(&owned));
    free(owned);
    return fnv1a(h, og_embed_generator);
}

static void set_int(lua_State *L, const char *k, int v)
{
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

static void set_str(lua_State *L, const char *k, const char *v)
{
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
}

static void push_params(lua_State *L, const og_kernel_key *key)
{
    static const char *const kernels[] = {"gemm",     "planes",    "reduce", "bias",
                                          "activate", "exponents", "scale",  "im2col"};
    const og_params *p = &key->p;
    lua_newtable(L);
    set_str(L, "KERNEL", kernels[key->kernel]);
    set_str(L, "DTYPE", og_dtype_name(key->dtype));
    set_str(L, "DTYPE_B", og_dtype_name(og_kernel_b_type(key)));
    set_int(L, "RECOVER", key->recover);
    lua_pushboolean(L, key->scaled);
    lua_setfield(L, -2, "SCALED");
    set_str(L, "DIALECT", key->dialect == OG_WGSL ? "wgsl" : key->dialect == OG_HLSL ? "hlsl" : "glsl");
    uint32_t size[3];
    og_kernel_local_size(key, size);
    set_int(L, "LOCAL_X", (int)size[0]);
    set_int(L, "LOCAL_Y", (int)size[1]);
    lua_pushboolean(L, og_dtype_is_int8(key->dtype));
    lua_setfield(L, -2, "INT8");
    set_int(L, "DOT", p->dot);
    lua_pushboolean(L, og_params_matrix(p));
    lua_setfield(L, -2, "COOPMAT");
    lua_pushboolean(L, key->trans_a);
    lua_setfield(L, -2, "TRANS_A");
    lua_pushboolean(L, key->trans_b);
    lua_setfield(L, -2, "TRANS_B");
    lua_pushboolean(L, key->conv != 0);
    lua_setfield(L, -2, "CONV");
    if (key->conv) {
        set_str(L, "CONV_IN", OG_CONV_KEY_LAYOUT(key->conv) ? "nchw" : "nhwc");
        set_str(L, "CONV_W", OG_CONV_KEY_WEIGHTS(key->conv) ? "kcrs" : "krsc");
    }
    lua_pushboolean(L, key->qformat != 0);
    lua_setfield(L, -2, "QWEIGHTS");
    if (key->qformat) {
        static const char *const formats[OG_QFORMAT_KEY_FORMATS] = {"mxfp4", "nvfp4", "int4",
                                                                    "q8_0",  "q4_k",  "q6_k"};
        static const char *const zeros[] = {"none", "uint4", "float"};
        set_str(L, "QFORMAT", formats[OG_QFORMAT_KEY_FORMAT(key->qformat) % OG_QFORMAT_KEY_FORMATS]);
        set_str(L, "QSCALE", OG_QFORMAT_KEY_SCALE(key->qformat) ? "bf16" : "f16");
        set_str(L, "QZERO", zeros[OG_QFORMAT_KEY_ZERO(key->qformat) % 3]);
    }
    static const char *const part_names[] = {"full", "load", "convert"};
    set_str(L, "PART", part_names[key->part]); /* checked: OG_PART_* */
    static const char *const srcs[] = {"ssbo", "texel", "addr"};
    set_str(L, "SRC", srcs[p->src]);
    if (key->kernel != OG_KERNEL_GEMM && key->kernel != OG_KERNEL_PLANES)
        return;
    if (!og_family_can(p, OG_FAMILY_TILED)) {
        set_int(L, "COLS", p->cols);
        set_int(L, "SLICES", p->slices);
        set_int(L, "ROWS", p->rows);
        set_int(L, "VEC", p->vec);
        set_int(L, "UNROLL", p->unroll);
        set_int(L, "TM", p->tm);
        set_int(L, "TN", p->tn);
        return;
    }
    set_int(L, "SGX", p->sgx);
    set_int(L, "SGY", p->sgy);
    set_int(L, "SUB", p->sub);
    set_int(L, "BUF", p->buf);
    set_int(L, "FRAG_M", p->fm);
    set_int(L, "FRAG_N", p->fn);
    set_int(L, "FRAG_K", p->fk);
    set_str(L, "MAT", p->mat == OG_MATRIX_EMU ? "emu" : p->mat == OG_MATRIX_KHR ? "khr" : "nv");
    set_int(L, "BM", p->bm);
    set_int(L, "BN", p->bn);
    set_int(L, "BK", p->bk);
    set_int(L, "TM", p->tm);
    set_int(L, "TN", p->tn);
    set_int(L, "WGX", p->wgx);
    set_int(L, "WGY", p->wgy);
    set_int(L, "PAD", p->pad);
    set_int(L, "VEC", p->vec);
    set_str(L, "LOAD", p->load == OG_LOAD_DIRECT ? "direct" : "staged");
    set_str(L, "ACC", p->acc == OG_ACC_CHAIN ? "chain" : "blocked");
}

og_status og_gen_source(const og_kernel_key *key, char **src, char *err, size_t errlen)
{
    *src = NULL;
    if (og_kernel_check(key, NULL, err, errlen) != 0)
        return OG_ERROR_INVALID_ARGUMENT;
    const char *name = og_kernel_template(key);
    lua_State *L = luaL_newstate();
    if (!L) {
        snprintf(err, errlen, "gen: cannot create a Lua state");
        return OG_ERROR_OUT_OF_MEMORY;
    }
    luaL_openlibs(L);
    og_status st = OG_OK;
    /* engine = dofile(engine.lua); return engine.expand(name, text, params, parts) */
    char *engine_owned;
    const char *engine = engine_text(&engine_owned);
    int loaded = luaL_loadbuffer(L, engine, strlen(engine), "=engine.lua") == LUA_OK;
    free(engine_owned);
    if (!loaded || lua_pcall(L, 0, 1, 0) != LUA_OK) {
        snprintf(err, errlen, "gen: template engine: %s", lua_tostring(L, -1));
        st = OG_ERROR_COMPILE;
        goto done;
    }
    lua_getfield(L, -1, "expand");
    lua_pushstring(L, name);
    char *owned;
    lua_pushstring(L, template_text(name, &owned));
    free(owned);
    push_params(L, key);
    lua_newtable(L);
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        set_str(L, parts[i], template_text(parts[i], &owned));
        free(owned);
    }
    if (lua_pcall(L, 4, 1, 0) != LUA_OK || !lua_isstring(L, -1)) {
        snprintf(err, errlen, "gen: %s", lua_isstring(L, -1) ? lua_tostring(L, -1) : "no text");
        st = OG_ERROR_COMPILE;
        goto done;
    }
    size_t n;
    const char *text = lua_tolstring(L, -1, &n);
    *src = malloc(n + 1);
    if (!*src) {
        snprintf(err, errlen, "gen: out of memory");
        st = OG_ERROR_OUT_OF_MEMORY;
        goto done;
    }
    memcpy(*src, text, n + 1);
done:
    lua_close(L);
    return st;
}
