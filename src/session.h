/* The JSON-RPC session: request ids, requests in flight and their timeouts, cancellation,
 * answering ping, and routing of everything else to one Lua handler. Lua userdata "mcp.session". */
#ifndef MCP_SESSION_H
#define MCP_SESSION_H

#include "lua_api.h"

#define MCP_SESSION_MT "mcp.session"

/* Register the metatable and push the constructor `session(transport, handler)`. */
void mcp_session_open(lua_State *L);
int mcp_session_new(lua_State *L);

#endif
