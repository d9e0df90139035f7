/* The Lua C API the core is written against: the interpreter's own headers, or, when built with
 * MCP_OWN_LUA_ABI (`make nvim` on a machine without Lua development headers), lua-mcp's own
 * declarations of the Lua 5.1 ABI (abi/lua51.h), which LuaJIT 2.1 and PUC Lua 5.1 both export. */
#ifndef MCP_LUA_API_H
#define MCP_LUA_API_H

#ifdef MCP_OWN_LUA_ABI
#include "abi/lua51.h"
#else
#include <lua.h>
#include <lauxlib.h>
#endif

#endif
