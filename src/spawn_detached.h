/* Start a program without a shell and without waiting for it (core.spawn_detached). */
#ifndef MCP_SPAWN_DETACHED_H
#define MCP_SPAWN_DETACHED_H

#include "lua_api.h"

/* Adds spawn_detached({prog, args...}) -> true | nil, message to the table on top; `box` is the
 * loop box's index (the fd limit is the loop's: fdlimit.h). */
void mcp_spawn_detached_lua_open(lua_State *L, int box);

#endif
