/* Expands the embedded kernel templates with the Lua template engine. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "og_gen.h"

/* Embedded at build time from gen/engine.lua and templates/ (cmake/embed.cmake). */
extern const char og_embed_engine[];
extern const char og_embed_gemm_tile[];

static const char *template_text(const char *name)
{
    if (strcmp(name, OG_TEMPLATE_TILE) == 0)
        return og_embed_gemm_tile;
    return NULL;
}

uint64_t og_template_hash(const char *name)
{
    const char *text = template_text(name);
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *s = (const unsigned char *)text; s && *s; s++) {
        h ^= *s;
        h *= 1099511628211ull;
    }
    return h;
}

static const char *dtype_name(og_dtype t)
{
    return t == OG_F16 ? "f16" : t == OG_BF16 ? "bf16" : "f32";
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
    const og_tile_params *p = &key->p;
    lua_newtable(L);
    set_int(L, "BM", p->bm);
    set_int(L, "BN", p->bn);
    set_int(L, "BK", p->bk);
    set_int(L, "TM", p->tm);
    set_int(L, "TN", p->tn);
    set_int(L, "WGX", p->wgx);
    set_int(L, "WGY", p->wgy);
    set_int(L, "PAD", p->pad);
    set_int(L, "VEC", p->vec);
    set_str(L, "SRC", p->src == OG_SRC_TEXEL ? "texel" : "ssbo");
    set_str(L, "LOAD", p->load == OG_LOAD_DIRECT ? "direct" : "staged");
    set_str(L, "ACC", p->acc == OG_ACC_CHAIN ? "chain" : "blocked");
    set_str(L, "DTYPE", dtype_name(key->dtype));
    set_str(L, "DIALECT", key->dialect == OG_HLSL ? "hlsl" : "glsl");
    lua_pushboolean(L, key->trans_a);
    lua_setfield(L, -2, "TRANS_A");
    lua_pushboolean(L, key->trans_b);
    lua_setfield(L, -2, "TRANS_B");
}

og_status og_gen_source(const og_kernel_key *key, char **src, char *err, size_t errlen)
{
    *src = NULL;
    if (og_params_check(&key->p, NULL, err, errlen) != 0)
        return OG_ERROR_INVALID_ARGUMENT;
    lua_State *L = luaL_newstate();
    if (!L) {
        snprintf(err, errlen, "gen: cannot create a Lua state");
        return OG_ERROR_OUT_OF_MEMORY;
    }
    luaL_openlibs(L);
    og_status st = OG_OK;
    /* engine = dofile(engine.lua); return engine.expand(name, text, params) */
    if (luaL_loadbuffer(L, og_embed_engine, strlen(og_embed_engine), "=engine.lua") != LUA_OK ||
        lua_pcall(L, 0, 1, 0) != LUA_OK) {
        snprintf(err, errlen, "gen: template engine: %s", lua_tostring(L, -1));
        st = OG_ERROR_COMPILE;
        goto done;
    }
    lua_getfield(L, -1, "expand");
    lua_pushstring(L, OG_TEMPLATE_TILE);
    lua_pushstring(L, template_text(OG_TEMPLATE_TILE));
    push_params(L, key);
    if (lua_pcall(L, 3, 1, 0) != LUA_OK || !lua_isstring(L, -1)) {
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
