/* libFuzzer target for the JSON codec (src/json_decode.c against src/json_encode.c).
 *   make fuzz FUZZ_TARGET=json / fuzz-smoke
 *
 * The input is one JSON text. Checked for every input the decoder accepts:
 * - the encoder accepts the decoded value, unless it holds a number beyond a double (1e400
 *   decodes to infinity, which JSON cannot spell): then it fails with "infinity", never raises;
 * - the decoder accepts the encoder's text, and the value it gives equals the first one
 *   (same types, numbers equal, strings byte for byte, arrays still marked as arrays, the same
 *   keys), so nothing is lost or changed by a round trip;
 * - encoding that second value succeeds and gives a text of the same length (the same text up to
 *   the order of object members, which follows Lua's hash order).
 * Inputs the decoder refuses must leave the Lua stack as it was.
 * In-place decoding (mcp_json_decode_value_inplace) of a copy of the input, without and with an
 * undo log, gives the same outcome: the same end and an equal value, or the same error text; with
 * the log, mcp_json_undo_apply gives back the input byte for byte.
 * The resumable decoder (src/json_resume.c), run in slices of random sizes (from a generator
 * seeded by the input) with a random bound on what it decodes in one go, gives the same outcome
 * too: the same value ending at the same byte, or the same error text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#include "buf.h"
#include "json.h"
#include "json_resume.h"

#define CHECK(cond, what)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "json_fuzz: check failed: %s (%s)\n", what, #cond);                    \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static lua_State *L;

static int is_array(lua_State *S, int idx)
{
    int r;
    if (!lua_getmetatable(S, idx))
        return 0;
    lua_getfield(S, LUA_REGISTRYINDEX, MCP_JSON_ARRAY_MT);
    r = lua_rawequal(S, -1, -2);
    lua_pop(S, 2);
    return r;
}

/* Deep equality of the values at a and b (absolute indices). */
static int same(lua_State *S, int a, int b, int depth)
{
    int n = 0, m = 0;
    CHECK(depth <= MCP_JSON_MAX_DEPTH + 2, "bounded nesting");
    /* Each level holds a key, a value and their counterpart: without room checked, a deep value
     * runs off the Lua stack (found by the CI smoke: liblua is not instrumented, so ASan only saw
     * the heap it had corrupted, at the next collection). */
    CHECK(lua_checkstack(S, 4), "room on the Lua stack");
    if (lua_type(S, a) != lua_type(S, b))
        return 0;
    if (lua_type(S, a) != LUA_TTABLE)
        return lua_rawequal(S, a, b);
    if (is_array(S, a) != is_array(S, b))
        return 0;
    lua_pushnil(S);
    while (lua_next(S, a) != 0) {
        int ok;
        n++;
        lua_pushvalue(S, -2);
        lua_rawget(S, b);
        ok = same(S, lua_gettop(S) - 1, lua_gettop(S), depth + 1);
        lua_pop(S, 2);
        if (!ok) {
            lua_pop(S, 1);
            return 0;
        }
    }
    lua_pushnil(S);
    while (lua_next(S, b) != 0) {
        m++;
        lua_pop(S, 1);
    }
    return n == m;
}

typedef struct job {
    const char *p;
    size_t n;
} job;

/* The in-place decodes of a copy of j's input against the first decode's outcome: q, err, and
 * its value on top of the stack when q is not NULL. */
static void check_inplace(lua_State *S, const job *j, const char *q, const char *err)
{
    int mode, top = lua_gettop(S);
    for (mode = 0; mode < 2; mode++) {
        char err2[256], *copy = malloc(j->n ? j->n : 1);
        const char *q2;
        mcp_buf undo;
        CHECK(copy != NULL, "memory for a copy");
        memcpy(copy, j->p, j->n);
        mcp_buf_init(&undo);
        q2 = mcp_json_decode_value_inplace(S, copy, copy, copy + j->n, 0, mode ? &undo : NULL, err2,
                                           sizeof err2);
        if (q == NULL) {
            CHECK(q2 == NULL, "in place refuses what the decoder refuses");
            CHECK(strcmp(err, err2) == 0, "in place refuses it with the same message");
            CHECK(lua_gettop(S) == top, "a refused input pushes nothing, in place");
        } else {
            CHECK(q2 != NULL && q2 - copy == q - j->p, "in place ends where the decoder ends");
            CHECK(same(S, top, lua_gettop(S), 0), "in place gives the same value");
            lua_settop(S, top);
        }
        if (mode) {
            mcp_json_undo_apply(&undo, copy);
            CHECK(undo.len == 0, "the undo log is emptied");
            CHECK(memcmp(copy, j->p, j->n) == 0, "the undo log gives the input back");
        }
        mcp_buf_free(&undo);
        free(copy);
    }
}

/* The resumable decodes of j's input, in slices, against the first decode's outcome (as in
 * check_inplace). */
static void check_resumable(lua_State *S, const job *j, const char *q, const char *err)
{
    uint32_t x = 2166136261u;
    size_t i, len, end;
    int round, top = lua_gettop(S);
    for (i = 0; i < j->n; i++)
        x = (x ^ (uint8_t)j->p[i]) * 16777619u;
    for (round = 0; round < 2; round++) {
        int rc;
        x = x * 1103515245u + 12345u;
        mcp_json_resume_push(S, j->p, j->n, 0, round == 0 ? 0 : (x >> 8) % 96);
        do {
            x = x * 1103515245u + 12345u;
            rc = mcp_json_resume_run(S, top + 1, 0, 1 + (x >> 16) % (round == 0 ? 3 : 40));
        } while (rc == MCP_RESUME_MORE);
        if (q == NULL) {
            CHECK(rc == MCP_RESUME_FAILED, "resumable refuses what the decoder refuses");
            CHECK(strcmp(err, mcp_json_resume_error(S, top + 1)) == 0,
                  "resumable refuses it with the same message");
            CHECK(lua_gettop(S) == top + 1, "a refused input pushes nothing, resumable");
        } else {
            CHECK(rc == MCP_RESUME_DONE, "resumable accepts what the decoder accepts");
            mcp_json_resume_input(S, top + 1, &len, &end);
            CHECK(len == j->n && end == (size_t)(q - j->p),
                  "resumable ends where the decoder ends");
            CHECK(same(S, top, lua_gettop(S), 0), "resumable gives the same value");
        }
        lua_settop(S, top);
    }
}

static int run(lua_State *S)
{
    job *j = lua_touserdata(S, 1);
    char err[256];
    const char *end = j->p + j->n, *q;
    mcp_buf t1, t2;
    int top = lua_gettop(S), v1, v2;
    q = mcp_json_decode_value(S, j->p, j->p, end, 0, err, sizeof err);
    check_inplace(S, j, q, err);
    check_resumable(S, j, q, err);
    if (q == NULL) {
        CHECK(lua_gettop(S) == top, "a refused input pushes nothing");
        return 0;
    }
    if (mcp_json_skip_ws(q, end) != end) {
        lua_settop(S, top);
        return 0;
    }
    v1 = lua_gettop(S);
    mcp_buf_init(&t1);
    mcp_buf_init(&t2);
    if (mcp_json_encode(S, v1, &t1, err, sizeof err) != 0) {
        CHECK(strstr(err, "infinity") != NULL, "only a number beyond a double fails to encode");
        mcp_buf_free(&t1);
        lua_settop(S, top);
        return 0;
    }
    CHECK(lua_gettop(S) == v1, "encode leaves the stack");
    q = mcp_json_decode_value(S, t1.data + t1.off, t1.data + t1.off, t1.data + t1.off + t1.len, 0,
                              err, sizeof err);
    CHECK(q == t1.data + t1.off + t1.len, "the encoder's text decodes, whole");
    v2 = lua_gettop(S);
    CHECK(same(S, v1, v2, 0), "the round trip keeps the value");
    /* Its text may differ from t1 only in the order of object members (hash order). */
    CHECK(mcp_json_encode(S, v2, &t2, err, sizeof err) == 0, "the second value encodes");
    CHECK(t1.len == t2.len, "the second text has the first one's length");
    mcp_buf_free(&t1);
    mcp_buf_free(&t2);
    lua_settop(S, top);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    job j;
    if (L == NULL) {
        L = luaL_newstate();
        CHECK(L != NULL, "a Lua state");
        mcp_json_init(L);
    }
    j.p = (const char *)data;
    j.n = size;
    lua_pushcfunction(L, run);
    lua_pushlightuserdata(L, &j);
    if (lua_pcall(L, 1, 0, 0) != 0) {
        /* out of memory only: anything else is a bug */
        const char *msg = lua_tostring(L, -1);
        CHECK(msg != NULL && strstr(msg, "memory") != NULL, "no error but out of memory");
        lua_pop(L, 1);
    }
    lua_gc(L, LUA_GCCOLLECT, 0);
    return 0;
}
