/* A program's argument vector given from Lua as argument 1 (core.run_program,
 * core.run_program_async, core.spawn_detached): 1 to MCP_ARGV_MAX strings, checked (else it
 * raises) and pointed to from out, NULL-ended. The strings stay on the stack above the call's
 * arguments, so they stay valid while the call runs. */
#ifndef MCP_ARGV_LUA_H
#define MCP_ARGV_LUA_H

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
        if (lua_type(L, -1) != LUA_TSTRING)
            luaL_argerror(L, 1, "arguments must be strings");
        out[i] = lua_tostring(L, -1);
    }
    out[n] = NULL;
}

#endif
