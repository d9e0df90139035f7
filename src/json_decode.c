/* JSON decoder: strict RFC 8259 text -> Lua values, reading only [p, end). */
#include "json_internal.h"

#include <float.h>
#include <limits.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_hold.h"

typedef struct dec {
    lua_State *L;
    const char *base, *end;
    char *err;
    size_t errlen;
    int array_mt;     /* stack index of the array metatable (nil until the first array) */
    int have_mt;      /* array_mt holds it */
    int scratch_slot; /* stack index owning the scratch buffer for escaped strings (nil until needed) */
    mcp_buf *scratch;
    /* the C locale's decimal point, as strtod expects it (NULL: not looked up yet) */
    const char *dp;
    /* set while decoding the value of a "properties" key: that object records its key order */
    int keep_order;
    int order_all; /* every object records its key order (mcp_json_decode_value_ordered) */
    /* the input is writable: escaped strings are decoded over their source (decode_inplace) */
    int inplace;
    mcp_buf *undo; /* with inplace: restorable strings only, the long ones logged here */
} dec;

static const char *decode_value(dec *d, const char *p, int depth);

static const char *fail(dec *d, const char *at, const char *msg)
{
    if (d->errlen > 0)
        snprintf(d->err, d->errlen, "JSON parse error at byte %lu: %s",
                 (unsigned long)(at - d->base), msg);
    return NULL;
}

/* "unexpected ..." naming the byte at p, or the end of input. */
static const char *unexpected(dec *d, const char *p)
{
    char msg[48];
    unsigned char c;
    if (p >= d->end)
        return fail(d, p, "unexpected end of input");
    c = (unsigned char)*p;
    if (c > 0x20 && c < 0x7f)
        snprintf(msg, sizeof msg, "unexpected character '%c'", c);
    else
        snprintf(msg, sizeof msg, "unexpected byte 0x%02x", c);
    return fail(d, p, msg);
}

const char *mcp_json_skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

/* The common case inline: no whitespace at all. */
static inline const char *skip_ws(const char *p, const char *end)
{
    if (p < end && (unsigned char)*p > ' ')
        return p;
    return mcp_json_skip_ws(p, end);
}

/* ---- strings ---- */

#define ONES ((uint64_t)0x0101010101010101ULL)
#define HIGHS ((uint64_t)0x8080808080808080ULL)
/* Nonzero when some byte of x is zero / below n (n <= 128): the usual SWAR tests. */
/* clang-format off */
#define HAS_ZERO(x) (((x) - ONES) & ~(x) & HIGHS)
#define HAS_LESS(x, n) (((x) - ONES * (n)) & ~(x) & HIGHS)
/* clang-format on */

/* First byte in [p, end) that ends a plain run of string bytes: '"', '\\' or a control byte. */
static const char *scan_plain(const char *p, const char *end)
{
    /* Eight bytes at a time; the byte loop below pins down the exact position. */
    while (end - p >= 8) {
        uint64_t v, hit;
        memcpy(&v, p, 8);
        hit = HAS_ZERO(v ^ (ONES * '"')) | HAS_ZERO(v ^ (ONES * '\\')) | HAS_LESS(v, 0x20);
        if (hit) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            /* The lowest flagged byte of each test is exact (a borrow only flags bytes above a
             * real hit), so the lowest set bit is the first byte that ends the run. */
            return p + (__builtin_ctzll(hit) >> 3);
#else
            break;
#endif
        }
        p += 8;
    }
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\' || c < 0x20)
            break;
        p++;
    }
    return p;
}

static int hex4(const char *p)
{
    int i, v = 0;
    for (i = 0; i < 4; i++) {
        int c = (unsigned char)p[i], h;
        if (c >= '0' && c <= '9')
            h = c - '0';
        else if (c >= 'a' && c <= 'f')
            h = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            h = c - 'A' + 10;
        else
            return -1;
        v = v << 4 | h;
    }
    return v;
}

/* Writes cp as UTF-8 (surrogates too, in their 3-byte form); returns the byte count. */
static size_t put_utf8(char *o, unsigned long cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The byte a two-byte escape \X stands for, by X: 0 for no escape, ESC_U for \u (its code point
 * follows). One table for both decoders (decode_escaped, decode_inplace, mcp_json_dec_escape). */
#define ESC_U 1
static const char ESCAPES[256] = {
    ['"'] = '"',  ['\\'] = '\\', ['/'] = '/',  ['b'] = '\b',  ['f'] = '\f',
    ['n'] = '\n', ['r'] = '\r',  ['t'] = '\t', ['u'] = ESC_U,
};

/* p is just past "\u". Writes the code point (joining a surrogate pair) at *o and returns the
 * next byte, or NULL when four hex digits do not follow. Every escape decodes to fewer bytes than
 * its source text, so o never outruns the scratch. */
static const char *unicode_escape(const char *p, const char *end, char **o)
{
    int hi, lo;
    if (end - p < 4 || (hi = hex4(p)) < 0)
        return NULL;
    p += 4;
    if (hi >= 0xd800 && hi <= 0xdbff && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
        (lo = hex4(p + 2)) >= 0xdc00 && lo <= 0xdfff) {
        *o += put_utf8(*o, 0x10000 + (((unsigned long)hi - 0xd800) << 10) +
                               ((unsigned long)lo - 0xdc00));
        return p + 6;
    }
    /* A lone surrogate is kept as its 3-byte form (as WTF-8 does) rather than rejected. */
    *o += put_utf8(*o, (unsigned long)hi);
    return p;
}

/* The escape at p (a backslash) written at *o (advanced); the byte after it, or NULL when it is
 * no valid escape (escape_failure says why). */
static inline const char *decode_escape(const char *p, const char *end, char **o)
{
    char c;
    if (end - p < 2)
        return NULL;
    c = ESCAPES[(unsigned char)p[1]];
    if (c > ESC_U) {
        *(*o)++ = c;
        return p + 2;
    }
    return c == ESC_U ? unicode_escape(p + 2, end, o) : NULL;
}

/* Finds the closing quote of a string, p being inside it; checks only what ends or breaks a string. */
static const char *string_end(dec *d, const char *p)
{
    for (;;) {
        p = scan_plain(p, d->end);
        if (p >= d->end)
            return fail(d, p, "unterminated string");
        if (*p == '"')
            return p;
        if (*p != '\\')
            return fail(d, p, "control character in string");
        if (d->end - p < 2)
            return fail(d, p + 1, "unterminated string");
        p += 2;
    }
}

/* Room for n bytes in the per-call scratch, owned by a userdata at a reserved stack slot. NULL when out of memory. */
static char *scratch(dec *d, size_t n)
{
    mcp_buf *b = d->scratch;
    if (b == NULL) {
        b = d->scratch = mcp_json_pushbuf(d->L);
        lua_replace(d->L, d->scratch_slot);
    }
    if (n > b->cap)
        mcp_buf_free(b); /* grow without copying the previous string */
    mcp_buf_reset(b);
    return mcp_buf_reserve(b, n) == 0 ? mcp_buf_head(b) : NULL;
}

/* A bad escape at esc (a backslash, whose bytes from there on are still the source): what the
 * two-pass decoder reported first wins, i.e. an unterminated string or a control character from
 * the first backslash on (string_end) before the bad escape. Everything between the first
 * backslash and esc was read as valid escapes and plain runs, which string_end walks in the same
 * steps without stopping, so scanning from esc gives what scanning from the first one gave.
 * Returns NULL with d's message set (msg NULL: the message already set stands). */
static const char *escaped_failure(dec *d, const char *esc, const char *at, const char *msg)
{
    if (string_end(d, esc) == NULL)
        return NULL;
    return msg != NULL ? fail(d, at, msg) : NULL;
}

/* decode_escape refused the escape at esc: why. */
static const char *escape_failure(dec *d, const char *esc)
{
    if (d->end - esc < 2)
        return escaped_failure(d, esc, esc + 1, "unterminated string");
    return escaped_failure(d, esc, esc,
                           ESCAPES[(unsigned char)esc[1]] == ESC_U ? "invalid \\u escape"
                                                                   : "invalid escape");
}

/* A plain run ended at p inside an escaped string without its closing quote. */
static const char *run_failure(dec *d, const char *p)
{
    return fail(d, p, p >= d->end ? "unterminated string" : "control character in string");
}

/* Strings at least this long may have the collector run first (push_string). */
#define GC_AHEAD_MIN ((size_t)4 * 1024 * 1024)

/* Push s[0..n). Before a large string (n >= GC_AHEAD_MIN) in a Lua heap of at most twice its
 * size, a full collection runs first: the garbage of earlier large values (the previous result,
 * which nobody holds any more) is freed before this string takes its memory, not after it, so
 * the peak holds one such string, not two or three (the collector's pause lets the heap double
 * before it looks). Its cost follows the heap, which is then small next to the string being
 * made. Not when the host stopped the collector, nor on PUC 5.1, which cannot tell. */
static void push_string(dec *d, const char *s, size_t n)
{
    lua_State *L = d->L;
    if (n >= GC_AHEAD_MIN && mcp_gc_running(L) &&
        (size_t)lua_gc(L, LUA_GCCOUNT, 0) <= (n >> 10) * 2)
        lua_gc(L, LUA_GCCOLLECT, 0);
    lua_pushlstring(L, s, n);
}

/* The two-byte escape letter of a decoded byte that always comes from one (0: none). */
static char escape_letter(char c)
{
    switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case '\b': return 'b';
    case '\f': return 'f';
    case '\n': return 'n';
    case '\r': return 'r';
    case '\t': return 't';
    default: return 0;
    }
}

/* s[0..dlen) is the decoded text of a string whose source s[0..slen) had only two-byte escapes
 * other than \/: write the source back, from the end (it is the longer one). Stops where the two
 * meet: from there on (the plain start) nothing was moved. */
static void reescape(char *s, size_t dlen, size_t slen)
{
    size_t i = dlen, j = slen;
    while (i < j) {
        char c = s[--i], e = escape_letter(c);
        if (e != 0) {
            s[--j] = e;
            s[--j] = '\\';
        } else {
            s[--j] = c;
        }
    }
}

/* Escaped strings decoded in place with an undo log: those with a source this long are logged,
 * shorter ones are written back at once (their copy is cheap; the log stays small). */
#ifndef MCP_JSON_UNDO_LOG_MIN
#define MCP_JSON_UNDO_LOG_MIN 4096 /* the json fuzz target lowers it, to reach the log */
#endif
#define UNDO_LOG_MIN MCP_JSON_UNDO_LOG_MIN

typedef struct undo_rec {
    size_t off, dlen, slen; /* from the decode's base */
} undo_rec;

void mcp_json_undo_apply(mcp_buf *undo, char *base)
{
    size_t i, n = undo->len / sizeof(undo_rec);
    for (i = 0; i < n; i++) {
        undo_rec r;
        memcpy(&r, mcp_buf_head(undo) + i * sizeof r, sizeof r);
        reescape(base + r.off, r.dlen, r.slen);
    }
    mcp_buf_reset(undo);
}

/* [start, p) is plain, p is at the first backslash. Decodes the rest in one pass into the
 * scratch, sized for the rest of the input (the decoded text is never longer than its source,
 * and untouched pages of a large scratch cost nothing), and pushes the string. */
static const char *decode_escaped(dec *d, const char *start, const char *p)
{
    char *out, *o;
    out = o = scratch(d, (size_t)(d->end - start));
    if (out == NULL)
        return fail(d, start - 1, "out of memory");
    memcpy(o, start, (size_t)(p - start));
    o += p - start;
    for (;;) {
        const char *run, *esc = p; /* a backslash */
        if ((p = decode_escape(esc, d->end, &o)) == NULL)
            return escape_failure(d, esc);
        run = p;
        p = scan_plain(p, d->end);
        memcpy(o, run, (size_t)(p - run));
        o += p - run;
        if (p < d->end && *p == '"')
            break;
        if (p >= d->end || *p != '\\')
            return run_failure(d, p);
    }
    push_string(d, out, (size_t)(o - out));
    return p + 1;
}

/* decode_escaped over the source itself: the decoded text is written from the first backslash
 * on, never past the byte being read (an escape decodes to fewer bytes than it has; a \u escape
 * reads its digits before writing), so no scratch. With an undo log (d->undo), a \/ or \u escape
 * sends the string back to decode_escaped, its start written back first; so does a failure. */
static const char *decode_inplace(dec *d, const char *start, const char *p)
{
    char *s = (char *)start; /* the caller lent the input for writing */
    char *o = (char *)p;
    const char *first = p, *esc;
    int logged = d->undo != NULL;
    for (;;) {
        const char *run;
        char c;
        esc = p; /* a backslash; o <= esc, so the source from esc on is intact */
        if (d->end - p < 2)
            goto bad_escape;
        c = ESCAPES[(unsigned char)p[1]];
        if (c > ESC_U && (c != '/' || !logged)) {
            *o++ = c; /* the common case, as decode_escape */
            p += 2;
        } else if (c == 0) {
            goto bad_escape;
        } else if (logged) {
            goto not_restorable; /* \/ or \u: reescape could not write them back */
        } else if ((p = unicode_escape(p + 2, d->end, &o)) == NULL) {
            return escape_failure(d, esc);
        }
        run = p;
        p = scan_plain(p, d->end);
        memmove(o, run, (size_t)(p - run));
        o += p - run;
        if (p < d->end && *p == '"')
            break;
        if (p >= d->end || *p != '\\') {
            if (logged)
                reescape(s, (size_t)(o - s), (size_t)(p - start));
            return run_failure(d, p);
        }
    }
    push_string(d, s, (size_t)(o - s));
    if (logged) {
        undo_rec r;
        r.off = (size_t)(start - d->base);
        r.dlen = (size_t)(o - s);
        r.slen = (size_t)(p - start);
        if (r.slen < UNDO_LOG_MIN || mcp_buf_append(d->undo, &r, sizeof r) != 0)
            reescape(s, r.dlen, r.slen);
    }
    return p + 1;
bad_escape:
    if (logged)
        reescape(s, (size_t)(o - s), (size_t)(esc - start));
    return escape_failure(d, esc);
not_restorable:
    reescape(s, (size_t)(o - s), (size_t)(esc - start));
    return decode_escaped(d, start, first);
}

/* p is at the opening quote. */
static const char *decode_string(dec *d, const char *p)
{
    const char *start = p + 1, *q = scan_plain(start, d->end);
    if (q < d->end && *q == '"') {
        /* Fast path: no escapes, push straight from the input. */
        push_string(d, start, (size_t)(q - start));
        return q + 1;
    }
    if (q >= d->end)
        return fail(d, q, "unterminated string");
    if (*q != '\\')
        return fail(d, q, "control character in string");
    return d->inplace ? decode_inplace(d, start, q) : decode_escaped(d, start, q);
}

/* ---- numbers ---- */

/* Exact powers of ten for the fast path (all representable in a double). */
static const double pow10_table[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* strtod on a copy of [s, s+n) with '.' turned into the locale's decimal point (the input has no NUL). */
static int slow_double(const char *s, size_t n, const char *dp, double *out)
{
    char stackbuf[80], *buf = stackbuf, *o;
    size_t i, dl = strlen(dp);
    if (n + dl + 1 > sizeof stackbuf && (buf = (char *)malloc(n + dl + 1)) == NULL)
        return -1;
    for (i = 0, o = buf; i < n; i++) {
        if (s[i] == '.') {
            memcpy(o, dp, dl);
            o += dl;
        } else {
            *o++ = s[i];
        }
    }
    *o = '\0';
    *out = strtod(buf, NULL);
    if (buf != stackbuf)
        free(buf);
    return 0;
}

/* Grammar: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
static const char *decode_number(dec *d, const char *p)
{
    const char *start = p, *end = d->end;
    uint64_t mant = 0;
    int neg = 0, ndigits = 0, frac_digits = 0, is_int = 1;
    long exp10 = 0;
    double v;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    if (p >= end || *p < '0' || *p > '9')
        return fail(d, p, "invalid number");
    if (*p == '0') {
        p++;
    } else {
        for (; p < end && *p >= '0' && *p <= '9'; p++, ndigits++)
            if (ndigits < 19)
                mant = mant * 10 + (uint64_t)(*p - '0');
    }
    if (p < end && *p == '.') {
        is_int = 0;
        if (++p >= end || *p < '0' || *p > '9')
            return fail(d, p, "invalid number");
        for (; p < end && *p >= '0' && *p <= '9'; p++) {
            if (ndigits == 0 && *p == '0') {
                frac_digits++; /* leading zeros of 0.000x don't count as significant */
                continue;
            }
            if (ndigits < 19) {
                mant = mant * 10 + (uint64_t)(*p - '0');
                frac_digits++;
            }
            ndigits++;
        }
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        int eneg = 0;
        is_int = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            eneg = *p++ == '-';
        if (p >= end || *p < '0' || *p > '9')
            return fail(d, p, "invalid number");
        for (; p < end && *p >= '0' && *p <= '9'; p++)
            if (exp10 < 100000)
                exp10 = exp10 * 10 + (*p - '0');
        if (eneg)
            exp10 = -exp10;
    }
    if (is_int && ndigits <= 19) {
#if MCP_HAS_INTEGERS
        /* Fits int64 (the negative side has one more): an exact Lua integer. "-0" stays a float. */
        if (mant <= (uint64_t)INT64_MAX + (uint64_t)neg && !(neg && mant == 0)) {
            lua_pushinteger(d->L, neg ? -(lua_Integer)(mant - 1) - 1 : (lua_Integer)mant);
            return p;
        }
#endif
        /* uint64 -> double is correctly rounded, so this is exact up to 2^53 and nearest beyond. */
        v = (double)mant;
        lua_pushnumber(d->L, (lua_Number)(neg ? -v : v));
        return p;
    }
#if FLT_EVAL_METHOD == 0
    /* Clinger's fast path: an exact mantissa times/over an exact power of ten rounds once, correctly. */
    if (ndigits <= 19 && mant <= ((uint64_t)1 << 53)) {
        long e10 = exp10 - frac_digits;
        if (e10 >= -22 && e10 <= 22) {
            v = e10 < 0 ? (double)mant / pow10_table[-e10] : (double)mant * pow10_table[e10];
            lua_pushnumber(d->L, (lua_Number)(neg ? -v : v));
            return p;
        }
    }
#endif
    if (d->dp == NULL) /* looked up once, and only when a number needs strtod */
        d->dp = localeconv()->decimal_point;
    if (slow_double(start, (size_t)(p - start), d->dp, &v) != 0)
        return fail(d, start, "out of memory");
    lua_pushnumber(d->L, (lua_Number)v);
    return p;
}

/* ---- containers ---- */

/* Members of a container in the first BATCH_DEPTH levels wait on the Lua stack (up to BATCH of
 * them) until the container ends, so that its table is created at its final size instead of
 * growing member by member; a longer container gets its table at the BATCH-th member, sized for
 * twice that, and takes the rest directly. Deeper levels (and levels where the stack has no room
 * to spare) create the table first, as a bound on the stack: at most BATCH_DEPTH levels hold
 * 2 * BATCH slots each. */
#define BATCH MCP_JSON_BATCH
#define BATCH_DEPTH MCP_JSON_BATCH_DEPTH

/* The array metatable, looked up at the first array of a decode. */
static void push_array_mt(dec *d)
{
    lua_State *L = d->L;
    if (!d->have_mt) {
        lua_getfield(L, LUA_REGISTRYINDEX, MCP_JSON_ARRAY_MT);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            mcp_json_init(L);
            lua_getfield(L, LUA_REGISTRYINDEX, MCP_JSON_ARRAY_MT);
        }
        lua_replace(L, d->array_mt);
        d->have_mt = 1;
    }
    lua_pushvalue(L, d->array_mt);
}

/* The table on top made the array of the n elements at base+1..base+n, in their place. */
static void fill_array(dec *d, int base, int n)
{
    lua_State *L = d->L;
    int i;
    push_array_mt(d);
    lua_setmetatable(L, -2);
    for (i = 1; i <= n; i++) {
        lua_pushvalue(L, base + i);
        lua_rawseti(L, -2, i);
    }
    if (n > 0) {
        lua_replace(L, base + 1);
        lua_settop(L, base + 1);
    }
}

/* The array table for the n elements at base+1..base+n, sized for hint (>= n), in their place. */
static void make_array(dec *d, int base, int n, int hint)
{
    lua_createtable(d->L, hint, 0);
    fill_array(d, base, n);
}

static const char *decode_array(dec *d, const char *p, int depth)
{
    lua_State *L = d->L;
    int n = 0, base, made;
    if (depth > MCP_JSON_MAX_DEPTH)
        return fail(d, p, "nesting too deep");
    luaL_checkstack(L, 4, "JSON nesting");
    base = lua_gettop(L);
    made = !(depth <= BATCH_DEPTH && lua_checkstack(L, BATCH + 4));
    if (made)
        make_array(d, base, 0, 0);
    p = skip_ws(p + 1, d->end);
    if (p < d->end && *p == ']') {
        if (!made)
            make_array(d, base, 0, 0);
        return p + 1;
    }
    for (;;) {
        if (!made && n == BATCH) {
            make_array(d, base, n, 2 * BATCH);
            made = 1;
        }
        if ((p = decode_value(d, p, depth)) == NULL)
            return NULL;
        if (n == INT_MAX)
            return fail(d, p, "array too long");
        ++n;
        if (made)
            lua_rawseti(L, -2, n);
        p = skip_ws(p, d->end);
        if (p < d->end && *p == ',') {
            p++;
            continue;
        }
        if (p < d->end && *p == ']') {
            if (!made)
                make_array(d, base, n, n);
            return p + 1;
        }
        return p < d->end ? fail(d, p, "expected ',' or ']'") : unexpected(d, p);
    }
}

/* The object table for the n key/value pairs at base+1..base+2n, sized for hint (>= n), in their
 * place; pairs go in in order, so of duplicate keys the last one wins. */
static void make_object(lua_State *L, int base, int n, int hint)
{
    int i;
    lua_createtable(L, 0, hint);
    for (i = 0; i < n; i++) {
        lua_pushvalue(L, base + 2 * i + 1);
        lua_pushvalue(L, base + 2 * i + 2);
        lua_rawset(L, -3);
    }
    if (n > 0) {
        lua_replace(L, base + 1);
        lua_settop(L, base + 1);
    }
}

/* The object that is the value of a "properties" key (a JSON Schema's properties, whose order a
 * form follows) gets its own metatable {__jsontype = "object", __keyorder = {key, ...}}: the keys
 * in the order the peer wrote them, each once (a duplicate key: its last value, at the place it
 * first appeared, as JSON.parse does). Every other object is a plain table. */
static int is_properties_key(lua_State *L)
{
    size_t n;
    const char *k = lua_tolstring(L, -1, &n);
    return n == 10 && memcmp(k, "properties", 10) == 0;
}

static void set_key_order(lua_State *L)
{
    /* stack: object, keys */
    lua_createtable(L, 0, 2);
    lua_pushliteral(L, "object");
    lua_setfield(L, -2, "__jsontype");
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, "__keyorder");
    lua_setmetatable(L, -3);
    lua_pop(L, 1);
}

static const char *decode_object(dec *d, const char *p, int depth)
{
    lua_State *L = d->L;
    int order = d->keep_order || d->order_all, n = 0, base, made;
    d->keep_order = 0;
    if (depth > MCP_JSON_MAX_DEPTH)
        return fail(d, p, "nesting too deep");
    luaL_checkstack(L, 6, "JSON nesting");
    base = lua_gettop(L);
    /* a "properties" object keeps its key order above the table: no batching for it */
    made = order || !(depth <= BATCH_DEPTH && lua_checkstack(L, 2 * BATCH + 6));
    if (made)
        lua_createtable(L, 0, 0);
    p = skip_ws(p + 1, d->end);
    if (p < d->end && *p == '}') {
        if (!made)
            lua_createtable(L, 0, 0);
        return p + 1;
    }
    if (order)
        lua_createtable(L, 4, 0); /* the keys, above the object until the end */
    for (;;) {
        if (!made && n == BATCH) {
            make_object(L, base, n, 2 * BATCH);
            made = 1;
        }
        if (p >= d->end)
            return unexpected(d, p);
        if (*p != '"')
            return fail(d, p, "expected string key");
        if ((p = decode_string(d, p)) == NULL)
            return NULL;
        if (order) { /* a key listed once, where it first appeared (as JSON.parse orders it) */
            lua_pushvalue(L, -1);
            lua_rawget(L, -4);
            if (lua_isnil(L, -1)) {
                lua_pushvalue(L, -2);
                lua_rawseti(L, -4, ++n);
            }
            lua_pop(L, 1);
        }
        p = skip_ws(p, d->end);
        if (p >= d->end)
            return unexpected(d, p);
        if (*p != ':')
            return fail(d, p, "expected ':'");
        d->keep_order = is_properties_key(L);
        p = decode_value(d, p + 1, depth);
        d->keep_order = 0;
        if (p == NULL)
            return NULL;
        if (made)
            lua_rawset(L, order ? -4 : -3); /* duplicate keys: the last one wins */
        else
            n++;
        p = skip_ws(p, d->end);
        if (p < d->end && *p == ',') {
            p = skip_ws(p + 1, d->end);
            continue;
        }
        if (p < d->end && *p == '}') {
            if (order)
                set_key_order(L);
            else if (!made)
                make_object(L, base, n, n);
            return p + 1;
        }
        return p < d->end ? fail(d, p, "expected ',' or '}'") : unexpected(d, p);
    }
}

/* ---- values ---- */

static const char *literal(dec *d, const char *p, const char *word, size_t n)
{
    if ((size_t)(d->end - p) < n || memcmp(p, word, n) != 0)
        return unexpected(d, p);
    return p + n;
}

/* depth counts the containers around the value at p. */
static const char *decode_value(dec *d, const char *p, int depth)
{
    lua_State *L = d->L;
    p = skip_ws(p, d->end);
    if (p >= d->end)
        return unexpected(d, p);
    switch (*p) {
    case '"': return decode_string(d, p);
    case '{': return decode_object(d, p, depth + 1);
    case '[': return decode_array(d, p, depth + 1);
    case 't':
        if ((p = literal(d, p, "true", 4)) != NULL)
            lua_pushboolean(L, 1);
        return p;
    case 'f':
        if ((p = literal(d, p, "false", 5)) != NULL)
            lua_pushboolean(L, 0);
        return p;
    case 'n':
        if ((p = literal(d, p, "null", 4)) != NULL)
            lua_pushlightuserdata(L, NULL);
        return p;
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9': return decode_number(d, p);
    default: return unexpected(d, p);
    }
}

static const char *decode_top(lua_State *L, const char *base, const char *p, const char *end,
                              int depth, int inplace, mcp_buf *undo, int order_all, char *err,
                              size_t errlen)
{
    dec d;
    int top = lua_gettop(L);
    const char *q;
    luaL_checkstack(L, 4, "JSON decode");
    lua_pushnil(L); /* the array metatable's slot */
    d.have_mt = 0;
    d.L = L;
    d.base = base;
    d.end = end;
    d.err = err;
    d.errlen = errlen;
    d.array_mt = top + 1;
    lua_pushnil(L);
    d.scratch_slot = top + 2;
    d.scratch = NULL;
    d.dp = NULL;
    d.keep_order = 0;
    d.order_all = order_all;
    d.inplace = inplace;
    d.undo = undo;
    q = decode_value(&d, p, depth);
    if (d.scratch != NULL)
        mcp_buf_free(d.scratch); /* now rather than at the next GC cycle */
    if (q == NULL) {
        lua_settop(L, top);
        return NULL;
    }
    lua_replace(L, top + 1); /* the value over the metatable; then drop the scratch slot */
    lua_settop(L, top + 1);
    return q;
}

const char *mcp_json_decode_value(lua_State *L, const char *base, const char *p, const char *end,
                                  int depth, char *err, size_t errlen)
{
    return decode_top(L, base, p, end, depth, 0, NULL, 0, err, errlen);
}

const char *mcp_json_decode_value_inplace(lua_State *L, const char *base, char *p, const char *end,
                                          int depth, mcp_buf *undo, char *err, size_t errlen)
{
    return decode_top(L, base, p, end, depth, 1, undo, 0, err, errlen);
}

const char *mcp_json_decode_value_ordered(lua_State *L, const char *base, char *p, const char *end,
                                          int depth, int inplace, mcp_buf *undo, char *err,
                                          size_t errlen)
{
    return decode_top(L, base, p, end, depth, inplace, undo, 1, err, errlen);
}

int mcp_json_lua_decode(lua_State *L)
{
    char err[160];
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n), *q;
    int order_all = lua_toboolean(L, 2);
    lua_settop(L, 1);
    q = decode_top(L, s, s, s + n, 0, 0, NULL, order_all, err, sizeof err);
    if (q != NULL) {
        q = mcp_json_skip_ws(q, s + n);
        if (q == s + n)
            return 1;
        lua_pop(L, 1);
        snprintf(err, sizeof err, "JSON parse error at byte %lu: trailing garbage",
                 (unsigned long)(q - s));
    }
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
}

/* ---- the steps of the resumable decoder (json_resume.c) ---- */

/* It takes the same steps as decode_array and decode_object, one container at a time, and
 * decodes what lies inside with decode_value: the same calls in the same order, so the same
 * tables, the same errors at the same bytes. */

mcp_json_dec *mcp_json_dec_new(const char *base, const char *end, char *err, size_t errlen)
{
    dec *d = calloc(1, sizeof *d);
    if (d == NULL)
        return NULL;
    d->base = base;
    d->end = end;
    d->err = err;
    d->errlen = errlen;
    return d;
}

void mcp_json_dec_bind(mcp_json_dec *d, lua_State *L, int slots)
{
    d->L = L;
    d->array_mt = slots;
    d->scratch_slot = slots + 1;
}

void mcp_json_dec_free(mcp_json_dec *d, int scratch_too)
{
    if (d != NULL && scratch_too && d->scratch != NULL)
        mcp_buf_free(d->scratch); /* now rather than at the next GC cycle */
    free(d);
}

const char *mcp_json_dec_value(mcp_json_dec *d, const char *p, int depth)
{
    return decode_value(d, p, depth);
}

const char *mcp_json_dec_string(mcp_json_dec *d, const char *p) { return decode_string(d, p); }

const char *mcp_json_dec_fail(mcp_json_dec *d, const char *at, const char *msg)
{
    return fail(d, at, msg);
}

const char *mcp_json_dec_unexpected(mcp_json_dec *d, const char *p) { return unexpected(d, p); }

const char *mcp_json_dec_plain(const char *p, const char *end) { return scan_plain(p, end); }

const char *mcp_json_dec_escape(const char *p, const char *end, char **o)
{
    return decode_escape(p, end, o);
}

void mcp_json_dec_make_array(mcp_json_dec *d, int base, int n, int hint)
{
    make_array(d, base, n, hint);
}

void mcp_json_dec_fill_array(mcp_json_dec *d, int base, int n) { fill_array(d, base, n); }

void mcp_json_dec_make_object(lua_State *L, int base, int n, int hint)
{
    make_object(L, base, n, hint);
}

int mcp_json_dec_take_order(mcp_json_dec *d)
{
    int order = d->keep_order;
    d->keep_order = 0;
    return order;
}

void mcp_json_dec_order_next(mcp_json_dec *d, int on)
{
    d->keep_order = on ? is_properties_key(d->L) : 0;
}

void mcp_json_dec_set_key_order(lua_State *L) { set_key_order(L); }
