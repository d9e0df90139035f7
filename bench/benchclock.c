/*
 * benchclock: the two clocks the Lua benchmark driver needs and standard Lua lacks, as a tiny
 * bench-only module (never part of mcp.core): monotonic wall time, and this process's own CPU
 * time from getrusage(RUSAGE_SELF), the same call behind Node's process.cpuUsage().
 *
 *   local bc = require("benchclock")
 *   bc.wall()  -> seconds (CLOCK_MONOTONIC, ns resolution)
 *   bc.cpu()   -> seconds of user+sys CPU of this process (all its threads, not its children)
 *   bc.cpu_ns() -> the same from CLOCK_PROCESS_CPUTIME_ID, to the nanosecond (getrusage may count
 *                  in scheduler ticks): for the short batches of the driver's `pair` row
 *   bc.thread_cpu_ns() -> the calling thread's own CPU time (CLOCK_THREAD_CPUTIME_ID), in seconds:
 *                  what a host loop's step costs its thread, without the core's helper threads
 *                  (a start's wait for exec, a program run) working beside it meanwhile
 *
 * Builds for any Lua ABI (5.1/LuaJIT to 5.4): only API common to all of them.
 */
#define _POSIX_C_SOURCE 200809L
#include <sys/resource.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>

static int l_wall(lua_State *L)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec / 1e9);
    return 1;
}

static int l_cpu(lua_State *L)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return luaL_error(L, "getrusage failed");
    lua_pushnumber(L, (lua_Number)ru.ru_utime.tv_sec + (lua_Number)ru.ru_utime.tv_usec / 1e6 +
                          (lua_Number)ru.ru_stime.tv_sec + (lua_Number)ru.ru_stime.tv_usec / 1e6);
    return 1;
}

static int l_cpu_ns(lua_State *L)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return luaL_error(L, "clock_gettime failed");
    lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec / 1e9);
    return 1;
}

static int l_thread_cpu_ns(lua_State *L)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return luaL_error(L, "clock_gettime failed");
    lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec / 1e9);
    return 1;
}

__attribute__((visibility("default"))) int luaopen_benchclock(lua_State *L)
{
    lua_createtable(L, 0, 4);
    lua_pushcfunction(L, l_cpu_ns);
    lua_setfield(L, -2, "cpu_ns");
    lua_pushcfunction(L, l_thread_cpu_ns);
    lua_setfield(L, -2, "thread_cpu_ns");
    lua_pushcfunction(L, l_wall);
    lua_setfield(L, -2, "wall");
    lua_pushcfunction(L, l_cpu);
    lua_setfield(L, -2, "cpu");
    return 1;
}
