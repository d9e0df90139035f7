/* The sandbox option of core.stdio_transport, and core.sandbox_abi(). */
#ifndef MCP_SANDBOX_LUA_H
#define MCP_SANDBOX_LUA_H

#include "lua_api.h"

#include "sandbox.h"

/* Raise (before anything is allocated) unless cfg.sandbox is nil or a well-formed table. */
void mcp_sandbox_check_lua(lua_State *L, int cfg);
/* The checked cfg.sandbox as a new mcp_sandbox in *out (NULL when absent): 0, or -1 when out of
 * memory. Does not raise. */
int mcp_sandbox_from_lua(lua_State *L, int cfg, mcp_sandbox **out);
/* Set core.sandbox_abi on the module table at the top of the stack. */
void mcp_sandbox_lua_open(lua_State *L);

#endif
