/* Lua side of the sandbox (sandbox.h): the `sandbox` field of core.stdio_transport's config, as
 * lua/mcp/sandbox.lua resolved it ({read = {paths}, write = {paths}, net = boolean}), and
 * core.sandbox_abi() -> the kernel's Landlock ABI version (0: none). */
#include <stdlib.h>

#include "lua_api.h"

#include "sandbox.h"
#include "sandbox_lua.h"
#include "strv_lua.h"

void mcp_sandbox_check_lua(lua_State *L, int cfg)
{
    lua_getfield(L, cfg, "sandbox");
    if (!lua_isnil(L, -1)) {
        int t = lua_gettop(L);
        if (!lua_istable(L, t))
            luaL_error(L, "mcp.stdio_transport: sandbox must be a table");
        mcp_strv_check(L, t, "read", "sandbox.read", 1);
        mcp_strv_check(L, t, "write", "sandbox.write", 1);
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
        sb->read = mcp_strv_copy(L, t, "read", NULL);
        sb->write = mcp_strv_copy(L, t, "write", NULL);
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
