/* Shared by json_encode.c and json_decode.c only. */
#ifndef MCP_JSON_INTERNAL_H
#define MCP_JSON_INTERNAL_H

#include "json.h"

/* Push a userdata holding an empty mcp_buf whose __gc frees it: malloc'd scratch that cannot leak when Lua
 * raises, yet stays out of the Lua heap (no GC debt, no fresh pages for every large string). */
mcp_buf *mcp_json_pushbuf(lua_State *L);

#endif
