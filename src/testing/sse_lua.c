/* Test hook for the SSE parser (built only into test builds: -DMCP_TEST_HOOKS, see Makefile):
 *   core._sse_parse(chunks [, max_event_bytes [, abort_after]]) -> results, failed, last_id
 * chunks: array of strings fed one by one to one parser; an entry `false` calls mcp_sse_reset
 * (a new connection) instead. results: in order, events {type=, data=, id=} and retry values
 * {retry=ms}. failed: true when any feed returned -1. abort_after: the callback that produces
 * result number abort_after calls mcp_sse_abort. last_id: mcp_sse_last_event_id at the end. */
#include <stdint.h>

#include "lua_api.h"

#include "compat.h"
#include "core_loop.h"
#include "transports/sse_parser.h"

#define SSE_TEST_MT "mcp.sse_test_parser"

/* The parser lives in a userdata so a Lua error (out of memory) cannot leak it. */
typedef struct sse_box {
    mcp_sse_parser parser;
    int live;
} sse_box;

typedef struct sse_ctx {
    lua_State *L;
    mcp_sse_parser *parser;
    int results; /* stack index of the results table */
    int n;
    int abort_after; /* 0: never */
} sse_ctx;

static void added(sse_ctx *c)
{
    lua_rawseti(c->L, c->results, ++c->n);
    if (c->n == c->abort_after)
        mcp_sse_abort(c->parser);
}

static int sse_box_gc(lua_State *L)
{
    sse_box *box = luaL_checkudata(L, 1, SSE_TEST_MT);
    if (box->live) {
        box->live = 0;
        mcp_sse_free(&box->parser);
    }
    return 0;
}

static void on_event(void *ctx, const mcp_sse_event *ev)
{
    sse_ctx *c = ctx;
    lua_State *L = c->L;
    lua_createtable(L, 0, 3);
    lua_pushlstring(L, ev->type, ev->type_len);
    lua_setfield(L, -2, "type");
    lua_pushlstring(L, ev->data, ev->data_len);
    lua_setfield(L, -2, "data");
    lua_pushlstring(L, ev->id, ev->id_len);
    lua_setfield(L, -2, "id");
    added(c);
}

static void on_retry(void *ctx, unsigned long ms)
{
    sse_ctx *c = ctx;
    lua_State *L = c->L;
    lua_createtable(L, 0, 1);
#if MCP_HAS_INTEGERS
    if (ms <= (unsigned long)LUA_MAXINTEGER)
        lua_pushinteger(L, (lua_Integer)ms);
    else
        lua_pushnumber(L, (lua_Number)ms);
#else
    lua_pushnumber(L, (lua_Number)ms);
#endif
    lua_setfield(L, -2, "retry");
    added(c);
}

static int l_sse_parse(lua_State *L)
{
    size_t max = 0, i, count, idlen;
    int failed = 0, abort_after = 0;
    const char *id;
    sse_box *box;
    sse_ctx c;
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!lua_isnoneornil(L, 2)) {
        lua_Number m = luaL_checknumber(L, 2);
        luaL_argcheck(L, m >= 0, 2, "max_event_bytes must be >= 0");
        max = m >= (lua_Number)SIZE_MAX ? SIZE_MAX : (size_t)m;
    }
    abort_after = (int)luaL_optinteger(L, 3, 0);
    count = mcp_rawlen(L, 1);
    for (i = 1; i <= count; i++) {
        lua_rawgeti(L, 1, (int)i);
        int t = lua_type(L, -1);
        if (t != LUA_TSTRING && !(t == LUA_TBOOLEAN && !lua_toboolean(L, -1)))
            return luaL_error(L, "_sse_parse: chunks[%d] is neither a string nor false", (int)i);
        lua_pop(L, 1);
    }
    lua_settop(L, 3);
    lua_newtable(L);                       /* 4: results */
    box = mcp_newuserdata(L, sizeof *box); /* 5 */
    box->live = 0;
    luaL_getmetatable(L, SSE_TEST_MT);
    lua_setmetatable(L, -2);
    c.L = L;
    c.parser = &box->parser;
    c.results = 4;
    c.n = 0;
    c.abort_after = abort_after;
    mcp_sse_init(&box->parser, on_event, on_retry, &c, max);
    box->live = 1;
    for (i = 1; i <= count; i++) {
        size_t len;
        const char *s;
        lua_rawgeti(L, 1, (int)i);
        luaL_checkstack(L, 4, "_sse_parse");
        if (lua_type(L, -1) != LUA_TSTRING) {
            mcp_sse_reset(&box->parser);
        } else {
            s = lua_tolstring(L, -1, &len);
            if (mcp_sse_feed(&box->parser, s, len) != 0)
                failed = 1;
        }
        lua_pop(L, 1);
    }
    id = mcp_sse_last_event_id(&box->parser, &idlen);
    lua_pushboolean(L, failed);
    lua_pushlstring(L, id, idlen);
    box->live = 0;
    mcp_sse_free(&box->parser);
    lua_remove(L, 5); /* the box */
    return 3;
}

void mcp_sse_lua_open(lua_State *L)
{
    if (luaL_newmetatable(L, SSE_TEST_MT)) {
        lua_pushcfunction(L, sse_box_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
    lua_pushcfunction(L, l_sse_parse);
    lua_setfield(L, -2, "_sse_parse");
}
