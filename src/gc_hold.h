/* Lua's collector held off around one allocation. A running collector pays an allocation's debt
 * in the same call: a large one (a long string, a long array's slots) would bring a collector
 * step of its size (with 10 MB, a whole cycle) into the slice that makes it. Stopping the
 * collector for the allocation and restarting it after sets the debt to zero (5.2+); it catches
 * up over the next allocations. The allocation runs in a protected call, so that the collector
 * is restarted even when it raises (out of memory). Used by bigstr.c and json_resume.c. */
#ifndef MCP_GC_HOLD_H
#define MCP_GC_HOLD_H

#include "lua_api.h"

/* 1 when the collector runs; 0 when the host stopped it, and on PUC 5.1, which cannot tell (it
 * answers LUA_GCISRUNNING with -1). */
int mcp_gc_running(lua_State *L);

/* fn called with the nargs values on top of the stack, leaving nresults as lua_pcall does; when
 * hold is set and the collector runs, it is stopped for the call and restarted after it, raised
 * or not. lua_pcall's status: when not 0, the error object is on top, for the caller to raise
 * after its own cleanup. */
int mcp_gc_hold_pcall(lua_State *L, lua_CFunction fn, int nargs, int nresults, int hold);

/* mcp_gc_hold_pcall, then raise what fn raised (the collector restarted first). */
void mcp_gc_hold_call(lua_State *L, lua_CFunction fn, int nargs, int nresults, int hold);

#endif
