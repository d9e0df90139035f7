/* Test hook for the resumable decoder's specs (built only into test builds: -DMCP_TEST_HOOKS):
 *   core._json_decoder(s [, limit [, depth]]) -> decoder of the JSON text s; limit: members up to
 *   that many bytes are decoded in one go (default MCP_JSON_RESUME_LIMIT; 0: none), depth: of the
 *   top-level value (default 0).
 *   decoder:run(units) -> false (not done: run it again), or true, value (as core.json_decode
 *   gives it, trailing whitespace allowed), or nil, message (core.json_decode's message), after at
 *   most `units` units of work (0: no bound).
 * So a spec can slice a decode at every size, the smallest too, and compare with json_decode. */
#include <stdio.h>

#include "lua_api.h"

#include "compat.h"
#include "core_loop.h"
#include "json.h"
#include "json_resume.h"

static int l_run(lua_State *L)
{
    lua_Integer units = luaL_checkinteger(L, 2);
    size_t len, end;
    const char *s;
    char err[160];
    int rc;
    luaL_checkudata(L, 1, MCP_JSON_RESUME_MT);
    luaL_argcheck(L, units >= 0, 2, "units must be >= 0");
    lua_settop(L, 1);
    rc = mcp_json_resume_run(L, 1, 0, (unsigned)units);
    if (rc == MCP_RESUME_MORE) {
        lua_pushboolean(L, 0);
        return 1;
    }
    if (rc == MCP_RESUME_FAILED) {
        lua_pushnil(L);
        lua_pushstring(L, mcp_json_resume_error(L, 1));
        return 2;
    }
    s = mcp_json_resume_input(L, 1, &len, &end);
    if (mcp_json_skip_ws(s + end, s + len) != s + len) {
        snprintf(err, sizeof err, "JSON parse error at byte %lu: trailing garbage",
                 (unsigned long)(mcp_json_skip_ws(s + end, s + len) - s));
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_pushboolean(L, 1);
    lua_insert(L, -2);
    return 2;
}

static int l_json_decoder(lua_State *L)
{
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    lua_Integer limit = luaL_optinteger(L, 2, (lua_Integer)MCP_JSON_RESUME_LIMIT);
    int depth = (int)luaL_optinteger(L, 3, 0);
    mcp_json_resume_push(L, s, n, depth, limit < 0 ? 0 : (size_t)limit);
    luaL_getmetatable(L, MCP_JSON_RESUME_MT);
    lua_getfield(L, -1, "__index");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushcfunction(L, l_run);
        lua_setfield(L, -2, "run");
        lua_setfield(L, -2, "__index");
    } else {
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return 1;
}

void mcp_resume_lua_open(lua_State *L)
{
    lua_pushcfunction(L, l_json_decoder);
    lua_setfield(L, -2, "_json_decoder");
}
