/* Private files (mode 0600, written atomically) for the OAuth token store. */
#ifndef MCP_PRIVATE_FILE_H
#define MCP_PRIVATE_FILE_H

#include <sys/stat.h>

#include "compat.h"

int mcp_write_private_file(lua_State *L); /* write_private_file(path, data[, mode]) */
int mcp_mkdir_private(lua_State *L);      /* mkdir_private(path) -> true | nil, msg (mode 0700) */
int mcp_file_mode(lua_State *L);          /* file_mode(path) -> permission bits | nil, msg */
int mcp_check_private(
    lua_State *L); /* check_private(path, "dir"|"file") -> true | false | nil, msg */
int mcp_read_private_file(lua_State *L); /* read_private_file(path) -> data | false | nil, msg */

/* 1 when st is this user's directory (want_dir) or regular file without group/other access;
 * else pushes nil and a message naming path and the fix, and returns 0. */
int mcp_private_check(lua_State *L, const struct stat *st, const char *path, int want_dir);

#endif
