/* Lua's collector held off around one allocation (gc_hold.h). */
#include "gc_hold.h"

#define MCP_GCISRUNNING 9 /* LUA_GCISRUNNING of 5.2-5.4 and LuaJIT 2.1; PUC 5.1 answers -1 */

int mcp_gc_running(lua_State *L) { return lua_gc(L, MCP_GCISRUNNING, 0) == 1; }

int mcp_gc_hold_pcall(lua_State *L, lua_CFunction fn, int nargs, int nresults, int hold)
{
    int held, rc;
    luaL_checkstack(L, 2, "collector hold");
    lua_pushcfunction(L, fn);
    lua_insert(L, -(nargs + 1));
    held = hold && mcp_gc_running(L);
    if (held)
        lua_gc(L, LUA_GCSTOP, 0);
    rc = lua_pcall(L, nargs, nresults, 0);
    if (held)
        lua_gc(L, LUA_GCRESTART, 0);
    return rc;
}

void mcp_gc_hold_call(lua_State *L, lua_CFunction fn, int nargs, int nresults, int hold)
{
    if (mcp_gc_hold_pcall(L, fn, nargs, nresults, hold) != 0)
        lua_error(L);
}
