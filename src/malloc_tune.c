/* glibc's malloc without fastbins, for a frame-bound host that asks for it.
 *
 * glibc keeps small freed chunks in fastbins, unmerged, and merges all of them at once
 * (malloc_consolidate) when a large block is freed: after Lua's collector frees the ~40,000
 * tables of a dropped result, freeing its items array costs 4-6 ms in one step (bench/results.md,
 * "Stop 27"). mallopt(M_MXFAST, 0) is GLIBC_TUNABLES=glibc.malloc.mxfast=0 at run time, which a
 * game cannot set for its own process once started. Process-wide, so only on request. */
#include "malloc_tune.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int mcp_malloc_no_fastbins(lua_State *L)
{
#if defined(__GLIBC__) && defined(M_MXFAST)
    if (mallopt(M_MXFAST, 0) == 1) {
        lua_pushboolean(L, 1);
        return 1;
    }
    lua_pushboolean(L, 0);
    lua_pushliteral(L, "mallopt(M_MXFAST, 0) refused: malloc is not glibc's own"); /* ASan's, say */
    return 2;
#else
    lua_pushboolean(L, 0);
    lua_pushliteral(L, "not glibc's malloc");
    return 2;
#endif
}
