/* JSON encoder: Lua value -> JSON text in an mcp_buf. Never raises for unencodable values. */
#include "json_internal.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_MT "mcp.json.buf_mt"

typedef struct enc {
    lua_State *L;
    mcp_buf *b;
    char *err;
    size_t errlen;
    int alias; /* stack index of the null alias, 0 when none is set */
    /* the C locale's decimal point, as snprintf writes it (NULL: not looked up yet) */
    const char *dp;
} enc;

static int encode_value(enc *e, int idx, int depth);

static int fail(enc *e, const char *msg)
{
    if (e->errlen > 0)
        snprintf(e->err, e->errlen, "%s", msg);
    return -1;
}

static int oom(enc *e) { return fail(e, "out of memory"); }

static int put(enc *e, const char *s, size_t n)
{
    return mcp_buf_append(e->b, s, n) == 0 ? 0 : oom(e);
}

/* ---- metatables ---- */

static int buf_gc(lua_State *L)
{
    mcp_buf *b = (mcp_buf *)lua_touserdata(L, 1);
    if (b != NULL)
        mcp_buf_free(b);
    return 0;
}

static void init_marker(lua_State *L, const char *key, const char *type)
{
    lua_getfield(L, LUA_REGISTRYINDEX, key);
    if (lua_istable(L, -1)) {
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    lua_createtable(L, 0, 1);
    lua_pushstring(L, type);
    lua_setfield(L, -2, "__jsontype");
    lua_setfield(L, LUA_REGISTRYINDEX, key);
}

void mcp_json_init(lua_State *L)
{
    luaL_checkstack(L, 3, "mcp_json_init");
    init_marker(L, MCP_JSON_ARRAY_MT, "array");
    init_marker(L, MCP_JSON_OBJECT_MT, "object");
    /* For mcp_json_pushbuf: malloc'd buffers owned by a userdata, so an error raised mid-way cannot leak them. */
    if (luaL_newmetatable(L, BUF_MT)) {
        lua_pushcfunction(L, buf_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
}

/* ---- strings ---- */

/* 0: copy as is; otherwise the letter after the backslash ('u' -> \u00XX). */
/* clang-format off */
static const unsigned char esc_table[256] = {
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n', 'u', 'f', 'r', 'u', 'u',
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',
    0, 0, '"', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '\\', 0, 0, 0,
    /* 0x60..0xff: all zero */
};
/* clang-format on */

int mcp_json_encode_string(mcp_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    /* Room for the common case (no escapes) up front; escapes reserve as they come. */
    if (n + 2 < n || mcp_buf_reserve(b, n + 2) != 0)
        return -1;
    mcp_buf_put_unchecked(b, '"');
    while (p < end) {
        const unsigned char *run = p;
        unsigned char c;
        char *o;
        while (p < end && esc_table[*p] == 0)
            p++;
        if (p > run && mcp_buf_append(b, run, (size_t)(p - run)) != 0)
            return -1;
        if (p == end)
            break;
        c = *p++;
        if (mcp_buf_reserve(b, 6) != 0)
            return -1;
        o = mcp_buf_tail(b);
        o[0] = '\\';
        o[1] = (char)esc_table[c];
        if (esc_table[c] != 'u') {
            b->len += 2;
            continue;
        }
        o[2] = '0';
        o[3] = '0';
        o[4] = hex[c >> 4];
        o[5] = hex[c & 15];
        b->len += 6;
    }
    if (mcp_buf_reserve(b, 1) != 0)
        return -1;
    mcp_buf_put_unchecked(b, '"');
    return 0;
}

/* ---- numbers ---- */

/* Decimal text of v into out (>= 21 bytes); returns the length. Hand-rolled: snprintf is slow. */
static size_t fmt_int(char *out, long long v)
{
    char tmp[24];
    size_t n = 0, i;
    /* Negate in unsigned arithmetic so LLONG_MIN works. */
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u != 0);
    i = 0;
    if (v < 0)
        out[i++] = '-';
    while (n > 0)
        out[i++] = tmp[--n];
    return i;
}

/* Rewrite the locale's decimal point (if it is not ".") as "."; returns the new length. */
static size_t fix_point(char *s, size_t n, const char *dp)
{
    size_t dl;
    char *at;
    if (dp[0] == '.' && dp[1] == '\0')
        return n;
    dl = strlen(dp);
    at = dl > 0 ? strstr(s, dp) : NULL;
    if (at == NULL)
        return n;
    *at = '.';
    memmove(at + 1, at + dl, n - (size_t)(at - s) - dl + 1);
    return n - dl + 1;
}

/* JSON text for a finite double into out (>= 64 bytes); returns the length. */
static size_t fmt_double(char *out, double d, const char *dp)
{
    double ad = d < 0 ? -d : d;
    int prec, n = 0;
    if (ad < 9223372036854775808.0) {
        long long i = (long long)d;
        if ((double)i == d) {
            /* Integral: print as an integer, like JavaScript; keep the sign of -0 so it round-trips. */
            if (i == 0 && signbit(d)) {
                memcpy(out, "-0", 2);
                return 2;
            }
            return fmt_int(out, i);
        }
    } else if (ad < 1e21) {
        /* Integral (every double >= 2^53 is) but too large for long long: no fraction digits to print. */
        n = snprintf(out, 64, "%.0f", d);
        return n > 0 ? (size_t)n : 0;
    }
    /* Shortest of 15/16/17 significant digits that reads back as the same double. */
    for (prec = 15; prec <= 17; prec++) {
        n = snprintf(out, 64, "%.*g", prec, d);
        if (prec == 17 || strtod(out, NULL) == d)
            break;
    }
    if (n <= 0)
        return 0;
    return fix_point(out, (size_t)n, dp);
}

static int encode_number(enc *e, int idx)
{
    char *o;
    double d;
    if (mcp_buf_reserve(e->b, 64) != 0)
        return oom(e);
    o = mcp_buf_tail(e->b);
#if MCP_HAS_INTEGERS
    if (lua_isinteger(e->L, idx)) {
        e->b->len += fmt_int(o, (long long)lua_tointeger(e->L, idx));
        return 0;
    }
#endif
    d = (double)lua_tonumber(e->L, idx);
    if (isnan(d))
        return fail(e, "cannot encode NaN");
    if (isinf(d))
        return fail(e, "cannot encode infinity");
    if (e->dp == NULL) /* looked up once per encode, and only when a float is written */
        e->dp = localeconv()->decimal_point;
    e->b->len += fmt_double(o, d, e->dp);
    return 0;
}

/* ---- tables ---- */

/* The __jsontype of the table at idx, read raw: 'a' (array), 'o' (object) or 0. */
static int marker_type(lua_State *L, int idx)
{
    int t = 0;
    if (!lua_getmetatable(L, idx))
        return 0;
    lua_pushliteral(L, "__jsontype");
    lua_rawget(L, -2);
    if (lua_type(L, -1) == LUA_TSTRING) {
        const char *s = lua_tostring(L, -1);
        if (strcmp(s, "array") == 0)
            t = 'a';
        else if (strcmp(s, "object") == 0)
            t = 'o';
    }
    lua_pop(L, 2);
    return t;
}

static int encode_array_n(enc *e, int idx, size_t n, int depth)
{
    size_t i;
    if (put(e, "[", 1) != 0)
        return -1;
    for (i = 1; i <= n; i++) {
        if (i > 1 && put(e, ",", 1) != 0)
            return -1;
        lua_rawgeti(e->L, idx, (int)i);
        if (encode_value(e, lua_gettop(e->L), depth) != 0)
            return -1;
        lua_pop(e->L, 1);
    }
    return put(e, "]", 1);
}

/* Key of an object member at -2: strings as they are; numbers only when the table is marked object. */
static int encode_key(enc *e, int numbers_ok)
{
    lua_State *L = e->L;
    size_t n;
    const char *s;
    if (lua_type(L, -2) == LUA_TSTRING) {
        s = lua_tolstring(L, -2, &n);
        return mcp_json_encode_string(e->b, s, n) == 0 ? 0 : oom(e);
    }
    if (numbers_ok && lua_type(L, -2) == LUA_TNUMBER) {
        /* Never lua_tolstring the key itself: converting it in place would confuse lua_next. */
        if (put(e, "\"", 1) != 0 || encode_number(e, lua_gettop(L) - 1) != 0)
            return -1;
        return put(e, "\"", 1);
    }
    return fail(e, "table has mixed/invalid keys");
}

/* The __keyorder list of the object at idx pushed (returns 1), or nothing pushed (returns 0). */
static int push_key_order(lua_State *L, int idx)
{
    if (!lua_getmetatable(L, idx))
        return 0;
    lua_pushliteral(L, "__keyorder");
    lua_rawget(L, -2);
    lua_remove(L, -2);
    if (lua_istable(L, -1))
        return 1;
    lua_pop(L, 1);
    return 0;
}

/* Whether the key at -2 was written already (marks it written in seen if not). */
static int written_before(lua_State *L, int seen)
{
    int was;
    lua_pushvalue(L, -2);
    lua_rawget(L, seen);
    was = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (!was) {
        lua_pushvalue(L, -2);
        lua_pushboolean(L, 1);
        lua_rawset(L, seen);
    }
    return was;
}

/* The pair at -2, -1 as a member (a comma before all but the first); pops the value. */
static int encode_member(enc *e, int *first, int depth)
{
    if (!*first && put(e, ",", 1) != 0)
        return -1;
    *first = 0;
    if (encode_key(e, 1) != 0 || put(e, ":", 1) != 0 ||
        encode_value(e, lua_gettop(e->L), depth) != 0)
        return -1;
    lua_pop(e->L, 1);
    return 0;
}

/* An object whose metatable lists its keys (__keyorder, the decoder's record of the peer's order):
 * the listed keys it has first, in that order and each once, then any others it has (keys added
 * after decoding), as lua_next gives them. The list is on top of the stack and stays there. */
static int encode_ordered(enc *e, int idx, int depth)
{
    lua_State *L = e->L;
    int order = lua_gettop(L), seen, first = 1;
    size_t n = mcp_rawlen(L, order), i;
    if (!lua_checkstack(L, 6))
        return fail(e, "nesting too deep (Lua stack)");
    lua_createtable(L, 0, n < 64 ? (int)n : 64);
    seen = lua_gettop(L);
    if (put(e, "{", 1) != 0)
        return -1;
    for (i = 1; i <= n; i++) {
        lua_rawgeti(L, order, (int)i);
        lua_pushvalue(L, -1);
        lua_rawget(L, idx);
        if (lua_type(L, -2) != LUA_TSTRING || lua_isnil(L, -1) || written_before(L, seen))
            lua_pop(L, 1);
        else if (encode_member(e, &first, depth) != 0)
            return -1;
        lua_pop(L, 1); /* the key */
    }
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (written_before(L, seen))
            lua_pop(L, 1);
        else if (encode_member(e, &first, depth) != 0)
            return -1;
    }
    lua_pop(L, 1); /* seen */
    return put(e, "}", 1);
}

/* Object members by lua_next. When started is set, the first pair is already on the stack. */
static int encode_object(enc *e, int idx, int depth, int started, int numbers_ok)
{
    lua_State *L = e->L;
    int first = 1;
    if (put(e, "{", 1) != 0)
        return -1;
    if (!started)
        lua_pushnil(L);
    while (started || lua_next(L, idx)) {
        started = 0;
        if (!first && put(e, ",", 1) != 0)
            return -1;
        first = 0;
        if (encode_key(e, numbers_ok) != 0 || put(e, ":", 1) != 0)
            return -1;
        if (encode_value(e, lua_gettop(L), depth) != 0)
            return -1;
        lua_pop(L, 1);
    }
    return put(e, "}", 1);
}

/* Value of the number key at -2 if it is a positive integer (integral floats count), else 0.
 * Keys beyond 2^53 come back inexact, which is harmless: they can only make the array sparse. */
static double array_key(lua_State *L)
{
    double k;
#if MCP_HAS_INTEGERS
    if (lua_isinteger(L, -2)) {
        lua_Integer i = lua_tointeger(L, -2);
        return i >= 1 ? (double)i : 0;
    }
#endif
    k = (double)lua_tonumber(L, -2);
    if (!(k >= 1))
        return 0; /* also NaN */
    if (k >= 9007199254740992.0)
        return isinf(k) ? 0 : k; /* every double this large is integral */
    return (double)(long long)k == k ? k : 0;
}

/* All keys must be 1..n without holes; the caller already popped the first pair. */
static int encode_plain_array(enc *e, int idx, int depth)
{
    lua_State *L = e->L;
    double max = 0, count = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        double k = lua_type(L, -2) == LUA_TNUMBER ? array_key(L) : 0;
        lua_pop(L, 1);
        if (k == 0)
            return fail(e, "table has mixed/invalid keys"); /* mcp_json_encode restores the stack */
        count++;
        if (k > max)
            max = k;
    }
    if (max != count)
        return fail(e, "sparse array");
    return encode_array_n(e, idx, (size_t)count, depth);
}

static int encode_table(enc *e, int idx, int depth)
{
    lua_State *L = e->L;
    int t;
    if (depth > MCP_JSON_MAX_DEPTH)
        return fail(e, "nesting too deep");
    /* A pair from lua_next plus temporaries per level; fail softly rather than raise. */
    if (!lua_checkstack(L, 6))
        return fail(e, "nesting too deep (Lua stack)");
    t = marker_type(L, idx);
    if (t == 'a')
        return encode_array_n(e, idx, (size_t)mcp_rawlen(L, idx), depth);
    if (t == 'o' && push_key_order(L, idx)) {
        int rc = encode_ordered(e, idx, depth);
        lua_pop(L, 1); /* the list (after a failure mcp_json_encode restores the stack) */
        return rc;
    }
    if (t == 'o')
        return encode_object(e, idx, depth, 0, 1);
    lua_pushnil(L);
    if (!lua_next(L, idx))
        return put(e, "{}", 2);
    if (lua_type(L, -2) == LUA_TSTRING)
        return encode_object(e, idx, depth, 1, 0);
    lua_pop(L, 2);
    return encode_plain_array(e, idx, depth);
}

/* ---- values ---- */

static int cannot(enc *e, int idx)
{
    char msg[64];
    snprintf(msg, sizeof msg, "cannot encode %s", luaL_typename(e->L, idx));
    return fail(e, msg);
}

/* idx is absolute; depth counts the containers around this value. */
static int encode_value(enc *e, int idx, int depth)
{
    lua_State *L = e->L;
    int type = lua_type(L, idx);
    if (e->alias != 0 && type > LUA_TBOOLEAN && lua_rawequal(L, idx, e->alias))
        return put(e, "null", 4);
    switch (type) {
    case LUA_TNIL: return put(e, "null", 4);
    case LUA_TBOOLEAN: return lua_toboolean(L, idx) ? put(e, "true", 4) : put(e, "false", 5);
    case LUA_TNUMBER: return encode_number(e, idx);
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, idx, &n);
        return mcp_json_encode_string(e->b, s, n) == 0 ? 0 : oom(e);
    }
    case LUA_TTABLE: return encode_table(e, idx, depth + 1);
    case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, idx) == NULL)
            return put(e, "null", 4);
        return cannot(e, idx);
    default: return cannot(e, idx);
    }
}

int mcp_json_encode(lua_State *L, int idx, mcp_buf *b, char *err, size_t errlen)
{
    enc e;
    int top = lua_gettop(L), rc;
    idx = mcp_absindex(L, idx);
    if (!lua_checkstack(L, 8)) {
        if (errlen > 0)
            snprintf(err, errlen, "%s", "Lua stack exhausted");
        return -1;
    }
    e.L = L;
    e.b = b;
    e.err = err;
    e.errlen = errlen;
    e.dp = NULL;
    lua_getfield(L, LUA_REGISTRYINDEX, MCP_JSON_NULL_ALIAS);
    e.alias = lua_isnil(L, -1) ? 0 : lua_gettop(L);
    rc = encode_value(&e, idx, 0);
    lua_settop(L, top);
    return rc;
}

mcp_buf *mcp_json_pushbuf(lua_State *L)
{
    mcp_buf *b = (mcp_buf *)mcp_newuserdata(L, sizeof *b);
    mcp_buf_init(b);
    luaL_getmetatable(L, BUF_MT);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        mcp_json_init(L);
        luaL_getmetatable(L, BUF_MT);
    }
    lua_setmetatable(L, -2);
    return b;
}

int mcp_json_lua_encode(lua_State *L)
{
    char err[128];
    mcp_buf *b;
    lua_settop(L, 1);
    b = mcp_json_pushbuf(L);
    if (mcp_json_encode(L, 1, b, err, sizeof err) != 0) {
        mcp_buf_free(b);
        return luaL_error(L, "%s", err);
    }
    lua_pushlstring(L, mcp_buf_head(b), b->len);
    mcp_buf_free(b);
    return 1;
}
