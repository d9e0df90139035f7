/* Lua side of the sandbox (sandbox.h): the `sandbox` field of core.stdio_transport's config, as
 * lua/mcp/sandbox.lua resolved it ({read = {paths}, write = {paths}, net = boolean}), and
 * core.sandbox_abi() -> the kernel's Landlock ABI version (0: none). */
#include <stdlib.h>
#include <string.h>

#include "lua_api.h"

#include "compat.h"
#include "sandbox.h"
#include "sandbox_lua.h"

/* Raise unless t[field] is nil or an array of strings without NUL bytes. */
static void check_paths(lua_State *L, int t, const char *field)
{
    size_t n, i;
    lua_getfield(L, t, field);
    if (!lua_isnil(L, -1) && !lua_istable(L, -1))
        luaL_error(L, "mcp.stdio_transport: sandbox.%s must be an array of paths", field);
    n = lua_istable(L, -1) ? mcp_rawlen(L, -1) : 0;
    for (i = 1; i <= n; i++) {
        size_t len;
        const char *s;
        lua_rawgeti(L, -1, (int)i);
        s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
        if (s == NULL || len == 0 || memchr(s, '\0', len) != NULL)
            luaL_error(L, "mcp.stdio_transport: sandbox.%s[%d] must be a non-empty path", field,
                       (int)i);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* A NULL-terminated copy of the (checked) paths at t[field]; NULL when out of memory. */
static char **copy_paths(lua_State *L, int t, const char *field)
{
    size_t n, i;
    char **out;
    lua_getfield(L, t, field);
    n = lua_istable(L, -1) ? mcp_rawlen(L, -1) : 0;
    out = calloc(n + 1, sizeof *out);
    for (i = 0; out != NULL && i < n; i++) {
        lua_rawgeti(L, -1, (int)i + 1);
        out[i] = strdup(lua_tostring(L, -1));
        lua_pop(L, 1);
        if (out[i] == NULL) {
            while (i > 0)
                free(out[--i]);
            free(out);
            out = NULL;
        }
    }
    lua_pop(L, 1);
    return out;
}

void mcp_sandbox_check_lua(lua_State *L, int cfg)
{
    lua_getfield(L, cfg, "sandbox");
    if (!lua_isnil(L, -1)) {
        int t = lua_gettop(L);
        if (!lua_istable(L, t))
            luaL_error(L, "mcp.stdio_transport: sandbox must be a table");
        check_paths(L, t, "read");
        check_paths(L, t, "write");
    }
    lua_pop(L, 1);
}

int mcp_sandbox_from_lua(lua_State *L, int cfg, mcp_sandbox **out)
{
    mcp_sandbox *sb;
    int t;
    *out = NULL;
    lua_getfield(L, cfg, "sandbox");
    t = lua_gettop(L);
    if (lua_isnil(L, t)) {
        lua_pop(L, 1);
        return 0;
    }
    sb = calloc(1, sizeof *sb);
    if (sb != NULL) {
        sb->read = copy_paths(L, t, "read");
        sb->write = copy_paths(L, t, "write");
        lua_getfield(L, t, "net");
        sb->deny_net = lua_isboolean(L, -1) && !lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (sb == NULL || sb->read == NULL || sb->write == NULL) {
        mcp_sandbox_free(sb);
        return -1;
    }
    *out = sb;
    return 0;
}

static int l_sandbox_abi(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)mcp_sandbox_abi());
    return 1;
}

void mcp_sandbox_lua_open(lua_State *L)
{
    lua_pushcfunction(L, l_sandbox_abi);
    lua_setfield(L, -2, "sandbox_abi");
}
