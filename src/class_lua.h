/* The metatable of a userdata class of the C module: its methods as __index, its finalizer. */
#ifndef MCP_CLASS_LUA_H
#define MCP_CLASS_LUA_H

#include "lua_api.h"

#include "compat.h"

/* Push the metatable registered as name, made on the first call with methods as its __index table
 * and gc as __gc. Returns 1 when it was made now (the caller adds its other fields), else 0. */
static inline int mcp_class_metatable(lua_State *L, const char *name, const luaL_Reg *methods,
                                      lua_CFunction gc)
{
    if (!luaL_newmetatable(L, name))
        return 0;
    lua_newtable(L);
    mcp_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__gc");
    return 1;
}

#endif
