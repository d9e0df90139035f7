/* One source for Lua 5.1, LuaJIT 2.1, 5.2, 5.3 and 5.4: the few API differences we touch. */
#ifndef MCP_COMPAT_H
#define MCP_COMPAT_H

#include "lua_api.h"

/* LuaJIT announces itself through lualib.h. A module built on lua-mcp's own 5.1 declarations
 * (MCP_OWN_LUA_ABI) uses only the 5.1 API, so one build loads into LuaJIT and PUC 5.1 alike. */
#ifndef MCP_OWN_LUA_ABI
#include <lualib.h>
#if defined(LUA_JITLIBNAME)
#define MCP_LUAJIT 1
#endif
#endif

#if LUA_VERSION_NUM < 502
#define mcp_absindex(L, i) ((i) > 0 || (i) <= LUA_REGISTRYINDEX ? (i) : lua_gettop(L) + (i) + 1)
#define mcp_rawlen(L, i) lua_objlen((L), (i))
#define mcp_getuservalue(L, i) lua_getfenv((L), (i))
#define mcp_setuservalue(L, i) lua_setfenv((L), (i))
#else
#define mcp_absindex(L, i) lua_absindex((L), (i))
#define mcp_rawlen(L, i) lua_rawlen((L), (i))
#define mcp_getuservalue(L, i) lua_getuservalue((L), (i))
#define mcp_setuservalue(L, i) lua_setuservalue((L), (i))
#endif

#if LUA_VERSION_NUM < 502 && !defined(MCP_LUAJIT)
/* PUC 5.1 lacks luaL_setfuncs (LuaJIT 2.1 has it). */
static inline void mcp_setfuncs(lua_State *L, const luaL_Reg *l, int nup)
{
    luaL_checkstack(L, nup, "too many upvalues");
    for (; l->name != NULL; l++) {
        int i;
        for (i = 0; i < nup; i++)
            lua_pushvalue(L, -nup);
        lua_pushcclosure(L, l->func, nup);
        lua_setfield(L, -(nup + 2), l->name);
    }
    lua_pop(L, nup);
}
#else
#define mcp_setfuncs(L, l, n) luaL_setfuncs((L), (l), (n))
#endif

#if LUA_VERSION_NUM >= 504
#define mcp_newuserdata(L, sz) lua_newuserdatauv((L), (sz), 1)
#else
#define mcp_newuserdata(L, sz) lua_newuserdata((L), (sz))
#endif

#if LUA_VERSION_NUM >= 503
#define MCP_HAS_INTEGERS 1
#else
#define MCP_HAS_INTEGERS 0
#endif

/* luaL_testudata: 5.2+ and LuaJIT 2.1 have it; PUC 5.1 does not. */
#if LUA_VERSION_NUM < 502 && !defined(MCP_LUAJIT)
static inline void *mcp_testudata(lua_State *L, int ud, const char *tname)
{
    void *p = lua_touserdata(L, ud);
    if (p == NULL || !lua_getmetatable(L, ud))
        return NULL;
    luaL_getmetatable(L, tname);
    if (!lua_rawequal(L, -1, -2))
        p = NULL;
    lua_pop(L, 2);
    return p;
}
#else
#define mcp_testudata(L, i, n) luaL_testudata((L), (i), (n))
#endif

#endif
