/* The loopback HTTP listener of interactive OAuth logins (core.redirect_listener). */
#ifndef MCP_REDIRECT_LISTENER_H
#define MCP_REDIRECT_LISTENER_H

#include "compat.h"

/* Adds redirect_listener to the table on top; `box` is the loop box's index (core_loop.h). */
void mcp_redirect_listener_lua_open(lua_State *L, int box);

#endif
