/* libFuzzer target for WWW-Authenticate parsing (lua/mcp/auth/discovery.lua
 * parse_www_authenticate, which the OAuth flow runs on every 401 and 403 a server sends), in an
 * embedded Lua 5.4 with the module loaded from the tree (lua/mcp/auth/url.lua too; the modules it
 * only needs for fetching are empty stubs).
 *   make fuzz FUZZ_TARGET=wwwauth / fuzz-smoke   (from the repository root)
 *
 * Two checks per input:
 * 1. The input is the header. The parser never raises and returns nil or a table; a header that
 *    starts with the Bearer scheme (optional white space, "bearer" in any case, then white space or
 *    the end) is never nil; a table has scheme "Bearer", only string values none longer than the
 *    header, scope, error and resource_metadata only when the header names them, and a
 *    resource_metadata that is an absolute http(s) URL with no white space or NUL.
 * 2. The input, split at its first two 0xFF bytes, gives the values of error, scope and
 *    resource_metadata; they are sent quoted (backslash and double quote escaped) in a Bearer
 *    challenge, after a realm, and must come back exactly (resource_metadata only when it is
 *    kept, and then exactly). */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lua_embed.h"

#define CHECK(cond, what) FUZZ_CHECK("wwwauth_fuzz", cond, what)

static lua_State *L;
static int parse_ref;

static void setup(void)
{
    static const struct fuzz_preload preload[] = {
        {"mcp.fetch", NULL}, {"mcp.json", NULL}, {"mcp.auth.errors", NULL}, {NULL, NULL}};
    L = fuzz_lua_open("wwwauth_fuzz", preload, "lua/mcp/auth/discovery.lua",
                      "parse_www_authenticate", &parse_ref);
}

/* Lua's %s in the C locale. */
static int lspace(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

static int has_ci(const uint8_t *s, size_t n, const char *word)
{
    size_t w = strlen(word), i, j;
    for (i = 0; i + w <= n; i++) {
        for (j = 0; j < w && tolower(s[i + j]) == word[j]; j++)
            ;
        if (j == w)
            return 1;
    }
    return 0;
}

static int starts_bearer(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n && lspace(s[i]))
        i++;
    if (n - i < 6 || !has_ci(s + i, 6, "bearer"))
        return 0;
    return i + 6 == n || lspace(s[i + 6]);
}

static int http_url(const char *s, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (s[i] == '\0' || lspace((unsigned char)s[i]))
            return 0;
    return has_ci((const uint8_t *)s, n < 7 ? n : 7, "http://") ||
           has_ci((const uint8_t *)s, n < 8 ? n : 8, "https://");
}

/* Calls the parser on the string at the top of the stack; leaves its result there. */
static void parse(void)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, parse_ref);
    lua_insert(L, -2);
    CHECK(lua_pcall(L, 1, 1, 0) == 0, "parse_www_authenticate never raises on a string");
    CHECK(lua_isnil(L, -1) || lua_istable(L, -1), "nil or a table");
}

static void check_header(const uint8_t *data, size_t size)
{
    lua_pushlstring(L, (const char *)data, size);
    parse();
    if (starts_bearer(data, size))
        CHECK(lua_istable(L, -1), "a Bearer challenge is found");
    if (lua_istable(L, -1)) {
        const char *v;
        size_t n;
        CHECK(has_ci(data, size, "bearer"), "a challenge only when the header names Bearer");
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
            CHECK(lua_type(L, -2) == LUA_TSTRING, "string keys");
            CHECK(lua_type(L, -1) == LUA_TSTRING, "string values");
            lua_tolstring(L, -1, &n);
            CHECK(n <= size, "no value longer than the header");
            lua_pop(L, 1);
        }
        lua_getfield(L, -1, "scheme");
        v = lua_tostring(L, -1);
        CHECK(v != NULL && strcmp(v, "Bearer") == 0, "scheme is Bearer");
        lua_pop(L, 1);
        lua_getfield(L, -1, "scope");
        CHECK(lua_isnil(L, -1) || has_ci(data, size, "scope"), "scope only when named");
        lua_pop(L, 1);
        lua_getfield(L, -1, "error");
        CHECK(lua_isnil(L, -1) || has_ci(data, size, "error"), "error only when named");
        lua_pop(L, 1);
        lua_getfield(L, -1, "resource_metadata");
        if (!lua_isnil(L, -1)) {
            CHECK(has_ci(data, size, "resource_metadata"), "resource_metadata only when named");
            v = lua_tolstring(L, -1, &n);
            CHECK(http_url(v, n), "resource_metadata is an absolute http(s) URL");
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

static void add_quoted(luaL_Buffer *b, const char *name, const uint8_t *v, size_t n)
{
    size_t i;
    luaL_addstring(b, ", ");
    luaL_addstring(b, name);
    luaL_addstring(b, "=\"");
    for (i = 0; i < n; i++) {
        if (v[i] == '\\' || v[i] == '"')
            luaL_addchar(b, '\\');
        luaL_addchar(b, (char)v[i]);
    }
    luaL_addchar(b, '"');
}

static void expect_field(const char *name, const uint8_t *v, size_t n, int may_drop)
{
    const char *got;
    size_t m;
    lua_getfield(L, -1, name);
    if (may_drop && lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return;
    }
    got = lua_tolstring(L, -1, &m);
    CHECK(got != NULL && m == n && memcmp(got, v, n) == 0, "a quoted value comes back exactly");
    lua_pop(L, 1);
}

static void check_round_trip(const uint8_t *data, size_t size)
{
    const uint8_t *part[3];
    size_t len[3], k = 0, start = 0, i;
    luaL_Buffer b;
    for (i = 0; i < size && k < 2; i++) {
        if (data[i] == 0xff) {
            part[k] = data + start;
            len[k++] = i - start;
            start = i + 1;
        }
    }
    part[k] = data + start;
    len[k++] = size - start;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "Bearer realm=\"mcp\"");
    add_quoted(&b, "error", part[0], len[0]);
    if (k > 1)
        add_quoted(&b, "scope", part[1], len[1]);
    if (k > 2)
        add_quoted(&b, "resource_metadata", part[2], len[2]);
    luaL_pushresult(&b);
    parse();
    CHECK(lua_istable(L, -1), "a well-formed challenge parses");
    expect_field("error", part[0], len[0], 0);
    if (k > 1)
        expect_field("scope", part[1], len[1], 0);
    if (k > 2)
        expect_field("resource_metadata", part[2], len[2], 1);
    lua_pop(L, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (L == NULL)
        setup();
    check_header(data, size);
    check_round_trip(data, size);
    lua_gc(L, LUA_GCSTEP, 0);
    return 0;
}
