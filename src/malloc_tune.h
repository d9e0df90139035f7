/* glibc's malloc without fastbins, on a host's request (mcp.loop.tune_for_frames). */
#ifndef MCP_MALLOC_TUNE_H
#define MCP_MALLOC_TUNE_H

#include "compat.h"

int mcp_malloc_no_fastbins(lua_State *L); /* () -> true (applied) | false, reason */

#endif
