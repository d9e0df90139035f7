/* The loopback HTTP listener of interactive OAuth logins (core.redirect_listener). */
#ifndef MCP_REDIRECT_LISTENER_H
#define MCP_REDIRECT_LISTENER_H

#include "compat.h"

void mcp_redirect_listener_lua_open(lua_State *L); /* adds redirect_listener to the table on top */

#endif
