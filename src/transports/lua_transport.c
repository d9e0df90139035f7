/* The bridge that lets the C session use a transport written in Lua (any object that implements
 * the transport contract, lua/mcp/transport.lua): core.lua_transport(send) -> bridge.
 *
 * Both directions are queued and dispatched from one zero-delay loop timer, so that
 *   - the Lua transport's send(text, send_opts) runs inside a loop step, never inside the
 *     session's own C call (a request is fully registered before anything can answer it), and
 *   - the events it delivers (bridge:push_message/push_error/push_failure/push_closed) may come
 *     at any time, also from inside send, and still reach the session from a loop callback, as
 *     the sink contract requires (transport.h).
 * The Lua send function lives in the box's user value; the C struct finds its box through a
 * weak registry map, so nothing here roots the Lua transport (a dropped client stays
 * collectable even though the transport's events table points back at the bridge). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua_api.h"

#include "compat.h"
#include "core_loop.h"
#include "transport_lua.h"

#define BRIDGE_MT "mcp.transport.lua"
#define BRIDGE_BOXES "mcp.lua_transport.boxes"

enum rec_kind { REC_SEND, REC_MESSAGE, REC_ERROR, REC_FAILURE, REC_CLOSED };

#define OMIT_VALUE 0xFFFFFFFFu /* encoded header value length: send without this header */

typedef struct rec {
    struct rec *next;
    int kind;
    int64_t id; /* SEND, FAILURE: the request id (0: none) */
    int status; /* FAILURE: HTTP-like status, 0 if none */
    char *a;    /* SEND: message; MESSAGE: text; ERROR, FAILURE: message; CLOSED: reason */
    size_t alen;
    char *b; /* SEND: method; ERROR: kind; FAILURE: body (may be NULL) */
    size_t blen;
    char *c; /* SEND: encoded headers; FAILURE: header lines (may be NULL) */
    size_t clen;
    size_t nheaders;
} rec;

typedef struct bridge {
    mcp_transport base;
    rec *head, *tail;
    mcp_timer timer;
    int closed;
} bridge;

static char *dup_bytes(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (c != NULL) {
        if (n > 0)
            memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

static void free_rec(rec *r)
{
    free(r->a);
    free(r->b);
    free(r->c);
    free(r);
}

static void free_queue(bridge *b)
{
    rec *r = b->head, *next;
    for (; r != NULL; r = next) {
        next = r->next;
        free_rec(r);
    }
    b->head = b->tail = NULL;
}

static void push(bridge *b, rec *r)
{
    r->next = NULL;
    if (b->tail != NULL)
        b->tail->next = r;
    else
        b->head = r;
    b->tail = r;
    if (!b->timer.active)
        mcp_timer_start(b->base.loop, &b->timer, 0);
}

static void put_u32(char *p, uint32_t v)
{
    p[0] = (char)(v >> 24);
    p[1] = (char)(v >> 16);
    p[2] = (char)(v >> 8);
    p[3] = (char)v;
}

static uint32_t get_u32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return ((uint32_t)u[0] << 24) | ((uint32_t)u[1] << 16) | ((uint32_t)u[2] << 8) | u[3];
}

/* ---- the vtable (called by the session) --------------------------------------------------- */

static int bridge_start(mcp_transport *t, char *err, size_t errlen)
{
    (void)t;
    (void)err;
    (void)errlen;
    return 0; /* the Lua transport's own start() is called by the Lua layer */
}

static int bridge_send(mcp_transport *t, const char *msg, size_t len, const mcp_send_info *info,
                       char *err, size_t errlen)
{
    bridge *b = (bridge *)t;
    rec *r;
    size_t i, hlen = 0;
    if (b->closed) {
        snprintf(err, errlen, "the transport is closed");
        return -1;
    }
    r = calloc(1, sizeof *r);
    if (r == NULL)
        goto oom;
    r->kind = REC_SEND;
    r->id = info->request_id;
    r->a = dup_bytes(msg, len);
    r->alen = len;
    if (r->a == NULL)
        goto oom;
    if (info->method != NULL) {
        r->blen = strlen(info->method);
        r->b = dup_bytes(info->method, r->blen);
        if (r->b == NULL)
            goto oom;
    }
    for (i = 0; i < info->nheaders; i++)
        hlen += 8 + info->headers[i].name_len +
                (info->headers[i].value ? info->headers[i].value_len : 0);
    if (info->nheaders > 0) {
        char *p = r->c = malloc(hlen);
        if (p == NULL)
            goto oom;
        for (i = 0; i < info->nheaders; i++) {
            const mcp_header *h = &info->headers[i];
            put_u32(p, (uint32_t)h->name_len);
            memcpy(p + 4, h->name, h->name_len);
            p += 4 + h->name_len;
            put_u32(p, h->value ? (uint32_t)h->value_len : OMIT_VALUE);
            p += 4;
            if (h->value != NULL) {
                memcpy(p, h->value, h->value_len);
                p += h->value_len;
            }
        }
        r->clen = hlen;
        r->nheaders = info->nheaders;
    }
    push(b, r);
    return 0;
oom:
    if (r != NULL)
        free_rec(r);
    snprintf(err, errlen, "out of memory");
    return -1;
}

static void bridge_close(mcp_transport *t)
{
    bridge *b = (bridge *)t;
    if (b->closed)
        return;
    b->closed = 1;
    free_queue(b);
    mcp_timer_stop(t->loop, &b->timer);
}

static int bridge_is_open(mcp_transport *t) { return !((bridge *)t)->closed; }

static void bridge_destroy(mcp_transport *t)
{
    bridge *b = (bridge *)t;
    mcp_loop *loop = t->loop;
    free_queue(b);
    mcp_timer_stop(loop, &b->timer);
    free(b);
    mcp_loop_unref(loop);
}

static const mcp_transport_vt bridge_vt = {
    "lua", bridge_start, bridge_send, NULL, bridge_close, bridge_is_open, bridge_destroy,
};

/* ---- dispatch (inside a loop step) --------------------------------------------------------- */

static void fail_send(bridge *b, const rec *r, const char *msg)
{
    const mcp_sink *sink = b->base.sink;
    if (sink == NULL)
        return;
    if (r->id != 0) {
        mcp_transport_failure f;
        memset(&f, 0, sizeof f);
        f.message = msg;
        sink->on_request_failed(b->base.sink_ctx, r->id, &f);
    } else {
        sink->on_error(b->base.sink_ctx, "transport", msg);
    }
}

/* send_opts for the Lua send: {request_id=, method=, headers={name=value|false}}. */
static void push_send_opts(lua_State *L, const rec *r)
{
    lua_createtable(L, 0, 3);
    if (r->id != 0) {
        lua_pushinteger(L, (lua_Integer)r->id);
        lua_setfield(L, -2, "request_id");
    }
    if (r->b != NULL) {
        lua_pushlstring(L, r->b, r->blen);
        lua_setfield(L, -2, "method");
    }
    if (r->nheaders > 0) {
        const char *p = r->c;
        size_t i;
        lua_createtable(L, 0, (int)r->nheaders);
        for (i = 0; i < r->nheaders; i++) {
            uint32_t n = get_u32(p), v;
            lua_pushlstring(L, p + 4, n);
            p += 4 + n;
            v = get_u32(p);
            p += 4;
            if (v == OMIT_VALUE) {
                lua_pushboolean(L, 0);
            } else {
                lua_pushlstring(L, p, v);
                p += v;
            }
            lua_rawset(L, -3);
        }
        lua_setfield(L, -2, "headers");
    }
}

/* (r, send) -> send(text, send_opts)'s two results, in a protected call: making its arguments
 * (out of memory: the text is as large as the message) fails as send would, before it runs. */
static int call_send(lua_State *L)
{
    const rec *r = lua_touserdata(L, 1);
    lua_pushlstring(L, r->a, r->alen);
    push_send_opts(L, r);
    return lua_pcall(L, 2, 2, 0) != 0 ? lua_error(L) : 2;
}

static void dispatch_send(lua_State *L, bridge *b, const rec *r)
{
    int top = lua_gettop(L);
    char msg[512];
    luaL_checkstack(L, 8, "mcp: stack overflow");
    lua_getfield(L, LUA_REGISTRYINDEX, BRIDGE_BOXES);
    lua_pushlightuserdata(L, b);
    lua_rawget(L, -2);
    if (lua_isnil(L, -1)) {
        lua_settop(L, top);
        fail_send(b, r, "the transport was finalized");
        return;
    }
    mcp_getuservalue(L, -1);
    lua_getfield(L, -1, "send");
    lua_pushcfunction(L, call_send);
    lua_pushlightuserdata(L, (void *)r);
    lua_pushvalue(L, -3);
    if (lua_pcall(L, 2, 2, 0) != 0) {
        snprintf(msg, sizeof msg, "the transport's send raised: %s",
                 lua_tostring(L, -1) ? lua_tostring(L, -1) : "(not a string)");
        lua_settop(L, top);
        fail_send(b, r, msg);
        return;
    }
    if (!lua_toboolean(L, -2)) {
        const char *e = NULL;
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "message");
            e = lua_tostring(L, -1);
        } else {
            e = lua_tostring(L, -1);
        }
        snprintf(msg, sizeof msg, "the transport's send failed: %s", e ? e : "(no reason)");
        lua_settop(L, top);
        fail_send(b, r, msg);
        return;
    }
    lua_settop(L, top);
}

static void dispatch(lua_State *L, bridge *b, const rec *r)
{
    const mcp_sink *sink = b->base.sink;
    if (r->kind == REC_SEND) {
        dispatch_send(L, b, r);
        return;
    }
    if (sink == NULL)
        return;
    switch (r->kind) {
    case REC_MESSAGE: sink->on_message(b->base.sink_ctx, r->a, r->alen); break;
    case REC_ERROR: sink->on_error(b->base.sink_ctx, r->b, r->a); break;
    case REC_FAILURE: {
        mcp_transport_failure f;
        memset(&f, 0, sizeof f);
        f.status = r->status;
        f.message = r->a;
        f.body = r->b;
        f.body_len = r->blen;
        f.headers = r->c;
        f.headers_len = r->clen;
        sink->on_request_failed(b->base.sink_ctx, r->id, &f);
        break;
    }
    case REC_CLOSED:
        b->closed = 1;
        sink->on_closed(b->base.sink_ctx, r->a);
        break;
    }
}

static void on_timer(mcp_loop *loop, mcp_timer *timer)
{
    bridge *b = timer->data;
    lua_State *L = mcp_loop_lua(loop);
    rec *r, *next;
    if (L == NULL)
        return;
    mcp_transport_ref(&b->base);
    r = b->head;
    b->head = b->tail = NULL; /* what is pushed meanwhile waits for the next round */
    for (; r != NULL; r = next) {
        next = r->next;
        if (!b->closed)
            dispatch(L, b, r);
        free_rec(r);
    }
    mcp_transport_unref(&b->base);
}

/* ---- Lua ------------------------------------------------------------------------------------- */

/* The bridge at 1, or NULL when it is closed or finalized (what is pushed then is dropped). */
static bridge *open_bridge(lua_State *L)
{
    mcp_transport_box *box = luaL_checkudata(L, 1, BRIDGE_MT);
    bridge *b = (bridge *)box->t;
    return b != NULL && !b->closed ? b : NULL;
}

/* A record holding a copy of the string at msg_idx; raises when out of memory. */
static rec *new_rec(lua_State *L, int kind, int msg_idx)
{
    size_t n;
    const char *s = luaL_checklstring(L, msg_idx, &n);
    char *copy = dup_bytes(s, n);
    rec *r = copy != NULL ? calloc(1, sizeof *r) : NULL;
    if (r == NULL) {
        free(copy);
        luaL_error(L, "mcp: out of memory");
        return NULL; /* not reached */
    }
    r->kind = kind;
    r->a = copy;
    r->alen = n;
    return r;
}

/* bridge:push_message(text) */
static int l_push_message(lua_State *L)
{
    bridge *b = open_bridge(L);
    luaL_checktype(L, 2, LUA_TSTRING);
    if (b != NULL)
        push(b, new_rec(L, REC_MESSAGE, 2));
    return 0;
}

/* bridge:push_error(kind, message) */
static int l_push_error(lua_State *L)
{
    bridge *b = open_bridge(L);
    size_t n;
    const char *kind = luaL_checklstring(L, 2, &n);
    rec *r;
    luaL_checkstring(L, 3);
    if (b == NULL)
        return 0;
    r = new_rec(L, REC_ERROR, 3);
    r->b = dup_bytes(kind, n);
    r->blen = n;
    if (r->b == NULL) {
        free_rec(r);
        return luaL_error(L, "mcp: out of memory");
    }
    push(b, r);
    return 0;
}

/* bridge:push_failure(request_id, message, status|nil, body|nil, header_lines|nil): header_lines
 * is "Name: value\r\n"... as an HTTP response would have them. */
static int l_push_failure(lua_State *L)
{
    bridge *b = open_bridge(L);
    lua_Number id = luaL_checknumber(L, 2);
    rec *r;
    luaL_checkstring(L, 3);
    luaL_optinteger(L, 4, 0);
    luaL_optstring(L, 5, NULL);
    luaL_optstring(L, 6, NULL);
    if (b == NULL)
        return 0;
    r = new_rec(L, REC_FAILURE, 3);
    r->id = (int64_t)id;
    r->status = (int)luaL_optinteger(L, 4, 0);
    if (lua_type(L, 5) == LUA_TSTRING) {
        const char *s = lua_tolstring(L, 5, &r->blen);
        r->b = dup_bytes(s, r->blen);
    }
    if (lua_type(L, 6) == LUA_TSTRING) {
        const char *s = lua_tolstring(L, 6, &r->clen);
        r->c = dup_bytes(s, r->clen);
    }
    if ((lua_type(L, 5) == LUA_TSTRING && r->b == NULL) ||
        (lua_type(L, 6) == LUA_TSTRING && r->c == NULL)) {
        free_rec(r);
        return luaL_error(L, "mcp: out of memory");
    }
    push(b, r);
    return 0;
}

/* bridge:push_closed(reason) */
static int l_push_closed(lua_State *L)
{
    bridge *b = open_bridge(L);
    if (b != NULL)
        push(b, new_rec(L, REC_CLOSED, 2));
    return 0;
}

/* core.lua_transport(send) -> bridge; send(text, send_opts) -> true | nil, err */
static int l_lua_transport(lua_State *L)
{
    bridge *b;
    luaL_checktype(L, 1, LUA_TFUNCTION);
    b = calloc(1, sizeof *b);
    if (b == NULL)
        return luaL_error(L, "mcp: out of memory");
    b->base.vt = &bridge_vt;
    b->base.refs = 1;
    b->base.loop = mcp_upvalue_loop(L);
    mcp_loop_ref(b->base.loop);
    mcp_timer_init(&b->timer, on_timer, b);
    mcp_transport_push(L, &b->base, BRIDGE_MT);
    lua_createtable(L, 0, 1);
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, "send");
    mcp_setuservalue(L, -2);
    lua_getfield(L, LUA_REGISTRYINDEX, BRIDGE_BOXES);
    lua_pushlightuserdata(L, b);
    lua_pushvalue(L, -3);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    return 1;
}

void mcp_lua_transport_open(lua_State *L, int box)
{
    static const luaL_Reg methods[] = {
        {"push_message", l_push_message},       {"push_error", l_push_error},
        {"push_failure", l_push_failure},       {"push_closed", l_push_closed},
        {"is_open", mcp_transport_lua_is_open}, {NULL, NULL},
    };
    mcp_transport_lua_class(L, BRIDGE_MT, methods, mcp_transport_lua_gc);
    lua_pop(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, BRIDGE_BOXES);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_createtable(L, 0, 1);
        lua_pushliteral(L, "v");
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);
        lua_setfield(L, LUA_REGISTRYINDEX, BRIDGE_BOXES);
    } else {
        lua_pop(L, 1);
    }
    mcp_set_loop_function(L, box, "lua_transport", l_lua_transport);
}
