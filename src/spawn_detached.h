/* Start a program without a shell and without waiting for it (core.spawn_detached). */
#ifndef MCP_SPAWN_DETACHED_H
#define MCP_SPAWN_DETACHED_H

#include "compat.h"

int mcp_spawn_detached(lua_State *L); /* spawn_detached({prog, args...}) -> true | nil, message */

#endif
