/* Lua binding of the stdio transport: core.stdio_transport(cfg) -> userdata "mcp.transport.stdio". */
#include <stdlib.h>
#include <string.h>

#include "lua_api.h"

#include "child.h"
#include "compat.h"
#include "core_loop.h"
#include "sandbox_lua.h"
#include "stdio_transport.h"
#include "strv_lua.h"
#include "term_escape_lua.h"
#include "transport_lua.h"

#define STDIO_MT "mcp.transport.stdio"

/* The stderr callback lives in the box's uservalue; this context finds it. */
typedef struct stdio_box {
    mcp_transport_box base;
    int stderr_ref;
    int started_ref; /* t:start(cb)'s cb until the start in the background is done */
    mcp_loop *loop;
} stdio_box;

typedef struct stderr_line {
    int ref;
    const char *line;
    size_t len;
} stderr_line;

/* fn(line), in a protected call: making the line's string (out of memory) fails as fn would,
 * before fn runs; fn's own error goes the same way. */
static int call_stderr_fn(lua_State *L)
{
    const stderr_line *a = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->ref);
    lua_pushlstring(L, a->line, a->len);
    return lua_pcall(L, 1, 0, 0) != 0 ? lua_error(L) : 0;
}

static void on_stderr_line(void *ctx, const char *line, size_t len)
{
    stdio_box *box = ctx;
    lua_State *L = mcp_loop_lua(box->loop);
    stderr_line a;
    if (L == NULL || box->stderr_ref == LUA_NOREF)
        return;
    a.ref = box->stderr_ref;
    a.line = line;
    a.len = len;
    lua_pushcfunction(L, call_stderr_fn);
    lua_pushlightuserdata(L, &a);
    if (lua_pcall(L, 1, 0, 0) != 0) {
        mcp_term_report_lua(L, "mcp: stderr callback failed: ");
        lua_pop(L, 1);
    }
}

/* The start in the background is done: cb(true), or cb(nil, why). */
static void on_started(void *ctx, const char *why)
{
    stdio_box *box = ctx;
    lua_State *L = mcp_loop_lua(box->loop);
    int ref = box->started_ref;
    box->started_ref = LUA_NOREF;
    if (L == NULL || ref == LUA_NOREF)
        return;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    luaL_unref(L, LUA_REGISTRYINDEX, ref);
    if (why == NULL) {
        lua_pushboolean(L, 1);
    } else {
        lua_pushnil(L);
        lua_pushstring(L, why);
    }
    if (lua_pcall(L, why == NULL ? 1 : 2, 0, 0) != 0) {
        mcp_term_report_lua(L, "mcp: start callback failed: ");
        lua_pop(L, 1);
    }
}

/* A positive byte count at cfg[name] (table at index 1), or 0 when absent; raises otherwise. */
static size_t size_option(lua_State *L, const char *name)
{
    size_t v = 0;
    lua_getfield(L, 1, name);
    if (!lua_isnil(L, -1)) {
        lua_Number n = lua_tonumber(L, -1);
        if (!(n >= 1 && n < 1e18))
            luaL_error(L, "mcp.stdio_transport: '%s' must be a positive number", name);
        v = (size_t)n;
    }
    lua_pop(L, 1);
    return v;
}

/* core.stdio_transport{command=, args=, env={"K=V",...}, cwd=, stderr="inherit"|"discard"|fn,
 *                      max_message_size=, max_write_queue=} ; env is the complete environment (the Lua layer
 * applies the allowlist). */
static int l_stdio_transport(lua_State *L)
{
    mcp_stdio_config cfg;
    mcp_loop *loop = mcp_upvalue_loop(L);
    mcp_transport *t;
    stdio_box *box;
    const char *command;
    size_t len;
    int stderr_fn = 0;
    luaL_checktype(L, 1, LUA_TTABLE);
    memset(&cfg, 0, sizeof cfg);
    lua_getfield(L, 1, "command");
    command = lua_tolstring(L, -1, &len);
    if (command == NULL || len == 0)
        return luaL_error(L, "mcp.stdio_transport: 'command' must be a non-empty string");
    /* (exec takes it up to its first NUL: another program than the one given) */
    if (memchr(command, '\0', len) != NULL)
        return luaL_error(L, "mcp.stdio_transport: 'command' must not contain NUL bytes");
    lua_getfield(L, 1, "stderr");
    if (lua_isnil(L, -1) || (lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), "inherit") == 0))
        cfg.stderr_mode = MCP_STDERR_INHERIT;
    else if (lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), "discard") == 0)
        cfg.stderr_mode = MCP_STDERR_DISCARD;
    else if (lua_isfunction(L, -1))
        cfg.stderr_mode = MCP_STDERR_PIPE, stderr_fn = 1;
    else
        return luaL_error(
            L, "mcp.stdio_transport: 'stderr' must be \"inherit\", \"discard\" or a function");
    lua_pop(L, 1);
    cfg.max_message = size_option(L, "max_message_size");
    cfg.max_write_queue = size_option(L, "max_write_queue");
    lua_getfield(L, 1, "cwd");
    if (!lua_isnil(L, -1) && !lua_isstring(L, -1))
        return luaL_error(L, "mcp.stdio_transport: 'cwd' must be a string");
    if (lua_isstring(L, -1)) { /* (chdir takes it up to its first NUL: another directory) */
        size_t clen;
        const char *cwd = lua_tolstring(L, -1, &clen);
        if (memchr(cwd, '\0', clen) != NULL)
            return luaL_error(L, "mcp.stdio_transport: 'cwd' must not contain NUL bytes");
    }
    mcp_strv_check(L, 1, "args", "args", 0);
    mcp_strv_check(L, 1, "env", "env", 0);
    mcp_sandbox_check_lua(L, 1);
    /* Nothing below raises before mcp_stdio_new owns the copies. */
    cfg.command = strdup(command);
    if (lua_isstring(L, -1))
        cfg.cwd = strdup(lua_tostring(L, -1));
    lua_pop(L, 2);
    cfg.argv = mcp_strv_copy(L, 1, "args", command);
    cfg.envp = mcp_strv_copy(L, 1, "env", NULL);
    if (cfg.command == NULL || cfg.argv == NULL || cfg.envp == NULL ||
        mcp_sandbox_from_lua(L, 1, &cfg.sandbox) != 0) {
        mcp_stdio_config_free(&cfg);
        return luaL_error(L, "mcp: out of memory");
    }
    t = mcp_stdio_new(loop, &cfg);
    if (t == NULL)
        return luaL_error(L, "mcp: out of memory");
    box = (stdio_box *)mcp_newuserdata(L, sizeof *box);
    box->base.t = t;
    box->stderr_ref = LUA_NOREF;
    box->started_ref = LUA_NOREF;
    box->loop = loop;
    luaL_getmetatable(L, STDIO_MT);
    lua_setmetatable(L, -2);
    if (stderr_fn) {
        lua_getfield(L, 1, "stderr");
        box->stderr_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        mcp_stdio_on_stderr(t, on_stderr_line, box);
    }
    return 1;
}

static stdio_box *check_box(lua_State *L)
{
    stdio_box *box = luaL_checkudata(L, 1, STDIO_MT);
    if (box->base.t == NULL)
        luaL_error(L, "mcp: the transport was finalized");
    return box;
}

/* t:start() -> true | nil, err: the host's thread waits until the server runs.
 * t:start(cb) -> true | nil, err: the start runs on a helper thread; cb(true) once the server
 * runs, cb(nil, why) when it did not. */
static int l_start(lua_State *L)
{
    stdio_box *box = check_box(L);
    char err[512];
    if (lua_isnoneornil(L, 2))
        return mcp_transport_lua_start(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    if (box->started_ref != LUA_NOREF)
        return luaL_error(L, "mcp: a start is already in flight");
    lua_pushvalue(L, 2);
    box->started_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    mcp_stdio_on_started(box->base.t, on_started, box);
    if (mcp_stdio_start_background(box->base.t, err, sizeof err) != 0) {
        mcp_stdio_on_started(box->base.t, NULL, NULL);
        luaL_unref(L, LUA_REGISTRYINDEX, box->started_ref);
        box->started_ref = LUA_NOREF;
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* The server's pid, a start in flight waited for first: outside a step its callback runs on L. */
static pid_t settled_pid(lua_State *L, stdio_box *box)
{
    lua_State *prev = mcp_loop_lua(box->loop);
    pid_t pid;
    if (prev == NULL)
        mcp_loop_set_context(box->loop, L);
    pid = mcp_stdio_pid(box->base.t);
    if (prev == NULL)
        mcp_loop_set_context(box->loop, NULL);
    return pid;
}

static int l_pid(lua_State *L)
{
    stdio_box *box = check_box(L);
    pid_t pid = settled_pid(L, box);
    if (pid <= 0)
        lua_pushnil(L);
    else
        lua_pushinteger(L, (lua_Integer)pid);
    return 1;
}

/* t:reaped() -> true once the server process is gone and waited for (no zombie). */
static int l_reaped(lua_State *L)
{
    stdio_box *box = check_box(L);
    lua_pushboolean(L, mcp_stdio_reaped(box->base.t));
    return 1;
}

static int l_exit_text(lua_State *L)
{
    stdio_box *box = check_box(L);
    char text[96];
    mcp_stdio_describe_exit(box->base.t, text, sizeof text);
    lua_pushstring(L, text);
    return 1;
}

static int l_gc(lua_State *L)
{
    stdio_box *box = luaL_checkudata(L, 1, STDIO_MT);
    if (box->base.t != NULL) {
        mcp_stdio_on_stderr(box->base.t, NULL, NULL);
        mcp_stdio_on_started(box->base.t, NULL, NULL);
    }
    if (box->stderr_ref != LUA_NOREF) {
        luaL_unref(L, LUA_REGISTRYINDEX, box->stderr_ref);
        box->stderr_ref = LUA_NOREF;
    }
    if (box->started_ref != LUA_NOREF) {
        luaL_unref(L, LUA_REGISTRYINDEX, box->started_ref);
        box->started_ref = LUA_NOREF;
    }
    return mcp_transport_lua_gc(L);
}

static int l_tostring(lua_State *L)
{
    stdio_box *box = luaL_checkudata(L, 1, STDIO_MT);
    if (box->base.t == NULL)
        lua_pushstring(L, "mcp.stdio_transport (finalized)");
    else
        lua_pushfstring(L, "mcp.stdio_transport (pid %d)", (int)settled_pid(L, box));
    return 1;
}

void mcp_stdio_lua_open(lua_State *L, int box)
{
    static const luaL_Reg methods[] = {
        {"start", l_start},
        {"close", mcp_transport_lua_close},
        {"is_open", mcp_transport_lua_is_open},
        {"pid", l_pid},
        {"reaped", l_reaped},
        {"exit_text", l_exit_text},
        {NULL, NULL},
    };
    if (mcp_transport_lua_class(L, STDIO_MT, methods, l_gc)) {
        lua_pushcfunction(L, l_tostring);
        lua_setfield(L, -2, "__tostring");
    }
    lua_pop(L, 1);
    mcp_set_loop_function(L, box, "stdio_transport", l_stdio_transport);
    mcp_sandbox_lua_open(L);
}
