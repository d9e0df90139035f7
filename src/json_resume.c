/* The resumable JSON decoder (json_resume.h): decode_array and decode_object of json_decode.c
 * unrolled into a stack of frames, one step at a time, around the one-shot decoder's own steps. */
#include "json_resume.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigstr.h"
#include "compat.h"
#include "gc_hold.h"
#include "json_internal.h"
#include "loop.h"

typedef struct frame {
    int kind;  /* '[' or '{' */
    int depth; /* of the container */
    int base;  /* its first slot is base + 1 (relative to the values' base) */
    int n, made, order;
    size_t start; /* an array: the offset of its first member */
} frame;

enum { S_VALUE, S_AFTER, S_ELEM, S_KEY, S_STRING, S_UNESCAPE, S_MAKE, S_MADE, S_DONE, S_FAILED };

typedef struct mcp_json_resume {
    char *own; /* the block holding the input, freed with it */
    char *buf; /* the input */
    size_t len, pos, limit;
    int state, depth; /* depth: of the top-level value */
    size_t str, scan; /* S_STRING: its opening quote, and how far it is scanned */
    int escaped;      /* S_STRING: a backslash was seen */
    size_t quote;     /* S_UNESCAPE, S_MAKE: the closing quote; scan: the next byte to decode */
    char *out;        /* S_UNESCAPE: the decoded text so far (olen bytes); S_MAKE: NULL when the
                       * string had no escape (its text is the input's) */
    size_t olen;
    size_t omapped; /* out is mapped (mcp_bigstr_map), this many bytes of it; 0: malloc'd */
    int nvalues;    /* values kept in the uservalue between runs */
    int running;    /* inside a run (still set: that run raised) */
    mcp_json_dec *d;
    int nframes, cap;
    frame *frames; /* the open containers (malloc'd, grown as the message nests: frames_room) */
    char err[160];
    mcp_bigstr big; /* S_MAKE: the Lua string being prepared (bigstr.h) */
} mcp_json_resume;

/* One run: the stack from vb + 1 holds the decoder's two slots and then the values. */
typedef struct run {
    mcp_json_resume *r;
    lua_State *L;
    int vb;
    uint64_t deadline;
    unsigned units, done;
    int yield; /* end this run before the next unit (it starts the next run) */
} run;

static void free_out(mcp_json_resume *r)
{
    if (r->omapped > 0)
        mcp_bigstr_unmap(r->out, &r->omapped, (size_t)-1);
    else
        free(r->out);
    r->out = NULL;
    r->omapped = 0;
}

static int resume_gc(lua_State *L)
{
    mcp_json_resume *r = luaL_checkudata(L, 1, MCP_JSON_RESUME_MT);
    free(r->own);
    r->own = r->buf = NULL;
    free_out(r);
    mcp_bigstr_free(&r->big);
    mcp_json_dec_free(r->d, 0); /* the scratch buffer's owner frees it */
    r->d = NULL;
    free(r->frames);
    r->frames = NULL;
    r->nframes = r->cap = 0;
    return 0;
}

void mcp_json_resume_push(lua_State *L, const char *s, size_t n, int depth, size_t limit)
{
    char *copy = malloc(n ? n : 1);
    if (copy == NULL)
        luaL_error(L, "not enough memory");
    memcpy(copy, s, n);
    lua_pushcfunction(L, mcp_json_resume_pnew);
    lua_pushlightuserdata(L, copy);
    lua_pushlightuserdata(L, copy);
    lua_pushnumber(L, (lua_Number)n);
    lua_pushinteger(L, depth);
    lua_pushnumber(L, (lua_Number)limit);
    if (lua_pcall(L, 5, 1, 0) != 0) {
        free(copy);
        luaL_error(L, "%s", lua_tostring(L, -1));
    }
}

int mcp_json_resume_pnew(lua_State *L)
{
    char *block = lua_touserdata(L, 1), *s = lua_touserdata(L, 2);
    size_t n = (size_t)lua_tonumber(L, 3);
    int depth = (int)lua_tointeger(L, 4);
    mcp_json_resume *r;
    luaL_checkstack(L, 4, "JSON decode");
    r = mcp_newuserdata(L, sizeof *r);
    memset(r, 0, sizeof *r);
    r->state = S_FAILED; /* until it is set up */
    if (luaL_newmetatable(L, MCP_JSON_RESUME_MT)) {
        lua_pushcfunction(L, resume_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    lua_newtable(L); /* the values between runs */
    mcp_setuservalue(L, -2);
    r->d = mcp_json_dec_new(s, s + n, r->err, sizeof r->err);
    if (r->d == NULL)
        return luaL_error(L, "not enough memory");
    r->own = block; /* nothing raises from here on: the block is ours */
    r->buf = s;
    r->len = n;
    r->limit = lua_type(L, 5) == LUA_TNUMBER ? (size_t)lua_tonumber(L, 5) : MCP_JSON_RESUME_LIMIT;
    r->depth = depth;
    r->state = S_VALUE;
    return 1;
}

void mcp_json_resume_release(lua_State *L, int idx)
{
    mcp_json_resume *r = luaL_checkudata(L, idx, MCP_JSON_RESUME_MT);
    free(r->own);
    r->own = r->buf = NULL;
    r->len = r->pos = 0;
    mcp_bigstr_free(&r->big);
}

/* ---- one step ---- */

/* Does the value at p end within limit bytes? A guess at its cost, never at its validity: the
 * one-shot decoder decides that. */
static int fits(const char *p, const char *end, size_t limit)
{
    const char *stop = (size_t)(end - p) > limit ? p + limit : end;
    int depth = 0;
    while (p < stop) {
        char c = *p++;
        if (c == '"') {
            for (;;) {
                p = mcp_json_dec_plain(p, stop);
                if (p >= stop)
                    return 0;
                if (*p == '"')
                    break;
                p += *p == '\\' ? 2 : 1;
            }
            p++;
            if (depth == 0)
                return 1;
        } else if (c == '[' || c == '{') {
            depth++;
        } else if (c == ']' || c == '}') {
            if (--depth <= 0)
                return 1;
        }
    }
    return 0;
}

/* Room for one more open container. The frames are malloc'd and grow as a message nests: held
 * in the userdata, all MCP_JSON_MAX_DEPTH + 2 of them (16 KB) were the collector's debt at the
 * start of every large message, paid in one step (with Lua 5.4's stepmul, ~100,000 objects swept:
 * a previous large result's, 5-11 ms). 0 when out of memory. */
static int frames_room(mcp_json_resume *r)
{
    frame *f;
    int cap;
    if (r->nframes < r->cap)
        return 1;
    cap = r->cap > 0 ? r->cap * 2 : 16;
    if (cap > MCP_JSON_MAX_DEPTH + 2)
        cap = MCP_JSON_MAX_DEPTH + 2;
    if (cap <= r->nframes || (f = realloc(r->frames, (size_t)cap * sizeof *f)) == NULL)
        return 0;
    r->frames = f;
    r->cap = cap;
    return 1;
}

static frame *top_frame(mcp_json_resume *r)
{
    return r->nframes > 0 ? &r->frames[r->nframes - 1] : NULL;
}

/* decode_array's start. Returns the next state. */
static int open_array(run *u, const char *p, int depth)
{
    mcp_json_resume *r = u->r;
    lua_State *L = u->L;
    int base, made;
    if (depth > MCP_JSON_MAX_DEPTH)
        return mcp_json_dec_fail(r->d, p, "nesting too deep"), S_FAILED;
    if (!frames_room(r))
        return mcp_json_dec_fail(r->d, p, "not enough memory"), S_FAILED;
    luaL_checkstack(L, 4, "JSON nesting");
    base = lua_gettop(L);
    made = !(depth <= MCP_JSON_BATCH_DEPTH && lua_checkstack(L, MCP_JSON_BATCH + 4));
    if (made)
        mcp_json_dec_make_array(r->d, base, 0, 0);
    p = mcp_json_skip_ws(p + 1, r->buf + r->len);
    r->pos = (size_t)(p - r->buf);
    if (p < r->buf + r->len && *p == ']') {
        if (!made)
            mcp_json_dec_make_array(r->d, base, 0, 0);
        r->pos++;
        return S_AFTER;
    }
    r->frames[r->nframes].kind = '[';
    r->frames[r->nframes].depth = depth;
    r->frames[r->nframes].base = base - u->vb;
    r->frames[r->nframes].n = 0;
    r->frames[r->nframes].made = made;
    r->frames[r->nframes].start = r->pos;
    r->frames[r->nframes++].order = 0;
    return S_ELEM;
}

/* decode_object's start. */
static int open_object(run *u, const char *p, int depth)
{
    mcp_json_resume *r = u->r;
    lua_State *L = u->L;
    int order = mcp_json_dec_take_order(r->d), base, made;
    if (depth > MCP_JSON_MAX_DEPTH)
        return mcp_json_dec_fail(r->d, p, "nesting too deep"), S_FAILED;
    if (!frames_room(r))
        return mcp_json_dec_fail(r->d, p, "not enough memory"), S_FAILED;
    luaL_checkstack(L, 6, "JSON nesting");
    base = lua_gettop(L);
    made = order || !(depth <= MCP_JSON_BATCH_DEPTH && lua_checkstack(L, 2 * MCP_JSON_BATCH + 6));
    if (made)
        lua_createtable(L, 0, 0);
    p = mcp_json_skip_ws(p + 1, r->buf + r->len);
    r->pos = (size_t)(p - r->buf);
    if (p < r->buf + r->len && *p == '}') {
        if (!made)
            lua_createtable(L, 0, 0);
        r->pos++;
        return S_AFTER;
    }
    if (order)
        lua_createtable(L, 4, 0); /* the keys, above the object until the end */
    r->frames[r->nframes].kind = '{';
    r->frames[r->nframes].depth = depth;
    r->frames[r->nframes].base = base - u->vb;
    r->frames[r->nframes].n = 0;
    r->frames[r->nframes].made = made;
    r->frames[r->nframes++].order = order;
    return S_KEY;
}

/* decode_value: what is short is decoded in one go; a long container is opened, a long string
 * scanned in chunks. */
static int step_value(run *u)
{
    mcp_json_resume *r = u->r;
    frame *f = top_frame(r);
    const char *end = r->buf + r->len, *p = mcp_json_skip_ws(r->buf + r->pos, end);
    int depth = f != NULL ? f->depth : r->depth;
    if (p < end && (*p == '{' || *p == '[' || *p == '"') && !fits(p, end, r->limit)) {
        if (*p == '"') {
            r->str = (size_t)(p - r->buf);
            r->scan = r->str + 1;
            r->escaped = 0;
            return S_STRING;
        }
        return *p == '[' ? open_array(u, p, depth + 1) : open_object(u, p, depth + 1);
    }
    p = mcp_json_dec_value(r->d, p, depth);
    if (p == NULL)
        return S_FAILED;
    r->pos = (size_t)(p - r->buf);
    return S_AFTER;
}

static size_t chunk_size(const mcp_json_resume *r) { return r->limit > 0 ? r->limit * 16 : 1; }
/* Chunks that write to fresh memory (the decoded text, the string's block) are smaller: a first
 * write to a page costs a page fault, dear in a virtual machine (~15 us). */
static size_t write_chunk(const mcp_json_resume *r) { return r->limit > 0 ? r->limit * 4 : 1; }

/* decode_string on the string at r->str, for what the chunks cannot do: its errors. */
static int string_in_one_go(mcp_json_resume *r)
{
    const char *q = mcp_json_dec_string(r->d, r->buf + r->str);
    free_out(r);
    if (q == NULL)
        return S_FAILED;
    r->pos = (size_t)(q - r->buf);
    return S_AFTER;
}

/* A long string, a chunk at a time up to its closing quote; then made as decode_string would
 * (S_MAKE): without escapes straight from the input, with escapes decoded in chunks first
 * (S_UNESCAPE). */
static int step_string(run *u)
{
    mcp_json_resume *r = u->r;
    const char *end = r->buf + r->len, *q = r->buf + r->scan;
    size_t chunk = chunk_size(r);
    const char *stop = (size_t)(end - q) > chunk ? q + chunk : end;
    q = mcp_json_dec_plain(q, stop);
    while (q < stop && *q == '\\') {
        r->escaped = 1;
        q += 2;
        if (q < stop)
            q = mcp_json_dec_plain(q, stop);
    }
    if (q >= stop && stop < end) {
        r->scan = (size_t)(q - r->buf);
        return S_STRING;
    }
    if (q >= end || *q != '"') /* unterminated, a control byte: decode_string's errors */
        return string_in_one_go(r);
    r->quote = (size_t)(q - r->buf);
    if (!r->escaped) {
        mcp_bigstr_init(&r->big, r->quote - (r->str + 1));
        return S_MAKE;
    }
    r->scan = r->str + 1;
    r->olen = 0;
    /* the decoded text is never longer */
    if ((r->out = mcp_bigstr_map(r->quote - r->scan + 1, &r->omapped)) == NULL)
        r->out = malloc(r->quote - r->scan + 1), r->omapped = 0;
    return r->out != NULL ? S_UNESCAPE : string_in_one_go(r);
}

/* The escapes of a long string, a chunk at a time (the scan found its closing quote, with no
 * control byte before it); a bad escape: decode_string says why. */
static int step_unescape(run *u)
{
    mcp_json_resume *r = u->r;
    const char *quote = r->buf + r->quote, *p = r->buf + r->scan;
    const char *stop = (size_t)(quote - p) > write_chunk(r) ? p + write_chunk(r) : quote;
    char *o = r->out + r->olen;
    while (p < stop) {
        const char *run = p;
        p = mcp_json_dec_plain(p, stop);
        memcpy(o, run, (size_t)(p - run));
        o += p - run;
        if (p >= stop)
            break;
        if ((p = mcp_json_dec_escape(p, r->buf + r->len, &o)) == NULL || p > quote)
            return string_in_one_go(r);
    }
    r->olen = (size_t)(o - r->out);
    r->scan = (size_t)(p - r->buf);
    if (p < quote)
        return S_UNESCAPE;
    mcp_bigstr_init(&r->big, r->olen);
    return S_MAKE;
}

/* The long string's Lua string, prepared a slice at a time (bigstr.h); the last one only
 * copies its text. */
static int step_make(run *u)
{
    mcp_json_resume *r = u->r;
    if (!mcp_bigstr_prepare(u->L, &r->big, write_chunk(r)))
        return S_MAKE;
    if (u->done > 0 && (u->deadline != 0 || u->units != 0)) {
        /* a budgeted run: the copy (~1 ms for 10 MB) starts a run of its own, not after a
         * run's worth of other work (the block's last pages, say) */
        u->yield = 1;
        return S_MAKE;
    }
    mcp_bigstr_push(u->L, &r->big, r->out != NULL ? r->out : r->buf + r->str + 1);
    r->pos = r->quote + 1;
    return r->out != NULL ? S_MADE : S_AFTER;
}

/* The decoded text is given back after the string is made, a megabyte a unit (with 10 MB, one
 * free costs as much as the copy). */
static int step_made(run *u)
{
    mcp_json_resume *r = u->r;
    if (r->omapped == 0)
        free_out(r);
    else if (!mcp_bigstr_unmap(r->out, &r->omapped, chunk_size(r) * 4))
        return S_MADE;
    r->out = NULL;
    return S_AFTER;
}

/* decode_array's loop after a member: the member is on top. */
static int after_element(run *u, frame *f)
{
    mcp_json_resume *r = u->r;
    const char *end = r->buf + r->len, *p = r->buf + r->pos;
    if (f->n == INT_MAX)
        return mcp_json_dec_fail(r->d, p, "array too long"), S_FAILED;
    ++f->n;
    if (f->made)
        lua_rawseti(u->L, -2, f->n);
    p = mcp_json_skip_ws(p, end);
    r->pos = (size_t)(p - r->buf);
    if (p < end && *p == ',') {
        r->pos++;
        return S_ELEM;
    }
    if (p < end && *p == ']') {
        if (!f->made)
            mcp_json_dec_make_array(r->d, u->vb + f->base, f->n, f->n);
        r->pos++;
        r->nframes--;
        return S_AFTER;
    }
    if (p < end)
        mcp_json_dec_fail(r->d, p, "expected ',' or ']'");
    else
        mcp_json_dec_unexpected(r->d, p);
    return S_FAILED;
}

/* decode_object's loop after a member's value: the key and the value are on top. */
static int after_member(run *u, frame *f)
{
    mcp_json_resume *r = u->r;
    const char *end = r->buf + r->len, *p = r->buf + r->pos;
    mcp_json_dec_order_next(r->d, 0);
    if (f->made)
        lua_rawset(u->L, f->order ? -4 : -3); /* duplicate keys: the last one wins */
    else
        f->n++;
    p = mcp_json_skip_ws(p, end);
    if (p < end && *p == ',') {
        r->pos = (size_t)(mcp_json_skip_ws(p + 1, end) - r->buf);
        return S_KEY;
    }
    if (p < end && *p == '}') {
        if (f->order)
            mcp_json_dec_set_key_order(u->L);
        else if (!f->made)
            mcp_json_dec_make_object(u->L, u->vb + f->base, f->n, f->n);
        r->pos = (size_t)(p + 1 - r->buf);
        r->nframes--;
        return S_AFTER;
    }
    if (p < end)
        mcp_json_dec_fail(r->d, p, "expected ',' or '}'");
    else
        mcp_json_dec_unexpected(r->d, p);
    return S_FAILED;
}

/* decode_object's loop at a key. */
static int step_key(run *u, frame *f)
{
    mcp_json_resume *r = u->r;
    lua_State *L = u->L;
    const char *end = r->buf + r->len, *p = r->buf + r->pos;
    if (!f->made && f->n == MCP_JSON_BATCH) {
        mcp_json_dec_make_object(L, u->vb + f->base, f->n, 2 * MCP_JSON_BATCH);
        f->made = 1;
    }
    if (p >= end)
        return mcp_json_dec_unexpected(r->d, p), S_FAILED;
    if (*p != '"')
        return mcp_json_dec_fail(r->d, p, "expected string key"), S_FAILED;
    if ((p = mcp_json_dec_string(r->d, p)) == NULL)
        return S_FAILED;
    if (f->order) { /* a key listed once, where it first appeared */
        lua_pushvalue(L, -1);
        lua_rawget(L, -4);
        if (lua_isnil(L, -1)) {
            lua_pushvalue(L, -2);
            lua_rawseti(L, -4, ++f->n);
        }
        lua_pop(L, 1);
    }
    p = mcp_json_skip_ws(p, end);
    if (p >= end)
        return mcp_json_dec_unexpected(r->d, p), S_FAILED;
    if (*p != ':')
        return mcp_json_dec_fail(r->d, p, "expected ':'"), S_FAILED;
    mcp_json_dec_order_next(r->d, 1);
    r->pos = (size_t)(p + 1 - r->buf);
    return S_VALUE;
}

/* The size to make a long array at once its first MCP_JSON_BATCH members are decoded: as many
 * members as the rest of the input holds at their length so far, so that it is not grown member
 * by member (each growth moves it whole: ms of a slice at 64K members, and again for each
 * doubling). At most a slot (16 bytes) per remaining byte: a guess too large (short members
 * first, then something else) costs no more memory than the input's size. */
static int array_hint(const mcp_json_resume *r, const frame *f)
{
    size_t per = (r->pos - f->start) / (size_t)f->n, left = r->len - r->pos, more;
    more = left / (per > 16 ? per : 16);
    if (more > (size_t)(INT_MAX / 2))
        more = INT_MAX / 2;
    return more > 2 * MCP_JSON_BATCH ? f->n + (int)more : 2 * MCP_JSON_BATCH;
}

/* A table with room for hint (argument 1) array slots. */
static int new_array(lua_State *L)
{
    lua_createtable(L, (int)lua_tointeger(L, 1), 0);
    return 1;
}

/* Make the array of f at its hint, without the collector's debt for a large one (gc_hold.h): its
 * slots (0.6 MB at 40,000) would bring a step of that size into the slice (all the sweeping of a
 * dead result of as many objects); the slots are no garbage to pay for. The table is made in the
 * protected call, and filled after it (filling its slots allocates nothing). */
static void make_long_array(run *u, frame *f)
{
    lua_State *L = u->L;
    int hint = array_hint(u->r, f);
    luaL_checkstack(L, 3, "JSON nesting");
    lua_pushinteger(L, hint);
    mcp_gc_hold_call(L, new_array, 1, 1, hint >= 4096);
    mcp_json_dec_fill_array(u->r->d, u->vb + f->base, f->n);
    f->made = 1;
}

/* One step from the current state; returns the next. */
static int step(run *u)
{
    mcp_json_resume *r = u->r;
    frame *f = top_frame(r);
    switch (r->state) {
    case S_VALUE: return step_value(u);
    case S_STRING: return step_string(u);
    case S_UNESCAPE: return step_unescape(u);
    case S_MAKE: return step_make(u);
    case S_MADE: return step_made(u);
    case S_KEY: return step_key(u, f);
    case S_ELEM:
        if (!f->made && f->n == MCP_JSON_BATCH)
            make_long_array(u, f);
        return S_VALUE;
    case S_AFTER:
        if (f == NULL)
            return S_DONE;
        return f->kind == '[' ? after_element(u, f) : after_member(u, f);
    default: return r->state;
    }
}

/* Steps until done, failed or out of time or units. What costs (a value, a string's chunk, a key)
 * counts as a unit; the clock is read after each. */
static void steps(run *u)
{
    mcp_json_resume *r = u->r;
    for (;;) {
        int from = r->state;
        r->state = step(u);
        if (r->state == S_DONE || r->state == S_FAILED || u->yield)
            return;
        if (from == S_VALUE || from == S_STRING || from == S_UNESCAPE || from == S_MAKE ||
            from == S_MADE || from == S_KEY) {
            u->done++;
            if (u->units != 0 && u->done >= u->units)
                return;
            if (u->deadline != 0 && mcp_now_us() >= u->deadline)
                return;
        }
    }
}

/* ---- runs ---- */

/* Move the values kept in the uservalue (at vb) onto the stack above it. */
static void restore(lua_State *L, mcp_json_resume *r, int vb)
{
    int i;
    luaL_checkstack(L, r->nvalues + 8, "JSON nesting");
    for (i = 1; i <= r->nvalues; i++)
        lua_rawgeti(L, vb, i);
}

/* Keep the values above vb in the uservalue at vb (popping them), dropping those of the previous
 * run. */
static void keep(lua_State *L, mcp_json_resume *r, int vb)
{
    int i, n = lua_gettop(L) - vb;
    for (i = n; i >= 1; i--)
        lua_rawseti(L, vb, i);
    for (i = n + 1; i <= r->nvalues; i++) {
        lua_pushnil(L);
        lua_rawseti(L, vb, i);
    }
    r->nvalues = n;
}

/* The decode is over: the value (done) or nothing is left above the uservalue at vb, which
 * forgets every value it kept. */
static int finish(lua_State *L, mcp_json_resume *r, int vb)
{
    int done = r->state == S_DONE;
    if (done) {
        lua_replace(L, vb + 1); /* the value, over the first slot */
        lua_settop(L, vb + 1);
        lua_insert(L, vb);
        vb++;
    }
    lua_settop(L, vb);
    keep(L, r, vb);
    lua_pop(L, 1);
    mcp_json_dec_free(r->d, 1);
    r->d = NULL;
    return done ? MCP_RESUME_DONE : MCP_RESUME_FAILED;
}

int mcp_json_resume_run(lua_State *L, int idx, uint64_t deadline_us, unsigned units)
{
    mcp_json_resume *r = luaL_checkudata(L, idx, MCP_JSON_RESUME_MT);
    run u;
    int vb;
    if (r->running) { /* the last run raised: what it left is not a decode's state */
        r->running = 0;
        r->state = S_FAILED;
        snprintf(r->err, sizeof r->err, "JSON decoding was interrupted (out of memory?)");
    }
    if (r->state == S_DONE || r->state == S_FAILED)
        return r->state == S_DONE ? MCP_RESUME_DONE : MCP_RESUME_FAILED;
    idx = mcp_absindex(L, idx);
    mcp_getuservalue(L, idx);
    vb = lua_gettop(L);
    if (r->nvalues == 0) { /* the first run: the one-shot decoder's two slots */
        lua_pushnil(L);
        lua_pushnil(L);
    } else {
        restore(L, r, vb);
    }
    mcp_json_dec_bind(r->d, L, vb + 1);
    u.r = r, u.L = L, u.vb = vb, u.deadline = deadline_us, u.units = units, u.done = 0, u.yield = 0;
    r->running = 1;
    steps(&u);
    if (r->state == S_DONE || r->state == S_FAILED) {
        r->running = 0;
        return finish(L, r, vb);
    }
    keep(L, r, vb);
    lua_pop(L, 1);
    r->running = 0;
    return MCP_RESUME_MORE;
}

const char *mcp_json_resume_error(lua_State *L, int idx)
{
    mcp_json_resume *r = luaL_checkudata(L, idx, MCP_JSON_RESUME_MT);
    return r->state == S_FAILED ? r->err : NULL;
}

const char *mcp_json_resume_input(lua_State *L, int idx, size_t *len, size_t *end_of_value)
{
    mcp_json_resume *r = luaL_checkudata(L, idx, MCP_JSON_RESUME_MT);
    *len = r->len;
    if (end_of_value != NULL)
        *end_of_value = r->pos;
    return r->buf;
}
