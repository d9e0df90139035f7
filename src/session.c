#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua_api.h"

#include "buf.h"
#include "class_lua.h"
#include "compat.h"
#include "core_loop.h"
#include "json.h"
#include "json_resume.h"
#include "pending.h"
#include "term_escape_lua.h"
#include "transports/transport_lua.h"
#include "wire.h"

#define LAST_LINE_MAX 200
/* Messages at least this long are decoded over several steps when the step has a budget (not
 * when every object is to record its key order, session:key_order: the resumable decoder records
 * it only for "properties", as the one-shot decoder does by default). */
#define RESUME_MIN MCP_SINK_TAKE_MIN

/* The bytes of messages that may wait behind one being decoded over several steps: the default
 * max_message_size of the stdio and HTTP transports (one message's bound). A message always
 * joins an empty queue; past this the server's connection is closed (queue_overflow). */
#define QUEUE_MAX ((size_t)64 * 1024 * 1024)

/* A message that arrived behind one being decoded over several steps, waiting its turn. */
typedef struct queued {
    struct queued *next;
    size_t len;
    char msg[];
} queued;

typedef struct mcp_session {
    int refs;
    mcp_loop *loop;
    mcp_transport *t;
    int64_t next_id;
    mcp_pending_map pending;
    int handler_ref;
    int closed;
    /* An answer to a server ping could not be sent, and that was reported; no more reports
     * until a send succeeds again (a flood of pings into a full write path: one report). */
    int ping_drop_reported;
    /* The host traces its traffic (client config on_message): each ping and its answer are also
     * told to the handler ("ping", id, answered), though the core still answers them itself. */
    int trace_pings;
    /* Every object received records the peer's key order (session:key_order, client key_order). */
    int key_order;
    mcp_buf out; /* scratch for encoding; owned here so a raised error leaks nothing */
    /* The last line the peer wrote that was not JSON-RPC (a log line on stdout), its first
     * LAST_LINE_MAX bytes escaped: a timeout names it, so the cause is not hidden. */
    char last_line[LAST_LINE_MAX * 4 + 1];
    /* A large message decoded over several budgeted steps (json_resume.h): its decoder (a
     * registry reference, LUA_NOREF when none), the timer (0 ms) that carries it on in the next
     * step, the messages that arrived after it and the end of the connection, in their order. */
    int job_ref;
    /* The decoder of a message decoded over steps and dispatched: its input (as large as the
     * message) is freed in the next step, a unit of work of its own (LUA_NOREF: none). */
    int spent_ref;
    mcp_timer job_timer;
    queued *qhead, *qtail;
    size_t queued_bytes, queue_max; /* what waits in the queue; its bound (QUEUE_MAX) */
    char *close_reason; /* the transport closed behind them: told once they are dispatched */
    int pumping;
} mcp_session;

typedef struct session_box {
    mcp_session *s; /* NULL once finalized */
} session_box;

/* ---- lifetime ------------------------------------------------------------------------------ */

static void session_free_pending(lua_State *L, mcp_session *s)
{
    mcp_pending *p;
    while ((p = mcp_pending_first(&s->pending)) != NULL) {
        mcp_pending_take(&s->pending, p->id);
        mcp_timer_stop(s->loop, &p->timer);
        if (L != NULL)
            luaL_unref(L, LUA_REGISTRYINDEX, p->cb_ref);
        free(p);
    }
}

static void free_queue(mcp_session *s)
{
    while (s->qhead != NULL) {
        queued *q = s->qhead;
        s->qhead = q->next;
        free(q);
    }
    s->qtail = NULL;
    s->queued_bytes = 0;
    free(s->close_reason);
    s->close_reason = NULL;
}

static void session_unref(mcp_session *s)
{
    if (--s->refs > 0)
        return;
    mcp_timer_stop(s->loop, &s->job_timer);
    free_queue(s);
    mcp_pending_map_free(&s->pending);
    mcp_buf_free(&s->out);
    if (s->t != NULL)
        mcp_transport_unref(s->t);
    mcp_loop_unref(s->loop);
    free(s);
}

static mcp_session *check_session(lua_State *L)
{
    session_box *box = luaL_checkudata(L, 1, MCP_SESSION_MT);
    if (box->s == NULL)
        luaL_error(L, "mcp session was finalized");
    return box->s;
}

/* ---- calling into Lua ---------------------------------------------------------------------- */

/* Call handler(kind, ...) with the nargs values on top of the stack, the kind string first.
 * A raising handler cannot take the session down: the error goes to stderr as a last resort. */
static void call_handler(lua_State *L, mcp_session *s, int nargs)
{
    int base = lua_gettop(L) - nargs + 1; /* index of the kind string */
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->handler_ref);
    lua_insert(L, base);
    if (lua_pcall(L, nargs, 0, 0) != 0) {
        mcp_term_report_lua(L, "mcp: session handler failed: ");
        lua_pop(L, 1);
    }
}

static void report_error(lua_State *L, mcp_session *s, const char *kind, const char *msg)
{
    lua_pushstring(L, "error");
    lua_pushstring(L, msg);
    lua_pushstring(L, kind);
    call_handler(L, s, 3);
}

/* Run a completion cb(value, code, message, data, kind): the nargs values are on the stack. */
static void complete(lua_State *L, mcp_session *s, mcp_pending *p, int nargs)
{
    int base = lua_gettop(L) - nargs + 1;
    lua_rawgeti(L, LUA_REGISTRYINDEX, p->cb_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, p->cb_ref);
    lua_insert(L, base);
    free(p);
    if (lua_pcall(L, nargs, 0, 0) != 0) {
        const char *msg = lua_tostring(L, -1);
        char text[512];
        snprintf(text, sizeof text, "a request callback raised: %s", msg ? msg : "?");
        lua_pop(L, 1);
        report_error(L, s, "callback", text);
    }
}

static void complete_local_error(lua_State *L, mcp_session *s, mcp_pending *p, const char *kind,
                                 const char *message)
{
    lua_pushnil(L);
    lua_pushnil(L);
    lua_pushstring(L, message);
    lua_pushnil(L);
    lua_pushstring(L, kind);
    complete(L, s, p, 5);
}

typedef struct failure_args {
    mcp_session *s;
    mcp_pending *p;
    const mcp_transport_failure *f;
} failure_args;

/* cb(nil, code, message, data, kind, status, response_headers, response_body, cause): the
 * server's JSON-RPC error when the body holds one (kind "rpc"), else the transport's message
 * (kind "transport"); cause: the error object that stands for the failure (argument 2: the
 * transport's f->cause), or nil. */
static int complete_failure(lua_State *L)
{
    failure_args *a = lua_touserdata(L, 1);
    const mcp_transport_failure *f = a->f;
    mcp_pending *p = a->p;
    lua_pushnil(L);
    if (mcp_wire_push_rpc_error(L, f->body, f->body_len)) {
        if (f->keep_message) {
            lua_pushstring(L, f->message);
            lua_replace(L, -3);
        }
        lua_pushstring(L, "rpc");
    } else {
        lua_pushnil(L);
        lua_pushstring(L, f->message);
        lua_pushnil(L);
        lua_pushstring(L, "transport");
    }
    if (f->status > 0)
        lua_pushinteger(L, f->status);
    else
        lua_pushnil(L);
    mcp_wire_push_http_headers(L, f->headers, f->headers_len);
    if (f->body != NULL)
        lua_pushlstring(L, f->body, f->body_len);
    else
        lua_pushnil(L);
    lua_pushvalue(L, 2);
    a->p = NULL; /* complete() frees it, even if it raises later */
    complete(L, a->s, p, 9);
    return 0;
}

/* ---- encoding and sending ------------------------------------------------------------------ */

/* Encode the value at idx or raise (misuse: the caller passed something JSON cannot hold). */
static void encode_or_raise(lua_State *L, mcp_session *s, int idx, const char *what)
{
    char err[200];
    if (mcp_json_encode(L, idx, &s->out, err, sizeof err) != 0) {
        mcp_buf_reset(&s->out);
        luaL_error(L, "mcp: cannot encode %s as JSON: %s", what, err);
    }
}

/* The transport's send of what is in s->out, with L (when not NULL) as the loop's dispatch
 * context meanwhile: a transport that asks its owner (Lua) for each exchange (the HTTP request
 * hooks: an auth layer's headers) asks in the calling thread, outside a loop step too. */
static int transport_send(lua_State *L, mcp_session *s, const mcp_send_info *info, char *err,
                          size_t errlen)
{
    void *prev = mcp_loop_context(s->loop);
    int rc;
    if (L != NULL)
        mcp_loop_set_context(s->loop, L);
    rc = s->t->vt->send(s->t, mcp_buf_head(&s->out), s->out.len, info, err, errlen);
    mcp_loop_set_context(s->loop, prev);
    return rc;
}

/* Send what is in s->out. Pushes true (returns 1), or nil, message (returns 2). */
static int flush_out(lua_State *L, mcp_session *s, const mcp_send_info *info)
{
    char err[256];
    int rc;
    if (s->closed || s->t == NULL) {
        mcp_buf_reset(&s->out);
        lua_pushnil(L);
        lua_pushstring(L, "connection closed");
        return 2;
    }
    rc = transport_send(L, s, info, err, sizeof err);
    mcp_buf_reset(&s->out);
    if (rc != 0) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    s->ping_drop_reported = 0; /* the write path takes messages again */
    lua_pushboolean(L, 1);
    return 1;
}

#define MAX_HEADERS 64

/* Whether header h (its name, and its value unless NULL: sent without it) may be sent; when not,
 * why in err (collect_headers raises that). */
static int header_ok(const mcp_header *h, char *err, size_t errlen)
{
    if (h->name_len == 0 || h->name_len > 200)
        snprintf(err, errlen, "mcp: a header name must have 1 to 200 bytes");
    else if (h->value != NULL && h->value_len > 4000)
        snprintf(err, errlen, "mcp: header %s: a value must have at most 4000 bytes", h->name);
    else if (h->value != NULL &&
             (memchr(h->value, '\r', h->value_len) || memchr(h->value, '\n', h->value_len) ||
              memchr(h->value, '\0', h->value_len)))
        snprintf(err, errlen, "mcp: header %s contains a line break or NUL", h->name);
    else
        return 1;
    return 0;
}

/* Tell the server we gave up on a request, and let the transport drop what carries it. */
static void send_cancelled(lua_State *L, mcp_session *s, int64_t id, const char *reason)
{
    mcp_send_info info = {0, "notifications/cancelled", 0, NULL, 0, 0};
    char err[256];
    if (s->closed || s->t == NULL)
        return;
    mcp_wire_cancelled(&s->out, id, reason);
    transport_send(L, s, &info, err, sizeof err);
    mcp_buf_reset(&s->out);
    if (s->t != NULL && s->t->vt->abandon != NULL)
        s->t->vt->abandon(s->t, id);
}

/* ---- timeouts ------------------------------------------------------------------------------ */

/* Keep the start of a line that was not JSON-RPC, every byte outside printable ASCII as \xNN. */
static void keep_last_line(mcp_session *s, const char *line, size_t len)
{
    size_t i, o = 0;
    if (len > LAST_LINE_MAX)
        len = LAST_LINE_MAX;
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)line[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            s->last_line[o++] = (char)c;
        else
            o += (size_t)snprintf(s->last_line + o, 5, "\\x%02x", c);
    }
    s->last_line[o] = '\0';
}

static void on_timeout(mcp_loop *loop, mcp_timer *timer)
{
    mcp_pending *p = timer->data;
    mcp_session *s = p->session;
    lua_State *L = mcp_loop_lua(loop);
    char msg[128], full[sizeof msg + sizeof s->last_line + 64];
    mcp_pending_take(&s->pending, p->id);
    snprintf(msg, sizeof msg, "request timed out after %u ms", (unsigned)p->timeout_ms);
    s->refs++;
    send_cancelled(L, s, p->id, msg);
    if (L != NULL) {
        if (s->last_line[0] != '\0')
            snprintf(full, sizeof full,
                     "%s; the last line the server wrote that was not JSON-RPC: %s", msg,
                     s->last_line);
        complete_local_error(L, s, p, "timeout", s->last_line[0] != '\0' ? full : msg);
    } else {
        free(p); /* cannot happen: timers fire inside core.step */
    }
    session_unref(s);
}

/* ---- incoming messages --------------------------------------------------------------------- */

typedef struct inbound {
    mcp_envelope e;
    mcp_session *s;
    char head[80]; /* a message decoded in place without undo: its start, for an error */
} inbound;

/* The answer to a server ping. When the transport cannot take it (the write path is full: a
 * server that floods pings and reads nothing), the answer is dropped and the first drop of a run
 * is reported, unless the transport reported it itself (MCP_SEND_REPORTED); the run ends when a
 * send succeeds again. */
static int answer_ping(lua_State *L, inbound *in)
{
    mcp_session *s = in->s;
    char err[256];
    int rc;
    if (mcp_wire_ping_result(L, in->e.base + MCP_WIRE_ID, &s->out, err, sizeof err) != 0)
        return 0;
    if (s->t == NULL || s->closed) {
        mcp_buf_reset(&s->out);
        return 0;
    }
    err[0] = '\0';
    {
        mcp_send_info info = {0, NULL, 0, NULL, 0, 0};
        rc = transport_send(L, s, &info, err, sizeof err);
    }
    mcp_buf_reset(&s->out);
    if (rc == 0) {
        s->ping_drop_reported = 0;
        return 1;
    }
    if (!s->ping_drop_reported) {
        s->ping_drop_reported = 1;
        if (rc != MCP_SEND_REPORTED) {
            char text[400];
            snprintf(text, sizeof text,
                     "the answer to a server ping was dropped: %s (further ping answers that "
                     "cannot be sent are dropped without a report until a send succeeds again)",
                     err[0] ? err : "the transport refused it");
            report_error(L, s, "transport", text);
        }
    }
    return 0;
}

static void dispatch_response(lua_State *L, inbound *in)
{
    mcp_session *s = in->s;
    int64_t key;
    mcp_pending *p;
    if (!mcp_wire_id_key(L, in->e.base + MCP_WIRE_ID, &key) ||
        (p = mcp_pending_take(&s->pending, key)) == NULL) {
        char text[160];
        /* A late answer to a request we gave up on is expected; anything else is reported. */
        if (mcp_wire_id_key(L, in->e.base + MCP_WIRE_ID, &key) && key > 0 && key < s->next_id)
            return;
        snprintf(text, sizeof text, "received a response for an unknown request id (%s)",
                 luaL_typename(L, in->e.base + MCP_WIRE_ID));
        report_error(L, s, "protocol", text);
        return;
    }
    mcp_timer_stop(s->loop, &p->timer);
    if (in->e.has[MCP_WIRE_ERROR]) {
        int e = in->e.base + MCP_WIRE_ERROR;
        lua_pushnil(L);
        if (lua_istable(L, e)) {
            lua_getfield(L, e, "code");
            lua_getfield(L, e, "message");
            if (!lua_isstring(L, -1)) {
                lua_pop(L, 1);
                lua_pushstring(L, "the server returned an error without a message");
            }
            lua_getfield(L, e, "data");
        } else {
            lua_pushnil(L);
            lua_pushstring(L, "the server returned a malformed error");
            lua_pushvalue(L, e);
        }
        lua_pushstring(L, "rpc");
        complete(L, s, p, 5);
    } else {
        lua_pushvalue(L, in->e.base + MCP_WIRE_RESULT);
        complete(L, s, p, 1);
    }
}

static void dispatch_envelope(lua_State *L, inbound *in)
{
    mcp_session *s = in->s;
    int b = in->e.base;
    size_t vlen;
    const char *v =
        in->e.has[MCP_WIRE_JSONRPC] ? lua_tolstring(L, b + MCP_WIRE_JSONRPC, &vlen) : NULL;
    int has_id = in->e.has[MCP_WIRE_ID] && !lua_islightuserdata(L, b + MCP_WIRE_ID);
    if (v == NULL || vlen != 3 || memcmp(v, "2.0", 3) != 0) {
        report_error(L, s, "protocol", "ignored a message without \"jsonrpc\": \"2.0\"");
        return;
    }
    if (in->e.has[MCP_WIRE_METHOD]) {
        if (lua_type(L, b + MCP_WIRE_METHOD) != LUA_TSTRING) {
            report_error(L, s, "protocol", "ignored a message whose method is not a string");
            return;
        }
        if (has_id) {
            size_t mlen;
            const char *m = lua_tolstring(L, b + MCP_WIRE_METHOD, &mlen);
            if (mlen == 4 && memcmp(m, "ping", 4) == 0) {
                int answered = answer_ping(L, in);
                if (s->trace_pings) {
                    lua_pushstring(L, "ping");
                    lua_pushvalue(L, b + MCP_WIRE_ID);
                    lua_pushboolean(L, answered);
                    call_handler(L, s, 3);
                }
                return;
            }
            lua_pushstring(L, "request");
            lua_pushvalue(L, b + MCP_WIRE_ID);
            lua_pushvalue(L, b + MCP_WIRE_METHOD);
            lua_pushvalue(L, b + MCP_WIRE_PARAMS);
            call_handler(L, s, 4);
        } else {
            lua_pushstring(L, "notification");
            lua_pushvalue(L, b + MCP_WIRE_METHOD);
            lua_pushvalue(L, b + MCP_WIRE_PARAMS);
            call_handler(L, s, 3);
        }
        return;
    }
    if (has_id && (in->e.has[MCP_WIRE_RESULT] || in->e.has[MCP_WIRE_ERROR])) {
        dispatch_response(L, in);
        return;
    }
    if (in->e.has[MCP_WIRE_ERROR]) {
        const char *m = NULL;
        char text[512];
        if (lua_istable(L, b + MCP_WIRE_ERROR)) {
            lua_getfield(L, b + MCP_WIRE_ERROR, "message");
            m = lua_tostring(L, -1);
        }
        snprintf(text, sizeof text, "the server reported an error without a request id: %s",
                 m ? m : "(no message)");
        report_error(L, s, "protocol", text);
        return;
    }
    report_error(L, s, "protocol",
                 "ignored a message that is neither request, notification nor response");
}

/* Runs under lua_pcall: decoding may raise on out-of-memory. */
static int process_message(lua_State *L)
{
    inbound *in = lua_touserdata(L, 1);
    const char *p = in->e.msg, *end = in->e.msg + in->e.len;
    char err[256];
    int i, batch = 0;
    luaL_checkstack(L, MCP_WIRE_NSLOTS + 8, "mcp: stack overflow");
    in->e.base = lua_gettop(L);
    for (i = 0; i < MCP_WIRE_NSLOTS; i++)
        lua_pushnil(L);
    p = mcp_json_skip_ws(p, end);
    if (p < end && *p == '[') { /* a batch (2025-03-26): each member on its own */
        batch = 1;
        p = mcp_json_skip_ws(p + 1, end);
        if (p < end && *p == ']')
            p = NULL, snprintf(err, sizeof err, "an empty batch");
    }
    while (p != NULL) {
        if (p >= end || *p != '{') {
            snprintf(err, sizeof err, "a JSON-RPC message must be an object");
            p = NULL;
            break;
        }
        p = mcp_wire_parse_envelope(L, &in->e, p, end, err, sizeof err);
        if (p == NULL)
            break;
        dispatch_envelope(L, in);
        if (in->s->closed)
            return 0;
        p = mcp_json_skip_ws(p, end);
        if (batch && p < end && *p == ',') {
            /* the next member starts from empty slots */
            lua_settop(L, in->e.base);
            for (i = 0; i < MCP_WIRE_NSLOTS; i++)
                lua_pushnil(L);
            p = mcp_json_skip_ws(p + 1, end);
            continue;
        }
        if (batch && p < end && *p == ']')
            p = mcp_json_skip_ws(p + 1, end);
        if (p != end) {
            snprintf(err, sizeof err, "unexpected data after the message at byte %ld",
                     (long)(p - in->e.msg));
            p = NULL;
        }
        break;
    }
    if (p == NULL) {
        char text[400];
        size_t show = in->e.len < 80 ? in->e.len : 80;
        const char *head = in->e.msg;
        /* decoded in place: the message as it came (its undo log, or the copy of its start) */
        if (in->e.undo != NULL)
            mcp_json_undo_apply(in->e.undo, (char *)in->e.msg);
        else if (in->e.writable)
            head = in->head;
        snprintf(text, sizeof text, "skipped a line that is not valid JSON-RPC (%s): %.*s%s", err,
                 (int)show, head, in->e.len > show ? "..." : "");
        show = head == in->head && in->e.len > sizeof in->head ? sizeof in->head : in->e.len;
        keep_last_line(in->s, head, show);
        report_error(L, in->s, "invalid_message", text);
    }
    return 0;
}

/* The id of a response whose top-level "id" is its last member ({..."id":7}, as the TypeScript
 * SDK writes them): the bytes after the point where a decode failed are intact. 1, or 0. */
static int tail_id(const char *m, size_t len, int64_t *out)
{
    const char *p = m + len;
    int64_t v = 0, mul = 1;
    int quoted = 0, digits = 0;
#define SKIP_WS_BACK()                                                                             \
    while (p > m && (p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\r' || p[-1] == '\n'))             \
    p--
    SKIP_WS_BACK();
    if (p == m || *--p != '}')
        return 0;
    SKIP_WS_BACK();
    if (p > m && p[-1] == '"')
        quoted = 1, p--;
    for (; p > m && p[-1] >= '0' && p[-1] <= '9' && digits < 18; p--, digits++, mul *= 10)
        v += (p[-1] - '0') * mul;
    if (digits == 0 || (quoted && (p == m || *--p != '"')))
        return 0;
    SKIP_WS_BACK();
    if (p == m || *--p != ':')
        return 0;
    SKIP_WS_BACK();
    if (p - m < 5 || memcmp(p - 4, "\"id\"", 4) != 0)
        return 0;
    p -= 4;
    SKIP_WS_BACK();
#undef SKIP_WS_BACK
    if (p == m || (p[-1] != ',' && p[-1] != '{'))
        return 0;
    *out = v;
    return 1;
}

typedef struct undecodable {
    mcp_session *s;
    mcp_pending *p;
} undecodable;

static int fail_undecodable(lua_State *L)
{
    undecodable *u = lua_touserdata(L, 1);
    mcp_pending *p = u->p;
    u->p = NULL; /* complete() owns it from here */
    complete_local_error(L, u->s, p, "protocol",
                         "the response to this request could not be decoded (out of memory?); "
                         "it was dropped");
    return 0;
}

/* A message that could not be processed (out of memory while decoding it): the request it
 * answers fails now, not at its timeout; nothing else does. Its id is the one read before the
 * failure, else the message's last member. */
static void fail_answered_request(lua_State *L, mcp_session *s, const inbound *in)
{
    int64_t id;
    undecodable u;
    int top = lua_gettop(L);
    if (s->closed || in->e.has[MCP_WIRE_METHOD])
        return;
    if (!(in->e.id_known ? (id = in->e.id_key, 1) : tail_id(in->e.msg, in->e.len, &id)))
        return;
    u.s = s;
    u.p = mcp_pending_take(&s->pending, id);
    if (u.p == NULL)
        return;
    mcp_timer_stop(s->loop, &u.p->timer);
    lua_pushcfunction(L, fail_undecodable);
    lua_pushlightuserdata(L, &u);
    if (lua_pcall(L, 1, 0, 0) != 0 && u.p != NULL) {
        luaL_unref(L, LUA_REGISTRYINDEX, u.p->cb_ref);
        free(u.p);
    }
    lua_settop(L, top);
}

/* The error on top of the stack, raised while processing a message, reported as invalid_message;
 * the stack is back at top and what the failed decode took is collected first. */
static void report_failed(lua_State *L, mcp_session *s, int top)
{
    char text[300];
    snprintf(text, sizeof text, "failed to process a message: %s", lua_tostring(L, -1));
    lua_settop(L, top);
    lua_gc(L, LUA_GCCOLLECT, 0); /* what the failed decode took, before anything else */
    report_error(L, s, "invalid_message", text);
}

/* One message, decoded in one go. */
static void receive_now(lua_State *L, mcp_session *s, const char *msg, size_t len, int writable,
                        mcp_buf *undo)
{
    inbound in;
    int top;
    in.s = s;
    in.e.msg = msg;
    in.e.len = len;
    in.e.writable = writable;
    in.e.undo = undo;
    in.e.key_order = s->key_order;
    memset(in.e.has, 0, sizeof in.e.has);
    in.e.id_known = 0;
    if (writable && undo == NULL)
        memcpy(in.head, msg, len < sizeof in.head ? len : sizeof in.head);
    s->refs++;
    top = lua_gettop(L);
    lua_pushcfunction(L, process_message);
    lua_pushlightuserdata(L, &in);
    if (lua_pcall(L, 1, 0, 0) != 0) {
        report_failed(L, s, top);
        fail_answered_request(L, s, &in);
    }
    lua_settop(L, top);
    session_unref(s);
}

/* ---- large messages over several steps ---------------------------------------------------- */

static int is_object(lua_State *L, int idx)
{
    int array;
    if (!lua_istable(L, idx))
        return 0;
    if (!lua_getmetatable(L, idx))
        return 1;
    lua_getfield(L, LUA_REGISTRYINDEX, MCP_JSON_ARRAY_MT);
    array = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return !array;
}

/* The envelope's slots from the members of the object at idx, as mcp_wire_parse_envelope fills
 * them. */
static void fill_slots(lua_State *L, inbound *in, int idx)
{
    static const char *const keys[MCP_WIRE_NSLOTS] = {"id",     "method", "params",
                                                      "result", "error",  "jsonrpc"};
    int i;
    for (i = 0; i < MCP_WIRE_NSLOTS; i++) {
        lua_pushstring(L, keys[i]);
        lua_rawget(L, idx);
        in->e.has[i + 1] = !lua_isnil(L, -1);
        lua_replace(L, in->e.base + i + 1);
    }
}

/* Dispatch the decoded message at idx as process_message would have (an object, or a batch of
 * them, with nothing after it). 0 when it is something else: the one-shot path then says what. */
static int dispatch_decoded(lua_State *L, mcp_session *s, int dec, int idx)
{
    inbound in;
    size_t len, end, i, n = 1;
    const char *msg = mcp_json_resume_input(L, dec, &len, &end);
    int batch = !is_object(L, idx);
    if (mcp_json_skip_ws(msg + end, msg + len) != msg + len)
        return 0;
    if (batch) {
        n = lua_istable(L, idx) ? (size_t)mcp_rawlen(L, idx) : 0;
        for (i = 1; i <= n; i++) {
            lua_rawgeti(L, idx, (int)i);
            batch = is_object(L, -1);
            lua_pop(L, 1);
            if (!batch)
                return 0;
        }
        if (n == 0)
            return 0;
    }
    memset(&in, 0, sizeof in);
    in.s = s;
    in.e.msg = msg;
    in.e.len = len;
    luaL_checkstack(L, MCP_WIRE_NSLOTS + 8, "mcp: stack overflow");
    in.e.base = lua_gettop(L);
    for (i = 0; i < MCP_WIRE_NSLOTS; i++)
        lua_pushnil(L);
    for (i = 1; i <= n && !s->closed; i++) {
        if (batch)
            lua_rawgeti(L, idx, (int)i);
        fill_slots(L, &in, batch ? lua_gettop(L) : idx);
        if (batch)
            lua_pop(L, 1);
        dispatch_envelope(L, &in);
    }
    return 1;
}

/* Runs under lua_pcall: one run of the decoder in hand; when it is over, its message is
 * dispatched (or, refused, handed to the one-shot path, which reports it as it would have). */
static int run_job(lua_State *L)
{
    mcp_session *s = lua_touserdata(L, 1);
    int *rc = lua_touserdata(L, 2);
    size_t len;
    const char *msg;
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->job_ref); /* 3 */
    *rc = mcp_json_resume_run(L, 3, mcp_loop_deadline(s->loop), 0);
    if (*rc == MCP_RESUME_MORE)
        return 0;
    luaL_unref(L, LUA_REGISTRYINDEX, s->job_ref);
    s->job_ref = LUA_NOREF;
    if (*rc != MCP_RESUME_DONE || !dispatch_decoded(L, s, 3, 4)) {
        msg = mcp_json_resume_input(L, 3, &len, NULL); /* kept alive by the decoder at 3 */
        receive_now(L, s, msg, len, 0, NULL);
    }
    lua_pushvalue(L, 3); /* its input's memory in the next step, not at the next collection */
    s->spent_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

/* Free the input of the message dispatched in the last step. */
static void release_spent(lua_State *L, mcp_session *s)
{
    if (s->spent_ref == LUA_NOREF)
        return;
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->spent_ref);
    mcp_json_resume_release(L, -1);
    lua_pop(L, 1);
    luaL_unref(L, LUA_REGISTRYINDEX, s->spent_ref);
    s->spent_ref = LUA_NOREF;
}

/* One run of the job; 1 when it is not over. */
static int step_job(lua_State *L, mcp_session *s)
{
    int top = lua_gettop(L), rc = MCP_RESUME_DONE;
    lua_pushcfunction(L, run_job);
    lua_pushlightuserdata(L, s);
    lua_pushlightuserdata(L, &rc);
    if (lua_pcall(L, 2, 0, 0) != 0) {
        if (s->job_ref != LUA_NOREF) { /* raised while decoding: the one-shot path reports it */
            size_t len;
            const char *msg;
            lua_settop(L, top);
            lua_rawgeti(L, LUA_REGISTRYINDEX, s->job_ref);
            luaL_unref(L, LUA_REGISTRYINDEX, s->job_ref);
            s->job_ref = LUA_NOREF;
            mcp_json_resume_run(L, -1, 0, 1); /* failed: it undoes what the raised run left */
            msg = mcp_json_resume_input(L, -1, &len, NULL);
            lua_gc(L, LUA_GCCOLLECT, 0);
            receive_now(L, s, msg, len, 0, NULL);
        } else {
            report_failed(L, s, top);
        }
        rc = MCP_RESUME_DONE;
    }
    lua_settop(L, top);
    return rc == MCP_RESUME_MORE || s->spent_ref != LUA_NOREF;
}

/* Start decoding msg over several steps, msg lying in block (malloc'd: the decoder takes it) or,
 * block NULL, copied. 0, or -1 (out of memory: the caller still has block; decode it in one go). */
static int start_job(lua_State *L, mcp_session *s, char *block, const char *msg, size_t len)
{
    const char *p = mcp_json_skip_ws(msg, msg + len);
    char *copy = NULL;
    int top = lua_gettop(L);
    if (block == NULL) {
        if ((block = copy = malloc(len ? len : 1)) == NULL)
            return -1;
        memcpy(copy, msg, len);
        msg = copy;
    }
    lua_pushcfunction(L, mcp_json_resume_pnew);
    lua_pushlightuserdata(L, block);
    lua_pushlightuserdata(L, (void *)msg);
    lua_pushnumber(L, (lua_Number)len);
    lua_pushinteger(L, p < msg + len && *p == '[' ? -1 : 0); /* batch members are top-level */
    if (lua_pcall(L, 4, 1, 0) != 0) {
        free(copy);
        lua_settop(L, top);
        return -1;
    }
    s->job_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

static void sink_closed(void *ctx, const char *reason);

/* Carry on with the message in hand, then with those behind it, until the step's budget is
 * spent (the timer then brings us back in the next step) or nothing is left. */
static void pump(lua_State *L, mcp_session *s)
{
    s->pumping = 1;
    release_spent(L, s);
    for (;;) {
        queued *q = s->qhead;
        uint64_t deadline = mcp_loop_deadline(s->loop);
        if (s->job_ref != LUA_NOREF) {
            if (step_job(L, s)) {
                mcp_timer_start(s->loop, &s->job_timer, 0);
                break;
            }
            continue;
        }
        if (q == NULL)
            break;
        if (deadline != 0 && mcp_now_us() >= deadline) {
            mcp_timer_start(s->loop, &s->job_timer, 0);
            break;
        }
        s->qhead = q->next;
        if (s->qhead == NULL)
            s->qtail = NULL;
        s->queued_bytes -= q->len;
        if (q->len < RESUME_MIN || deadline == 0 || start_job(L, s, NULL, q->msg, q->len) != 0)
            receive_now(L, s, q->msg, q->len, 1, NULL);
        free(q);
    }
    s->pumping = 0;
    if (s->job_ref == LUA_NOREF && s->qhead == NULL && s->close_reason != NULL) {
        char *reason = s->close_reason;
        s->close_reason = NULL;
        sink_closed(s, reason);
        free(reason);
    }
}

static void on_job_timer(mcp_loop *loop, mcp_timer *t)
{
    mcp_session *s = t->data;
    lua_State *L = mcp_loop_lua(loop);
    if (L == NULL)
        return;
    s->refs++;
    pump(L, s);
    session_unref(s);
}

/* The session's message in hand and those behind it are dropped (closed, finalized). */
static void drop_jobs(lua_State *L, mcp_session *s)
{
    mcp_timer_stop(s->loop, &s->job_timer);
    if (s->job_ref != LUA_NOREF)
        luaL_unref(L, LUA_REGISTRYINDEX, s->job_ref);
    s->job_ref = LUA_NOREF;
    release_spent(L, s);
    free_queue(s);
}

/* The server sent more than the queue holds while a message was being decoded: its connection
 * is closed (the transport stopped, what is in flight failed with the reason). */
static void queue_overflow(lua_State *L, mcp_session *s)
{
    char reason[200];
    snprintf(reason, sizeof reason,
             "the server sent more than %lu bytes of messages while one was being decoded "
             "(the bound of the queue behind it)",
             (unsigned long)s->queue_max);
    if (s->t != NULL)
        s->t->vt->close(s->t);
    drop_jobs(L, s);
    sink_closed(s, reason);
}

/* The message waits behind the one in hand. */
static void enqueue(lua_State *L, mcp_session *s, const char *msg, size_t len)
{
    queued *q;
    if (s->closed)
        return;
    if (s->qhead != NULL && s->queued_bytes + len > s->queue_max) {
        queue_overflow(L, s);
        return;
    }
    q = malloc(sizeof *q + len);
    if (q == NULL) {
        report_error(L, s, "out_of_memory", "dropped a message: out of memory");
        return;
    }
    q->next = NULL;
    q->len = len;
    s->queued_bytes += len;
    memcpy(q->msg, msg, len);
    if (s->qtail != NULL)
        s->qtail->next = q;
    else
        s->qhead = q;
    s->qtail = q;
}

/* A message from the transport: behind the one in hand, or large in a step with a budget (decoded
 * over several steps), or decoded now. */
static void receive(mcp_session *s, const char *msg, size_t len, int writable, mcp_buf *undo)
{
    lua_State *L = mcp_loop_lua(s->loop);
    if (L == NULL)
        return;
    if (s->job_ref != LUA_NOREF || s->qhead != NULL || s->pumping) {
        enqueue(L, s, msg, len);
        return;
    }
    if (len >= RESUME_MIN && mcp_loop_deadline(s->loop) != 0 && !s->key_order &&
        start_job(L, s, NULL, msg, len) == 0) {
        s->refs++;
        pump(L, s);
        session_unref(s);
        return;
    }
    receive_now(L, s, msg, len, writable, undo);
}

/* The transport offers a large message with its block: taken when it is to be decoded over
 * several steps now (nothing in hand, a budgeted round), which then needs no copy of it. */
static int sink_take_message(void *ctx, char *block, char *msg, size_t len)
{
    mcp_session *s = ctx;
    lua_State *L = mcp_loop_lua(s->loop);
    if (L == NULL || len < RESUME_MIN || mcp_loop_deadline(s->loop) == 0 || s->key_order ||
        s->job_ref != LUA_NOREF || s->qhead != NULL || s->pumping ||
        start_job(L, s, block, msg, len) != 0)
        return 0;
    s->refs++;
    pump(L, s);
    session_unref(s);
    return 1;
}

static void sink_message(void *ctx, const char *msg, size_t len)
{
    receive(ctx, msg, len, 0, NULL);
}

static void sink_message_inplace(void *ctx, char *msg, size_t len, mcp_buf *undo)
{
    receive(ctx, msg, len, 1, undo);
}

static void sink_error(void *ctx, const char *kind, const char *msg)
{
    mcp_session *s = ctx;
    lua_State *L = mcp_loop_lua(s->loop);
    if (L != NULL)
        report_error(L, s, kind, msg);
}

/* Fail every request in flight at once with the same reason. */
static void fail_all(lua_State *L, mcp_session *s, const char *reason)
{
    mcp_pending *p;
    char msg[320];
    snprintf(msg, sizeof msg, "connection closed: %s", reason);
    while ((p = mcp_pending_first(&s->pending)) != NULL) {
        mcp_pending_take(&s->pending, p->id);
        mcp_timer_stop(s->loop, &p->timer);
        complete_local_error(L, s, p, "closed", msg);
    }
}

static void sink_closed(void *ctx, const char *reason)
{
    mcp_session *s = ctx;
    lua_State *L = mcp_loop_lua(s->loop);
    if (s->closed || L == NULL)
        return;
    if (s->job_ref != LUA_NOREF || s->qhead != NULL || s->pumping) {
        /* after the messages that came before the end */
        if (s->close_reason == NULL)
            s->close_reason = strdup(reason);
        if (s->close_reason != NULL)
            return;
    }
    s->closed = 1;
    s->refs++;
    fail_all(L, s, reason);
    lua_pushstring(L, "closed");
    lua_pushstring(L, reason);
    call_handler(L, s, 2);
    session_unref(s);
}

static int fail_plain(lua_State *L)
{
    failure_args *a = lua_touserdata(L, 1);
    mcp_pending *p = a->p;
    a->p = NULL; /* complete() owns it from here */
    complete_local_error(L, a->s, p, "transport", a->f->message);
    return 0;
}

/* The request of a failure whose details could not be made (out of memory: its body, its
 * headers) fails with the transport's message alone, and its callback is still called once. */
static void fail_plainly(lua_State *L, failure_args *a)
{
    int top = lua_gettop(L);
    lua_pushcfunction(L, fail_plain);
    lua_pushlightuserdata(L, a);
    if (lua_pcall(L, 1, 0, 0) != 0 && a->p != NULL) {
        luaL_unref(L, LUA_REGISTRYINDEX, a->p->cb_ref);
        free(a->p);
    }
    lua_settop(L, top);
}

static void sink_request_failed(void *ctx, int64_t id, const mcp_transport_failure *f)
{
    mcp_session *s = ctx;
    lua_State *L = mcp_loop_lua(s->loop);
    mcp_pending *p = mcp_pending_take(&s->pending, id);
    failure_args a;
    int top;
    if (p == NULL || L == NULL) {
        free(p);
        return;
    }
    mcp_timer_stop(s->loop, &p->timer);
    s->refs++;
    a.s = s;
    a.p = p;
    a.f = f;
    top = lua_gettop(L);
    lua_pushcfunction(L, complete_failure);
    lua_pushlightuserdata(L, &a);
    if (f->cause != 0)
        lua_pushvalue(L, f->cause);
    else
        lua_pushnil(L);
    if (lua_pcall(L, 2, 0, 0) != 0) {
        lua_settop(L, top);
        if (a.p != NULL) /* failed before complete() took it: it fails without the details */
            fail_plainly(L, &a);
        report_error(L, s, "transport", f->message);
    }
    lua_settop(L, top);
    session_unref(s);
}

static int sink_is_pending(void *ctx, int64_t id)
{
    mcp_session *s = ctx;
    return mcp_pending_get(&s->pending, id) != NULL;
}

static const mcp_sink session_sink = {sink_message,     sink_message_inplace, sink_error,
                                      sink_closed,      sink_request_failed,  sink_is_pending,
                                      sink_take_message};

/* ---- Lua methods ---------------------------------------------------------------------------- */

/* "method":<the string at idx> (raises when it is not a string). */
static void put_method(lua_State *L, mcp_session *s, int idx)
{
    size_t n;
    const char *m = luaL_checklstring(L, idx, &n);
    mcp_wire_put_method(&s->out, m, n);
}

/* Per-request headers at idx ({name = string | false}) into out; the strings stay valid while
 * the table is on the stack. Misuse raises. */
static size_t collect_headers(lua_State *L, int idx, mcp_header *out)
{
    size_t n = 0;
    char err[300];
    if (lua_isnoneornil(L, idx))
        return 0;
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        mcp_header *h = &out[n];
        if (n == MAX_HEADERS)
            luaL_error(L, "mcp: more than %d per-request headers", MAX_HEADERS);
        if (lua_type(L, -2) != LUA_TSTRING)
            luaL_error(L, "mcp: header names must be strings");
        h->name = lua_tolstring(L, -2, &h->name_len);
        h->value = NULL; /* false: send without this header */
        h->value_len = 0;
        if (lua_type(L, -1) == LUA_TSTRING)
            h->value = lua_tolstring(L, -1, &h->value_len);
        if (!header_ok(h, err, sizeof err))
            luaL_error(L, "%s", err);
        if (h->value == NULL && !(lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1)))
            luaL_error(L, "mcp: header %s must be a string or false", h->name);
        n++;
        lua_pop(L, 1);
    }
    return n;
}

/* l_request's background argument at idx: "own" (MCP_SEND_OWN), else true (MCP_SEND_DETACHED). */
static int background_arg(lua_State *L, int idx)
{
    if (lua_type(L, idx) == LUA_TSTRING && strcmp(lua_tostring(L, idx), "own") == 0)
        return MCP_SEND_OWN;
    return lua_toboolean(L, idx) ? MCP_SEND_DETACHED : 0;
}

/* s:request(method, params|nil, timeout_ms, cb [, id [, headers [, background]]]) -> id | nil, err
 * background (mcp_send_info's): the client's own work; true, no call waits on it (detached);
 * "own", the client's own work waits on it (a reconnection's initialize). */
static int l_request(lua_State *L)
{
    mcp_session *s = check_session(L);
    lua_Number timeout = luaL_checknumber(L, 4);
    int64_t id;
    mcp_pending *p;
    int rc;
    mcp_header headers[MAX_HEADERS];
    size_t nheaders;
    luaL_checktype(L, 5, LUA_TFUNCTION);
    nheaders = collect_headers(L, 7, headers);
    if (!lua_isnoneornil(L, 6)) {
        id = (int64_t)luaL_checknumber(L, 6);
        if (id <= 0 || id >= s->next_id || mcp_pending_get(&s->pending, id) != NULL)
            return luaL_argerror(L, 6, "id must come from next_id() and be unused");
    } else {
        id = s->next_id++;
    }
    if (s->closed || s->t == NULL) {
        lua_pushnil(L);
        lua_pushstring(L, "connection closed");
        return 2;
    }
    mcp_wire_begin(&s->out);
    mcp_wire_put_id(&s->out, id);
    put_method(L, s, 2);
    if (!lua_isnoneornil(L, 3)) {
        mcp_wire_put_key(&s->out, "params");
        encode_or_raise(L, s, 3, "params");
    }
    mcp_buf_append(&s->out, "}", 1);
    p = calloc(1, sizeof *p);
    if (p != NULL)
        p->id = id;
    if (p == NULL || mcp_pending_put(&s->pending, p) != 0) {
        free(p);
        mcp_buf_reset(&s->out);
        return luaL_error(L, "mcp: out of memory");
    }
    p->session = s;
    p->cb_ref = LUA_NOREF;
    {
        mcp_send_info info = {0, NULL, 0, NULL, 0, 0};
        info.request_id = id;
        info.method = lua_tostring(L, 2);
        info.is_initialize = strcmp(info.method, "initialize") == 0;
        info.headers = headers;
        info.nheaders = nheaders;
        info.background = background_arg(L, 8);
        rc = flush_out(L, s, &info);
    }
    if (rc != 1) {
        mcp_pending_take(&s->pending, p->id);
        free(p);
        return rc;
    }
    lua_pop(L, 1); /* flush_out's true */
    lua_pushvalue(L, 5);
    p->cb_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    p->timeout_ms = timeout > 0 ? (uint32_t)(timeout < 4294967295.0 ? timeout : 4294967295.0) : 0;
    mcp_timer_init(&p->timer, on_timeout, p);
    if (p->timeout_ms > 0)
        mcp_timer_start(s->loop, &p->timer, p->timeout_ms);
    lua_pushinteger(L, (lua_Integer)id);
    return 1;
}

static int l_next_id(lua_State *L)
{
    mcp_session *s = check_session(L);
    lua_pushinteger(L, (lua_Integer)s->next_id++);
    return 1;
}

/* s:notify(method, params|nil [, headers]) -> true | nil, err */
static int l_notify(lua_State *L)
{
    mcp_session *s = check_session(L);
    mcp_header headers[MAX_HEADERS];
    size_t nheaders = collect_headers(L, 4, headers);
    mcp_wire_begin(&s->out);
    put_method(L, s, 2);
    if (!lua_isnoneornil(L, 3)) {
        mcp_wire_put_key(&s->out, "params");
        encode_or_raise(L, s, 3, "params");
    }
    mcp_buf_append(&s->out, "}", 1);
    {
        mcp_send_info info = {0, NULL, 0, NULL, 0, 0}; /* (a notification: no one's work waits) */
        info.method = lua_tostring(L, 2);
        info.headers = headers;
        info.nheaders = nheaders;
        return flush_out(L, s, &info);
    }
}

/* s:respond(id, result) -> true | nil, err */
static int l_respond(lua_State *L)
{
    mcp_session *s = check_session(L);
    mcp_send_info info = {0, NULL, 0, NULL, 0, 0};
    luaL_checkany(L, 2);
    mcp_wire_begin(&s->out);
    mcp_buf_append(&s->out, "\"id\":", 5);
    encode_or_raise(L, s, 2, "id");
    mcp_wire_put_key(&s->out, "result");
    if (lua_isnoneornil(L, 3))
        mcp_buf_append(&s->out, "{}", 2);
    else
        encode_or_raise(L, s, 3, "result");
    mcp_buf_append(&s->out, "}", 1);
    return flush_out(L, s, &info);
}

/* s:respond_error(id, code, message, data|nil) -> true | nil, err */
static int l_respond_error(lua_State *L)
{
    mcp_session *s = check_session(L);
    lua_Integer code = luaL_checkinteger(L, 3);
    size_t mlen;
    const char *msg = luaL_checklstring(L, 4, &mlen);
    mcp_send_info info = {0, NULL, 0, NULL, 0, 0};
    luaL_checkany(L, 2);
    mcp_wire_begin(&s->out);
    mcp_buf_append(&s->out, "\"id\":", 5);
    encode_or_raise(L, s, 2, "id");
    mcp_wire_put_error_head(&s->out, (int64_t)code, msg, mlen);
    if (!lua_isnoneornil(L, 5)) {
        mcp_wire_put_key(&s->out, "data");
        encode_or_raise(L, s, 5, "error data");
    }
    mcp_buf_append(&s->out, "}}", 2);
    return flush_out(L, s, &info);
}

/* s:cancel(id, reason) -> true if the request was in flight */
static int l_cancel(lua_State *L)
{
    mcp_session *s = check_session(L);
    int64_t id = (int64_t)luaL_checknumber(L, 2);
    const char *reason = luaL_optstring(L, 3, "cancelled by the client");
    mcp_pending *p = mcp_pending_take(&s->pending, id);
    char msg[300];
    if (p == NULL) {
        lua_pushboolean(L, 0);
        return 1;
    }
    mcp_timer_stop(s->loop, &p->timer);
    send_cancelled(L, s, id, reason);
    snprintf(msg, sizeof msg, "request cancelled: %s", reason);
    s->refs++;
    complete_local_error(L, s, p, "cancelled", msg);
    session_unref(s);
    lua_pushboolean(L, 1);
    return 1;
}

/* s:close(reason) : closes the transport and fails what is in flight. Idempotent. */
static int l_close(lua_State *L)
{
    mcp_session *s = check_session(L);
    const char *reason = luaL_optstring(L, 2, "the client was closed");
    if (s->t != NULL)
        s->t->vt->close(s->t);
    drop_jobs(L, s);
    if (!s->closed) {
        s->closed = 1;
        s->refs++;
        fail_all(L, s, reason);
        session_unref(s);
    }
    return 0;
}

static int l_pending(lua_State *L)
{
    mcp_session *s = check_session(L);
    lua_pushinteger(L, (lua_Integer)s->pending.count);
    return 1;
}

/* s:decoding() -> a large message is being decoded over several steps (or waits behind one). */
static int l_decoding(lua_State *L)
{
    mcp_session *s = check_session(L);
    lua_pushboolean(L, s->job_ref != LUA_NOREF || s->qhead != NULL);
    return 1;
}

static int l_is_open(lua_State *L)
{
    mcp_session *s = check_session(L);
    lua_pushboolean(L, !s->closed && s->t != NULL && s->t->vt->is_open(s->t));
    return 1;
}

/* session:trace_pings(on): tell the handler of each server ping and of its answer. */
static int l_trace_pings(lua_State *L)
{
    mcp_session *s = check_session(L);
    s->trace_pings = lua_toboolean(L, 2);
    return 0;
}

/* session:key_order(on): every object received records the server's key order (__keyorder). */
static int l_key_order(lua_State *L)
{
    mcp_session *s = check_session(L);
    s->key_order = lua_toboolean(L, 2);
    return 0;
}

/* s:max_queued([bytes]) -> the bound of the messages waiting behind one being decoded (before
 * the change); bytes sets it (specs lower it). */
static int l_max_queued(lua_State *L)
{
    mcp_session *s = check_session(L);
    lua_pushnumber(L, (lua_Number)s->queue_max);
    if (!lua_isnoneornil(L, 2)) {
        lua_Number n = luaL_checknumber(L, 2);
        luaL_argcheck(L, n >= 0, 2, "must be a number >= 0");
        s->queue_max = (size_t)n;
    }
    return 1;
}

static int l_gc(lua_State *L)
{
    session_box *box = luaL_checkudata(L, 1, MCP_SESSION_MT);
    mcp_session *s = box->s;
    if (s == NULL)
        return 0;
    box->s = NULL;
    s->closed = 1;
    if (s->t != NULL) {
        s->t->sink = NULL;
        s->t->vt->close(s->t);
    }
    drop_jobs(L, s);
    session_free_pending(L, s);
    luaL_unref(L, LUA_REGISTRYINDEX, s->handler_ref);
    s->handler_ref = LUA_NOREF;
    session_unref(s);
    return 0;
}

/* core.session(transport, handler) */
int mcp_session_new(lua_State *L)
{
    mcp_transport *t = mcp_transport_check(L, 1);
    session_box *box;
    mcp_session *s;
    luaL_checktype(L, 2, LUA_TFUNCTION);
    if (t->sink != NULL)
        return luaL_argerror(L, 1, "transport already belongs to a session");
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return luaL_error(L, "mcp: out of memory");
    box = mcp_newuserdata(L, sizeof *box);
    box->s = s;
    luaL_getmetatable(L, MCP_SESSION_MT);
    lua_setmetatable(L, -2);
    s->refs = 1;
    s->loop = t->loop;
    mcp_loop_ref(s->loop);
    s->t = t;
    mcp_transport_ref(t);
    s->next_id = 1;
    mcp_pending_map_init(&s->pending);
    mcp_buf_init(&s->out);
    s->job_ref = s->spent_ref = LUA_NOREF;
    s->queue_max = QUEUE_MAX;
    mcp_timer_init(&s->job_timer, on_job_timer, s);
    lua_pushvalue(L, 2);
    s->handler_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    /* Keep the transport's userdata alive as long as the session. */
    lua_createtable(L, 0, 1);
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, "transport");
    mcp_setuservalue(L, -2);
    mcp_transport_set_sink(t, &session_sink, s);
    return 1;
}

void mcp_session_open(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"request", l_request},
        {"next_id", l_next_id},
        {"notify", l_notify},
        {"respond", l_respond},
        {"respond_error", l_respond_error},
        {"cancel", l_cancel},
        {"close", l_close},
        {"pending", l_pending},
        {"is_open", l_is_open},
        {"decoding", l_decoding},
        {"trace_pings", l_trace_pings},
        {"key_order", l_key_order},
        {"max_queued", l_max_queued},
        {NULL, NULL},
    };
    mcp_class_metatable(L, MCP_SESSION_MT, methods, l_gc);
    lua_pop(L, 1);
}
