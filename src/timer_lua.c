/* core.timer(ms, fn [, weak]) -> handle with :cancel(): one-shot timers for the Lua layer (sleep,
 * retry backoff). The callback runs inside core.step, on the stepping thread. A weak timer
 * (mcp_timer_weaken) does not keep the loop alive: a step that waits until something happens
 * with nothing else alive returns at once, so mcp.run() and blocking waits do not wait for it. */
#include <stdlib.h>

#include "lua_api.h"

#include "class_lua.h"
#include "compat.h"
#include "core_loop.h"
#include "term_escape_lua.h"

#define TIMER_MT "mcp.timer"

typedef struct lua_timer {
    mcp_timer timer;
    mcp_loop *loop;
    int fn_ref;
    int self_ref; /* anchors the handle while armed: a dropped handle still fires */
} lua_timer;

typedef struct timer_box {
    lua_timer *t;
} timer_box;

static void release(lua_State *L, lua_timer *t)
{
    mcp_timer_stop(t->loop, &t->timer);
    luaL_unref(L, LUA_REGISTRYINDEX, t->fn_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, t->self_ref);
    t->fn_ref = t->self_ref = LUA_NOREF;
}

static void on_fire(mcp_loop *loop, mcp_timer *timer)
{
    lua_timer *t = timer->data;
    lua_State *L = mcp_loop_lua(loop);
    if (L == NULL || t->fn_ref == LUA_NOREF)
        return;
    lua_rawgeti(L, LUA_REGISTRYINDEX, t->fn_ref);
    /* One-shot: drop the anchors before running. */
    luaL_unref(L, LUA_REGISTRYINDEX, t->fn_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, t->self_ref);
    t->fn_ref = t->self_ref = LUA_NOREF;
    if (lua_pcall(L, 0, 0, 0) != 0) {
        mcp_term_report_lua(L, "mcp: timer callback failed: ");
        lua_pop(L, 1);
    }
}

static int l_timer(lua_State *L)
{
    lua_Number ms = luaL_checknumber(L, 1);
    int weak = lua_toboolean(L, 3);
    timer_box *box;
    lua_timer *t;
    luaL_checktype(L, 2, LUA_TFUNCTION);
    box = mcp_newuserdata(L, sizeof *box);
    box->t = NULL;
    luaL_getmetatable(L, TIMER_MT);
    lua_setmetatable(L, -2);
    t = calloc(1, sizeof *t);
    if (t == NULL)
        return luaL_error(L, "mcp: out of memory");
    box->t = t;
    t->fn_ref = t->self_ref = LUA_NOREF;
    t->loop = mcp_upvalue_loop(L);
    mcp_loop_ref(t->loop);
    mcp_timer_init(&t->timer, on_fire, t);
    mcp_timer_weaken(t->loop, &t->timer, weak);
    lua_pushvalue(L, 2);
    t->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, -1);
    t->self_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    if (mcp_timer_start(t->loop, &t->timer, ms > 0 ? (uint64_t)ms : 0) != 0)
        return luaL_error(L, "mcp: out of memory");
    return 1;
}

static int l_cancel(lua_State *L)
{
    timer_box *box = luaL_checkudata(L, 1, TIMER_MT);
    if (box->t != NULL)
        release(L, box->t);
    return 0;
}

static int l_active(lua_State *L)
{
    timer_box *box = luaL_checkudata(L, 1, TIMER_MT);
    lua_pushboolean(L, box->t != NULL && box->t->timer.active);
    return 1;
}

static int l_gc(lua_State *L)
{
    timer_box *box = luaL_checkudata(L, 1, TIMER_MT);
    if (box->t != NULL) {
        release(L, box->t);
        mcp_loop_unref(box->t->loop);
        free(box->t);
        box->t = NULL;
    }
    return 0;
}

void mcp_timer_lua_open(lua_State *L, int box)
{
    static const luaL_Reg methods[] = {{"cancel", l_cancel}, {"active", l_active}, {NULL, NULL}};
    mcp_class_metatable(L, TIMER_MT, methods, l_gc);
    lua_pop(L, 1);
    mcp_set_loop_function(L, box, "timer", l_timer);
}
