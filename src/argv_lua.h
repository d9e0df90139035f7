/* A program's argument vector given from Lua as argument 1 (core.run_program,
 * core.run_program_async, core.spawn_detached): 1 to MCP_ARGV_MAX strings without NUL bytes,
 * checked (else it raises) and pointed to from out, NULL-ended. The strings stay on the stack
 * above the call's arguments, so they stay valid while the call runs. */
#ifndef MCP_ARGV_LUA_H
#define MCP_ARGV_LUA_H

#include <string.h>

#include "compat.h"
#include "lua_api.h"

#define MCP_ARGV_MAX 32

static inline void mcp_argv_check(lua_State *L, const char **out)
{
    int n, i;
    luaL_checktype(L, 1, LUA_TTABLE);
    n = (int)mcp_rawlen(L, 1);
    luaL_argcheck(L, n >= 1 && n <= MCP_ARGV_MAX, 1, "expected 1 to 32 arguments");
    luaL_checkstack(L, n, "arguments"); /* (more than LUA_MINSTACK of them) */
    for (i = 0; i < n; i++) {
        lua_rawgeti(L, 1, i + 1);
        size_t len;
        if (lua_type(L, -1) != LUA_TSTRING)
            luaL_argerror(L, 1, "arguments must be strings");
        out[i] = lua_tolstring(L, -1, &len);
        /* (exec would take the string up to its first NUL: another argument than the one given) */
        if (memchr(out[i], '\0', len) != NULL)
            luaL_argerror(L, 1, "arguments must not contain NUL bytes");
    }
    out[n] = NULL;
}

#endif
