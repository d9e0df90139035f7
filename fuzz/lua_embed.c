/* The embedded Lua state of the fuzz targets that run a module of the tree (lua_embed.h). */
#include "lua_embed.h"

#include <stdio.h>
#include <stdlib.h>

#include <lauxlib.h>
#include <lualib.h>

static int empty_module(lua_State *S)
{
    lua_newtable(S);
    return 1;
}

static void fail(const char *who, const char *what, const char *detail)
{
    fprintf(stderr, "%s: %s%s (run from the repository root)\n", who, what, detail);
    abort();
}

lua_State *fuzz_lua_open(const char *who, const struct fuzz_preload *preload, const char *file,
                         const char *field, int *out)
{
    lua_State *L = luaL_newstate();
    if (L == NULL)
        fail(who, "no Lua state", "");
    luaL_openlibs(L);
    lua_getglobal(L, "package");
    lua_pushliteral(L, "lua/?.lua");
    lua_setfield(L, -2, "path");
    lua_pushliteral(L, "");
    lua_setfield(L, -2, "cpath");
    lua_getfield(L, -1, "preload");
    for (; preload->name != NULL; preload++) {
        lua_pushcfunction(L, preload->open != NULL ? preload->open : empty_module);
        lua_setfield(L, -2, preload->name);
    }
    lua_pop(L, 2);
    if (luaL_dofile(L, file) != 0)
        fail(who, lua_tostring(L, -1), "");
    if (!lua_istable(L, -1))
        fail(who, file, " does not return a table");
    lua_getfield(L, -1, field);
    if (!lua_isfunction(L, -1))
        fail(who, "the module has no function ", field);
    *out = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pop(L, 1);
    return L;
}
