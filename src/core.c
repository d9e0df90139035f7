/* luaopen_mcp_core: the loop of this Lua state and the functions that drive it. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "lua_api.h"

#include "close_later.h"
#include "compat.h"
#include "core_loop.h"
#include "digest.h"
#include "filelock.h"
#include "private_file.h"
#include "malloc_tune.h"
#include "realpath.h"
#include "redirect_listener.h"
#include "run_program.h"
#include "spawn_detached.h"
#include "json.h"
#include "session.h"
#include "transports/child.h"

#define LOOP_MT "mcp.loop"
#define LOOP_KEY "mcp.loop.instance"

typedef mcp_loop_box loop_box;

static loop_box *get_box(lua_State *L)
{
    loop_box *box;
    lua_getfield(L, LUA_REGISTRYINDEX, LOOP_KEY);
    box = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (box == NULL || box->loop == NULL)
        luaL_error(L, "mcp: the event loop is gone (the Lua state is closing)");
    return box;
}

static int loop_gc(lua_State *L)
{
    loop_box *box = luaL_checkudata(L, 1, LOOP_MT);
    if (box->loop != NULL) {
        mcp_loop_shutdown(box->loop);
        mcp_loop_unref(box->loop);
        box->loop = NULL;
    }
    return 0;
}

/* The round of one step, run by l_step inside a protected call: (args) -> nothing; the number of
 * callbacks run (or -1) in args->ran. */
typedef struct step_args {
    mcp_loop *loop;
    int64_t timeout_ms;
    int ran;
} step_args;

static int dispatch_round(lua_State *L)
{
    step_args *a = lua_touserdata(L, 1);
    a->ran = mcp_loop_run_once(a->loop, a->timeout_ms);
    return 0;
}

/* step(timeout_ms [, budget_ms]) -> callbacks run, alive. timeout_ms < 0 (or nil) waits until
 * something happens; the wait is cut short by the nearest timer. budget_ms (> 0): the work of the
 * round after the wait is bounded by it (a large message is decoded over several steps); nil or
 * 0: unbounded (blocking calls, mcp.run()). Upvalue 1: dispatch_round, made once (pushing it
 * allocates nothing, so nothing can raise between the running mark and the protected call).
 * What a callback lets escape (its own errors are reported where they go; this is out of memory
 * while reporting one, or a callback that raises) ends the round, the loop no longer running,
 * and is raised from here: the next step works. */
static int l_step(lua_State *L)
{
    loop_box *box = get_box(L);
    lua_Number t = luaL_optnumber(L, 1, -1), budget = luaL_optnumber(L, 2, 0);
    step_args a;
    lua_State *prev;
    int st;
    if (box->stepping)
        return luaL_error(L, "mcp: the loop is already running (a blocking call from inside a "
                             "loop callback? run it in mcp.spawn instead)");
    a.loop = box->loop;
    a.timeout_ms = t < 0 ? -1 : (int64_t)t;
    a.ran = 0;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushlightuserdata(L, &a);
    box->stepping = 1;
    prev = mcp_loop_lua(a.loop);
    mcp_loop_set_context(a.loop, L);
    if (budget > 0) /* (at least 1 µs) */
        mcp_loop_set_budget(a.loop, budget < 1e6 ? (uint64_t)(budget * 1000) + 1 : 1000000000u);
    st = lua_pcall(L, 1, 0, 0);
    if (st != 0)
        mcp_loop_end_round(a.loop);
    mcp_loop_set_budget(a.loop, 0);
    mcp_loop_set_context(a.loop, prev);
    box->stepping = 0;
    if (st != 0)
        return lua_error(L);
    if (a.ran < 0)
        return luaL_error(L, "mcp: waiting for events failed");
    lua_pushinteger(L, a.ran);
    lua_pushboolean(L, mcp_loop_alive(a.loop));
    return 2;
}

static int l_fd(lua_State *L)
{
    int fd = mcp_loop_fd(get_box(L)->loop);
    if (fd < 0)
        lua_pushnil(L);
    else
        lua_pushinteger(L, fd);
    return 1;
}

/* timeout() -> ms until the next timer, or -1 when none is armed */
static int l_timeout(lua_State *L)
{
    lua_pushnumber(L, (lua_Number)mcp_loop_next_timeout(get_box(L)->loop));
    return 1;
}

static int l_alive(lua_State *L)
{
    lua_pushboolean(L, mcp_loop_alive(get_box(L)->loop));
    return 1;
}

static int l_now_ms(lua_State *L)
{
    lua_pushnumber(L, (lua_Number)mcp_now_ms());
    return 1;
}

/* children() -> server processes not yet reaped; stopping() -> those being stopped */
static int l_children(lua_State *L)
{
    lua_pushinteger(L, mcp_child_count(get_box(L)->loop));
    return 1;
}

static int l_stopping(lua_State *L)
{
    lua_pushinteger(L, mcp_child_stopping(get_box(L)->loop));
    return 1;
}

/* json_null_alias(v): v (e.g. Neovim's vim.NIL) also encodes as JSON null; nil clears it. */
static int l_json_null_alias(lua_State *L)
{
    lua_settop(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, MCP_JSON_NULL_ALIAS);
    return 0;
}

static void check_abi(lua_State *L)
{
#if LUA_VERSION_NUM >= 504
    if ((int)lua_version(L) != LUA_VERSION_NUM)
        luaL_error(L, "mcp.core was built for Lua %d.%d but loaded into another Lua version",
                   LUA_VERSION_NUM / 100, LUA_VERSION_NUM % 100);
#elif LUA_VERSION_NUM >= 502
    if ((int)*lua_version(L) != LUA_VERSION_NUM)
        luaL_error(L, "mcp.core was built for Lua %d.%d but loaded into another Lua version",
                   LUA_VERSION_NUM / 100, LUA_VERSION_NUM % 100);
#else
    (void)L;
#endif
}

/* Pushes this Lua state's loop box, made (with its loop) by the first luaopen_mcp_core. */
static void push_loop_box(lua_State *L)
{
    loop_box *box;
    lua_getfield(L, LUA_REGISTRYINDEX, LOOP_KEY);
    if (!lua_isnil(L, -1))
        return;
    lua_pop(L, 1);
    box = mcp_newuserdata(L, sizeof *box);
    box->loop = NULL;
    box->stepping = 0;
    if (luaL_newmetatable(L, LOOP_MT)) {
        lua_pushcfunction(L, loop_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    box->loop = mcp_loop_new();
    /* (the loop's first hook: its shutdown closes the servers' stdin before the children's
     * waits for them; without it, closes are done at once) */
    if (box->loop == NULL || mcp_close_later_open(box->loop) != 0)
        luaL_error(L, "mcp: cannot create the event loop");
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, LOOP_KEY);
}

#if defined(__GNUC__)
__attribute__((visibility("default")))
#endif
int luaopen_mcp_core(lua_State *L)
{
    static const luaL_Reg funcs[] = {
        {"fd", l_fd},
        {"timeout", l_timeout},
        {"alive", l_alive},
        {"now_ms", l_now_ms},
        {"children", l_children},
        {"stopping", l_stopping},
        {"session", mcp_session_new},
        {"json_encode", mcp_json_lua_encode},
        {"json_decode", mcp_json_lua_decode},
        {"json_null_alias", l_json_null_alias},
        {"sha256", mcp_digest_sha256},
        {"base64_encode", mcp_digest_base64_encode},
        {"base64_decode", mcp_digest_base64_decode},
        {"random_bytes", mcp_digest_random_bytes},
        {"write_private_file", mcp_write_private_file},
        {"mkdir_private", mcp_mkdir_private},
        {"file_mode", mcp_file_mode},
        {"check_private", mcp_check_private},
        {"read_private_file", mcp_read_private_file},
        {"realpath", mcp_realpath},
        {"malloc_no_fastbins", mcp_malloc_no_fastbins},
        {NULL, NULL},
    };
    struct sigaction sa;
    int box_index;
    check_abi(L);
    /* A write to a server that died must fail with EPIPE, not kill the host. Only when nobody
     * chose a disposition: Neovim (libuv) and most hosts ignore SIGPIPE already. */
    if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) {
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_IGN;
        sigaction(SIGPIPE, &sa, NULL);
    }
    mcp_json_init(L);
    mcp_session_open(L);

    push_loop_box(L);
    box_index = lua_gettop(L); /* handed to the bindings, stays below the module table */

    lua_newtable(L);
    mcp_setfuncs(L, funcs, 0);
    lua_pushcfunction(L, dispatch_round);
    lua_pushcclosure(L, l_step, 1);
    lua_setfield(L, -2, "step");
    mcp_stdio_lua_open(L, box_index);
    mcp_timer_lua_open(L, box_index);
    mcp_http_lua_open(L, box_index);
#ifdef MCP_TEST_HOOKS
    mcp_sse_lua_open(L);
    mcp_heap_lua_open(L);
    mcp_lazylib_lua_open(L);
    mcp_resume_lua_open(L);
    mcp_close_later_lua_open(L, box_index);
    mcp_term_lua_open(L);
    mcp_thread_lua_open(L);
    mcp_raise_lua_open(L, box_index);
#endif
    mcp_fetch_lua_open(L, box_index);
    mcp_pkey_lua_open(L);
    mcp_lua_transport_open(L, box_index);
    mcp_redirect_listener_lua_open(L, box_index);
    mcp_filelock_lua_open(L);
    mcp_run_program_lua_open(L, box_index);
    mcp_spawn_detached_lua_open(L, box_index);
    lua_pushlightuserdata(L, NULL);
    lua_setfield(L, -2, "null");
    luaL_getmetatable(L, MCP_JSON_ARRAY_MT);
    lua_setfield(L, -2, "array_mt");
    luaL_getmetatable(L, MCP_JSON_OBJECT_MT);
    lua_setfield(L, -2, "object_mt");
#if defined(MCP_LUAJIT)
    lua_pushliteral(L, "LuaJIT");
#else
    lua_pushliteral(L, LUA_VERSION);
#endif
    lua_setfield(L, -2, "built_for");
    return 1;
}
