/* Test hook for spec/close_pacing_spec.lua (built only into test builds: -DMCP_TEST_HOOKS):
 *   core._close_later_pending() -> how many closed servers' stdin descriptors wait for the next
 *   step (src/close_later.h). */
#include "lua_api.h"

#include "close_later.h"
#include "core_loop.h"

static int l_close_later_pending(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)mcp_close_later_pending(mcp_upvalue_loop(L)));
    return 1;
}

void mcp_close_later_lua_open(lua_State *L, int box)
{
    mcp_set_loop_function(L, box, "_close_later_pending", l_close_later_pending);
}
