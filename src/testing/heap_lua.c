/* Test hook for the memory specs and the soak suite (built only into test builds:
 * -DMCP_TEST_HOOKS, see Makefile):
 *   core._heap_bytes() -> bytes of C heap in use (glibc's mallinfo2: arena and mmapped blocks),
 *   or nil where that is not known.
 * The process's whole heap (libcurl's, Lua's allocator when it is malloc's), which is what a
 * leak or a buffer kept too long shows up in.
 *   core._alloc_fail_above(n) -> true: from now on every Lua allocation of more than n bytes
 *   fails (out of memory, as under ulimit -v, but only for what is that large); nil restores the
 *   allocator. false where the Lua version cannot swap its allocator (5.1 and LuaJIT). */
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

#if LUA_VERSION_NUM >= 502
#define LIMIT_KEY "mcp.test_alloc_limit"

/* The allocator the hook wraps, kept in a userdata in the registry (no global state). */
typedef struct alloc_limit {
    lua_Alloc f;
    void *ud;
    size_t above;
} alloc_limit;

static void *limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    alloc_limit *a = ud;
    if (nsize > a->above && (ptr == NULL || nsize > osize))
        return NULL;
    return a->f(a->ud, ptr, osize, nsize);
}

static int l_alloc_fail_above(lua_State *L)
{
    void *ud;
    lua_Alloc f = lua_getallocf(L, &ud);
    alloc_limit *a;
    lua_getfield(L, LUA_REGISTRYINDEX, LIMIT_KEY);
    a = lua_touserdata(L, -1);
    if (a != NULL && f == limited_alloc) {
        lua_setallocf(L, a->f, a->ud); /* back to the real one first */
        f = a->f;
        ud = a->ud;
    }
    if (lua_isnoneornil(L, 1)) {
        lua_pushboolean(L, 1);
        return 1;
    }
    if (a == NULL) {
        a = lua_newuserdata(L, sizeof *a);
        lua_setfield(L, LUA_REGISTRYINDEX, LIMIT_KEY);
    }
    a->f = f;
    a->ud = ud;
    a->above = (size_t)luaL_checknumber(L, 1);
    lua_setallocf(L, limited_alloc, a);
    lua_pushboolean(L, 1);
    return 1;
}
#else
static int l_alloc_fail_above(lua_State *L)
{
    lua_pushboolean(L, 0);
    return 1;
}
#endif

void mcp_heap_lua_open(lua_State *L)
{
    lua_pushcfunction(L, l_alloc_fail_above);
    lua_setfield(L, -2, "_alloc_fail_above");
    lua_pushcfunction(L, l_heap_bytes);
    lua_setfield(L, -2, "_heap_bytes");
}
