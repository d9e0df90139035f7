/* core.http_fetch(req, cb) -> handle with :cancel(): one plain HTTP exchange (fetch.c) for the
 * Lua layer (lua/mcp/fetch.lua wraps it for await). req: method, url, headers (array of
 * "Name: value"), body, timeout_ms, connect_timeout_ms, max_body, refuse_addresses ("loopback"
 * or "local", loopback and link-local: the SSRF guard at connect time, addrguard.h), resolve (array of
 * "host:port:address": CURLOPT_RESOLVE), proxy (fetch.h: nil, "" or a proxy URL). cb runs
 * inside core.step with
 * ({status=, headers={name=value}, body=, truncated=}) or (nil, message); a header that came
 * more than once has its values joined with ", ". A cancelled exchange never calls cb. */
#include <stdlib.h>
#include <string.h>

#include "lua_api.h"

#include "class_lua.h"
#include "compat.h"
#include "core_loop.h"
#include "fetch.h"
#include "term_escape_lua.h"

#define FETCH_MT "mcp.fetch"

typedef struct fetch_box {
    mcp_fetch *f;
    mcp_loop *loop;
    int cb_ref;
    int self_ref; /* anchors the handle while running: a dropped handle still completes */
} fetch_box;

static void release(lua_State *L, fetch_box *b)
{
    if (b->f != NULL) {
        mcp_fetch_free(b->f);
        b->f = NULL;
    }
    luaL_unref(L, LUA_REGISTRYINDEX, b->cb_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, b->self_ref);
    b->cb_ref = b->self_ref = LUA_NOREF;
}

/* Under pcall: (f, rc) -> the response table, or nil, message. */
static int push_outcome(lua_State *L)
{
    mcp_fetch *f = lua_touserdata(L, 1);
    CURLcode rc = (CURLcode)lua_tointeger(L, 2);
    const char *p, *end;
    if (rc != CURLE_OK) {
        lua_pushnil(L);
        lua_pushstring(L, mcp_fetch_error(f, rc));
        return 2;
    }
    lua_createtable(L, 0, 4);
    lua_pushinteger(L, (lua_Integer)f->status);
    lua_setfield(L, -2, "status");
    lua_pushlstring(L, f->body.len ? mcp_buf_head(&f->body) : "", f->body.len);
    lua_setfield(L, -2, "body");
    lua_pushboolean(L, f->truncated);
    lua_setfield(L, -2, "truncated");
    lua_newtable(L);
    p = f->headers.len ? mcp_buf_head(&f->headers) : NULL;
    end = p ? p + f->headers.len : NULL;
    while (p != NULL && p < end) {
        const char *name = p, *value = name + strlen(name) + 1;
        p = value + strlen(value) + 1;
        lua_getfield(L, -1, name);
        if (lua_isstring(L, -1)) {
            lua_pushliteral(L, ", ");
            lua_pushstring(L, value);
            lua_concat(L, 3);
        } else {
            lua_pop(L, 1);
            lua_pushstring(L, value);
        }
        lua_setfield(L, -2, name);
    }
    lua_setfield(L, -2, "headers");
    return 1;
}

static void on_done(mcp_fetch *f, CURLcode rc, void *ctx)
{
    fetch_box *b = ctx;
    lua_State *L = mcp_loop_lua(b->loop);
    int top, n;
    if (L == NULL) { /* not inside a step: cannot happen, but never leak */
        mcp_fetch_free(f);
        b->f = NULL;
        return;
    }
    top = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, b->cb_ref);
    lua_pushcfunction(L, push_outcome);
    lua_pushlightuserdata(L, f);
    lua_pushinteger(L, (lua_Integer)rc);
    if (lua_pcall(L, 2, 2, 0) != 0) {
        /* out of memory building the answer: report that instead */
        lua_pop(L, 1);
        lua_pushnil(L);
        lua_pushliteral(L, "out of memory");
    }
    n = 2;
    /* The exchange is over: free it and drop the anchors before user code runs. */
    release(L, b);
    if (lua_pcall(L, n, 0, 0) != 0) {
        mcp_term_report_lua(L, "mcp: HTTP fetch callback failed: ");
        lua_pop(L, 1);
    }
    lua_settop(L, top);
}

static long opt_long(lua_State *L, const char *field)
{
    long v = 0;
    lua_getfield(L, 1, field);
    if (!lua_isnil(L, -1)) {
        if (lua_type(L, -1) != LUA_TNUMBER || lua_tonumber(L, -1) < 0)
            luaL_error(L, "mcp: http_fetch: %s must be a non-negative number", field);
        v = (long)lua_tonumber(L, -1);
    }
    lua_pop(L, 1);
    return v;
}

/* Append the n strings of the (checked) array at idx to *list; -1: out of memory. */
static int append_lines(lua_State *L, int idx, size_t n, struct curl_slist **list)
{
    size_t i;
    for (i = 1; i <= n; i++) {
        struct curl_slist *l;
        lua_rawgeti(L, idx, (int)i);
        l = curl_slist_append(*list, lua_tostring(L, -1));
        lua_pop(L, 1);
        if (l == NULL)
            return -1;
        *list = l;
    }
    return 0;
}

/* The length of the array on top (0 for nil) once each item is checked to be a string with no
 * CR or LF (and a ':' when need_colon); raises "<field>[i] must be <must>" otherwise. */
static size_t check_lines(lua_State *L, const char *field, int need_colon, const char *must)
{
    size_t i, n;
    if (lua_isnil(L, -1))
        return 0;
    luaL_checktype(L, -1, LUA_TTABLE);
    n = mcp_rawlen(L, -1);
    for (i = 1; i <= n; i++) {
        const char *s;
        lua_rawgeti(L, -1, (int)i);
        /* a string, not a number lua_tolstring would turn into one */
        s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (s == NULL || strpbrk(s, "\r\n") != NULL || (need_colon && strchr(s, ':') == NULL))
            luaL_error(L, "mcp: http_fetch: %s[%d] must be %s", field, (int)i, must);
        lua_pop(L, 1);
    }
    return n;
}

/* refuse_addresses (on top): nil, "loopback" or "local". */
static mcp_addr_guard read_guard(lua_State *L)
{
    const char *g = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    if (lua_isnil(L, -1))
        return MCP_GUARD_NONE;
    if (g != NULL && strcmp(g, "loopback") == 0)
        return MCP_GUARD_LOOPBACK;
    if (g != NULL && strcmp(g, "local") == 0)
        return MCP_GUARD_LOCAL;
    luaL_error(L, "mcp: http_fetch: refuse_addresses must be \"loopback\" or \"local\"");
    return MCP_GUARD_NONE;
}

static int l_fetch(lua_State *L)
{
    mcp_fetch_opts o;
    fetch_box *b;
    mcp_curl *curl;
    char err[256];
    size_t n, m;
    const char *method, *url;
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_settop(L, 2);
    memset(&o, 0, sizeof o);
    lua_getfield(L, 1, "method");
    method = lua_isnil(L, -1) ? "GET" : lua_tostring(L, -1);
    if (method == NULL || method[0] == '\0' || strcspn(method, " \r\n\t") != strlen(method))
        return luaL_error(L, "mcp: http_fetch: method must be a token");
    lua_getfield(L, 1, "url");
    url = lua_tostring(L, -1);
    if (lua_type(L, -1) != LUA_TSTRING ||
        (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0))
        return luaL_error(L, "mcp: http_fetch: url must be an http(s) URL");
    lua_getfield(L, 1, "body");
    if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING)
        return luaL_error(L, "mcp: http_fetch: body must be a string");
    lua_getfield(L, 1, "headers"); /* 6 */
    n = check_lines(L, "headers", 1, "a \"Name: value\" line");
    lua_getfield(L, 1, "refuse_addresses"); /* 7 */
    o.guard = read_guard(L);
    lua_getfield(L, 1, "resolve"); /* 8 */
    m = check_lines(L, "resolve", 0, "a \"host:port:address\" string");
    lua_getfield(L, 1, "proxy"); /* 9 */
    if (!lua_isnil(L, 9) &&
        (lua_type(L, 9) != LUA_TSTRING || strpbrk(lua_tostring(L, 9), "\r\n") != NULL))
        return luaL_error(L, "mcp: http_fetch: proxy must be a URL string");
    o.proxy = lua_tostring(L, 9);
    o.timeout_ms = opt_long(L, "timeout_ms");
    o.connect_timeout_ms = opt_long(L, "connect_timeout_ms");
    o.body_max = (size_t)opt_long(L, "max_body");
    curl = mcp_http_lua_curl(L, mcp_upvalue_loop(L)); /* raises when libcurl is missing */
    /* Nothing below raises before the exchange is owned by the box. */
    b = mcp_newuserdata(L, sizeof *b);
    b->f = NULL;
    b->loop = mcp_upvalue_loop(L);
    b->cb_ref = b->self_ref = LUA_NOREF;
    luaL_getmetatable(L, FETCH_MT);
    lua_setmetatable(L, -2);
    if (append_lines(L, 6, n, &o.headers) != 0 || append_lines(L, 8, m, &o.resolve) != 0) {
        curl_slist_free_all(o.headers);
        curl_slist_free_all(o.resolve);
        return luaL_error(L, "mcp: out of memory");
    }
    o.method = method;
    o.url = url;
    if (lua_type(L, 5) == LUA_TSTRING)
        o.body = lua_tolstring(L, 5, &o.body_len);
    b->f = mcp_fetch_start(curl, &o, on_done, b, err, sizeof err);
    if (b->f == NULL)
        return luaL_error(L, "mcp: http_fetch: %s", err);
    lua_pushvalue(L, 2);
    b->cb_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, -1);
    b->self_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 1;
}

static int l_cancel(lua_State *L)
{
    fetch_box *b = luaL_checkudata(L, 1, FETCH_MT);
    release(L, b);
    return 0;
}

static int l_active(lua_State *L)
{
    fetch_box *b = luaL_checkudata(L, 1, FETCH_MT);
    lua_pushboolean(L, b->f != NULL);
    return 1;
}

static int l_gc(lua_State *L)
{
    fetch_box *b = luaL_checkudata(L, 1, FETCH_MT);
    if (b->f != NULL) {
        mcp_fetch_free(b->f);
        b->f = NULL;
    }
    return 0;
}

void mcp_fetch_lua_open(lua_State *L, int box)
{
    static const luaL_Reg methods[] = {{"cancel", l_cancel}, {"active", l_active}, {NULL, NULL}};
    mcp_class_metatable(L, FETCH_MT, methods, l_gc);
    lua_pop(L, 1);
    mcp_set_loop_function(L, box, "http_fetch", l_fetch);
}
