/* Lua binding of the HTTP transports: core.http_transport(cfg), core.sse_transport(cfg).
 * cfg is normalised by lua/mcp/transport/http.lua: url, headers (array of "Name: value"),
 * follow_redirects, connect_timeout_ms, idle_timeout_ms, terminate_on_close, initial_session_id,
 * bearer_token, max_message_size, max_reconnects, max_connections, max_reply_connections,
 * max_queued_replies, curl_options (name -> value), on_event. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua_api.h"

#include "compat.h"
#include "core_loop.h"
#include "http_transport.h"
#include "term_escape_lua.h"
#include "transport_lua.h"

#define HTTP_MT "mcp.transport.http"
#define CURL_KEY "mcp.curl.instance"
#define CURL_MT "mcp.curl"

typedef struct http_box {
    mcp_transport_box base;
    int event_ref;
    mcp_loop *loop;
    int headers_ref, refused_ref; /* the request hooks (set_request_hooks), LUA_NOREF when none */
} http_box;

typedef struct curl_box {
    mcp_curl *c;
} curl_box;

static int curl_gc(lua_State *L)
{
    curl_box *b = lua_touserdata(L, 1);
    if (b->c != NULL) {
        mcp_curl_unref(b->c);
        b->c = NULL;
    }
    return 0;
}

/* The curl context of this Lua state, created on first use (also for core.http_fetch). */
mcp_curl *mcp_http_lua_curl(lua_State *L, mcp_loop *loop)
{
    curl_box *b;
    lua_getfield(L, LUA_REGISTRYINDEX, CURL_KEY);
    b = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (b != NULL && b->c != NULL)
        return b->c;
    {
        char err[512];
        if (mcp_curl_load(err, sizeof err) != 0)
            luaL_error(L, "mcp: %s", err);
    }
    b = mcp_newuserdata(L, sizeof *b);
    b->c = NULL;
    if (luaL_newmetatable(L, CURL_MT)) {
        lua_pushcfunction(L, curl_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    b->c = mcp_curl_new(loop);
    if (b->c == NULL)
        luaL_error(L, "mcp: cannot create a libcurl multi handle");
    lua_setfield(L, LUA_REGISTRYINDEX, CURL_KEY);
    return b->c;
}

typedef struct curl_opt_name {
    const char *name;
    CURLoption opt;
    int is_string;
} curl_opt_name;

/* The libcurl options a user may set (what Go's HTTPClient field is for). */
static const curl_opt_name curl_opt_names[] = {
    {"cainfo", CURLOPT_CAINFO, 1},
    {"capath", CURLOPT_CAPATH, 1},
    {"crlfile", CURLOPT_CRLFILE, 1},
    {"sslcert", CURLOPT_SSLCERT, 1},
    {"sslcerttype", CURLOPT_SSLCERTTYPE, 1},
    {"sslkey", CURLOPT_SSLKEY, 1},
    {"sslkeytype", CURLOPT_SSLKEYTYPE, 1},
    {"keypasswd", CURLOPT_KEYPASSWD, 1},
    {"pinnedpublickey", CURLOPT_PINNEDPUBLICKEY, 1},
    {"ssl_verifypeer", CURLOPT_SSL_VERIFYPEER, 0},
    {"ssl_verifyhost", CURLOPT_SSL_VERIFYHOST, 0},
    {"proxy", CURLOPT_PROXY, 1},
    {"noproxy", CURLOPT_NOPROXY, 1},
    {"proxyuserpwd", CURLOPT_PROXYUSERPWD, 1},
    {"proxy_cainfo", CURLOPT_PROXY_CAINFO, 1},
    {"proxy_ssl_verifypeer", CURLOPT_PROXY_SSL_VERIFYPEER, 0},
    {"proxy_ssl_verifyhost", CURLOPT_PROXY_SSL_VERIFYHOST, 0},
    {"unix_socket_path", CURLOPT_UNIX_SOCKET_PATH, 1},
    {"abstract_unix_socket", CURLOPT_ABSTRACT_UNIX_SOCKET, 1},
    {"interface", CURLOPT_INTERFACE, 1},
    {"connecttimeout_ms", CURLOPT_CONNECTTIMEOUT_MS, 0},
    {"low_speed_limit", CURLOPT_LOW_SPEED_LIMIT, 0},
    {"low_speed_time", CURLOPT_LOW_SPEED_TIME, 0},
    {"ipresolve", CURLOPT_IPRESOLVE, 0},
    {"http_version", CURLOPT_HTTP_VERSION, 0},
    {"tcp_keepidle", CURLOPT_TCP_KEEPIDLE, 0},
    {"tcp_keepintvl", CURLOPT_TCP_KEEPINTVL, 0},
    {"verbose", CURLOPT_VERBOSE, 0},
    {NULL, CURLOPT_URL, 0},
};

/* Check everything first (raising allocates nothing), then copy. */
static void check_config(lua_State *L)
{
    lua_getfield(L, 1, "url");
    if (lua_type(L, -1) != LUA_TSTRING)
        luaL_error(L, "mcp: HTTP transport: url must be a string");
    lua_pop(L, 1);
    lua_getfield(L, 1, "headers");
    if (!lua_isnil(L, -1)) {
        size_t i, n;
        luaL_checktype(L, -1, LUA_TTABLE);
        n = mcp_rawlen(L, -1);
        for (i = 1; i <= n; i++) {
            lua_rawgeti(L, -1, (int)i);
            if (lua_type(L, -1) != LUA_TSTRING)
                luaL_error(L, "mcp: HTTP transport: headers[%d] must be a string", (int)i);
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    lua_getfield(L, 1, "curl_options");
    if (!lua_isnil(L, -1)) {
        luaL_checktype(L, -1, LUA_TTABLE);
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
            const curl_opt_name *o;
            const char *name = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
            for (o = curl_opt_names; name != NULL && o->name != NULL; o++)
                if (strcmp(o->name, name) == 0)
                    break;
            if (name == NULL || o->name == NULL)
                luaL_error(L, "mcp: unsupported libcurl option '%s'", name ? name : "?");
            if (o->is_string ? lua_type(L, -1) != LUA_TSTRING
                             : (lua_type(L, -1) != LUA_TNUMBER && lua_type(L, -1) != LUA_TBOOLEAN))
                luaL_error(L, "mcp: libcurl option '%s' needs a %s", name,
                           o->is_string ? "string" : "number or boolean");
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
}

static char *opt_string(lua_State *L, const char *field)
{
    char *s = NULL;
    lua_getfield(L, 1, field);
    if (lua_type(L, -1) == LUA_TSTRING)
        s = strdup(lua_tostring(L, -1));
    lua_pop(L, 1);
    return s;
}

static long opt_long(lua_State *L, const char *field, long dflt)
{
    long v = dflt;
    lua_getfield(L, 1, field);
    if (lua_type(L, -1) == LUA_TNUMBER)
        v = (long)lua_tonumber(L, -1);
    else if (lua_type(L, -1) == LUA_TBOOLEAN)
        v = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

static void read_config(lua_State *L, mcp_http_config *cfg)
{
    size_t i, n;
    cfg->url = opt_string(L, "url");
    cfg->initial_session_id = opt_string(L, "initial_session_id");
    cfg->bearer_token = opt_string(L, "bearer_token");
    cfg->follow_redirects = (int)opt_long(L, "follow_redirects", 0);
    cfg->connect_timeout_ms = opt_long(L, "connect_timeout_ms", 0);
    cfg->idle_timeout_ms = opt_long(L, "idle_timeout_ms", 0);
    cfg->terminate_on_close = (int)opt_long(L, "terminate_on_close", 1);
    cfg->max_message = (size_t)opt_long(L, "max_message_size", 0);
    cfg->max_reconnects = (int)opt_long(L, "max_reconnects", 0);
    cfg->max_connections = (int)opt_long(L, "max_connections", 0);
    cfg->max_reply_connections = (int)opt_long(L, "max_reply_connections", 0);
    cfg->max_queued_replies = (int)opt_long(L, "max_queued_replies", 0);
    lua_getfield(L, 1, "headers");
    n = lua_istable(L, -1) ? mcp_rawlen(L, -1) : 0;
    for (i = 1; i <= n; i++) {
        struct curl_slist *l;
        lua_rawgeti(L, -1, (int)i);
        l = curl_slist_append(cfg->headers, lua_tostring(L, -1));
        if (l != NULL)
            cfg->headers = l;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    lua_getfield(L, 1, "curl_options");
    if (lua_istable(L, -1)) {
        size_t count = 0;
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
            count++;
            lua_pop(L, 1);
        }
        cfg->curl_opts = calloc(count ? count : 1, sizeof *cfg->curl_opts);
        lua_pushnil(L);
        while (cfg->curl_opts != NULL && lua_next(L, -2) != 0) {
            const curl_opt_name *o;
            const char *name = lua_tostring(L, -2);
            mcp_curl_opt *co = &cfg->curl_opts[cfg->ncurl_opts++];
            for (o = curl_opt_names; strcmp(o->name, name) != 0; o++)
                ;
            co->opt = o->opt;
            co->is_string = o->is_string;
            if (o->is_string)
                co->str = strdup(lua_tostring(L, -1));
            else
                co->num = lua_type(L, -1) == LUA_TBOOLEAN ? (long)lua_toboolean(L, -1)
                                                          : (long)lua_tonumber(L, -1);
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
}

static void on_event(void *ctx, const char *kind, const char *value)
{
    http_box *box = ctx;
    lua_State *L = mcp_loop_lua(box->loop);
    if (L == NULL || box->event_ref == LUA_NOREF)
        return;
    lua_rawgeti(L, LUA_REGISTRYINDEX, box->event_ref);
    lua_pushstring(L, kind);
    if (value != NULL)
        lua_pushstring(L, value);
    else
        lua_pushnil(L);
    lua_pushlightuserdata(L, box->base.t);
    if (lua_pcall(L, 3, 0, 0) != 0) {
        mcp_term_report_lua(L, "mcp: HTTP transport event handler failed: ");
        lua_pop(L, 1);
    }
}

/* ---- request hooks: per-exchange headers for GET and DELETE --------------------------------- */

/* Is name an HTTP header name (a token)? */
static int header_name_ok(const char *name, size_t n)
{
    size_t i;
    if (n == 0 || n > 200)
        return 0;
    for (i = 0; i < n; i++)
        if (name[i] <= ' ' || name[i] >= 127 || strchr("\"(),/:;<=>?@[\\]{}", name[i]) != NULL)
            return 0;
    return 1;
}

/* The table at idx {Name = value} as header lines; 0, or -1 with err (nothing in *out). */
static int header_lines(lua_State *L, int idx, struct curl_slist **out, char *err, size_t errlen)
{
    struct curl_slist *l = NULL, *n;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        size_t nlen = 0, vlen = 0;
        const char *name = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &nlen) : NULL;
        const char *value = lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER
                                ? lua_tolstring(L, -1, &vlen)
                                : NULL;
        if (name == NULL || !header_name_ok(name, nlen)) {
            snprintf(err, errlen, "invalid header name %s", name != NULL ? name : "(not a string)");
            goto fail;
        }
        if (value == NULL || vlen > MCP_HTTP_HEADER_VALUE_MAX || memchr(value, '\r', vlen) ||
            memchr(value, '\n', vlen) || strlen(value) != vlen) {
            snprintf(
                err, errlen,
                "header %s: a string without line breaks or NUL (at most 65536 bytes) expected",
                name);
            goto fail;
        }
        n = mcp_http_header_append(l, name, value);
        if (n == NULL) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        l = n;
        lua_pop(L, 1);
    }
    *out = l;
    return 0;
fail:
    lua_pop(L, 2);
    curl_slist_free_all(l);
    return -1;
}

/* headers(method, url) -> {Name = value} | nil, in the thread dispatching the loop (none outside
 * a step or an entry point below: then no headers). */
static int hook_headers(void *ctx, const char *method, const char *url, struct curl_slist **out,
                        char *err, size_t errlen)
{
    http_box *box = ctx;
    lua_State *L = mcp_loop_lua(box->loop);
    int top, rc = 0;
    *out = NULL;
    if (L == NULL || box->headers_ref == LUA_NOREF)
        return 0;
    top = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, box->headers_ref);
    lua_pushstring(L, method);
    lua_pushstring(L, url);
    if (lua_pcall(L, 2, 1, 0) != 0) {
        const char *e = lua_tostring(L, -1);
        snprintf(err, errlen, "%s", e != NULL ? e : "(an error object that is not a string)");
        rc = -1;
    } else if (lua_istable(L, -1)) {
        rc = header_lines(L, lua_gettop(L), out, err, errlen);
    } else if (!lua_isnil(L, -1)) {
        snprintf(err, errlen, "the request headers must be a table or nil, not %s",
                 luaL_typename(L, -1));
        rc = -1;
    }
    lua_settop(L, top);
    return rc;
}

/* What hook_refused hands to Lua. */
typedef struct refused_args {
    int ref;
    uint64_t hold, sent_ms;
    const char *method, *url, *headers, *body;
    size_t headers_len, body_len;
    long status;
    int attempt, memo, awaited;
    int64_t request_id;
} refused_args;

/* (a) -> refused(...)'s result, in a protected call: making its arguments (out of memory: the
 * body may be large) fails as the hook would, before it runs. */
static int call_refused(lua_State *L)
{
    const refused_args *a = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->ref);
    lua_pushnumber(L, (lua_Number)a->hold);
    lua_pushstring(L, a->method);
    lua_pushstring(L, a->url);
    lua_pushinteger(L, (lua_Integer)a->status);
    lua_pushlstring(L, a->headers, a->headers_len);
    lua_pushlstring(L, a->body, a->body_len);
    lua_pushinteger(L, a->attempt);
    lua_pushinteger(L, a->memo);
    lua_pushnumber(L, (lua_Number)a->sent_ms);
    lua_pushboolean(L, a->awaited != 0);
    if (a->request_id != 0)
        lua_pushnumber(L, (lua_Number)a->request_id);
    else
        lua_pushnil(L);
    lua_pushboolean(L, a->awaited == MCP_HTTP_AWAITED_OWN);
    return lua_pcall(L, 12, 1, 0) != 0 ? lua_error(L) : 1;
}

/* refused(hold, method, url, status, header_lines, body, attempt, memo, sent_ms, awaited,
 * request_id|nil, own) -> true (awaited: a caller waits on it; own: that caller, or the
 * exchange, is the client's own work)
 * when the owner takes the refused exchange (it calls t:settle(hold, ...) later, once). */
static int hook_refused(void *ctx, uint64_t hold, const char *method, const char *url, long status,
                        const char *headers, size_t headers_len, const char *body, size_t body_len,
                        int attempt, int memo, uint64_t sent_ms, int awaited, int64_t request_id)
{
    http_box *box = ctx;
    lua_State *L = mcp_loop_lua(box->loop);
    int top, taken = 0;
    refused_args a;
    if (L == NULL || box->refused_ref == LUA_NOREF)
        return 0;
    a.ref = box->refused_ref;
    a.hold = hold, a.sent_ms = sent_ms;
    a.method = method, a.url = url, a.headers = headers, a.body = body;
    a.headers_len = headers_len, a.body_len = body_len;
    a.status = status, a.attempt = attempt, a.memo = memo, a.awaited = awaited;
    a.request_id = request_id;
    top = lua_gettop(L);
    lua_pushcfunction(L, call_refused);
    lua_pushlightuserdata(L, &a);
    if (lua_pcall(L, 1, 1, 0) != 0)
        mcp_term_report_lua(L, "mcp: HTTP transport request hook failed: ");
    else
        taken = lua_toboolean(L, -1);
    lua_settop(L, top);
    return taken;
}

static const mcp_http_request_hooks lua_request_hooks = {hook_headers, hook_refused};
/* without per-exchange headers: plain POSTs keep sharing one header list */
static const mcp_http_request_hooks lua_refused_hook = {NULL, hook_refused};

static int new_transport(lua_State *L, int legacy)
{
    mcp_http_config cfg;
    mcp_curl *curl;
    mcp_transport *t;
    http_box *box;
    luaL_checktype(L, 1, LUA_TTABLE);
    check_config(L);
    curl = mcp_http_lua_curl(L, mcp_upvalue_loop(L));
    memset(&cfg, 0, sizeof cfg);
    read_config(L, &cfg);
    if (cfg.url == NULL) {
        mcp_http_config_free(&cfg);
        return luaL_error(L, "mcp: out of memory");
    }
    t = mcp_http_new(mcp_upvalue_loop(L), curl, &cfg,
                     legacy ? &mcp_legacy_sse : &mcp_streamable_http);
    if (t == NULL)
        return luaL_error(L, "mcp: out of memory");
    box = (http_box *)mcp_newuserdata(L, sizeof *box);
    box->base.t = t;
    box->event_ref = LUA_NOREF;
    box->headers_ref = LUA_NOREF;
    box->refused_ref = LUA_NOREF;
    box->loop = t->loop;
    luaL_getmetatable(L, HTTP_MT);
    lua_setmetatable(L, -2);
    lua_getfield(L, 1, "on_event");
    if (lua_isfunction(L, -1)) {
        box->event_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        mcp_http_on_event(t, on_event, box);
    } else {
        lua_pop(L, 1);
    }
    return 1;
}

static int l_http_transport(lua_State *L) { return new_transport(L, 0); }
static int l_sse_transport(lua_State *L) { return new_transport(L, 1); }

static http_box *check_box(lua_State *L)
{
    http_box *box = luaL_checkudata(L, 1, HTTP_MT);
    if (box->base.t == NULL)
        luaL_error(L, "mcp: the transport was finalized");
    return box;
}

static int l_set_protocol_version(lua_State *L)
{
    http_box *box = check_box(L);
    mcp_http_set_protocol_version(box->base.t, luaL_optstring(L, 2, NULL));
    return 0;
}

/* The calling thread as the loop's dispatch context while an entry point runs: the request
 * hooks of a GET it starts at once run in it. (Nothing in between raises.) */
static void *enter(http_box *box, lua_State *L)
{
    void *prev = mcp_loop_context(box->loop);
    mcp_loop_set_context(box->loop, L);
    return prev;
}

static void leave(http_box *box, void *prev) { mcp_loop_set_context(box->loop, prev); }

static int l_open_inbound(lua_State *L)
{
    http_box *box = check_box(L);
    void *prev = enter(box, L);
    int opened = mcp_http_open_inbound(box->base.t);
    leave(box, prev);
    lua_pushboolean(L, opened);
    return 1;
}

/* true, or nil and err: what start and reopen return. */
static int outcome(lua_State *L, int rc, const char *err)
{
    if (rc != 0) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* start([own]): the legacy SSE transport's GET starts here. own: the start is the client's own
 * work (a reconnection no call asked for: mcp_http_start_own). */
static int l_start(lua_State *L)
{
    http_box *box = check_box(L);
    char err[512];
    void *prev = enter(box, L);
    int rc;
    mcp_http_start_own(box->base.t, lua_toboolean(L, 2));
    rc = box->base.t->vt->start(box->base.t, err, sizeof err);
    leave(box, prev);
    return outcome(L, rc, err);
}

/* t:set_request_hooks(headers, refused): headers(method, url) -> {Name = value} | nil for each
 * exchange (POST, GET, DELETE), refused(hold, method, url, status, header_lines, body, attempt,
 * memo, sent_ms, awaited, request_id, own) -> true to hold a refused one until t:settle(hold, ...); nil removes.
 * Neither may yield; both run inside the loop. */
static int l_set_request_hooks(lua_State *L)
{
    http_box *box = check_box(L);
    if (!lua_isnoneornil(L, 2))
        luaL_checktype(L, 2, LUA_TFUNCTION);
    if (!lua_isnoneornil(L, 3))
        luaL_checktype(L, 3, LUA_TFUNCTION);
    mcp_http_set_request_hooks(box->base.t, NULL, NULL);
    luaL_unref(L, LUA_REGISTRYINDEX, box->headers_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, box->refused_ref);
    box->headers_ref = box->refused_ref = LUA_NOREF;
    lua_settop(L, 3);
    if (!lua_isnil(L, 3))
        box->refused_ref = luaL_ref(L, LUA_REGISTRYINDEX); /* pops it */
    lua_settop(L, 2);
    if (!lua_isnil(L, 2))
        box->headers_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    if (box->headers_ref != LUA_NOREF)
        mcp_http_set_request_hooks(box->base.t, &lua_request_hooks, box);
    else if (box->refused_ref != LUA_NOREF)
        mcp_http_set_request_hooks(box->base.t, &lua_refused_hook, box);
    return 0;
}

/* t:settle(hold, again, memo, cause): the owner's decision on a held exchange (see
 * set_request_hooks): again, send it once more; else it fails, a request with cause (an error
 * object, or nil) standing for its failure. true, or false when nothing is held under hold. */
static int l_settle(lua_State *L)
{
    http_box *box = check_box(L);
    uint64_t hold = (uint64_t)luaL_checknumber(L, 2);
    int again = lua_toboolean(L, 3);
    int memo = (int)luaL_optinteger(L, 4, 0);
    int cause, done;
    void *prev;
    lua_settop(L, 5);
    cause = lua_isnil(L, 5) ? 0 : 5;
    prev = enter(box, L);
    done = mcp_http_settle(box->base.t, hold, again, memo, cause);
    leave(box, prev);
    lua_pushboolean(L, done);
    return 1;
}

static int l_session_id(lua_State *L)
{
    http_box *box = check_box(L);
    const char *id = mcp_http_session_id(box->base.t);
    if (id == NULL)
        lua_pushnil(L);
    else
        lua_pushstring(L, id);
    return 1;
}

/* t:set_header(name, value|nil|false): a header of every later exchange. */
static int l_set_header(lua_State *L)
{
    http_box *box = check_box(L);
    size_t n, vlen = 0, i;
    const char *name = luaL_checklstring(L, 2, &n);
    const char *value = NULL;
    if (lua_type(L, 3) == LUA_TSTRING || lua_type(L, 3) == LUA_TNUMBER)
        value = lua_tolstring(L, 3, &vlen);
    else if (!lua_isnoneornil(L, 3) && !(lua_isboolean(L, 3) && !lua_toboolean(L, 3)))
        return luaL_argerror(L, 3, "a string, or nil/false to remove the header");
    if (n == 0 || n > 200)
        return luaL_argerror(L, 2, "invalid header name");
    for (i = 0; i < n; i++)
        if (name[i] <= ' ' || name[i] >= 127 || strchr("\"(),/:;<=>?@[\\]{}", name[i]) != NULL)
            return luaL_argerror(L, 2, "invalid header name");
    if (value != NULL && (vlen > MCP_HTTP_HEADER_VALUE_MAX || memchr(value, '\r', vlen) ||
                          memchr(value, '\n', vlen) || strlen(value) != vlen))
        return luaL_argerror(L, 3,
                             "a header value without line breaks or NUL (at most 65536 bytes)");
    mcp_http_set_header(box->base.t, name, value);
    return 0;
}

/* t:resumption_token() -> the last event id of the standalone stream, or nil. */
static int l_resumption_token(lua_State *L)
{
    http_box *box = check_box(L);
    size_t len = 0;
    const char *id = mcp_http_resumption_token(box->base.t, &len);
    if (id == NULL)
        lua_pushnil(L);
    else
        lua_pushlstring(L, id, len);
    return 1;
}

static int l_busy(lua_State *L)
{
    http_box *box = luaL_checkudata(L, 1, HTTP_MT);
    lua_pushboolean(L, box->base.t != NULL && mcp_http_busy(box->base.t));
    return 1;
}

/* The max_reconnects this transport keeps to (its config's, else the default). */
static int l_max_reconnects(lua_State *L)
{
    http_box *box = check_box(L);
    lua_pushinteger(L, mcp_http_max_reconnects(box->base.t));
    return 1;
}

static int l_sending(lua_State *L)
{
    http_box *box = luaL_checkudata(L, 1, HTTP_MT);
    lua_pushboolean(L, box->base.t != NULL && mcp_http_sending(box->base.t));
    return 1;
}

static int l_ready(lua_State *L)
{
    http_box *box = check_box(L);
    lua_pushinteger(L, mcp_http_ready(box->base.t));
    return 1;
}

static int l_key(lua_State *L)
{
    http_box *box = check_box(L);
    lua_pushlightuserdata(L, box->base.t);
    return 1;
}

static int l_gc(lua_State *L)
{
    http_box *box = luaL_checkudata(L, 1, HTTP_MT);
    if (box->base.t != NULL) {
        mcp_http_on_event(box->base.t, NULL, NULL);
        mcp_http_set_request_hooks(box->base.t, NULL, NULL); /* (the DELETE goes without them) */
    }
    if (box->event_ref != LUA_NOREF) {
        luaL_unref(L, LUA_REGISTRYINDEX, box->event_ref);
        box->event_ref = LUA_NOREF;
    }
    luaL_unref(L, LUA_REGISTRYINDEX, box->headers_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, box->refused_ref);
    box->headers_ref = box->refused_ref = LUA_NOREF;
    return mcp_transport_lua_gc(L);
}

void mcp_http_lua_open(lua_State *L, int box)
{
    static const luaL_Reg methods[] = {
        {"start", l_start},
        {"close", mcp_transport_lua_close},
        {"is_open", mcp_transport_lua_is_open},
        {"set_protocol_version", l_set_protocol_version},
        {"open_inbound", l_open_inbound},
        {"session_id", l_session_id},
        {"set_header", l_set_header},
        {"resumption_token", l_resumption_token},
        {"busy", l_busy},
        {"max_reconnects", l_max_reconnects},
        {"sending", l_sending},
        {"ready", l_ready},
        {"key", l_key},
        {"set_request_hooks", l_set_request_hooks},
        {"settle", l_settle},
        {NULL, NULL},
    };
    mcp_transport_lua_class(L, HTTP_MT, methods, l_gc);
    lua_pop(L, 1);
    mcp_set_loop_function(L, box, "http_transport", l_http_transport);
    mcp_set_loop_function(L, box, "sse_transport", l_sse_transport);
    lua_pushinteger(L, MCP_HTTP_DEFAULT_MAX_RECONNECTS);
    lua_setfield(L, -2, "http_default_max_reconnects");
}
