/*
 * lua_prof_host: a minimal `lua5.4 script.lua args...` linked statically against Debian's
 * liblua5.4.a, which keeps its symbols (the lua5.4 binary is stripped), so that callgrind and
 * perf name the interpreter's functions (luaV_execute, luaH_*, luaC_*, ...). Used only by
 * `make bench-profile` (bench/profile.sh); -Wl,-E exports the Lua API to mcp/core.so.
 */
#include <stdio.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

static int traceback(lua_State *L)
{
    luaL_traceback(L, L, lua_tostring(L, 1), 1);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s script.lua [args...]\n", argv[0]);
        return 2;
    }
    lua_State *L = luaL_newstate();
    if (L == NULL) return 1;
    luaL_openlibs(L);
    lua_createtable(L, argc, 1); /* arg, as lua.c builds it: arg[0] = script */
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - 1);
    }
    lua_setglobal(L, "arg");
    lua_pushcfunction(L, traceback);
    int rc = luaL_loadfile(L, argv[1]);
    if (rc == LUA_OK) {
        for (int i = 2; i < argc; i++) lua_pushstring(L, argv[i]);
        rc = lua_pcall(L, argc - 2, 0, -(argc - 2) - 2);
    }
    if (rc != LUA_OK) fprintf(stderr, "%s: %s\n", argv[0], lua_tostring(L, -1));
    lua_close(L);
    return rc == LUA_OK ? 0 : 1;
}
