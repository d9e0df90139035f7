/* Arrays of strings in a Lua config table (core.stdio_transport's args and env, its sandbox's
 * read and write paths): checked, then copied as NULL-terminated C arrays. */
#ifndef MCP_STRV_LUA_H
#define MCP_STRV_LUA_H

#include "lua_api.h"

/* Raise (before anything is allocated) unless t[field] is nil or an array of strings without NUL
 * bytes (nonempty: and none empty). The messages name label, e.g. "args" or "sandbox.read". */
void mcp_strv_check(lua_State *L, int t, const char *field, const char *label, int nonempty);
/* A NULL-terminated copy of the (checked) array at t[field], first (when not NULL) in front; NULL
 * when out of memory. Does not raise. */
char **mcp_strv_copy(lua_State *L, int t, const char *field, const char *first);

#endif
