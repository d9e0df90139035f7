/* The canonical path of a file, for judging where a config file's envFile really is. */
#ifndef MCP_REALPATH_H
#define MCP_REALPATH_H

#include "compat.h"

int mcp_realpath(lua_State *L); /* realpath(path) -> absolute path, links resolved | nil, msg */

#endif
