/* The JSON-RPC 2.0 wire format: scanning an incoming envelope, the numeric key of an id, and
 * writing outgoing messages. */
#include "wire.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lua_api.h"

#include "compat.h"
#include "json.h"

#define LIT(b, s) mcp_buf_append((b), (s), sizeof(s) - 1)

/* ---- reading ------------------------------------------------------------------------------- */

/* One value of the envelope, decoded in place when the message allows it. */
static const char *decode(lua_State *L, mcp_envelope *in, const char *p, const char *end, char *err,
                          size_t errlen)
{
    if (in->key_order) /* the host asked for the peer's key order (session:key_order) */
        return mcp_json_decode_value_ordered(L, in->msg, (char *)p, end, 1, in->writable, in->undo,
                                             err, errlen);
    if (in->writable) /* p points into the message, which its transport lent for writing */
        return mcp_json_decode_value_inplace(L, in->msg, (char *)p, end, 1, in->undo, err, errlen);
    return mcp_json_decode_value(L, in->msg, p, end, 1, err, errlen);
}

/* A key without escapes compares in place; one with escapes is decoded. */
static const char *read_key(lua_State *L, mcp_envelope *in, const char *p, const char *end,
                            const char **key, size_t *klen, char *err, size_t errlen)
{
    const char *q = p + 1;
    while (q < end && *q != '"' && *q != '\\')
        q++;
    if (q < end && *q == '"') {
        *key = p + 1;
        *klen = (size_t)(q - p - 1);
        return q + 1;
    }
    q = decode(L, in, p, end, err, errlen);
    if (q == NULL)
        return NULL;
    *key = lua_tolstring(L, -1, klen); /* stays valid: the string remains on the stack */
    return q;
}

static int key_slot(const char *k, size_t n)
{
#define IS(lit) (n == sizeof(lit) - 1 && memcmp(k, lit, n) == 0)
    if (IS("id"))
        return MCP_WIRE_ID;
    if (IS("method"))
        return MCP_WIRE_METHOD;
    if (IS("params"))
        return MCP_WIRE_PARAMS;
    if (IS("result"))
        return MCP_WIRE_RESULT;
    if (IS("error"))
        return MCP_WIRE_ERROR;
    if (IS("jsonrpc"))
        return MCP_WIRE_JSONRPC;
    return 0;
#undef IS
}

/* Parse one top-level object into the stack slots without building a table for it. */
const char *mcp_wire_parse_envelope(lua_State *L, mcp_envelope *in, const char *p, const char *end,
                                    char *err, size_t errlen)
{
    int i, top = lua_gettop(L);
    for (i = 0; i <= MCP_WIRE_NSLOTS; i++)
        in->has[i] = 0;
    in->id_known = 0;
    p = mcp_json_skip_ws(p + 1, end);
    if (p < end && *p == '}')
        return p + 1;
    for (;;) {
        const char *key;
        size_t klen;
        int slot;
        if (p >= end || *p != '"') {
            snprintf(err, errlen, "expected a member name at byte %ld", (long)(p - in->msg));
            return NULL;
        }
        p = read_key(L, in, p, end, &key, &klen, err, errlen);
        if (p == NULL)
            return NULL;
        slot = key_slot(key, klen);
        lua_settop(L, top); /* drop a decoded key */
        p = mcp_json_skip_ws(p, end);
        if (p >= end || *p != ':') {
            snprintf(err, errlen, "expected ':' at byte %ld", (long)(p - in->msg));
            return NULL;
        }
        p = decode(L, in, p + 1, end, err, errlen);
        if (p == NULL)
            return NULL;
        if (slot) {
            lua_replace(L, in->base + slot);
            in->has[slot] = 1;
            if (slot == MCP_WIRE_ID)
                in->id_known = mcp_wire_id_key(L, in->base + slot, &in->id_key);
        } else {
            lua_pop(L, 1);
        }
        p = mcp_json_skip_ws(p, end);
        if (p < end && *p == ',') {
            p = mcp_json_skip_ws(p + 1, end);
            continue;
        }
        if (p < end && *p == '}')
            return p + 1;
        snprintf(err, errlen, "expected ',' or '}' at byte %ld", (long)(p - in->msg));
        return NULL;
    }
}

/* The numeric key of an id: 7, 7.0, 7e0 and "7" all match request 7. */
int mcp_wire_id_key(lua_State *L, int idx, int64_t *out)
{
    if (lua_type(L, idx) == LUA_TNUMBER) {
        lua_Number n;
#if MCP_HAS_INTEGERS
        if (lua_isinteger(L, idx)) {
            *out = (int64_t)lua_tointeger(L, idx);
            return 1;
        }
#endif
        n = lua_tonumber(L, idx);
        if (n == floor(n) && fabs(n) < 9007199254740992.0) {
            *out = (int64_t)n;
            return 1;
        }
        return 0;
    }
    if (lua_type(L, idx) == LUA_TSTRING) {
        size_t len, i;
        const char *str = lua_tolstring(L, idx, &len);
        int64_t v = 0;
        if (len == 0 || len > 15)
            return 0;
        for (i = 0; i < len; i++) {
            if (str[i] < '0' || str[i] > '9')
                return 0;
            v = v * 10 + (str[i] - '0');
        }
        *out = v;
        return 1;
    }
    return 0;
}

/* The error object of a JSON-RPC error response in body, pushed as code, message, data; or
 * nothing (returns 0) when the body is not one. Runs under lua_pcall. */
int mcp_wire_push_rpc_error(lua_State *L, const char *body, size_t len)
{
    char err[64];
    const char *end = body + len, *q;
    int top = lua_gettop(L);
    if (body == NULL || len == 0)
        return 0;
    q = mcp_json_decode_value(L, body, body, end, 0, err, sizeof err);
    if (q == NULL || mcp_json_skip_ws(q, end) != end || !lua_istable(L, -1)) {
        lua_settop(L, top);
        return 0;
    }
    lua_getfield(L, -1, "error");
    if (!lua_istable(L, -1)) {
        lua_settop(L, top);
        return 0;
    }
    lua_getfield(L, -1, "code");
    lua_getfield(L, -2, "message");
    lua_getfield(L, -3, "data");
    if (lua_type(L, -3) != LUA_TNUMBER || !lua_isstring(L, -2)) {
        lua_settop(L, top);
        return 0;
    }
    /* stack: body, error, code, message, data -> code, message, data */
    lua_pushvalue(L, top + 3);
    lua_pushvalue(L, top + 4);
    lua_pushvalue(L, top + 5);
    while (lua_gettop(L) > top + 3)
        lua_remove(L, top + 1);
    return 1;
}

/* ---- writing ------------------------------------------------------------------------------- */

/* Decimal digits by hand: snprintf costs more than the rest of a request's framing. */
void mcp_wire_put_int(mcp_buf *b, int64_t v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    /* negated in unsigned arithmetic, so INT64_MIN works */
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[--i] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u != 0);
    if (v < 0)
        tmp[--i] = '-';
    mcp_buf_append(b, tmp + i, sizeof tmp - i);
}

void mcp_wire_begin(mcp_buf *b)
{
    mcp_buf_reset(b);
    LIT(b, "{\"jsonrpc\":\"2.0\",");
}

void mcp_wire_put_id(mcp_buf *b, int64_t id)
{
    LIT(b, "\"id\":");
    mcp_wire_put_int(b, id);
    LIT(b, ",");
}

void mcp_wire_put_method(mcp_buf *b, const char *method, size_t len)
{
    LIT(b, "\"method\":");
    mcp_json_encode_string(b, method, len);
}

void mcp_wire_put_key(mcp_buf *b, const char *key)
{
    mcp_buf_append(b, ",\"", 2);
    mcp_buf_append(b, key, strlen(key));
    mcp_buf_append(b, "\":", 2);
}

void mcp_wire_put_error_head(mcp_buf *b, int64_t code, const char *message, size_t len)
{
    LIT(b, ",\"error\":{\"code\":");
    mcp_wire_put_int(b, code);
    LIT(b, ",\"message\":");
    mcp_json_encode_string(b, message, len);
}

void mcp_wire_cancelled(mcp_buf *b, int64_t id, const char *reason)
{
    mcp_buf_reset(b);
    LIT(b,
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":");
    mcp_wire_put_int(b, id);
    LIT(b, ",\"reason\":");
    mcp_json_encode_string(b, reason, strlen(reason));
    LIT(b, "}}");
}

int mcp_wire_ping_result(lua_State *L, int id_idx, mcp_buf *b, char *err, size_t errlen)
{
    mcp_buf_reset(b);
    LIT(b, "{\"jsonrpc\":\"2.0\",\"id\":");
    if (mcp_json_encode(L, id_idx, b, err, errlen) != 0) {
        mcp_buf_reset(b);
        return -1;
    }
    LIT(b, ",\"result\":{}}");
    return 0;
}

/* The header lines of a failed response ("Name: value\r\n"...) as a table, names lower-cased,
 * repeated headers joined with ", "; nil when there are none. Runs under lua_pcall. */
void mcp_wire_push_http_headers(lua_State *L, const char *h, size_t len)
{
    const char *end = h + len;
    int any = 0;
    if (h == NULL || len == 0) {
        lua_pushnil(L);
        return;
    }
    lua_newtable(L);
    while (h < end) {
        const char *eol = memchr(h, '\n', (size_t)(end - h)), *colon, *v, *ve;
        char name[128];
        size_t nlen, i;
        if (eol == NULL)
            eol = end;
        colon = memchr(h, ':', (size_t)(eol - h));
        if (colon != NULL && colon > h && (size_t)(colon - h) < sizeof name) {
            nlen = (size_t)(colon - h);
            for (i = 0; i < nlen; i++)
                name[i] = (char)((h[i] >= 'A' && h[i] <= 'Z') ? h[i] + 32 : h[i]);
            v = colon + 1;
            ve = eol;
            while (v < ve && (*v == ' ' || *v == '\t'))
                v++;
            while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ' || ve[-1] == '\t'))
                ve--;
            lua_pushlstring(L, name, nlen);
            lua_pushvalue(L, -1);
            lua_rawget(L, -3);
            if (lua_isstring(L, -1)) { /* repeated: "first, second" */
                lua_pushliteral(L, ", ");
                lua_pushlstring(L, v, (size_t)(ve - v));
                lua_concat(L, 3);
            } else {
                lua_pop(L, 1);
                lua_pushlstring(L, v, (size_t)(ve - v));
            }
            lua_rawset(L, -3);
            any = 1;
        }
        h = eol + 1;
    }
    if (!any) {
        lua_pop(L, 1);
        lua_pushnil(L);
    }
}
