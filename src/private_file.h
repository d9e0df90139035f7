/* Private files (mode 0600, written atomically) for the OAuth token store. */
#ifndef MCP_PRIVATE_FILE_H
#define MCP_PRIVATE_FILE_H

#include "compat.h"

int mcp_write_private_file(lua_State *L); /* write_private_file(path, data[, mode]) */
int mcp_mkdir_private(lua_State *L);      /* mkdir_private(path) -> true | nil, msg (mode 0700) */
int mcp_file_mode(lua_State *L);          /* file_mode(path) -> permission bits | nil, msg */

#endif
