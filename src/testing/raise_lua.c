/* Test hook for spec/loop_raise_spec.lua (built only into test builds: -DMCP_TEST_HOOKS, see
 * Makefile):
 *   core._raise_in_step(msg) -> true: arms a timer due at once whose C callback raises msg
 *   (luaL_error) inside the step that fires it, outside any protected call of its own: what a
 *   callback that lets an error escape does (out of memory while reporting its own error). The
 *   timer frees itself before it raises. */
#include <stdlib.h>
#include <string.h>

#include "lua_api.h"

#include "core_loop.h"

typedef struct raiser {
    mcp_timer t;
    mcp_loop *loop;
    char msg[200];
} raiser;

static void on_fire(mcp_loop *loop, mcp_timer *t)
{
    raiser *r = t->data;
    lua_State *L = mcp_loop_lua(loop);
    char msg[sizeof r->msg];
    memcpy(msg, r->msg, sizeof msg);
    mcp_loop_unref(r->loop);
    free(r);
    if (L != NULL)
        luaL_error(L, "%s", msg);
}

static int l_raise_in_step(lua_State *L)
{
    const char *msg = luaL_checkstring(L, 1);
    mcp_loop *loop = mcp_upvalue_loop(L);
    raiser *r = calloc(1, sizeof *r);
    if (r == NULL)
        return luaL_error(L, "mcp: out of memory");
    strncpy(r->msg, msg, sizeof r->msg - 1);
    mcp_timer_init(&r->t, on_fire, r);
    if (mcp_timer_start(loop, &r->t, 0) != 0) {
        free(r);
        return luaL_error(L, "mcp: out of memory");
    }
    r->loop = loop;
    mcp_loop_ref(loop);
    lua_pushboolean(L, 1);
    return 1;
}

void mcp_raise_lua_open(lua_State *L, int box)
{
    mcp_set_loop_function(L, box, "_raise_in_step", l_raise_in_step);
}
