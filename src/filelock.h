/* Advisory file locks (flock) for stores shared by many processes (core.file_lock). */
#ifndef MCP_FILELOCK_H
#define MCP_FILELOCK_H

#include "compat.h"

/* Adds file_lock to the table on top and makes the lock's metatable. */
void mcp_filelock_lua_open(lua_State *L);

#endif
