/* The loop of this Lua state (created by luaopen_mcp_core, kept in the registry). */
#ifndef MCP_CORE_LOOP_H
#define MCP_CORE_LOOP_H

#include "lua_api.h"

#include "loop.h"

mcp_loop *mcp_core_loop(lua_State *L);
/* The Lua state whose `core.step` is dispatching right now (NULL outside a step): core.c sets
 * it as the loop's dispatch context. */
static inline lua_State *mcp_loop_lua(mcp_loop *loop)
{
    return (lua_State *)mcp_loop_context(loop);
}
void mcp_stdio_lua_open(lua_State *L);     /* adds stdio_transport to the table on top */
void mcp_timer_lua_open(lua_State *L);     /* adds timer to the table on top */
void mcp_http_lua_open(lua_State *L);      /* adds http_transport and sse_transport */
void mcp_pkey_lua_open(lua_State *L);      /* adds pkey_generate, pkey_load, is_pkey (JWS keys) */
void mcp_lua_transport_open(lua_State *L); /* adds lua_transport (the bridge for Lua transports) */
#ifdef MCP_TEST_HOOKS
/* Test builds only (src/testing/): adds _sse_parse (SSE parser test hook) to the table on top. */
void mcp_sse_lua_open(lua_State *L);
#endif
void mcp_fetch_lua_open(lua_State *L); /* adds http_fetch (one plain HTTP exchange) */
struct mcp_curl;
/* The libcurl context of this Lua state, created on first use; raises when libcurl is missing. */
struct mcp_curl *mcp_http_lua_curl(lua_State *L);

#endif
