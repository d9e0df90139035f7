/* Test hook for spec/run_program_spec.lua and spec/keyring_spec.lua (built only into test builds:
 * -DMCP_TEST_HOOKS, see Makefile):
 *   core._fail_thread_starts(n) -> true: the next n helper threads (src/helper_thread.c: a run
 *   from a task, run_job.c; a server's start from a task, transports/spawn_job.c) fail to start
 *   with EAGAIN, as pthread_create does at a thread limit; 0 (or nil) clears it. */
#include "lua_api.h"

#include "core_loop.h"
#include "helper_thread.h"

static int l_fail_thread_starts(lua_State *L)
{
    mcp_helper_thread_fail_next((int)luaL_optinteger(L, 1, 0));
    lua_pushboolean(L, 1);
    return 1;
}

void mcp_thread_lua_open(lua_State *L)
{
    lua_pushcfunction(L, l_fail_thread_starts);
    lua_setfield(L, -2, "_fail_thread_starts");
}
