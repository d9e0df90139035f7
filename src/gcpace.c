/* The collector's pace during a budgeted decode (gcpace.h). */
#include "gcpace.h"

#include "loop.h"

/* lua_gc's options of 5.1-5.4 and LuaJIT by number (the ABI headers declare four). */
#define GC_COUNT 3
#define GC_COUNTB 4
#define GC_STEP 5
#define GC_SETSTEPMUL 7 /* returns the previous one: the only way to read it */
#define GC_ISRUNNING 9  /* 5.2-5.4 and LuaJIT 2.1; PUC 5.1 answers -1 */

/* How much finer a run's steps are: 5.4's default multiplier (100) becomes 12. */
#define FINER 8
/* A fine explicit step (LUA_GCSTEP 0 at the lowered multiplier) does the work of a step of
 * 2^13 bytes at that multiplier (5.4; 5.1's is 1 KB), that is the collector's due for 8 KB / FINER
 * of allocation at the host's multiplier: 1 KB with the defaults. Owed steps are counted in that
 * unit; 5.1 and LuaJIT, whose steps are smaller, pay somewhat less than they owe. */
#define KB_PER_STEP (8.0 / FINER)

static double heap_kb(lua_State *L)
{
    return (double)lua_gc(L, GC_COUNT, 0) + (double)lua_gc(L, GC_COUNTB, 0) / 1024.0;
}

static int lower(lua_State *L)
{
    int prev;
    if (lua_gc(L, GC_ISRUNNING, 0) != 1)
        return -1;
    prev = lua_gc(L, GC_SETSTEPMUL, 0);
    lua_gc(L, GC_SETSTEPMUL, prev >= 4 * FINER ? prev / FINER : prev);
    return prev >= 4 * FINER ? prev : -1;
}

void mcp_gcpace_begin(lua_State *L, mcp_gcpace *g)
{
    g->stepmul = lower(L);
    g->kb = heap_kb(L);
}

void mcp_gcpace_pay(lua_State *L, mcp_gcpace *g, uint64_t deadline_us)
{
    double kb;
    if (g->stepmul < 0) /* stopped by the host (or 5.1): not ours to run */
        return;
    kb = heap_kb(L);
    if (kb > g->kb) /* (net of what the collector freed meanwhile: a lower bound) */
        g->owed += (kb - g->kb) * (FINER - 1) / FINER / KB_PER_STEP;
    while (g->owed >= 1 && (deadline_us == 0 || mcp_now_us() < deadline_us)) {
        g->owed -= 1;
        if (lua_gc(L, GC_STEP, 0) == 1) /* a cycle ended: nothing it put off is left */
            g->owed = 0;
    }
    g->kb = heap_kb(L);
}

void mcp_gcpace_end(lua_State *L, mcp_gcpace *g)
{
    if (g->stepmul >= 0)
        lua_gc(L, GC_SETSTEPMUL, g->stepmul);
    g->stepmul = -1;
}
