/* Lua boxes for transports: every transport userdata is a pointer box whose metatable carries
 * `__mcp_transport = true`, so the session accepts any kind (stdio now, HTTP and SSE later). */
#ifndef MCP_TRANSPORT_LUA_H
#define MCP_TRANSPORT_LUA_H

#include "lua_api.h"

#include "transport.h"

typedef struct mcp_transport_box {
    mcp_transport *t; /* NULL once finalized */
} mcp_transport_box;

/* The transport at idx, or raise a type error. */
mcp_transport *mcp_transport_check(lua_State *L, int idx);
/* Push a new box for t (takes over one reference) with the metatable named mt. */
mcp_transport_box *mcp_transport_push(lua_State *L, mcp_transport *t, const char *mt);
/* Push the metatable of a transport class named name (class_lua.h's, with __mcp_transport = true,
 * which mcp_transport_check looks for). Returns 1 when it was made now, else 0. */
int mcp_transport_lua_class(lua_State *L, const char *name, const luaL_Reg *methods,
                            lua_CFunction gc);
/* __gc helper shared by transport metatables. */
int mcp_transport_lua_gc(lua_State *L);
/* The methods every transport has, for its metatable's method table:
 * start() -> true | nil, message; close(); is_open() -> boolean. */
int mcp_transport_lua_start(lua_State *L);
int mcp_transport_lua_close(lua_State *L);
int mcp_transport_lua_is_open(lua_State *L);

#endif
