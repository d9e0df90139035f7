/*
 * benchfloor: bench/floor.c's sequential stdio call as a bench-only Lua module (never part of
 * mcp.core), so that the Lua driver's `pair` row can alternate batches of floor calls and of
 * lua-mcp calls in one process: both sides then see the same machine state, batch by batch
 * (this VM's speed drifts by tens of percent between runs a second apart).
 *
 *   local bf = require("benchfloor")
 *   local f = bf.spawn(server)  -- the server on pipes of its own (argv[0] only)
 *   f:calls(n)                  -- n calls: one write of a preformatted request, epoll_wait, read
 *                               -- until the newline; no JSON, no allocation
 *   f:close()                   -- closes its stdin and reaps it (also on __gc)
 *
 * Builds for any Lua ABI (5.1/LuaJIT to 5.4): only API common to all of them.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#define FLOOR_MT "benchfloor.server"

typedef struct floor_server {
    pid_t pid;
    int in, out, ep; /* its stdin (ours to write), its stdout (ours to read), our epoll */
    long next_id;
} floor_server;

static void shut(floor_server *f)
{
    if (f->pid <= 0)
        return;
    close(f->in);
    close(f->out);
    close(f->ep);
    waitpid(f->pid, NULL, 0); /* tiny_server exits on EOF */
    f->pid = 0;
}

static floor_server *check(lua_State *L)
{
    floor_server *f = luaL_checkudata(L, 1, FLOOR_MT);
    if (f->pid <= 0)
        luaL_error(L, "benchfloor: the server is closed");
    return f;
}

static int l_spawn(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    int in[2], out[2];
    struct epoll_event ev;
    floor_server *f = lua_newuserdata(L, sizeof *f);
    memset(f, 0, sizeof *f);
    luaL_getmetatable(L, FLOOR_MT);
    lua_setmetatable(L, -2);
    if (pipe2(in, O_CLOEXEC) != 0)
        return luaL_error(L, "benchfloor: pipe failed");
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(in[0]);
        close(in[1]);
        return luaL_error(L, "benchfloor: pipe failed");
    }
    f->pid = fork();
    if (f->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        execl(path, path, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    if (f->pid < 0) {
        close(in[1]);
        close(out[0]);
        return luaL_error(L, "benchfloor: fork failed");
    }
    f->in = in[1];
    f->out = out[0];
    f->ep = epoll_create1(EPOLL_CLOEXEC);
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    if (f->ep < 0 || epoll_ctl(f->ep, EPOLL_CTL_ADD, f->out, &ev) != 0) {
        shut(f);
        return luaL_error(L, "benchfloor: epoll failed");
    }
    f->next_id = 1;
    return 1;
}

static int l_calls(lua_State *L)
{
    floor_server *f = check(L);
    lua_Integer n = luaL_checkinteger(L, 2), i;
    static char buf[1 << 16];
    char req[256];
    for (i = 0; i < n; i++) {
        int len = snprintf(req, sizeof req,
                           "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{\"name\":"
                           "\"echo\",\"arguments\":{\"message\":\"hello\"}}}\n",
                           f->next_id++);
        struct epoll_event ev;
        if (write(f->in, req, (size_t)len) != len)
            return luaL_error(L, "benchfloor: write failed");
        for (;;) {
            ssize_t k;
            if (epoll_wait(f->ep, &ev, 1, -1) < 0)
                return luaL_error(L, "benchfloor: epoll_wait failed");
            k = read(f->out, buf, sizeof buf);
            if (k <= 0)
                return luaL_error(L, "benchfloor: the server went away");
            if (buf[k - 1] == '\n')
                break;
        }
    }
    return 0;
}

static int l_close(lua_State *L)
{
    shut(luaL_checkudata(L, 1, FLOOR_MT));
    return 0;
}

__attribute__((visibility("default"))) int luaopen_benchfloor(lua_State *L)
{
    signal(SIGPIPE, SIG_IGN);
    if (luaL_newmetatable(L, FLOOR_MT)) {
        lua_createtable(L, 0, 2);
        lua_pushcfunction(L, l_calls);
        lua_setfield(L, -2, "calls");
        lua_pushcfunction(L, l_close);
        lua_setfield(L, -2, "close");
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, l_close);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, l_spawn);
    lua_setfield(L, -2, "spawn");
    return 1;
}
