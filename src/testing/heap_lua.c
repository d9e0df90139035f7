/* Test hook for the memory specs and the soak suite (built only into test builds:
 * -DMCP_TEST_HOOKS, see Makefile):
 *   core._heap_bytes() -> bytes of C heap in use (glibc's mallinfo2: arena and mmapped blocks),
 *   or nil where that is not known.
 * The process's whole heap (libcurl's, Lua's allocator when it is malloc's), which is what a
 * leak or a buffer kept too long shows up in. */
#include "lua_api.h"

#include "compat.h"
#include "core_loop.h"

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define HAVE_MALLINFO2 1
#endif

static int l_heap_bytes(lua_State *L)
{
#ifdef HAVE_MALLINFO2
    struct mallinfo2 mi = mallinfo2();
    lua_pushnumber(L, (lua_Number)mi.uordblks + (lua_Number)mi.hblkhd);
#else
    lua_pushnil(L);
#endif
    return 1;
}

void mcp_heap_lua_open(lua_State *L)
{
    lua_pushcfunction(L, l_heap_bytes);
    lua_setfield(L, -2, "_heap_bytes");
}
