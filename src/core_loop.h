/* The loop of this Lua state and how the bindings reach it. luaopen_mcp_core (core.c) makes the
 * loop box once per Lua state, keeps it in the registry and hands it to each binding's open
 * function (the stack index `box`), which makes it upvalue 1 of the functions that need the loop:
 * no binding calls back into core.c. */
#ifndef MCP_CORE_LOOP_H
#define MCP_CORE_LOOP_H

#include "lua_api.h"

#include "loop.h"

typedef struct mcp_loop_box {
    mcp_loop *loop; /* NULL once the box's finalizer ran (the Lua state is closing) */
    int stepping;   /* guards against a step inside a callback of a step */
} mcp_loop_box;

/* The loop of a C function whose upvalue 1 is the loop box; raises once the loop is gone. */
static inline mcp_loop *mcp_upvalue_loop(lua_State *L)
{
    mcp_loop_box *box = (mcp_loop_box *)lua_touserdata(L, lua_upvalueindex(1));
    if (box == NULL || box->loop == NULL)
        luaL_error(L, "mcp: the event loop is gone (the Lua state is closing)");
    return box->loop;
}

/* The same loop, or NULL once it is gone (the Lua state is closing): for a function that still
 * works then, without what needs the loop (raising the fd limit: fdlimit.h). */
static inline mcp_loop *mcp_upvalue_loop_if_any(lua_State *L)
{
    mcp_loop_box *box = (mcp_loop_box *)lua_touserdata(L, lua_upvalueindex(1));
    return box != NULL ? box->loop : NULL;
}

/* Sets field `name` of the table on top to fn closed over the loop box at index `box`. */
static inline void mcp_set_loop_function(lua_State *L, int box, const char *name, lua_CFunction fn)
{
    lua_pushvalue(L, box);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, -2, name);
}

/* The Lua state whose `core.step` is dispatching right now (NULL outside a step): core.c sets
 * it as the loop's dispatch context. */
static inline lua_State *mcp_loop_lua(mcp_loop *loop)
{
    return (lua_State *)mcp_loop_context(loop);
}
/* Each adds its functions to the table on top; `box` is the loop box's stack index. */
void mcp_stdio_lua_open(lua_State *L, int box);     /* stdio_transport */
void mcp_timer_lua_open(lua_State *L, int box);     /* timer */
void mcp_http_lua_open(lua_State *L, int box);      /* http_transport and sse_transport */
void mcp_pkey_lua_open(lua_State *L);               /* pkey_generate, pkey_load, is_pkey (JWS) */
void mcp_lua_transport_open(lua_State *L, int box); /* lua_transport (the bridge for Lua ones) */
#ifdef MCP_TEST_HOOKS
/* Test builds only (src/testing/): adds _sse_parse (SSE parser test hook) to the table on top. */
void mcp_sse_lua_open(lua_State *L);
/* Test builds only (src/testing/heap_lua.c): adds _heap_bytes (C heap in use) to the table. */
void mcp_heap_lua_open(lua_State *L);
/* Test builds only (src/testing/lazylib_lua.c): adds _lazylib_names (src/lazylib.c's lists). */
void mcp_lazylib_lua_open(lua_State *L);
/* Test builds only (src/testing/resume_lua.c): adds _json_decoder (the resumable decoder). */
void mcp_resume_lua_open(lua_State *L);
/* Test builds only (src/testing/close_later_lua.c): adds _close_later_pending. */
void mcp_close_later_lua_open(lua_State *L, int box);
/* Test builds only (src/testing/term_lua.c): adds _term_escape, _term_report, _stderr_capture
 * and _stderr_restore. */
void mcp_term_lua_open(lua_State *L);
/* Test builds only (src/testing/thread_lua.c): adds _fail_thread_starts (helper_thread.h). */
void mcp_thread_lua_open(lua_State *L);
/* Test builds only (src/testing/raise_lua.c): adds _raise_in_step (a loop callback that raises). */
void mcp_raise_lua_open(lua_State *L, int box);
#endif
void mcp_fetch_lua_open(lua_State *L, int box); /* adds http_fetch (one plain HTTP exchange) */
struct mcp_curl;
/* The libcurl context of this Lua state on its loop, created on first use; raises when libcurl
 * is missing. */
struct mcp_curl *mcp_http_lua_curl(lua_State *L, mcp_loop *loop);

#endif
